// Params.cpp - opd_rt_init: the command line of a compiled program.
// SPDX-License-Identifier: Apache-2.0
//
// Accepted: --NAME=VALUE for each param (a bool param also as bare --NAME,
// meaning true), --threads=N, --profile, --check-fp[=BOOL] (default: the
// environment variable OPD_CHECK_FP, else off), --partition=metis|block (MPI
// runtime; accepted and unused on one process), --help. Everything else,
// including positional arguments, is an error pointing at --help. A repeated option
// takes its last value. The runtime options' names are reserved.
#include "core/Dist.h"
#include "core/Format.h"
#include "core/Runtime.h"
#include "exec/FPCheck.h"
#include "opd_rt.h"

#include <omp.h>

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace opdc::rt {
namespace {

const char *typeLabel(int type) {
  return type == OPD_STR ? "str" : scalarName(type);
}

[[noreturn]] void badValue(const std::string &option, const char *value,
                           const char *expected) {
  failf("invalid value '%s' for option '--%s': expected %s", value,
        option.c_str(), expected);
}

[[noreturn]] void outOfRange(const std::string &option, const char *value,
                             const char *type) {
  failf("value '%s' for option '--%s' is out of range for %s", value,
        option.c_str(), type);
}

bool parseInteger(const char *text, long long &out, bool &range) {
  range = false;
  if (!*text || std::isspace(static_cast<unsigned char>(*text)))
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtoll(text, &end, 10);
  if (*end != '\0')
    return false;
  range = errno == ERANGE;
  return true;
}

// true, false, 1, 0 (bool params and --check-fp=); -1 for anything else.
int parseBool(const char *value) {
  if (!std::strcmp(value, "true") || !std::strcmp(value, "1"))
    return 1;
  if (!std::strcmp(value, "false") || !std::strcmp(value, "0"))
    return 0;
  return -1;
}

void setParam(const opd_param_desc &p, const char *value) {
  std::string name = p.name;
  switch (p.type) {
  case OPD_I32:
  case OPD_I64: {
    long long v;
    bool range;
    const char *type = typeLabel(p.type);
    if (!parseInteger(value, v, range))
      badValue(name, value,
               p.type == OPD_I32 ? "an i32 integer" : "an i64 integer");
    if (range || (p.type == OPD_I32 && (v < INT32_MIN || v > INT32_MAX)))
      outOfRange(name, value, type);
    if (p.type == OPD_I32)
      *static_cast<int32_t *>(p.storage) = int32_t(v);
    else
      *static_cast<int64_t *>(p.storage) = int64_t(v);
    return;
  }
  case OPD_F32:
  case OPD_F64: {
    const char *expected =
        p.type == OPD_F32 ? "an f32 number" : "an f64 number";
    if (!*value || std::isspace(static_cast<unsigned char>(*value)))
      badValue(name, value, expected);
    errno = 0;
    char *end = nullptr;
    if (p.type == OPD_F32) {
      float v = std::strtof(value, &end);
      if (*end != '\0')
        badValue(name, value, expected);
      // Overflow only: a value that underflows to a denormal or zero is
      // still the nearest float.
      if (errno == ERANGE && std::isinf(v))
        outOfRange(name, value, "f32");
      *static_cast<float *>(p.storage) = v;
    } else {
      double v = std::strtod(value, &end);
      if (*end != '\0')
        badValue(name, value, expected);
      if (errno == ERANGE && std::isinf(v))
        outOfRange(name, value, "f64");
      *static_cast<double *>(p.storage) = v;
    }
    return;
  }
  case OPD_BOOL: {
    int v = parseBool(value);
    if (v < 0)
      badValue(name, value, "a bool (true, false, 1 or 0)");
    *static_cast<uint8_t *>(p.storage) = uint8_t(v);
    return;
  }
  case OPD_STR:
    // argv outlives the program's use of it.
    *static_cast<const char **>(p.storage) = value;
    return;
  }
  failf("internal error: param '%s' has no type %d", p.name, int(p.type));
}

std::string defaultText(const opd_param_desc &p) {
  char buf[64];
  switch (p.type) {
  case OPD_I32:
    std::snprintf(buf, sizeof buf, "%" PRId32,
                  *static_cast<const int32_t *>(p.storage));
    return buf;
  case OPD_I64:
    std::snprintf(buf, sizeof buf, "%" PRId64,
                  *static_cast<const int64_t *>(p.storage));
    return buf;
  case OPD_F32:
    return formatF32(*static_cast<const float *>(p.storage));
  case OPD_F64:
    return formatF64(*static_cast<const double *>(p.storage));
  case OPD_BOOL:
    return *static_cast<const uint8_t *>(p.storage) ? "true" : "false";
  case OPD_STR: {
    const char *s = *static_cast<const char *const *>(p.storage);
    std::string quoted(1, '"');
    quoted += s ? s : "";
    quoted += '"';
    return quoted;
  }
  }
  return "?";
}

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
  if (nparams > 0) {
    out += "\nparameters:\n";
    for (int i = 0; i < nparams; ++i)
      row("--" + std::string(params[i].name) + "=<" +
              typeLabel(params[i].type) + ">",
          "default: " + defaults[std::size_t(i)]);
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
  row("--partition=metis|block",
      "how sets are split over MPI ranks (default: metis)");
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

std::string baseName(const char *path) {
  if (!path)
    return "";
  const char *slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
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
  avoidSpinningWhenOversubscribed(argc, argv);
  setProgramName(program && *program
                     ? std::string(program)
                     : baseName(argc > 0 && argv ? argv[0] : nullptr));
  dist::init();
  silenceHDF5();
  setProfileRequested(false);
  setPartitionMethod(PartitionMethod::Metis);
  bool checkFP = checkFPFromEnvironment();
  bool help = false;
  int threads = 0;
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
      failf("unexpected argument '%s'; options are --name=value, see --help",
            arg);
    }
    const char *eq = std::strchr(arg, '=');
    std::string name = eq ? std::string(arg + 2, eq) : std::string(arg + 2);
    const char *value = eq ? eq + 1 : nullptr;

    if (name == "help" || name == "profile") {
      if (value)
        failf("option '--%s' takes no value", name.c_str());
      if (name == "help")
        help = true;
      else
        setProfileRequested(true);
      continue;
    }
    if (name == "check-fp") {
      int v = value ? parseBool(value) : 1;
      if (v < 0)
        badValue(name, value, "a bool (true, false, 1 or 0)");
      checkFP = v == 1;
      continue;
    }
    if (name == "partition") {
      if (value && !std::strcmp(value, "metis"))
        setPartitionMethod(PartitionMethod::Metis);
      else if (value && !std::strcmp(value, "block"))
        setPartitionMethod(PartitionMethod::Block);
      else
        failf("option '--partition' needs 'metis' or 'block' "
              "(--partition=metis)");
      continue;
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
      threads = int(v);
      continue;
    }
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
  if (threads == 0 && defaultThreads > 0) {
    const char *env = std::getenv("OMP_NUM_THREADS");
    if (!env || !*env)
      threads = defaultThreads;
  }
  if (threads > 0)
    omp_set_num_threads(threads);
  // Rank 0's choice on every rank: the check's collectives must match even
  // if the environment differs between ranks.
  uint8_t fp = checkFP ? 1 : 0;
  dist::broadcast(&fp, 1);
  setFPCheck(fp != 0);
  // --help after the other options: it shows the defaults, not the values
  // given beside it, but a malformed option is still reported first.
  if (help)
    printHelp(params, nparams, defaults);
}
