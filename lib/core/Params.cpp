// Params.cpp - opd_rt_init: the command line of a compiled program.
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
#include "core/Dist.h"
#include "core/Format.h"
#include "core/Renumber.h"
#include "core/Runtime.h"
#include "exec/Adjoint.h"
#include "exec/FPCheck.h"
#include "exec/Plan.h"
#include "opd_rt.h"

#include <omp.h>

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace opdc::rt {
namespace {

const char *typeLabel(int type) {
  return type == OPD_STR ? "str" : scalarName(type);
}

// Set while a deck line is applied: "FILE:LINE" for messages about its keys.
std::string deckWhere;

[[noreturn]] void badValue(const std::string &option, const char *value,
                           const char *expected) {
  if (!deckWhere.empty())
    failf("%s: invalid value '%s' for key '%s': expected %s",
          deckWhere.c_str(), value, option.c_str(), expected);
  failf("invalid value '%s' for option '--%s': expected %s", value,
        option.c_str(), expected);
}

[[noreturn]] void outOfRange(const std::string &option, const char *value,
                             const char *type) {
  if (!deckWhere.empty())
    failf("%s: value '%s' for key '%s' is out of range for %s",
          deckWhere.c_str(), value, option.c_str(), type);
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

const opd_param_desc *findParam(const opd_param_desc *params, int nparams,
                                const std::string &name) {
  for (int i = 0; i < nparams; ++i)
    if (params[i].name && name == params[i].name)
      return &params[i];
  return nullptr;
}

// Words of a deck line: whitespace separates them, '=' is a word of its own
// ("a=b", "a = b" and "a =b" are the same three words); '!' or '#' starts a
// comment.
std::vector<std::string> deckWords(const std::string &line) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty())
      words.push_back(word);
    word.clear();
  };
  for (char c : line) {
    if (c == '!' || c == '#')
      break;
    if (std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else if (c == '=') {
      flush();
      words.emplace_back("=");
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

bool isDeckInteger(const std::string &w) {
  if (w.empty())
    return false;
  for (char c : w)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  return true;
}

// One KEY (with VALUE, or without: a flag) of a deck line: the param KEY,
// else (KEY=WORD with WORD not a number) the bool param KEY_WORD.
void applyDeckKey(const opd_param_desc *params, int nparams,
                  const std::string &key, const std::string *value) {
  const opd_param_desc *param = findParam(params, nparams, key);
  if (param) {
    if (!value) {
      if (param->type != OPD_BOOL)
        failf("%s: key '%s' needs a value (%s=<%s>)", deckWhere.c_str(),
              key.c_str(), key.c_str(), typeLabel(param->type));
      setParam(*param, "true");
      return;
    }
    if (param->type == OPD_STR) {
      // Kept alive for the whole run (the list never shrinks).
      static std::deque<std::string> kept;
      kept.push_back(*value);
      *static_cast<const char **>(param->storage) = kept.back().c_str();
      return;
    }
    setParam(*param, value->c_str());
    return;
  }
  if (value) {
    const opd_param_desc *choice =
        findParam(params, nparams, key + "_" + *value);
    if (choice && choice->type == OPD_BOOL) {
      setParam(*choice, "true");
      return;
    }
    failf("%s: unknown key '%s': the program has no param '%s' (nor a bool "
          "param '%s_%s'); see --help",
          deckWhere.c_str(), key.c_str(), key.c_str(), key.c_str(),
          value->c_str());
  }
  failf("%s: unknown key '%s': the program has no param '%s'; see --help",
        deckWhere.c_str(), key.c_str(), key.c_str());
}

// --deck=FILE: params from an input deck in the style of CloverLeaf's
// clover.in. Per line: `KEY=VALUE` pairs (or `KEY VALUE`, or a bare bool
// KEY meaning true); a line `NAME N KEY=VALUE ...` (NAME, then an integer,
// then pairs) is record N of NAME and sets NAME<N>_KEY; lines starting
// with '*' (section markers such as *clover) are skipped. A value that is a
// word where the param KEY does not exist sets the bool param KEY_VALUE
// (`geometry=rectangle` -> state2_geometry_rectangle). Errors name the
// file and line.
void readDeck(const char *path, const opd_param_desc *params, int nparams) {
  std::FILE *f = std::fopen(path, "r");
  if (!f)
    failf("cannot open deck '%s' (--deck): %s", path, std::strerror(errno));
  std::string line;
  int lineNo = 0;
  bool more = true;
  while (more) {
    line.clear();
    int c;
    while ((c = std::fgetc(f)) != EOF && c != '\n')
      line += char(c);
    more = c != EOF;
    ++lineNo;
    std::vector<std::string> w = deckWords(line);
    if (w.empty() || w[0][0] == '*')
      continue;
    deckWhere = std::string(path) + ":" + std::to_string(lineNo);
    std::string prefix;
    std::size_t i = 0;
    if (w.size() >= 3 && w[0] != "=" && isDeckInteger(w[1]) && w[2] != "=" &&
        !findParam(params, nparams, w[0])) {
      prefix = w[0] + w[1] + "_";
      i = 2;
    }
    while (i < w.size()) {
      if (w[i] == "=")
        failf("%s: '=' without a key before it", deckWhere.c_str());
      std::string key = prefix + w[i];
      if (i + 1 < w.size() && w[i + 1] == "=") {
        if (i + 2 >= w.size() || w[i + 2] == "=")
          failf("%s: key '%s' has '=' but no value", deckWhere.c_str(),
                key.c_str());
        applyDeckKey(params, nparams, key, &w[i + 2]);
        i += 3;
        continue;
      }
      // KEY VALUE without '=': a non-bool param takes the next word.
      const opd_param_desc *param = findParam(params, nparams, key);
      if (param && param->type != OPD_BOOL && i + 1 < w.size()) {
        applyDeckKey(params, nparams, key, &w[i + 1]);
        i += 2;
        continue;
      }
      applyDeckKey(params, nparams, key, nullptr);
      i += 1;
    }
    deckWhere.clear();
  }
  std::fclose(f);
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
      failf("unexpected argument '%s'; options are --name=value (or --name "
            "value), see --help",
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
      else if (value && !std::strcmp(value, "ptscotch"))
        setPartitionMethod(PartitionMethod::PTScotch);
      else
        failf("option '--partition' needs 'ptscotch', 'metis' or 'block' "
              "(--partition=ptscotch)");
      continue;
    }
    if (name == "ckpt-dir") {
      if (!value || !*value)
        failf("option '--ckpt-dir' needs a directory (--ckpt-dir=<DIR>)");
      setCheckpointDir(value);
      continue;
    }
    if (name == "deck") {
      if (!value || !*value)
        failf("option '--deck' needs a file name (--deck=<FILE>)");
      readDeck(value, params, nparams);
      continue;
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
      continue;
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
      continue;
    }
    if (name == "plan") {
      if (!value)
        failf("option '--plan' needs a value: 'colour' or 'super' "
              "(--plan=super)");
      setPlanKind(parsePlanKind(value, "option '--plan'"));
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
  // The MPI runtime numbers each rank's elements by the partition.
  if (renumberExplicit() && renumberMethod() != RenumberMethod::None &&
      dist::ranks() > 1 && dist::printer())
    std::fprintf(stderr,
                 "%s: warning: --renumber is ignored on several ranks (each "
                 "rank's elements follow the partition)\n",
                 programName());
  // --help after the other options: it shows the defaults, not the values
  // given beside it, but a malformed option is still reported first.
  if (help)
    printHelp(params, nparams, defaults);
}
