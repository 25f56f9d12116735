// Params.cpp - A compiled program's params: setting one from text,
// reading an input deck, a value as --help shows it (core/Params.h).
// SPDX-License-Identifier: Apache-2.0
//
// The command line that uses them (opd_rt_init) is exec/Init.cpp: it also
// sets options of exec/ (plans, --check-fp, checkpoints), and core/, the
// runtime's ground floor, includes nothing of exec/.
#include "core/Params.h"
#include "core/Dist.h"
#include "core/Format.h"
#include "core/Renumber.h"
#include "core/Runtime.h"
#include "opd_rt.h"

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

const char *typeLabel(int type) {
  return type == OPD_STR ? "str" : scalarName(type);
}

namespace {
// Set while a deck line is applied: "FILE:LINE" for messages about its keys.
std::string deckWhere;
} // namespace

[[noreturn]] void badValue(const std::string &option, const char *value,
                           const char *expected) {
  if (!deckWhere.empty())
    failf("%s: invalid value '%s' for key '%s': expected %s", deckWhere.c_str(),
          value, option.c_str(), expected);
  failf("invalid value '%s' for option '--%s': expected %s", value,
        option.c_str(), expected);
}

namespace {
[[noreturn]] void outOfRange(const std::string &option, const char *value,
                             const char *type) {
  if (!deckWhere.empty())
    failf("%s: value '%s' for key '%s' is out of range for %s",
          deckWhere.c_str(), value, option.c_str(), type);
  failf("value '%s' for option '--%s' is out of range for %s", value,
        option.c_str(), type);
}
} // namespace

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

namespace {
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
} // namespace

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

} // namespace opdc::rt
