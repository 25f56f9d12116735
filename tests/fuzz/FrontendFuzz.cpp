// FrontendFuzz.cpp - Parser and sema over mutated examples: no crash, no hang.
// SPDX-License-Identifier: Apache-2.0
//
// Usage:
//   opdc_frontend_fuzz --seed=N --count=N --stdlib=DIR [--timeout=S]
//                      [--only=ITER] [--sema-after-errors] [--verbose]
//                      DIR_OR_FILE...
//
// Loads every .opd file under the given directories (recursively, sorted
// paths), checks that each one passes the front end unchanged (the examples
// must stay valid programs), then runs `count` iterations. Iteration i picks
// an example and applies 1-4 mutations drawn from a splitmix64 generator
// seeded from (seed, i) alone, so any iteration can be replayed on its own
// with --only=i. Each mutated text goes through loadProgramFromText and,
// like the driver does, analyzeProgram when loading reported no error
// (always with --sema-after-errors).
//
// An iteration fails when the front end
//   - crashes or aborts (the process dies; under ASan/UBSan the sanitizer's
//     report says where) -- the input is saved first by a signal handler or
//     the sanitizer's death callback;
//   - takes longer than --timeout seconds (default 10): a watchdog thread
//     saves the input and exits;
//   - rejects the input without printing any error (a silent failure would
//     leave the user with exit status 1 and no message).
// The failing input is written to fuzz-frontend-<seed>-<iter>.opd in the
// current directory. The last line is `fuzz-frontend: P passed, F failed`;
// the exit status is 0 when nothing failed, 1 otherwise.

#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) ||                                        \
    __has_feature(undefined_behavior_sanitizer)
#define OPDC_FUZZ_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define OPDC_FUZZ_SANITIZED 1
#endif
#ifdef OPDC_FUZZ_SANITIZED
extern "C" void __sanitizer_set_death_callback(void (*callback)(void));
#endif

namespace fs = std::filesystem;

namespace {

//===----------------------------------------------------------------------===//
// Deterministic random numbers
//===----------------------------------------------------------------------===//

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and the same sequence
/// on every platform, unlike the std:: distributions.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n); n > 0.
  size_t below(size_t n) { return n ? size_t(next() % n) : 0; }
  /// Uniform in [lo, hi].
  size_t between(size_t lo, size_t hi) { return lo + below(hi - lo + 1); }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[below(v.size())];
  }

private:
  uint64_t state;
};

/// The generator of iteration \p iter: depends on (seed, iter) only.
Rng rngFor(uint64_t seed, uint64_t iter) {
  Rng mix(seed ^ (0xd1b54a32d192ed03ULL * (iter + 1)));
  return Rng(mix.next());
}

//===----------------------------------------------------------------------===//
// Crash and hang reporting
//===----------------------------------------------------------------------===//

// The input being processed, kept where a signal handler can reach it with
// async-signal-safe calls only (open/write/close).
struct CurrentInput {
  const char *data = nullptr;
  size_t size = 0;
  char savePath[256] = {0};
  char label[256] = {0};
};
CurrentInput current;
std::atomic<bool> inFrontend{false};

void writeAll(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0)
      return;
    p += w;
    n -= size_t(w);
  }
}

/// Saves the current input and says which one it was; async-signal-safe.
void saveCurrentInput(const char *why) {
  if (!inFrontend.load() || !current.data)
    return;
  int fd = ::open(current.savePath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    writeAll(fd, current.data, current.size);
    ::close(fd);
  }
  const char *parts[] = {
      "fuzz-frontend: ", why, " on ", current.label, "; input saved to ",
      current.savePath,  "\n"};
  for (const char *s : parts)
    writeAll(2, s, std::strlen(s));
}

