// Options.cpp - The opdc command line.
// SPDX-License-Identifier: Apache-2.0
#include "driver/Options.h"

#include "passes/PassPipeline.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace opdc {

namespace {
// --help: data, not code (man/opdc.1 holds every flag too).
constexpr const char HelpText[] = R"(usage: opdc [options] FILE.opd
       opdc build [options] FILE.opd [-o PROGRAM]
       opdc run [options] FILE.opd [-- PROGRAM-ARGUMENTS]
       opdc link FILE.o... -o PROGRAM
       opdc --print-target=NAME|FILE.yaml

Compiles an .opd program (mesh-based scientific computation).

Commands:
  build               compile to an executable (default name: FILE without
                      .opd); with -c, to an object file only
  run                 build into a temporary directory, run the program with
                      the arguments after --, and exit with its status
  link                link object files (from 'build -c') with the runtime
                      into the program named by -o

Stages:
  --check             parse and check the program; print only diagnostics
  --syntax-only       stop after parsing (with --emit=ast: the raw tree)
  --emit=ast          print the checked syntax tree
  --emit=ir           print the Program IR (loops with access descriptors)
  --emit=llvm         print the LLVM IR of the CPU program (optimised; raw
                      with -O0)
  --emit=obj          write the CPU program's object file (default FILE.o)
  --emit=cuda         print the CUDA C++ source of the GPU program

IR passes (run between lowering and code generation; see opdc(1)):
  --passes=LIST       run these passes, comma-separated, in this order,
                      instead of the default pipeline ('--passes=' runs none)
  --list-passes       list the passes, marking the default pipeline's
  --print-after=NAME  print the IR to stderr after pass NAME ('all': after
                      every pass; repeatable)
  --verify-each       check the IR after every pass (always done; kept for
                      scripts): invalid IR is an internal error, exit 70
  --time-passes       print each pass's wall time to stderr
  --stats             print the passes' counters to stderr

Code generation:
  -O0 -O1 -O2 -O3     optimisation level (default -O3)
  -c                  with build: stop after the object file
  -march=CPU          compile for CPU (default native: this machine, or the
                      target profile's cpu.name, which -march overrides)
  --target=NAME|FILE  compile for a target profile (targets/NAME.yaml, a
                      YAML file, or 'native'): triple, CPU, features, vector
                      width and default thread count; see opd-target(5)
  --target-dir=DIR    look for --target NAME in DIR first (repeatable)
  --print-target=NAME|FILE
                      print the resolved profile (after 'extends') and exit
  -ffp-contract=off|fast
                      fuse multiplies and adds into fma (fast) or keep every
                      rounding step of the source (off, the default)
  -fveclib=none|libmvec
                      vectorise math calls with glibc's libmvec (x86-64;
                      results differ from libm's in the last bits) or keep
                      the scalar C library calls (none, the default)
  -fgathers=auto|hardware|scalar
                      x86-64: read dats through maps in vectorised loops
                      with hardware gathers (vgatherdpd) or with scalar
                      loads put into vectors; auto (the default, or the
                      profile's backend.cpu.gathers) uses scalar loads on
                      CPUs whose gathers are slower (AMD Zen 4) and
                      LLVM's choice elsewhere; the same bits either way
  -fno-fuse           do not fuse loops (the default pipeline's 'fuse'
                      pass, and 'unroll-short-loops', which only serves
                      it; results are bitwise the same either way)
  -fno-skew           fuse loops only at the same point, never as a skewed
                      sweep (loops that read at stencil offsets what the
                      other writes); results are bitwise the same either way
  -fno-swap-copy-back keep the copy of a time loop that copies its new state
                      back (the default 'swap-copy-back' pass swaps the
                      two dats instead where they agree outside the copied
                      range, checked at run time); the same bits either way
  -funroll-steps=N    run N steps (1, 2, 4, 8 or 16; by default 8) of a
                      time loop of stencil steps as one skewed sweep (the
                      'unroll-steps' and 'unroll-more-steps' passes); the
                      adjoint reverses two at a time; -fno-unroll-steps is
                      N=1; results are bitwise the same for any N
  -frepro-sum         float sum reductions exact and rounded once: the same
                      bits for any --threads, rank count and partition
                      (-fno-repro-sum, the default: summed per chunk)
  -fno-sum-lanes      float sums strictly in element order (one chain of
                      additions: the loop stays scalar); -fsum-lanes, the
                      default: each row's elements go to 4 partial sums in
                      turn, added in order at the row's end, so the loop
                      vectorises with the same bits for any --threads,
                      -O, target, fusion and inlining
  -fno-row-tails      end rows of block loops with the vectoriser's scalar
                      remainder (-frow-tails, the default: loops whose
                      elements may run twice end each row with whole
                      vectors, the last one shifted back to the row's end;
                      the same bits either way)
  -fno-column-tables  compute a block loop's kernel values of idx(0) alone
                      that call the C library (sin(pi * x) ...) at every
                      point (-fcolumn-tables, the default: once per column
                      into a table the rows read; the same bits either way)
  -fno-transpose-rows loops with increments through maps read the rows
                      they gather through maps lane by lane in the
                      vectorised strip (-ftranspose-rows, the default:
                      each strip first loads each element's row whole and
                      transposes the rows into vectors; same bits)
  -fno-scalar-bodies  no second, scalar body for loops whose kernels branch
                      around divisions, square roots or math calls
                      (-fscalar-bodies, the default: the runtime times it
                      against the vectorised body and keeps the faster;
                      the same bits either way)
  --mpi               with build or run: link the MPI runtime; the program
                      runs under 'mpirun -np N' (or alone as one process)
  --comm-avoid=auto|on|off
                      communication avoidance for MPI (the comm-avoid pass):
                      a loop chain's halo exchanges grouped into one deeper
                      exchange, its loops run beyond each rank's part; auto
                      (the default with --mpi) lets the runtime's cost model
                      decide per chain, on forces it, off (the default
                      without --mpi) leaves chains as they are
  --cuda-indirect=atomics|colouring
                      GPU targets: increments through maps with atomics or
                      with two-level colouring (default: the profile's
                      backend.cuda.indirect)

Output and input:
  -o FILE             write the output to FILE (--emit: instead of stdout)
  -MD                 also write a make dependency file: the output depends
                      on the program, every imported module and the profile
  -MF FILE            name the dependency file (default: OUTPUT.d)
  -B                  build even when the output is up to date (by default
                      'opdc build' does nothing if the output is newer than
                      every input, opdc and the runtime, with the same options;
                      -B also compiles when the build cache has the program)
  --no-cache          neither reuse nor store a program in the build cache
                      ($XDG_CACHE_HOME/opdc; see opdc(1), BUILD CACHE)
  --cache-stats       say on stderr whether the build cache had the program
  -I DIR              add DIR to the import search path (repeatable)
  --stdlib-dir=DIR    where 'import std.NAME' finds NAME.opd

Diagnostics:
  -Werror             turn warnings into errors
  -Wno-NAME           disable the warning -WNAME
  -Rpass=vectorize    report per loop whether its element loop was
                      vectorised (SIMD width) or why not
  -Rpass=PASS         remarks of IR pass PASS (e.g. -Rpass=inline: each call
                      inlined or why not); -Rpass=all: every remark
  -Rpass=chain        report each loop chain: its loops, what ended it and
                      which loops read and write each dat
  -Rpass=fuse         report each fusion of loops
  -Rpass=comm-avoid   report each chain made communication-avoiding: the
                      grouped exchange, the extensions, the exchanges saved
  -Rpass-missed=PASS  what PASS did not do, and why (-Rpass-missed=fuse:
                      each pair of chained loops not fused, with the dat
                      and dependence that prevented it)
  --error-limit=N     stop printing errors after N (default 50, 0 = no limit)
  --diagnostics-format=text|json
                      print diagnostics as text (the default) or as one
                      JSON object per line (schema in opdc(1))

  --help              show this text
  --version           show the version

Exit status: 0 success, 1 errors in the program, 2 bad command line,
70 internal compiler error; a build that fails (link, runtime, output) exits
1, and 'opdc run' exits with the program's status. See man opdc(1), opd(5).
)";
} // namespace

const char *helpText() { return HelpText; }

namespace {
std::string knownPassNames() {
  std::string known;
  for (const PassInfo &p : registeredPasses())
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  return known;
}

bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool endsWith(const std::string &s, const char *suffix) {
  std::string x = suffix;
  return s.size() >= x.size() &&
         s.compare(s.size() - x.size(), x.size(), x) == 0;
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
  case EmitKind::CUDA:
    return "cuda";
  case EmitKind::None:
    break;
  }
  return "";
}
/// Target profiles, dependency files, rebuild control and `link`. Returns 1
/// when args[i] was one of these (i advanced past a separate value), 0 when
/// not, -1 on error.
int parseTargetOption(const std::vector<std::string> &args, size_t &i,
                      DriverOptions &o, std::string &error) {
  const std::string &a = args[i];
  // --name=VALUE or --name VALUE.
  auto valued = [&](const char *name, std::string &out) -> int {
    std::string n = name;
    if (startsWith(a, (n + "=").c_str())) {
      out = a.substr(n.size() + 1);
    } else if (a == n) {
      if (i + 1 >= args.size()) {
        error = "option '" + n + "' needs a value";
        return -1;
      }
      out = args[++i];
    } else {
      return 0;
    }
    if (out.empty()) {
      error = "option '" + n + "' needs a value";
      return -1;
    }
    return 1;
  };
  int r;
  if ((r = valued("--target", o.target)) != 0)
    return r;
  if ((r = valued("--print-target", o.printTarget)) != 0)
    return r;
  std::string dir;
  if ((r = valued("--target-dir", dir)) != 0) {
    if (r > 0)
      o.targetDirs.push_back(dir);
    return r;
  }
  if (a == "-MD") {
    o.writeDepfile = true;
    return 1;
  }
  if (a == "-MF") {
    if (i + 1 >= args.size()) {
      error = "option '-MF' needs a file name";
      return -1;
    }
    o.depfile = args[++i];
    return 1;
  }
  if (startsWith(a, "-MF") && a.size() > 3) {
    o.depfile = a.substr(3);
    return 1;
  }
  if (a == "-B") {
    o.alwaysBuild = true;
    return 1;
  }
  if (a == "--no-cache") {
    o.noCache = true;
    return 1;
  }
  if (a == "--cache-stats") {
    o.cacheStats = true;
    return 1;
  }
  return 0;
}

/// Combinations of the options above that make no sense.
bool checkTargetOptions(const DriverOptions &o, std::string &error) {
  if (!o.depfile.empty() && !o.writeDepfile) {
    error = "-MF names the dependency file that -MD writes; add -MD";
    return false;
  }
  if (o.writeDepfile &&
      !(o.command == Command::Build ||
        (o.command == Command::Compile && o.emit == EmitKind::Obj))) {
    error = "-MD needs an output file: use it with 'opdc build' or "
            "--emit=obj";
    return false;
  }
  if (o.command == Command::Link) {
    if (o.linkInputs.empty()) {
      error = "'opdc link' needs object files: opdc link FILE.o... -o PROGRAM";
      return false;
    }
    if (o.output.empty() || o.output == "-") {
      error = "'opdc link' needs the program's name: -o PROGRAM";
      return false;
    }
  }
  return true;
}

/// The pass pipeline's options and remarks (-Rpass, -f[no-]fuse, ...,
/// --passes, --print-after, --stats). Returns 1 when \p a was one of
/// these, 0 when not, -1 on error.
int parsePassOption(const std::string &a, DriverOptions &o,
                    std::string &error) {
  if (startsWith(a, "-Rpass=")) {
    std::string pass = a.substr(7);
    if (pass != "vectorize" && pass != "all" && !findPass(pass)) {
      std::string known = "vectorize";
      for (const PassInfo &p : registeredPasses())
        known += std::string(", ") + p.name;
      error = "unknown remark pass '" + pass + "' for -Rpass; known: " + known +
              ", all";
      return -1;
    }
    o.remarks.push_back(pass);
  } else if (startsWith(a, "-Rpass-missed=")) {
    // Missed-optimisation remarks of a pass are its remarks under
    // NAME-missed (clang's -Rpass-missed): -Rpass-missed=fuse.
    std::string pass = a.substr(14);
    if (pass != "all" && !findPass(pass)) {
      error = "unknown remark pass '" + pass +
              "' for -Rpass-missed; known: " + knownPassNames() + ", all";
      return -1;
    }
    o.remarks.push_back(pass == "all" ? pass : pass + "-missed");
  } else if (a == "-fno-fuse") {
    o.noFuse = true;
  } else if (a == "-ffuse") {
    o.noFuse = false;
  } else if (a == "-fno-unroll-steps") {
    o.unrollSteps = 1;
  } else if (a == "-funroll-steps") {
    o.unrollSteps = DriverOptions().unrollSteps;
  } else if (startsWith(a, "-funroll-steps=")) {
    std::string v = a.substr(15);
    unsigned n = 0;
    if (v == "1" || v == "2" || v == "4" || v == "8" || v == "16")
      n = unsigned(std::stoul(v));
    if (!n) {
      error = "invalid value '" + v +
              "' for -funroll-steps; expected 1, 2, 4, 8 or 16 (steps a "
              "sweep)";
      return -1;
    }
    o.unrollSteps = n;
  } else if (a == "-fno-swap-copy-back") {
    o.noSwapCopyBack = true;
  } else if (a == "-fswap-copy-back") {
    o.noSwapCopyBack = false;
  } else if (a == "-fno-skew") {
    o.noSkew = true;
  } else if (a == "-fskew") {
    o.noSkew = false;
  } else if (startsWith(a, "--passes=") || a == "--passes") {
    if (a == "--passes") {
      error = "option '--passes' needs a value: --passes=NAME,NAME "
              "(or '--passes=' for none)";
      return -1;
    }
    std::string list = a.substr(9);
    if (!parsePassList(list, error))
      return -1;
    o.passes = list;
  } else if (startsWith(a, "--print-after=")) {
    std::string name = a.substr(14);
    if (!isPrintAfterName(name, error))
      return -1;
    o.printAfter.push_back(name);
  } else if (a == "--verify-each") {
    o.verifyEach = true;
  } else if (a == "--time-passes") {
    o.timePasses = true;
  } else if (a == "--stats") {
    o.stats = true;
  } else if (a == "--list-passes") {
    o.listPasses = true;
  } else {
    return 0;
  }
  return 1;
}

/// Code generation's options (-O, -march=, -f[no-]repro-sum, -fveclib=,
/// --comm-avoid=, --cuda-indirect=, ...). Returns 1 when \p a was one of
/// these, 0 when not, -1 on error.
int parseCodegenOption(const std::string &a, DriverOptions &o,
                       std::string &error) {
  if (a == "-frepro-sum") {
    o.reproSum = true;
  } else if (a == "-fno-repro-sum") {
    o.reproSum = false;
  } else if (a == "-fsum-lanes") {
    o.sumLanes = true;
  } else if (a == "-fno-sum-lanes") {
    o.sumLanes = false;
  } else if (a == "-frow-tails") {
    o.rowTails = true;
  } else if (a == "-fno-row-tails") {
    o.rowTails = false;
  } else if (a == "-fcolumn-tables") {
    o.columnTables = true;
  } else if (a == "-fno-column-tables") {
    o.columnTables = false;
  } else if (a == "-ftranspose-rows") {
    o.transposeRows = true;
  } else if (a == "-fno-transpose-rows") {
    o.transposeRows = false;
  } else if (a == "-fscalar-bodies") {
    o.scalarBodies = true;
  } else if (a == "-fno-scalar-bodies") {
    o.scalarBodies = false;
  } else if (startsWith(a, "-O")) {
    std::string level = a.substr(2);
    if (level.empty())
      level = "2";
    if (level.size() != 1 || level[0] < '0' || level[0] > '3') {
      error =
          "unknown optimisation level '" + a + "'; use -O0, -O1, -O2 or -O3";
      return -1;
    }
    o.optLevel = unsigned(level[0] - '0');
  } else if (startsWith(a, "-march=")) {
    o.cpu = a.substr(7);
    if (o.cpu.empty()) {
      error = "'-march=' needs a CPU name, e.g. -march=native";
      return -1;
    }
  } else if (startsWith(a, "-ffp-contract=")) {
    std::string v = a.substr(14);
    if (v != "off" && v != "fast") {
      error = "unknown value '" + v +
              "' for -ffp-contract; expected 'off' or 'fast'";
      return -1;
    }
    o.fpContract = v == "fast";
  } else if (startsWith(a, "-fveclib=")) {
    std::string v = a.substr(9);
    if (v != "none" && v != "libmvec") {
      error = "unknown value '" + v +
              "' for -fveclib; expected 'none' or 'libmvec'";
      return -1;
    }
    o.vecLibMvec = v == "libmvec";
  } else if (startsWith(a, "-fgathers=")) {
    std::string v = a.substr(10);
    if (v != "auto" && v != "hardware" && v != "scalar") {
      error = "unknown value '" + v +
              "' for -fgathers; expected 'auto', 'hardware' or 'scalar'";
      return -1;
    }
    o.gathers = v;
  } else if (startsWith(a, "--comm-avoid=") || a == "--comm-avoid") {
    std::string v = a.size() > 13 ? a.substr(13) : "";
    if (v != "auto" && v != "on" && v != "off") {
      error = "unknown value '" + v +
              "' for --comm-avoid; expected 'auto', 'on' or 'off'";
      return -1;
    }
    o.commAvoid = v;
  } else if (startsWith(a, "--cuda-indirect=")) {
    std::string v = a.substr(16);
    if (v == "colour" || v == "color" || v == "coloring")
      v = "colouring";
    if (v != "atomics" && v != "colouring") {
      error = "unknown value '" + v +
              "' for --cuda-indirect; expected 'atomics' or 'colouring'";
      return -1;
    }
    o.cudaIndirect = v;
  } else {
    return 0;
  }
  return 1;
}

/// The options together: what one asks of the others, the input file,
/// and what each command accepts. False, with \p error, when they do not
/// fit.
bool checkCommandLine(const DriverOptions &o, std::string &error) {
  if (!checkTargetOptions(o, error))
    return false;
  if (o.command == Command::Link)
    return true;
  if (o.input.empty()) {
    error = "no input file; usage: opdc [options] FILE.opd (see 'opdc --help')";
    return false;
  }
  if (o.checkOnly && o.emit != EmitKind::None) {
    error = "--check prints nothing but diagnostics; drop it or --emit";
    return false;
  }
  if (o.syntaxOnly && (o.emit == EmitKind::IR || o.emit == EmitKind::LLVM ||
                       o.emit == EmitKind::Obj || o.emit == EmitKind::CUDA)) {
    error = std::string("--emit=") + emitName(o.emit) +
            " needs the checked program; drop --syntax-only";
    return false;
  }
  if (o.command != Command::Compile) {
    std::string cmd = o.command == Command::Build ? "build" : "run";
    if (o.emit != EmitKind::None) {
      error = "'opdc " + cmd +
              "' makes a program; --emit prints a stage "
              "instead; drop one of them";
      return false;
    }
    if (o.checkOnly || o.syntaxOnly) {
      error = "'opdc " + cmd + "' cannot stop at " +
              (o.checkOnly ? "--check" : "--syntax-only") + "; drop it";
      return false;
    }
  }
  if (o.command == Command::Run && (!o.output.empty() || o.objectOnly)) {
    error = std::string("'opdc run' keeps nothing; ") +
            (o.objectOnly ? "-c" : "-o") + " needs 'opdc build'";
    return false;
  }
  if (o.mpi && o.command == Command::Compile) {
    error = "--mpi chooses the runtime a program links; it needs 'opdc "
            "build' or 'opdc run'";
    return false;
  }
  if (o.objectOnly && o.command != Command::Build) {
    error = "-c needs 'opdc build' (it stops after the object file)";
    return false;
  }
  if (o.command == Command::Build && o.output == "-") {
    error = "'opdc build' writes a file; '-o -' (standard output) is not one";
    return false;
  }
  return true;
}

} // namespace

