// Options.cpp - The opdc command line.
// SPDX-License-Identifier: Apache-2.0
#include "driver/Options.h"

#include <cstdlib>

namespace opdc {

const char *helpText() {
  return R"(usage: opdc [options] FILE.opd
       opdc build [options] FILE.opd [-o PROGRAM]
       opdc run [options] FILE.opd [-- PROGRAM-ARGUMENTS]

Compiles an .opd program (mesh-based scientific computation).

Commands:
  build               compile to an executable (default name: FILE without
                      .opd); with -c, to an object file only
  run                 build into a temporary directory, run the program with
                      the arguments after --, and exit with its status

Stages:
  --check             parse and check the program; print only diagnostics
  --syntax-only       stop after parsing (with --emit=ast: the raw tree)
  --emit=ast          print the checked syntax tree
  --emit=ir           print the Program IR (loops with access descriptors)
  --emit=llvm         print the LLVM IR of the CPU program (optimised; raw
                      with -O0)
  --emit=obj          write the CPU program's object file (default FILE.o)

Code generation:
  -O0 -O1 -O2 -O3     optimisation level (default -O3)
  -c                  with build: stop after the object file
  -march=CPU          compile for CPU (default native: this machine)
  -ffp-contract=off|fast
                      fuse multiplies and adds into fma (fast) or keep every
                      rounding step of the source (off, the default)
  --mpi               with build or run: link the MPI runtime; the program
                      runs under 'mpirun -np N' (or alone as one process)

Output and input:
  -o FILE             write the output to FILE (--emit: instead of stdout)
  -I DIR              add DIR to the import search path (repeatable)
  --stdlib-dir=DIR    where 'import std.NAME' finds NAME.opd

Diagnostics:
  -Werror             turn warnings into errors
  -Wno-NAME           disable the warning -WNAME
  --error-limit=N     stop printing errors after N (default 50, 0 = no limit)

  --help              show this text
  --version           show the version

Exit status: 0 success, 1 errors in the program, 2 bad command line,
70 internal compiler error; a build that fails (link, runtime, output) exits
1, and 'opdc run' exits with the program's status. See man opdc(1), opd(5).
)";
}

namespace {
bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
}

const char *emitName(EmitKind k) {
  switch (k) {
  case EmitKind::AST:
    return "ast";
  case EmitKind::IR:
    return "ir";
  case EmitKind::LLVM:
    return "llvm";
  case EmitKind::Obj:
    return "obj";
  case EmitKind::None:
    break;
  }
  return "";
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
      else if (kind == "llvm")
        o.emit = EmitKind::LLVM;
      else if (kind == "obj")
        o.emit = EmitKind::Obj;
      else if (kind == "cuda") {
        error = "'--emit=" + kind +
                "' needs a code generator that this version of opdc does "
                "not have yet; available: --emit=ast, --emit=ir, "
                "--emit=llvm, --emit=obj";
        return std::nullopt;
      } else {
        error = "unknown value '" + kind +
                "' for --emit; expected 'ast', 'ir', 'llvm' or 'obj'";
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
    } else if (a == "-c") {
      o.objectOnly = true;
    } else if (startsWith(a, "-O")) {
      std::string level = a.substr(2);
      if (level.empty())
        level = "2";
      if (level.size() != 1 || level[0] < '0' || level[0] > '3') {
        error =
            "unknown optimisation level '" + a + "'; use -O0, -O1, -O2 or -O3";
        return std::nullopt;
      }
      o.optLevel = unsigned(level[0] - '0');
    } else if (startsWith(a, "-march=")) {
      o.cpu = a.substr(7);
      if (o.cpu.empty()) {
        error = "'-march=' needs a CPU name, e.g. -march=native";
        return std::nullopt;
      }
    } else if (startsWith(a, "-ffp-contract=")) {
      std::string v = a.substr(14);
      if (v != "off" && v != "fast") {
        error = "unknown value '" + v +
                "' for -ffp-contract; expected 'off' or 'fast'";
        return std::nullopt;
      }
      o.fpContract = v == "fast";
    } else if (a == "--mpi") {
      o.mpi = true;
    } else if (a == "--") {
      if (o.command != Command::Run) {
        error = "arguments after '--' go to the program, which only "
                "'opdc run' runs";
        return std::nullopt;
      }
      o.programArgs.assign(args.begin() + i + 1, args.end());
      break;
    } else if (o.command == Command::Compile && o.input.empty() &&
               (a == "build" || a == "run")) {
      o.command = a == "build" ? Command::Build : Command::Run;
    } else if (a.size() > 1 && a[0] == '-') {
      error = "unknown option '" + a + "'; see 'opdc --help'";
      if (o.command == Command::Run)
        error += " (arguments for the program go after '--')";
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
  if (o.syntaxOnly && (o.emit == EmitKind::IR || o.emit == EmitKind::LLVM ||
                       o.emit == EmitKind::Obj)) {
    error = std::string("--emit=") + emitName(o.emit) +
            " needs the checked program; drop --syntax-only";
    return std::nullopt;
  }
  if (o.command != Command::Compile) {
    std::string cmd = o.command == Command::Build ? "build" : "run";
    if (o.emit != EmitKind::None) {
      error = "'opdc " + cmd +
              "' makes a program; --emit prints a stage "
              "instead; drop one of them";
      return std::nullopt;
    }
    if (o.checkOnly || o.syntaxOnly) {
      error = "'opdc " + cmd + "' cannot stop at " +
              (o.checkOnly ? "--check" : "--syntax-only") + "; drop it";
      return std::nullopt;
    }
  }
  if (o.command == Command::Run && (!o.output.empty() || o.objectOnly)) {
    error = std::string("'opdc run' keeps nothing; ") +
            (o.objectOnly ? "-c" : "-o") + " needs 'opdc build'";
    return std::nullopt;
  }
  if (o.mpi && o.command == Command::Compile) {
    error = "--mpi chooses the runtime a program links; it needs 'opdc "
            "build' or 'opdc run'";
    return std::nullopt;
  }
  if (o.objectOnly && o.command != Command::Build) {
    error = "-c needs 'opdc build' (it stops after the object file)";
    return std::nullopt;
  }
  if (o.command == Command::Build && o.output == "-") {
    error = "'opdc build' writes a file; '-o -' (standard output) is not one";
    return std::nullopt;
  }
  return o;
}

} // namespace opdc
