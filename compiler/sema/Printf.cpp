// Printf.cpp - `print` and `printf`: printable values and format strings.
// SPDX-License-Identifier: Apache-2.0
//
// printf's format is passed to C's printf unchanged, so every conversion
// must match its argument exactly as C sees it:
//   %d %i %u %x %X %o   an i32;  with the length `l` or `ll` (%ld) an i64
//   %f %F %e %E %g %G %a %A   an f64 or f32 (promoted to double, as C
//                             varargs do); `%lf` is accepted
//   %s   a str;   %%   a literal percent sign
// Flags (-+ #0), a width and a precision are allowed; `*` widths, %c, %p
// and %n are not. Untyped literal arguments take the type their conversion
// asks for (`printf("%f", 1)` passes 1.0).
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

namespace opdc::sema {

using namespace ast;
using llvm::dyn_cast;

namespace {

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

struct Conversion {
  size_t begin, end; ///< offsets of the specification in the scanned text
  std::string spec;  ///< "%5.2f"
  char conv = 0;
  int longs = 0;    ///< number of 'l' length modifiers
  bool bad = false; ///< reported already
};

} // namespace

void Sema::checkPrint(PrintStmt &s) {
  if (!s.formatted) {
    for (auto &a : s.args) {
      // A dat's values are printed by writing it as CSV (docs/io.md).
      if (auto *n = dyn_cast<NameExpr>(a.get()))
        if (Decl *d = lookup(n->name); d && llvm::isa<DatDecl>(d)) {
          diags.error(a->range, "'" + n->name +
                                    "' is a dat, print takes values; to "
                                    "see its values write it as CSV: write " +
                                    n->name +
                                    " to \"-\" (standard "
                                    "output) or to \"" +
                                    n->name + ".csv\"");
          noteDeclared(d);
          continue;
        }
      Type t = checkValue(a);
      if (!t.isError() && !t.isScalar() && !t.isString())
        diags.error(a->range, "cannot print a value of type '" + t.str() +
                                  "'; print its elements");
    }
    return;
  }
  const std::string what = s.fails ? "'fail'" : "'printf'";
  if (s.args.empty()) {
    diags.error(s.range, what + " needs a format string");
    return;
  }
  auto *fmt = dyn_cast<StringLitExpr>(s.args.front().get());
  if (!fmt) {
    checkValue(s.args.front());
    diags.error(s.args.front()->range,
                "the format of " + what + " must be a string literal");
    for (size_t i = 1; i < s.args.size(); ++i)
      checkValue(s.args[i]);
    return;
  }
  check(s.args.front());
  for (size_t i = 1; i < s.args.size(); ++i)
    check(s.args[i]);
  std::vector<ExprPtr> &all = s.args;
  checkFormat(*fmt, all);
  for (size_t i = 1; i < s.args.size(); ++i)
    finalize(s.args[i]);
}

void Sema::checkFormat(StringLitExpr &fmt, std::vector<ExprPtr> &all) {
  // Scan the source text when we have it, so that carets land on the
  // conversion; escapes never contain '%', so offsets agree with the value.
  llvm::StringRef raw = textOf(fmt.range);
  llvm::StringRef text = fmt.value;
  const char *base = nullptr;
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
    text = raw.drop_front().drop_back();
    base = raw.data() + 1;
  }
  auto rangeOf = [&](const Conversion &c) {
    if (!base)
      return fmt.range;
    return SourceRange(llvm::SMLoc::getFromPointer(base + c.begin),
                       llvm::SMLoc::getFromPointer(base + c.end));
  };

  std::vector<Conversion> convs;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%')
      continue;
    Conversion c;
    c.begin = i++;
    if (i < text.size() && text[i] == '%')
      continue;
    while (i < text.size() && llvm::StringRef("-+ #0").contains(text[i]))
      ++i;
    bool star = false;
    while (i < text.size() && (isdigit(text[i]) || text[i] == '*'))
      star = star || text[i++] == '*';
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && (isdigit(text[i]) || text[i] == '*'))
        star = star || text[i++] == '*';
    }
    while (i < text.size() && text[i] == 'l' && c.longs < 2) {
      ++c.longs;
      ++i;
    }
    if (i < text.size())
      c.conv = text[i];
    c.end = std::min(i + 1, text.size());
    c.spec = text.slice(c.begin, c.end).str();
    if (star) {
      diags.error(rangeOf(c), "'*' widths and precisions are not supported "
                              "in format strings");
      c.bad = true;
    } else if (!c.conv ||
               !llvm::StringRef("diuxXofFeEgGaAs").contains(c.conv)) {
      diags.error(rangeOf(c),
                  "invalid conversion '" + c.spec + "' in format string");
      c.bad = true;
    }
    convs.push_back(c);
    i = c.end - 1;
  }

  size_t nargs = all.size() - 1;
  if (convs.size() != nargs) {
    diags.error(fmt.range,
                "format string has " + plural(convs.size(), "conversion") +
                    " but " + std::to_string(nargs) +
                    (nargs == 1 ? " argument was" : " arguments were") +
                    " given");
    return;
  }
  for (size_t n = 0; n < convs.size(); ++n) {
    Conversion &c = convs[n];
    ExprPtr &arg = all[n + 1];
    if (c.bad)
      continue;
    std::string fmtDesc = "format '" + c.spec + "'";
    bool isIntConv = llvm::StringRef("diuxXo").contains(c.conv);
    bool isFloatConv = llvm::StringRef("fFeEgGaA").contains(c.conv);
    if (isUntyped(*arg)) {
      Type want = isIntConv     ? Type::scalarOf(c.longs ? ScalarKind::I64
                                                         : ScalarKind::I32)
                  : isFloatConv ? Type::scalarOf(ScalarKind::F64)
                                : Type::string();
      if (adapt(arg, want) == Adapt::Reported)
        continue;
      finalize(arg);
    }
    Type t = arg->type;
    if (t.isError())
      continue;
    if (t.isVoid()) {
      checkValue(arg);
      continue;
    }
    if (isIntConv) {
      if (!t.isIntegerScalar()) {
        diags.error(arg->range, fmtDesc +
                                    " expects an integer argument, "
                                    "found '" +
                                    t.str() + "'");
        continue;
      }
      bool wide = t.scalar == ScalarKind::I64;
      if (wide && !c.longs) {
        std::string fix = c.spec;
        fix.insert(fix.size() - 1, "l");
        diags.error(arg->range, fmtDesc +
                                    " expects an 'i32' argument, found "
                                    "'i64'; use '" +
                                    fix + "'");
      } else if (!wide && c.longs) {
        std::string fix = c.spec;
        fix.erase(fix.size() - 1 - size_t(c.longs), size_t(c.longs));
        diags.error(arg->range, fmtDesc +
                                    " expects an 'i64' argument, found "
                                    "'i32'; use '" +
                                    fix + "'");
      }
      continue;
    }
    if (isFloatConv) {
      if (!t.isFloatScalar())
        diags.error(arg->range, fmtDesc + " expects a float argument, found '" +
                                    t.str() + "'");
      continue;
    }
    if (!t.isString())
      diags.error(arg->range, fmtDesc + " expects a 'str' argument, found '" +
                                  t.str() + "'");
  }
}

} // namespace opdc::sema