/// `--name VALUE` as `--name=VALUE` for the long options that take a value
/// after '=', where that is unambiguous: VALUE is not an option and not the
/// .opd input; nothing after `--` (the program's own arguments).
static std::vector<std::string>
joinLongOptionValues(std::vector<std::string> args) {
  static const char *const valued[] = {
      "--emit",          "--stdlib-dir",        "--passes",
      "--print-after",   "--error-limit",       "--comm-avoid",
      "--cuda-indirect", "--diagnostics-format"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + long(i), args.end());
      break;
    }
    bool takes =
        std::find(std::begin(valued), std::end(valued), a) != std::end(valued);
    if (takes && i + 1 < args.size() && !startsWith(args[i + 1], "-") &&
        !endsWith(args[i + 1], ".opd")) {
      out.push_back(a + "=" + args[++i]);
      continue;
    }
    out.push_back(a);
  }
  return out;
}

std::optional<DriverOptions>
parseCommandLine(const std::vector<std::string> &rawArgs, std::string &error) {
  const std::vector<std::string> args = joinLongOptionValues(rawArgs);
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
    int target = parseTargetOption(args, i, o, error);
    if (target < 0)
      return std::nullopt;
    if (target > 0)
      continue;
    int pass = parsePassOption(a, o, error);
    if (pass < 0)
      return std::nullopt;
    if (pass > 0)
      continue;
    int codegen = parseCodegenOption(a, o, error);
    if (codegen < 0)
      return std::nullopt;
    if (codegen > 0)
      continue;
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
      else if (kind == "cuda")
        o.emit = EmitKind::CUDA;
      else {
        error = "unknown value '" + kind +
                "' for --emit; expected 'ast', 'ir', 'llvm', 'obj' or 'cuda'";
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
    } else if (startsWith(a, "--diagnostics-format=")) {
      std::string f = a.substr(21);
      if (f != "text" && f != "json") {
        error = "unknown value '" + f +
                "' for --diagnostics-format; expected 'text' or 'json'";
        return std::nullopt;
      }
      o.diagnosticsJSON = f == "json";
    } else if (startsWith(a, "--error-limit=")) {
      std::string n = a.substr(14);
      char *end = nullptr;
      long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 0) {
        error =
            "'--error-limit' expects a non-negative integer, got '" + n + "'";
        return std::nullopt;
      }
      o.errorLimit = v == 0 ? ~0u : unsigned(v);
    } else if (a == "-c") {
      o.objectOnly = true;
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
               (a == "build" || a == "run" || a == "link")) {
      o.command = a == "build" ? Command::Build
                  : a == "run" ? Command::Run
                               : Command::Link;
    } else if (a.size() > 1 && a[0] == '-') {
      error = "unknown option '" + a + "'; see 'opdc --help'";
      if (o.command == Command::Run)
        error += " (arguments for the program go after '--')";
      return std::nullopt;
    } else if (o.command == Command::Link) {
      o.linkInputs.push_back(a);
    } else {
      if (!o.input.empty()) {
        error = "more than one input file ('" + o.input + "' and '" + a +
                "'); opdc compiles one program at a time";
        return std::nullopt;
      }
      o.input = a;
    }
  }
  if (o.showHelp || o.showVersion || o.listPasses || !o.printTarget.empty())
    return o;
  if (!checkCommandLine(o, error))
    return std::nullopt;
  return o;
}

} // namespace opdc
