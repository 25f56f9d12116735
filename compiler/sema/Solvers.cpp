// Solvers.cpp - Built-in solver calls (`solve tridiagonal(...) along D`).
// SPDX-License-Identifier: Apache-2.0
//
// `solve tridiagonal(a, b, c, d) along D over grid[...]` runs one Thomas
// solve per line of the block along dimension D: a, b, c are the sub-,
// main and super-diagonals, d the right-hand side, overwritten with the
// solution. All four are scalar float dats on the block, of one type.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

namespace opdc::sema {

using namespace ast;
using llvm::dyn_cast_or_null;

void Sema::checkSolve(SolveStmt &s) {
  static const char *const solvers[] = {"tridiagonal"};
  bool known = false;
  for (const char *n : solvers)
    known = known || s.solver.name == n;
  if (!known) {
    std::string msg = "unknown solver '" + s.solver.name + "'";
    for (const char *n : solvers)
      if (llvm::StringRef(s.solver.name).edit_distance(n) <=
          std::max<size_t>(1, (s.solver.name.size() + 2) / 3))
        msg += std::string("; did you mean '") + n + "'?";
    diags.error(s.solver.range, msg);
  }
  resolveRef(s.space, Want::Block);
  auto *block = dyn_cast_or_null<BlockDecl>(s.space.decl);
  checkRanges(s.ranges, s.hasRanges, s.space, block, s.space.range);

  std::optional<int64_t> along = foldInteger(s.along, "'along' dimension");
  if (along && block && block->dims > 0) {
    if (*along < 0 || *along >= block->dims)
      diags.error(s.along->range,
                  "'along' dimension " + std::to_string(*along) +
                      " is out of range for block '" + block->name + "' with " +
                      std::to_string(block->dims) +
                      (block->dims == 1 ? " dimension" : " dimensions"));
    else
      s.alongDim = *along;
  }

  if (known && s.args.size() != 4) {
    diags.error(s.solver.range, "'" + s.solver.name + "' takes 4 dats, found " +
                                    std::to_string(s.args.size()));
  }
  DatDecl *first = nullptr;
  for (auto &a : s.args) {
    resolveRef(a, Want::Dat);
    auto *dat = dyn_cast_or_null<DatDecl>(a.decl);
    if (!dat || !block)
      continue;
    if (dat->on.decl && dat->on.decl != block) {
      diags.error(
          a.range,
          "dat '" + dat->name + "' is on " +
              (llvm::isa<BlockDecl>(dat->on.decl) ? "block '" : "set '") +
              dat->on.name + "' but the solve is over block '" + block->name +
              "'");
      noteDeclared(dat);
      continue;
    }
    Type t = dat->elemType.resolved;
    if (t.isError())
      continue;
    if (!t.isFloatScalar()) {
      diags.error(a.range, "dat '" + dat->name + "' has element type '" +
                               t.str() + "'; '" + s.solver.name +
                               "' needs scalar 'f64' or 'f32' dats");
      noteDeclared(dat);
      continue;
    }
    if (!first) {
      first = dat;
      continue;
    }
    if (t != first->elemType.resolved)
      diags.error(a.range, "dat '" + dat->name + "' has element type '" +
                               t.str() + "' but '" + first->name + "' has '" +
                               first->elemType.resolved.str() + "'");
  }
}

} // namespace opdc::sema
