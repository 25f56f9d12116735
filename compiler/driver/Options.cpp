// Options.cpp - The opdc command line.
// SPDX-License-Identifier: Apache-2.0
#include "driver/Options.h"

#include <cstdlib>

namespace opdc {

const char *helpText() {
  return R"(usage: opdc [options] FILE.opd

Compiles an .opd program (mesh-based scientific computation).

Stages:
  --check             parse and check the program; print only diagnostics
  --syntax-only       stop after parsing (with --emit=ast: the raw tree)
  --emit=ast          print the checked syntax tree
  --emit=ir           print the Program IR (loops with access descriptors)

Output and input:
  -o FILE             write the --emit output to FILE instead of stdout
  -I DIR              add DIR to the import search path (repeatable)
  --stdlib-dir=DIR    where 'import std.NAME' finds NAME.opd

Diagnostics:
  -Werror             turn warnings into errors
  -Wno-NAME           disable the warning -WNAME
  --error-limit=N     stop printing errors after N (default 50, 0 = no limit)

  --help              show this text
  --version           show the version

Exit status: 0 success, 1 errors in the program, 2 bad command line,
70 internal compiler error. See man opdc(1) and opd(5).
)";
}

namespace {
bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
}
} // namespace

std::optional<DriverOptions>
parseCommandLine(const std::vector<std::string> &args, std::string &error) {
  DriverOptions o;
  bool emitSeen = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    // Options that take a value either inline (-Idir, --x=v) or as the next
    // argument (-I dir, -o file).
    auto value = [&](const char *name, std::string &out) -> bool {
      if (i + 1 >= args.size()) {
        error = std::string("option '") + name + "' needs a value";
        return false;
      }
      out = args[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      o.showHelp = true;
    } else if (a == "--version") {
      o.showVersion = true;
    } else if (a == "--check") {
      o.checkOnly = true;
    } else if (a == "--syntax-only") {
      o.syntaxOnly = true;
    } else if (startsWith(a, "--emit=")) {
      std::string kind = a.substr(7);
      if (kind == "ast")
        o.emit = EmitKind::AST;
      else if (kind == "ir")
        o.emit = EmitKind::IR;
      else if (kind == "llvm" || kind == "cuda" || kind == "obj") {
        error = "'--emit=" + kind +
                "' needs a code generator that this version of opdc does "
                "not have yet; available: --emit=ast, --emit=ir";
        return std::nullopt;
      } else {
        error = "unknown value '" + kind +
                "' for --emit; expected 'ast' or 'ir'";
        return std::nullopt;
      }
      if (emitSeen) {
        error = "--emit given twice; choose one stage to print";
        return std::nullopt;
      }
      emitSeen = true;
    } else if (a == "-o") {
      if (!value("-o", o.output))
        return std::nullopt;
    } else if (startsWith(a, "-o") && a.size() > 2) {
      o.output = a.substr(2);
    } else if (a == "-I") {
      std::string dir;
      if (!value("-I", dir))
        return std::nullopt;
      o.importPaths.push_back(dir);
    } else if (startsWith(a, "-I")) {
      o.importPaths.push_back(a.substr(2));
    } else if (startsWith(a, "--stdlib-dir=")) {
      o.stdlibDir = a.substr(13);
    } else if (a == "-Werror") {
      o.warningsAsErrors = true;
    } else if (startsWith(a, "-Wno-") && a.size() > 5) {
      o.disabledWarnings.push_back(a.substr(5));
    } else if (startsWith(a, "--error-limit=")) {
      std::string n = a.substr(14);
      char *end = nullptr;
      long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 0) {
        error = "'--error-limit' expects a non-negative integer, got '" + n + "'";
        return std::nullopt;
      }
      o.errorLimit = v == 0 ? ~0u : unsigned(v);
    } else if (o.input.empty() && (a == "build" || a == "run")) {
      error = "'opdc " + a +
              "' needs the LLVM CPU backend, which this version of opdc "
              "does not have yet; use --check or --emit=ast|ir";
      return std::nullopt;
    } else if (a.size() > 1 && a[0] == '-') {
      error = "unknown option '" + a + "'; see 'opdc --help'";
      return std::nullopt;
    } else {
      if (!o.input.empty()) {
        error = "more than one input file ('" + o.input + "' and '" + a +
                "'); opdc compiles one program at a time";
        return std::nullopt;
      }
      o.input = a;
    }
  }
  if (o.showHelp || o.showVersion)
    return o;
  if (o.input.empty()) {
    error = "no input file; usage: opdc [options] FILE.opd (see 'opdc --help')";
    return std::nullopt;
  }
  if (o.checkOnly && o.emit != EmitKind::None) {
    error = "--check prints nothing but diagnostics; drop it or --emit";
    return std::nullopt;
  }
  if (o.syntaxOnly && o.emit == EmitKind::IR) {
    error = "--emit=ir needs the checked program; drop --syntax-only";
    return std::nullopt;
  }
  return o;
}

} // namespace opdc