void onFatalSignal(int sig) {
  const char *why = sig == SIGSEGV   ? "crash (SIGSEGV)"
                    : sig == SIGABRT ? "abort (SIGABRT)"
                    : sig == SIGBUS  ? "crash (SIGBUS)"
                    : sig == SIGFPE  ? "crash (SIGFPE)"
                    : sig == SIGILL  ? "crash (SIGILL)"
                                     : "fatal signal";
  saveCurrentInput(why);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

#ifdef OPDC_FUZZ_SANITIZED
void onSanitizerDeath() { saveCurrentInput("sanitizer error"); }
#endif

void installCrashHandlers() {
#ifdef OPDC_FUZZ_SANITIZED
  // The sanitizers own SIGSEGV and friends and print the useful report;
  // their death callback runs after it.
  __sanitizer_set_death_callback(onSanitizerDeath);
  std::signal(SIGABRT, onFatalSignal); // OPDC_ASSERT's abort()
#else
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    std::signal(sig, onFatalSignal);
#endif
}

/// Fails the run when one input takes longer than the limit. Polls rather
/// than interrupting: the front end is never asked to cooperate.
class Watchdog {
public:
  explicit Watchdog(double limitSeconds) : limit(limitSeconds) {
    thread = std::thread([this] { run(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    cv.notify_all();
    thread.join();
  }
  void start() {
    std::lock_guard<std::mutex> lock(mutex);
    startTime = Clock::now();
    armed = true;
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mutex);
    armed = false;
  }

private:
  using Clock = std::chrono::steady_clock;
  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (armed &&
          std::chrono::duration<double>(Clock::now() - startTime).count() >
              limit) {
        char why[64];
        std::snprintf(why, sizeof why, "timeout (> %g s)", limit);
        saveCurrentInput(why);
        std::fflush(nullptr);
        std::_Exit(1);
      }
    }
  }

  double limit;
  std::mutex mutex;
  std::condition_variable cv;
  Clock::time_point startTime;
  bool armed = false;
  bool stopping = false;
  std::thread thread;
};

//===----------------------------------------------------------------------===//
// Running the front end
//===----------------------------------------------------------------------===//

struct Example {
  std::string path;
  std::string text;
};

struct Outcome {
  bool loaded = false;     ///< loadProgramFromText returned a program
  bool parseClean = false; ///< no error while loading
  bool semaRan = false;
  bool semaOk = false;
  unsigned errors = 0;
};

struct Config {
  uint64_t seed = 1;
  uint64_t count = 1000;
  std::string stdlib;
  double timeout = 10.0;
  int64_t only = -1;
  bool semaAfterErrors = false;
  bool verbose = false;
  std::vector<std::string> inputs;
};

Outcome runFrontend(const std::string &text, const std::string &name,
                    const Config &cfg, llvm::raw_ostream &diagOut) {
  Outcome out;
  opdc::SourceManager sm;
  opdc::DiagnosticEngine diags(sm, diagOut);
  opdc::FrontendOptions opts;
  opts.stdlibDir = cfg.stdlib;
  auto program = opdc::loadProgramFromText(text, name, sm, diags, opts);
  out.loaded = program != nullptr;
  out.parseClean = out.loaded && !diags.hasErrors();
  if (program && (out.parseClean || cfg.semaAfterErrors)) {
    out.semaRan = true;
    out.semaOk = opdc::analyzeProgram(*program, diags);
  }
  out.errors = diags.errorCount();
  return out;
}

/// What a front end must never do besides crashing or hanging: fail
/// without telling the user why, or report an error and claim success.
std::string contractViolation(const Outcome &o) {
  if (!o.loaded && o.errors == 0)
    return "loadProgramFromText returned null without an error";
  if (o.semaRan && !o.semaOk && o.errors == 0)
    return "analyzeProgram failed without reporting an error";
  if (o.semaRan && o.semaOk && o.errors != 0)
    return "analyzeProgram returned true although errors were reported";
  return "";
}

//===----------------------------------------------------------------------===//
// Mutations
//===----------------------------------------------------------------------===//

struct Token {
  size_t begin, size;
  bool ident; ///< identifier or keyword
  bool number;
};

/// A rough tokenizer, good enough to pick whole words, numbers and
/// punctuation (comments and strings are single opaque spans).
std::vector<Token> tokenize(const std::string &s) {
  std::vector<Token> toks;
  size_t i = 0, n = s.size();
  auto isIdStart = [](unsigned char c) { return std::isalpha(c) || c == '_'; };
  auto isId = [](unsigned char c) { return std::isalnum(c) || c == '_'; };
  while (i < n) {
    unsigned char c = s[i];
    if (std::isspace(c)) {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        ++i;
    } else if (isIdStart(c)) {
      size_t b = i;
      while (i < n && isId(s[i]))
        ++i;
      toks.push_back({b, i - b, true, false});
    } else if (std::isdigit(c)) {
      size_t b = i;
      while (i < n && (isId(s[i]) || s[i] == '.'))
        ++i;
      toks.push_back({b, i - b, false, true});
    } else if (c == '"') {
      size_t b = i++;
      while (i < n && s[i] != '"' && s[i] != '\n')
        i += s[i] == '\\' ? 2 : 1;
      i = std::min(n, i + 1);
      toks.push_back({b, i - b, false, false});
    } else {
      toks.push_back({i, 1, false, false});
      ++i;
    }
  }
  return toks;
}

const std::vector<std::string> &keywords() {
  static const std::vector<std::string> k = {
      "program", "import",  "const",   "param",  "set",         "map",
      "dat",     "block",   "stencil", "kernel", "fn",          "proc",
      "main",    "from",    "size",    "halo",   "base",        "let",
      "var",     "if",      "else",    "for",    "in",          "while",
      "loop",    "over",    "return",  "break",  "continue",    "print",
      "printf",  "swap",    "write",   "read",   "to",          "solve",
      "along",   "adjoint", "tangent", "wrt",    "checkpoints", "true",
      "false",   "out",     "inout",   "inc",    "min",         "max",
      "sum",     "f64",     "f32",     "i32",    "i64",         "bool",
      "str",     "idx",     "sqrt",    "select", "wtime",       "tridiagonal",
      "std",     "math"};
  return k;
}

const std::vector<std::string> &punctuation() {
  static const std::vector<std::string> p = {
      "+",  "-",  "*",  "/",  "%",  "==", "!=", "<",  "<=", ">",  ">=",
      "&&", "||", "!",  "=",  "+=", "-=", "*=", "/=", "->", "..", "..=",
      "@",  ":",  ",",  ";",  ".",  "(",  ")",  "[",  "]",  "{",  "}",
      "\"", "/*", "*/", "//", "\\", "#",  "$",  "'",  "`",  "\n"};
  return p;
}

const std::vector<std::string> &numbers() {
  // clang-format off
  static const std::vector<std::string> v = {
      "0", "1", "-1", "2", "3", "4", "7", "-3", "255", "65536",
      "2147483647", "2147483648", "-2147483648", "4294967296",
      "9223372036854775807", "9223372036854775808",
      "99999999999999999999999", "0x", "0xFFFFFFFFFFFFFFFFFF", "1_", "1__0",
      "5i64", "5i32", "0.0", "-0.0", "1e308", "1e309", "1e-400", "1.4f",
      "3.5e38f", "1e39f", ".5", "1.", "1e", "1e+", "0.1f"};
  // clang-format on
  return v;
}

using Mutation = void (*)(std::string &, Rng &, const std::vector<Token> &,
                          const std::vector<std::string> &idents);

size_t spanLength(Rng &rng, size_t size) {
  // Mostly short spans, sometimes long ones.
  size_t maxLen = rng.chance(80) ? 16 : 256;
  return std::min(size, rng.between(1, maxLen));
}

void deleteRange(std::string &s, Rng &rng, const std::vector<Token> &,
                 const std::vector<std::string> &) {
  if (s.empty())
    return;
  size_t pos = rng.below(s.size());
  s.erase(pos, spanLength(rng, s.size() - pos));
}

void duplicateRange(std::string &s, Rng &rng, const std::vector<Token> &,
                    const std::vector<std::string> &) {
  if (s.empty())
    return;
  size_t pos = rng.below(s.size());
  std::string piece = s.substr(pos, spanLength(rng, s.size() - pos));
  s.insert(rng.below(s.size() + 1), piece);
}

void replaceBytes(std::string &s, Rng &rng, const std::vector<Token> &,
                  const std::vector<std::string> &) {
  if (s.empty())
    return;
  size_t n = rng.between(1, 8);
  for (size_t k = 0; k < n; ++k) {
    size_t pos = rng.below(s.size());
    switch (rng.below(4)) {
    case 0:
      s[pos] = '\0';
      break;
    case 1:
      s[pos] = char(0x80 + rng.below(0x80)); // high bytes, broken UTF-8
      break;
    case 2:
      s[pos] = char(s[pos] ^ (1u << rng.below(8))); // bit flip
      break;
    default:
      s[pos] = char(rng.below(256));
      break;
    }
  }
}

void truncate(std::string &s, Rng &rng, const std::vector<Token> &,
              const std::vector<std::string> &) {
  s.resize(rng.below(s.size() + 1));
}

void swapLines(std::string &s, Rng &rng, const std::vector<Token> &,
               const std::vector<std::string> &) {
  std::vector<std::string> lines;
  std::stringstream in(s);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  if (lines.size() < 2)
    return;
  std::swap(lines[rng.below(lines.size())], lines[rng.below(lines.size())]);
  s.clear();
  for (auto &l : lines)
    s += l + "\n";
}

void swapTokens(std::string &s, Rng &rng, const std::vector<Token> &toks,
                const std::vector<std::string> &) {
  if (toks.size() < 2)
    return;
  Token a = rng.pick(toks), b = rng.pick(toks);
  if (a.begin > b.begin)
    std::swap(a, b);
  if (a.begin + a.size > b.begin)
    return; // same token
  std::string ta = s.substr(a.begin, a.size), tb = s.substr(b.begin, b.size);
  s.replace(b.begin, b.size, ta); // the later one first: offsets stay valid
  s.replace(a.begin, a.size, tb);
}

void insertToken(std::string &s, Rng &rng, const std::vector<Token> &toks,
                 const std::vector<std::string> &idents) {
  std::string word;
  switch (rng.below(4)) {
  case 0:
    word = rng.pick(keywords());
    break;
  case 1:
    word = rng.pick(punctuation());
    break;
  case 2:
    word = rng.pick(numbers());
    break;
  default:
    word = idents.empty() ? "x" : rng.pick(idents);
    break;
  }
  // At a token boundary most of the time, anywhere otherwise.
  size_t pos = !toks.empty() && rng.chance(75) ? rng.pick(toks).begin
                                               : rng.below(s.size() + 1);
  s.insert(pos, rng.chance(50) ? word + " " : word);
}

void replaceIdentifier(std::string &s, Rng &rng, const std::vector<Token> &toks,
                       const std::vector<std::string> &idents) {
  // Keeps the syntax mostly valid, so sema sees wrong names, wrong kinds of
  // names and wrong types rather than parse errors.
  std::vector<Token> ids;
  for (auto &t : toks)
    if (t.ident)
      ids.push_back(t);
  if (ids.empty())
    return;
  const Token &t = rng.pick(ids);
  std::string with = rng.chance(80) && !idents.empty() ? rng.pick(idents)
                                                       : rng.pick(keywords());
  s.replace(t.begin, t.size, with);
}

void replaceNumber(std::string &s, Rng &rng, const std::vector<Token> &toks,
                   const std::vector<std::string> &) {
  std::vector<Token> nums;
  for (auto &t : toks)
    if (t.number)
      nums.push_back(t);
  if (nums.empty())
    return;
  const Token &t = rng.pick(nums);
  s.replace(t.begin, t.size, rng.pick(numbers()));
}

void nest(std::string &s, Rng &rng, const std::vector<Token> &toks,
          const std::vector<std::string> &) {
  // Deep but bounded nesting: opening brackets, sometimes balanced.
  static const char *open[] = {"(", "[", "{", "-", "!"};
  static const char *close[] = {")", "]", "}", "", ""};
  size_t kind = rng.below(5), depth = rng.between(2, 64);
  size_t pos = toks.empty() ? 0 : rng.pick(toks).begin;
  std::string pre, post;
  for (size_t k = 0; k < depth; ++k) {
    pre += open[kind];
    post += close[kind];
  }
  if (rng.chance(50) && !toks.empty()) {
    const Token &t = rng.pick(toks);
    if (t.begin >= pos) {
      s.insert(t.begin + t.size, post);
    }
  }
  s.insert(pos, pre);
}

const std::vector<Mutation> &mutations() {
  static const std::vector<Mutation> m = {
      deleteRange,       duplicateRange, replaceBytes, truncate,
      swapLines,         swapTokens,     insertToken,  replaceIdentifier,
      replaceIdentifier, replaceNumber,  nest};
  return m;
}

std::vector<std::string> identifiersOf(const std::string &s,
                                       const std::vector<Token> &toks) {
  std::vector<std::string> ids;
  for (auto &t : toks)
    if (t.ident)
      ids.push_back(s.substr(t.begin, t.size));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string mutate(const std::string &original, Rng &rng) {
  std::string s = original;
  size_t n = rng.between(1, 4);
  for (size_t k = 0; k < n; ++k) {
    auto toks = tokenize(s);
    auto ids = identifiersOf(s, toks);
    mutations()[rng.below(mutations().size())](s, rng, toks, ids);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

bool parseUnsigned(const std::string &v, uint64_t &out) {
  if (v.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 0);
  if (errno || *end)
    return false;
  out = x;
  return true;
}

bool parseArgs(int argc, char **argv, Config &cfg) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *prefix, std::string &out) {
      size_t n = std::strlen(prefix);
      if (a.compare(0, n, prefix) != 0)
        return false;
      out = a.substr(n);
      return true;
    };
    std::string v;
    uint64_t u = 0;
    if (value("--seed=", v)) {
      if (!parseUnsigned(v, cfg.seed))
        return false;
    } else if (value("--count=", v)) {
      if (!parseUnsigned(v, cfg.count))
        return false;
    } else if (value("--only=", v)) {
      if (!parseUnsigned(v, u))
        return false;
      cfg.only = int64_t(u);
    } else if (value("--timeout=", v)) {
      cfg.timeout = std::atof(v.c_str());
      if (cfg.timeout <= 0)
        return false;
    } else if (value("--stdlib=", v)) {
      cfg.stdlib = v;
    } else if (a == "--sema-after-errors") {
      cfg.semaAfterErrors = true;
    } else if (a == "--verbose" || a == "-v") {
      cfg.verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      return false;
    } else {
      cfg.inputs.push_back(a);
    }
  }
  return !cfg.inputs.empty();
}

bool collectExamples(const Config &cfg, std::vector<Example> &out) {
  std::vector<std::string> paths;
  for (auto &in : cfg.inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      for (auto it = fs::recursive_directory_iterator(in, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".opd")
          paths.push_back(it->path().string());
    } else if (fs::is_regular_file(in, ec)) {
      paths.push_back(in);
    } else {
      llvm::errs() << "fuzz-frontend: cannot read '" << in << "'\n";
      return false;
    }
  }
  std::sort(paths.begin(), paths.end());
  for (auto &p : paths) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    out.push_back({p, ss.str()});
  }
  if (out.empty()) {
    llvm::errs() << "fuzz-frontend: no .opd files found\n";
    return false;
  }
  return true;
}

