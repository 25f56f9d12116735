// LoopNames.cpp - The names users see for loops the passes made.
// SPDX-License-Identifier: Apache-2.0
//
// The passes name the kernels they derive so that names stay unique in the
// program (suffixes .b, .bt, .d, .cg_r, a counter, '+' between fused
// kernels); those names are what the IR printer and the generated code's
// symbols use. A user reading --profile or a remark wants the kernel of the
// source and what the compiler made of it, so this one function maps the
// former to the latter; the runtime merges loops of one user name into one
// profile row.
#include "ir/LoopNames.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Regex.h"

#include <vector>

namespace opdc::ir {

namespace {

/// Strips a trailing ".N" (passes/loops/Fuse.cpp's counter for two different
/// fused kernels of one name).
llvm::StringRef dropDotCounter(llvm::StringRef s) {
  llvm::StringRef t = s.rtrim("0123456789");
  if (t.size() < s.size() && t.size() > 1 && t.ends_with("."))
    return t.drop_back();
  return s;
}

/// One kernel of a (possibly fused) name.
std::string partName(llvm::StringRef k) {
  k = dropDotCounter(k);
  // Kernels the derivative passes make from nothing: PREFIX_WHAT_TYPE, with
  // a vector length (x4) or stencil offsets (p1m0) after the type: the fill
  // kernels (passes/deriv/DerivUtils.cpp: adjoint_copy_f64, tangent_zero_f32x3)
  // and the solve derivatives' (passes/deriv/SolveDiff.cpp: adjoint_axpy_f64).
  static const llvm::Regex made(
      "^(adjoint|tangent)_([a-z0-9_]+)_(f64|f32|i32|i64|bool)[xpm0-9]*$");
  llvm::SmallVector<llvm::StringRef, 4> m;
  if (made.match(k, &m))
    return m[2].str() + " (" + m[1].str() + ")";
  // Derived kernels: BASE.SUFFIX with a counter after the suffix when a
  // kernel of that name existed (step.b2, step.bt3, flux.d2).
  struct Suffix {
    const char *text, *label;
  };
  static const Suffix suffixes[] = {
      {".bt", "adjoint"},
      {".b", "adjoint"},
      {".d", "tangent"},
      {".cg_r", "cg"},
      // passes/deriv/MinMaxDiff.cpp: the parts of a min/max reduction's
      // adjoint.
      {".min", "adjoint"},
      {".win", "adjoint"},
      {".pick", "adjoint"},
      {".rest", "adjoint"},
      // passes/deriv/AdjointZeros.cpp: an adjoint kernel that sets or keeps
      // what it incremented; the same loop to the user.
      {".set", ""},
      {".keep", ""},
  };
  llvm::StringRef stem = k.rtrim("0123456789");
  for (const Suffix &s : suffixes) {
    llvm::StringRef suffix = s.text;
    if (!stem.ends_with(suffix) || stem.size() == suffix.size())
      continue;
    std::string inner = partName(stem.drop_back(suffix.size()));
    std::string label = std::string(" (") + s.label + ")";
    if (!*s.label || llvm::StringRef(inner).ends_with(label))
      return inner;
    return inner + label;
  }
  return k.str();
}

} // namespace

std::string userLoopName(llvm::StringRef kernel) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  kernel.split(parts, '+');
  if (parts.size() == 1)
    return partName(kernel);
  // Runs of one kernel as "name xN".
  std::vector<std::string> items;
  std::string last;
  unsigned run = 0;
  auto flush = [&] {
    if (run)
      items.push_back(run > 1 ? last + " x" + std::to_string(run) : last);
  };
  for (llvm::StringRef p : parts) {
    std::string n = partName(p);
    if (run && n == last) {
      ++run;
      continue;
    }
    flush();
    last = n;
    run = 1;
  }
  flush();
  const std::string tag = " (fused)";
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string more = "+" + std::to_string(items.size() - i) + " more";
    std::string next = (out.empty() ? "" : "+") + items[i];
    bool lastItem = i + 1 == items.size();
    size_t room = MaxUserLoopName - tag.size() - (lastItem ? 0 : more.size());
    if (!out.empty() && out.size() + next.size() > room) {
      out += more;
      break;
    }
    out += next;
  }
  return out + tag;
}

} // namespace opdc::ir
