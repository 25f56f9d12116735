// Init.cpp - opd_rt_init: the command line of a compiled program.
// SPDX-License-Identifier: Apache-2.0
//
// Accepted: --NAME=VALUE for each param (a bool param also as bare --NAME,
// meaning true), --threads=N, each valued option also as `--NAME VALUE`,
// --profile, --check-fp[=BOOL] (default: the environment variable OPD_CHECK_FP,
// else off), --partition=ptscotch|metis|block (MPI runtime; accepted and unused
// on one process), --deck=FILE (params from an input deck, see readDeck),
// --renumber=auto|none|rcm (one process; core/Renumber.cpp),
// --plan=colour|super (default: the environment variable OPD_PLAN, else super;
// exec/Plan.h), --help. Everything else, including positional arguments, is an
// error pointing at --help. A repeated option takes its last value. The runtime
// options' names are reserved.
//
// Why in exec/: the command line sets options of every layer (core's
// params and renumbering, exec's plans, --check-fp and checkpoints, the
// solvers' reduced system), so it sits at the top; what it asks of the
// params is core/Params.h.
#include "core/Dist.h"
#include "core/Params.h"
#include "core/Renumber.h"
#include "core/Runtime.h"
#include "exec/Adjoint.h"
#include "exec/FPCheck.h"
#include "exec/Plan.h"
#include "opd_rt.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace opdc::rt {
namespace {

[[noreturn]] void printHelp(const opd_param_desc *params, int nparams,
                            const std::vector<std::string> &defaults) {
  std::string out = "usage: " + std::string(programName()) + " [options]\n";
  auto row = [&out](const std::string &left, const std::string &right) {
    std::string line = "  " + left;
    if (line.size() < 26)
      line.resize(26, ' ');
    else
      line += "  ";
    out += line + right + "\n";
  };
  // A param's comment, wrapped to 80 columns under the description column.
  auto docRow = [&out, &row](const std::string &left, const std::string &doc,
                             const std::string &tail) {
    std::string text = doc + " (" + tail + ")";
    std::vector<std::string> lines;
    std::string line;
    std::size_t at = 0;
    while (at < text.size()) {
      std::size_t end = text.find(' ', at);
      if (end == std::string::npos)
        end = text.size();
      std::string word = text.substr(at, end - at);
      if (!line.empty() && line.size() + 1 + word.size() > 80 - 26) {
        lines.push_back(line);
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
      at = end + 1;
    }
    lines.push_back(line);
    row(left, lines[0]);
    for (std::size_t i = 1; i < lines.size(); ++i)
      out += std::string(26, ' ') + lines[i] + "\n";
  };
  if (nparams > 0) {
    out += "\nparameters:\n";
    for (int i = 0; i < nparams; ++i) {
      std::string left = "--" + std::string(params[i].name) + "=<" +
                         typeLabel(params[i].type) + ">";
      std::string tail = "default: " + defaults[std::size_t(i)];
      if (params[i].doc && *params[i].doc)
        docRow(left, params[i].doc, tail);
      else
        row(left, tail);
    }
  }
  out += "\nruntime options:\n";
  row("--threads=<N>", "threads for parallel loops (default: "
                       "OMP_NUM_THREADS, else the target profile's, else "
                       "all cores, shared among the MPI ranks of a node; "
                       "now " +
                           std::to_string(omp_get_max_threads()) + ")");
  row("--profile", "print time and bandwidth per loop at exit");
  row("--check-fp", "stop at the first NaN or infinity a loop produces "
                    "(default: OPD_CHECK_FP=1 in the environment, else off)");
  row("--ckpt-dir=<DIR>", "adjoints: snapshots beyond the memory budget "
                          "to files in DIR");
  row("--device-tape-memory=<MiB>",
      "GPU adjoints: the device memory the tape and snapshots may hold "
      "before they spill to host memory (K or G after the number: KiB or "
      "GiB; default: OPD_DEVICE_TAPE_MEMORY, else half the free device "
      "memory)");
  row("--deck=<FILE>", "set params from an input deck (KEY=VALUE lines, "
                       "see opdc(1)); later options override it");
  row("--partition=ptscotch|metis|block",
      "how sets are split over MPI ranks (default: ptscotch)");
  row("--renumber=auto|none|rcm",
      "order of set elements in memory: as read (none, the default), "
      "reverse Cuthill-McKee for locality (rcm), or rcm where it shortens "
      "the distances between linked elements at least 2-fold (auto); "
      "ignored by programs built with --mpi");
  row("--plan=colour|super",
      "schedule of loops with indirect increments: contiguous super-blocks "
      "in element order with only the elements they share coloured (super, "
      "the default: fewer bytes fetched when the mesh exceeds the cache), "
      "or blocks colour by colour (colour, as OP2); default: OPD_PLAN in "
      "the environment, else super");
  row("--tridiag-reduced=pcr|jacobi",
      "tridiagonal solves split over MPI ranks: the ranks' reduced system "
      "by parallel cyclic reduction (pcr, exact, the default) or by Jacobi "
      "iterations to round-off (jacobi: one message each way per iteration)");
  row("--help", "print this help and exit");
  if (dist::printer())
    std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  dist::exitJob(0);
}

// OPD_CHECK_FP: 1/true on, 0/false or empty/unset off.
bool checkFPFromEnvironment() {
  const char *env = std::getenv("OPD_CHECK_FP");
  if (!env || !*env)
    return false;
  int v = parseBool(env);
  if (v < 0)
    failf("invalid value '%s' for environment variable OPD_CHECK_FP: "
          "expected 1, 0, true or false",
          env);
  return v == 1;
}

// --plan= and OPD_PLAN: 'colour' or 'super'; `what` names the source.
PlanKind parsePlanKind(const char *value, const char *what) {
  if (!std::strcmp(value, "colour"))
    return PlanKind::Colour;
  if (!std::strcmp(value, "super"))
    return PlanKind::Super;
  failf("invalid value '%s' for %s: expected 'colour' or 'super' "
        "(--plan=super)",
        value, what);
}

PlanKind planKindFromEnvironment() {
  const char *env = std::getenv("OPD_PLAN");
  if (!env || !*env)
    return DefaultPlanKind;
  return parsePlanKind(env, "environment variable OPD_PLAN");
}

// Options that take a value, which may also follow as the next argument
// (`--threads 2`): the runtime's, and every param but bools (a bare `--flag`
// is true, so `--flag false` would be ambiguous). --check-fp, optional-valued,
// takes its value only after '='.
bool takesValue(const std::string &name, const opd_param_desc *params,
                int nparams) {
  for (const char *o :
       {"threads", "partition", "deck", "tridiag-reduced", "renumber", "plan"})
    if (name == o)
      return true;
  for (int i = 0; i < nparams; ++i)
    if (params[i].name && name == params[i].name)
      return params[i].type != OPD_BOOL;
  return false;
}

// The command line with `--name VALUE` joined into `--name=VALUE` where
// --name takes a value and VALUE is not an option itself, so that the
// parser (and the wait-policy check, which looks for --threads=) see one
// spelling. The strings live as long as the program: str params point
// into them.
std::vector<char *> joinOptionValues(int argc, char **argv,
                                     const opd_param_desc *params,
                                     int nparams) {
  static std::deque<std::string> joined;
  std::vector<char *> out;
  for (int a = 0; a < argc; ++a) {
    const char *arg = argv[a];
    if (a > 0 && a + 1 < argc && !std::strncmp(arg, "--", 2) &&
        !std::strchr(arg, '=') && std::strncmp(argv[a + 1], "--", 2) != 0 &&
        takesValue(arg + 2, params, nparams)) {
      joined.push_back(std::string(arg) + "=" + argv[a + 1]);
      out.push_back(joined.back().data());
      ++a;
      continue;
    }
    out.push_back(argv[a]);
  }
  out.push_back(nullptr);
  return out;
}

std::string baseName(const char *path) {
  if (!path)
    return "";
  const char *slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// What the runtime's own options set beyond the runtime's state.
struct CommandLine {
  bool help = false;
  bool checkFP = false;
  int threads = 0;
};

// One of the runtime's own options (not a param): applies it and returns
// true, or returns false for a name it does not know.
bool runtimeOption(const std::string &name, const char *value,
                   const opd_param_desc *params, int nparams, CommandLine &cl) {
  if (name == "help" || name == "profile") {
    if (value)
      failf("option '--%s' takes no value", name.c_str());
    if (name == "help")
      cl.help = true;
    else
      setProfileRequested(true);
    return true;
  }
  if (name == "check-fp") {
    int v = value ? parseBool(value) : 1;
    if (v < 0)
      badValue(name, value, "a bool (true, false, 1 or 0)");
    cl.checkFP = v == 1;
    return true;
  }
  if (name == "partition") {
    if (value && !std::strcmp(value, "metis"))
      setPartitionMethod(PartitionMethod::Metis);
    else if (value && !std::strcmp(value, "block"))
      setPartitionMethod(PartitionMethod::Block);
    else if (value && !std::strcmp(value, "ptscotch"))
      setPartitionMethod(PartitionMethod::PTScotch);
    else
      failf("option '--partition' needs 'ptscotch', 'metis' or 'block' "
            "(--partition=ptscotch)");
    return true;
  }
  if (name == "ckpt-dir") {
    if (!value || !*value)
      failf("option '--ckpt-dir' needs a directory (--ckpt-dir=<DIR>)");
    setCheckpointDir(value);
    return true;
  }
  if (name == "device-tape-memory") {
    const int64_t bytes = value ? memorySize(value) : -1;
    if (bytes < 0)
      failf("option '--device-tape-memory' needs a whole number of MiB >= 0, "
            "or of KiB or GiB with a suffix K or G (--device-tape-memory=512, "
            "64K, 2G)");
    setDeviceTapeMemory(bytes);
    return true;
  }
  if (name == "deck") {
    if (!value || !*value)
      failf("option '--deck' needs a file name (--deck=<FILE>)");
    readDeck(value, params, nparams);
    return true;
  }
  if (name == "tridiag-reduced") {
    if (value && !std::strcmp(value, "pcr"))
      setReducedSolver(ReducedSolver::PCR);
    else if (value && !std::strcmp(value, "jacobi"))
      setReducedSolver(ReducedSolver::Jacobi);
    else if (value)
      failf("invalid value '%s' for option '--tridiag-reduced': expected "
            "'pcr' or 'jacobi' (--tridiag-reduced=jacobi)",
            value);
    else
      failf("option '--tridiag-reduced' needs a value: 'pcr' or 'jacobi' "
            "(--tridiag-reduced=jacobi)");
    return true;
  }
  if (name == "renumber") {
    if (value && !std::strcmp(value, "none"))
      setRenumberMethod(RenumberMethod::None);
    else if (value && !std::strcmp(value, "rcm"))
      setRenumberMethod(RenumberMethod::RCM);
    else if (value && !std::strcmp(value, "auto"))
      setRenumberMethod(RenumberMethod::Auto);
    else if (value)
      failf("invalid value '%s' for option '--renumber': expected "
            "'auto', 'none' or 'rcm' (--renumber=rcm)",
            value);
    else
      failf("option '--renumber' needs a value: 'auto', 'none' or "
            "'rcm' (--renumber=rcm)");
    setRenumberExplicit(true);
    return true;
  }
  if (name == "plan") {
    if (!value)
      failf("option '--plan' needs a value: 'colour' or 'super' "
            "(--plan=super)");
    setPlanKind(parsePlanKind(value, "option '--plan'"));
    return true;
  }
  if (name == "threads") {
    if (!value)
      failf("option '--threads' needs a value (--threads=<N>)");
    long long v;
    bool range;
    if (!parseInteger(value, v, range))
      badValue(name, value, "a positive integer");
    if (range || v < 1 || v > 4096)
      failf("value '%s' for option '--threads' is out of range: expected "
            "1 to 4096",
            value);
    cl.threads = int(v);
    return true;
  }
  return false;
}

} // namespace
} // namespace opdc::rt

using namespace opdc::rt;

namespace {
int defaultThreads = 0; // opd_rt_set_default_threads; 0: none
} // namespace

extern "C" void opd_rt_set_default_threads(int n) {
  defaultThreads = n >= 1 && n <= 4096 ? n : 0;
}

extern "C" void opd_rt_init(int argc, char **argv, const char *program,
                            const opd_param_desc *params, int nparams) {
  static std::vector<char *> args;
  args = joinOptionValues(argc, argv, params, nparams);
  argc = int(args.size()) - 1;
  argv = args.data();
  avoidSpinningWhenOversubscribed(argc, argv);
  lineBufferOutput();
  setProgramName(program && *program
                     ? std::string(program)
                     : baseName(argc > 0 && argv ? argv[0] : nullptr));
  dist::init();
  silenceHDF5();
  setProfileRequested(false);
  setPartitionMethod(PartitionMethod::PTScotch);
  setRenumberMethod(RenumberMethod::None);
  setRenumberExplicit(false);
  setPlanKind(planKindFromEnvironment());
  CommandLine cl;
  cl.checkFP = checkFPFromEnvironment();
  // The defaults as declared, before options overwrite them.
  std::vector<std::string> defaults;
  bool wantsHelp = false;
  for (int a = 1; a < argc; ++a)
    wantsHelp = wantsHelp || !std::strcmp(argv[a], "--help");
  for (int i = 0; wantsHelp && i < nparams; ++i)
    defaults.push_back(defaultText(params[i]));
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    if (std::strncmp(arg, "--", 2) != 0 || arg[2] == '\0' || arg[2] == '=') {
      failf("unexpected argument '%s'; options are --name=value (or --name "
            "value), see --help",
            arg);
    }
    const char *eq = std::strchr(arg, '=');
    std::string name = eq ? std::string(arg + 2, eq) : std::string(arg + 2);
    const char *value = eq ? eq + 1 : nullptr;

    if (runtimeOption(name, value, params, nparams, cl))
      continue;
    const opd_param_desc *param = nullptr;
    for (int i = 0; i < nparams && !param; ++i)
      if (params[i].name && name == params[i].name)
        param = &params[i];
    if (!param)
      failf("unknown option '--%s'; see --help", name.c_str());
    if (!value) {
      if (param->type != OPD_BOOL)
        failf("option '--%s' needs a value (--%s=<%s>)", name.c_str(),
              name.c_str(), typeLabel(param->type));
      value = "true";
    }
    setParam(*param, value);
  }
  if (cl.threads == 0 && defaultThreads > 0) {
    const char *env = std::getenv("OMP_NUM_THREADS");
    if (!env || !*env)
      cl.threads = defaultThreads;
  }
  if (cl.threads > 0)
    omp_set_num_threads(cl.threads);
  // Rank 0's choice on every rank: the check's collectives must match even
  // if the environment differs between ranks.
  uint8_t fp = cl.checkFP ? 1 : 0;
  dist::broadcast(&fp, 1);
  setFPCheck(fp != 0);
  // The MPI runtime numbers each rank's elements by the partition.
  if (renumberExplicit() && renumberMethod() != RenumberMethod::None &&
      dist::ranks() > 1 && dist::printer())
    std::fprintf(stderr,
                 "%s: warning: --renumber is ignored on several ranks (each "
                 "rank's elements follow the partition)\n",
                 programName());
  // --help after the other options: it shows the defaults, not the values
  // given beside it, but a malformed option is still reported first.
  if (cl.help)
    printHelp(params, nparams, defaults);
}