std::string savePathFor(uint64_t seed, int64_t iter) {
  return "fuzz-frontend-" + std::to_string(seed) + "-" +
         (iter < 0 ? std::string("example") : std::to_string(iter)) + ".opd";
}

/// Publishes the input for the crash handlers and the watchdog.
void setCurrent(const std::string &text, const std::string &savePath,
                const std::string &label) {
  current.data = text.data();
  current.size = text.size();
  std::snprintf(current.savePath, sizeof current.savePath, "%s",
                savePath.c_str());
  std::snprintf(current.label, sizeof current.label, "%s", label.c_str());
}

void saveFile(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

} // namespace

int main(int argc, char **argv) {
  Config cfg;
  if (!parseArgs(argc, argv, cfg)) {
    llvm::errs() << "usage: opdc_frontend_fuzz --seed=N --count=N "
                    "--stdlib=DIR [--timeout=S] [--only=ITER] "
                    "[--sema-after-errors] [--verbose] DIR_OR_FILE...\n";
    return 2;
  }
  std::vector<Example> examples;
  if (!collectExamples(cfg, examples))
    return 2;

  installCrashHandlers();
  Watchdog watchdog(cfg.timeout);
  uint64_t passed = 0, failed = 0;
  unsigned saved = 0;

  auto check = [&](const std::string &text, const std::string &name,
                   const std::string &label, int64_t iter, bool mustBeValid) {
    std::string savePath = savePathFor(cfg.seed, iter);
    setCurrent(text, savePath, label);
    inFrontend = true;
    watchdog.start();
    // An example that must be valid shows its diagnostics; mutated inputs
    // are expected to be wrong and stay quiet.
    Outcome o = runFrontend(text, name, cfg,
                            mustBeValid ? llvm::errs() : llvm::nulls());
    watchdog.stop();
    inFrontend = false;
    std::string why = contractViolation(o);
    if (why.empty() && mustBeValid && !(o.semaRan && o.semaOk))
      why = "the unmutated example does not pass the front end";
    if (why.empty())
      return true;
    llvm::errs() << "fuzz-frontend: FAIL " << label << ": " << why << "\n";
    if (iter >= 0 && saved < 20) {
      saveFile(savePath, text);
      llvm::errs() << "fuzz-frontend: input saved to " << savePath << "\n";
      ++saved;
    }
    return false;
  };

  // The examples themselves must stay valid programs.
  if (cfg.only < 0)
    for (auto &ex : examples)
      if (!check(ex.text, ex.path, ex.path + " (unmutated)", -1, true))
        ++failed;

  uint64_t parsedClean = 0;
  for (uint64_t i = 0; i < cfg.count; ++i) {
    if (cfg.only >= 0 && i != uint64_t(cfg.only))
      continue;
    Rng rng = rngFor(cfg.seed, i);
    const Example &ex = examples[rng.below(examples.size())];
    std::string text = mutate(ex.text, rng);
    std::string label = "seed " + std::to_string(cfg.seed) + " iteration " +
                        std::to_string(i) + " (" + ex.path + ")";
    if (cfg.only >= 0)
      saveFile(savePathFor(cfg.seed, int64_t(i)), text);
    if (check(text, ex.path, label, int64_t(i), false))
      ++passed;
    else
      ++failed;
    if (cfg.verbose) {
      // Cheap second look to report how far inputs get (for tuning).
      Outcome o = runFrontend(text, ex.path, cfg, llvm::nulls());
      parsedClean += o.parseClean;
    }
  }
  if (cfg.verbose)
    llvm::outs() << "fuzz-frontend: " << parsedClean
                 << " mutated inputs parsed without error\n";
  llvm::outs() << "fuzz-frontend: " << passed << " passed, " << failed
               << " failed\n";
  llvm::outs().flush();
  return failed ? 1 : 0;
}
