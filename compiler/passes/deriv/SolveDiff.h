// SolveDiff.h - Derivatives of `solve` statements, shared by the tangent
// and adjoint passes.
// SPDX-License-Identifier: Apache-2.0
//
// A solve is differentiated as the linear-algebra identity it stands for,
// not by differentiating the solver's iterations (SolveDiff.cpp says why
// and how): the tangent of x = A^-1 d is A^-1 (d' - A' x), the adjoint is
// a solve with the transposed operator. The statements built are ordinary
// loops over the solve's lines and further `solve` statements, so threads,
// MPI (the distributed tridiagonal solve, CG's reductions) and backends
// handle them with nothing new.
#ifndef OPDC_PASSES_DERIV_SOLVEDIFF_H
#define OPDC_PASSES_DERIV_SOLVEDIFF_H

#include "passes/Pass.h"
#include "passes/deriv/DerivUtils.h"

#include "ir/IR.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace opdc {

class SolveDiff {
public:
  /// The derivative dat of an active primal dat, or null for a passive one.
  using DerivOf = std::function<ir::Dat *(ir::Dat *)>;
  /// Appends the derivative of cg's operator proc (its tangent, or its
  /// forward and reverse sweeps) to the statements given.
  using Emit = std::function<void(std::vector<ir::StmtPtr> &)>;

  /// \p fill is the pass's own zero/copy loops (their kernels are named
  /// once per pass); \p prefix names the kernels and work dats made here.
  SolveDiff(ir::Program &p, PassContext &ctx, FillLoops &fill,
            std::string prefix)
      : program(p), ctx(ctx), fill(fill), prefix(std::move(prefix)) {}

  /// Checks that \p s can be differentiated given the active dats (cg: an
  /// operator reading active dats must itself be differentiable); reports
  /// an error and returns false if not.
  bool check(const ir::SolveStmt &s, const std::set<ir::Dat *> &active);

  /// Forward mode: what runs right after the primal solve \p s to turn the
  /// tangents of its inputs (before it) into those of its outputs.
  /// \p opTangent: cg's operator's tangent (when operatorActive).
  void tangent(const ir::SolveStmt &s, const DerivOf &tangentOf,
               const Emit &opTangent, std::vector<ir::StmtPtr> &out);
  /// Reverse mode: what runs in the reverse sweep, the primal state being
  /// the one before \p s: the adjoints of its outputs become those of its
  /// inputs. \p adjointOf also gives the adjoint dats of active inputs.
  /// \p opAdjoint: cg's operator's forward and reverse sweeps.
  void adjoint(const ir::SolveStmt &s, const DerivOf &adjointOf,
               const Emit &opAdjoint, std::vector<ir::StmtPtr> &out);

private:
  ir::Function *kernel(const std::string &name, ScalarKind t,
                       const std::vector<int64_t> &offset, int form);
  ir::Stencil *point(const std::vector<int64_t> &offset);
  ir::Dat *work(ir::Dat *like, const std::string &role);
  std::vector<ir::LoopRange> lines(const ir::SolveStmt &s) const;
  /// The lines' rows whose neighbour at \p shift (-1, 0, 1) along the
  /// solve's dimension is in the line.
  std::vector<ir::LoopRange> rowsWithNeighbour(const ir::SolveStmt &s,
                                               int shift) const;
  /// y op= c * x(shift along the solve's dimension) over the rows where
  /// the neighbour exists.
  void mulSub(const ir::SolveStmt &s, ir::Dat *c, ir::Dat *x, int shift,
              ir::Dat *y, std::vector<ir::StmtPtr> &out);
  void shiftCopy(const ir::SolveStmt &s, ir::Dat *x, int shift, ir::Dat *y,
                 std::vector<ir::StmtPtr> &out);
  /// A direct loop over x's space: y = y + x (AddInto) or y = -x (Negate).
  void direct(const ir::SolveStmt &s, const char *name, int form, ir::Dat *x,
              ir::Dat *y, std::vector<ir::StmtPtr> &out);
  /// cg's work dats p and Ap saved, p = \p at (unless null), what \p run
  /// appends, p and Ap restored: the primal state stays as it was.
  void keepingWork(const ir::SolveStmt &s, ir::Dat *at,
                   const std::function<void()> &run,
                   std::vector<ir::StmtPtr> &out);
  ir::StmtPtr tridiagonal(const ir::SolveStmt &s, ir::Dat *a, ir::Dat *b,
                          ir::Dat *c, ir::Dat *d);
  /// A cg solve of A x = rhs with \p s's operator, tolerance and limit,
  /// the primal's p and Ap saved around it.
  void cg(const ir::SolveStmt &s, ir::Dat *rhs, ir::Dat *x,
          std::vector<ir::StmtPtr> &out);

  ir::Program &program;
  PassContext &ctx;
  FillLoops &fill;
  std::string prefix;
  std::map<std::string, ir::Function *> kernels;
  std::map<std::pair<ir::Dat *, std::string>, ir::Dat *> works;
};

} // namespace opdc
#endif
