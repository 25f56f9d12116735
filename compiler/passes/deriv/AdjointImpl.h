// AdjointImpl.h - What the files of the adjoint pass share: the request
// rewriter, one request's expansion, and the helpers they use.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to compiler/passes/deriv/ (the pass's entry point is Adjoint.h).
// The pass is split along its parts: the expansion of a request and the
// plain body (Adjoint.cpp, whose comment says what is built and why it is
// legal), the forward and reverse sweeps of host statements
// (AdjointSweep.cpp) and the adjoint of one loop (AdjointLoop.cpp).
#ifndef OPDC_PASSES_DERIV_ADJOINTIMPL_H
#define OPDC_PASSES_DERIV_ADJOINTIMPL_H

#include "passes/deriv/DerivUtils.h"
#include "passes/deriv/ReverseDiff.h"
#include "passes/deriv/ReverseDiffBuild.h"
#include "passes/deriv/SolveDiff.h"
#include "passes/deriv/SolveFlow.h"

#include "ir/IR.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace opdc::adj {

// The pass's code names the IR's types unqualified, as every pass does,
// and builds nodes with reverse mode's shorthands (ref, assign, zero).
using namespace ir;
using namespace rdiff;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

inline constexpr const char *PassName = "adjoint";

/// The variable an lvalue assigns (a variable or a component of one).
inline unsigned rootSlot(const Expr &target) {
  const Expr *e = &target;
  while (auto *i = dyn_cast<IndexExpr>(e))
    e = i->base.get();
  return cast<VarRefExpr>(*e).slot;
}

/// The dats a body writes (loops' out, inout and inc arguments, swaps) and
/// the host variables it assigns, in first-seen order.
struct Writes : IRVisitor {
  std::vector<Dat *> dats;
  std::vector<unsigned> vars;
  std::set<const Dat *> seenDats;
  std::set<unsigned> seenVars;
  void dat(Dat *d) {
    if (seenDats.insert(d).second)
      dats.push_back(d);
  }
  void var(unsigned s) {
    if (seenVars.insert(s).second)
      vars.push_back(s);
  }
  void visitDecl(const DeclStmt &d) override {
    var(d.slot);
    IRVisitor::visitDecl(d);
  }
  void visitAssign(const AssignStmt &a) override { var(rootSlot(*a.target)); }
  void visitFor(const ForStmt &f) override {
    var(f.slot);
    IRVisitor::visitFor(f);
  }
  void visitParLoop(const ParLoopStmt &l) override {
    for (const AccessDescriptor &a : l.args) {
      if (a.usesDat() && modeWrites(a.mode))
        dat(a.dat);
      if (a.kind == ArgKind::Reduction)
        var(unsigned(a.var));
    }
  }
  void visitSwap(const SwapStmt &s) override {
    dat(s.a);
    dat(s.b);
  }
  void visitSolve(const SolveStmt &s) override {
    for (Dat *d : solveWritten(s))
      dat(d);
    if (s.itersVar >= 0) {
      var(unsigned(s.itersVar));
      var(unsigned(s.residualVar));
    }
  }
};

/// A copy of solve \p s that assigns its results (the adjoint declares
/// P's variables up front).
inline StmtPtr assigningSolve(const SolveStmt &s) {
  StmtPtr c = s.clone();
  auto &v = cast<SolveStmt>(*c);
  v.resultsAssigned = v.itersVar >= 0;
  return c;
}

class AdjointBuilder : public RequestRewriter {
public:
  AdjointBuilder(Program &p, PassContext &ctx) : program(p), ctx(ctx) {}
  bool isRequest(const Stmt &s) const override { return isa<AdjointStmt>(s); }
  std::vector<StmtPtr> expand(Function &caller, const Stmt &request) override;

  Program &program;
  PassContext &ctx;
  bool changed = false;
  FillLoops fill{program, "adjoint"};
  SolveDiff solves{program, ctx, fill, "adjoint"};
  std::map<Dat *, Dat *> adjointDats, finalDats;
  std::map<std::pair<const Function *, std::vector<bool>>, Function *>
      adjointKernels;
  unsigned tapePairs = 0; ///< the last TapeStmt::pair given out
};

/// One shift of a transposed stencil on its way to the frame loops: the
/// shifted kernel and its loop's arguments; the kernel as kernel-dce
/// leaves it (the recomputed primal of a kernel linear in it dropped) and
/// which arguments it still takes.
struct FrameShift {
  const std::vector<int64_t> *t = nullptr;
  Function *kernel = nullptr;
  std::vector<AccessDescriptor> args;
  std::unique_ptr<Function> live;
  std::vector<bool> liveArg;
};

/// One request being expanded.
class Expansion {
public:
  Expansion(AdjointBuilder &b, Function &caller, const AdjointStmt &req)
      : b(b), caller(caller), req(req),
        pcopy(procWithCallsInlined(b.program, *req.proc, b.ctx)), p(*pcopy),
        rd(caller, b.ctx.diags) {}
  std::vector<StmtPtr> run();

private:
  bool error(SourceRange r, const std::string &msg) {
    b.ctx.diags.error(r, msg);
    ok = false;
    return false;
  }
  bool check(const Body &body);
  unsigned hoist(const std::string &name, Type t) {
    unsigned s = caller.addVar(p.name + "." + name, t, true, req.range);
    hoisted.push_back(std::make_unique<DeclStmt>(s, zero(t), req.range));
    return s;
  }
  Body plain(const Body &in);
  void sweep(const Body &in, Body &fwd, Body &rev, bool top,
             bool cancelTail = false);
  /// What sweepStmt tells sweep about the statement it did: how many
  /// statements open its reverse chunk and undo its forward piece (NoUndo:
  /// it cannot be cancelled), and whether the rest reads no primal state.
  static constexpr size_t NoUndo = ~size_t(0);
  size_t undoLen = NoUndo;
  bool adjointPure = false;
  void sweepStmt(const Stmt &s, std::vector<StmtPtr> &fwd,
                 std::vector<StmtPtr> &rev, bool top);
  // sweepStmt's larger cases: a for loop (at the top: checkpointed), a
  // parallel loop (taped, its adjoint loops), a solve (SolveDiff.h).
  void sweepFor(const ForStmt &f, std::vector<StmtPtr> &fwd,
                std::vector<StmtPtr> &rev, bool top);
  void sweepLoop(const ParLoopStmt &l, std::vector<StmtPtr> &fwd,
                 std::vector<StmtPtr> &rev);
  void sweepSolve(const SolveStmt &v, std::vector<StmtPtr> &fwd,
                  std::vector<StmtPtr> &rev);
  void adjointLoop(const ParLoopStmt &l, std::vector<StmtPtr> &out);
  /// Block loops: the adjoints of active reads off the centre of a stencil,
  /// one loop per stencil offset (ReverseDiff.h); marks them done in \p plan.
  bool transposedStencils(const ParLoopStmt &l,
                          std::vector<AdjointParamPlan> &plan,
                          std::vector<bool> &key, std::vector<StmtPtr> &out);
  /// The frame around the interior \p interior of \p l's shifts
  /// \p shifts (spanning tMin..tMax): one loop a face and shift, each
  /// shift's kernel guarded by the point's position (AdjointLoop.cpp).
  void frameLoops(const ParLoopStmt &l, std::vector<FrameShift> &shifts,
                  const std::vector<int64_t> &tMin,
                  const std::vector<int64_t> &tMax,
                  const std::vector<LoopRange> &interior,
                  std::vector<StmtPtr> &out);
  void layerLoops(const ParLoopStmt &l, const std::vector<FrameShift> &shifts,
                  const std::vector<int64_t> &tMin,
                  const std::vector<int64_t> &tMax, size_t d, int side,
                  int64_t k, const std::vector<LoopRange> &layer,
                  std::vector<StmtPtr> &out);
  bool facesReachable(const ParLoopStmt &l, std::vector<FrameShift> &shifts,
                      const std::vector<int64_t> &tMin,
                      const std::vector<int64_t> &tMax);
  Dat *adjointDat(Dat *d);
  static StmtPtr tape(bool push, std::vector<Dat *> d, std::vector<unsigned> v,
                      SourceRange r) {
    return std::make_unique<TapeStmt>(push, std::move(d), std::move(v), r);
  }
  /// The push of \p d and \p v before a statement that overwrites them,
  /// into \p fwd, and its pop into \p rev, as one pair (TapeStmt::pair).
  void tapePair(std::vector<Dat *> d, std::vector<unsigned> v, SourceRange r,
                std::vector<StmtPtr> &fwd, std::vector<StmtPtr> &rev) {
    unsigned pair = ++b.tapePairs;
    fwd.push_back(tape(true, d, v, r));
    cast<TapeStmt>(*fwd.back()).pair = pair;
    rev.push_back(tape(false, std::move(d), std::move(v), r));
    cast<TapeStmt>(*rev.back()).pair = pair;
  }

  AdjointBuilder &b;
  Function &caller;
  const AdjointStmt &req;
  std::unique_ptr<Function> pcopy; ///< the proc, its proc calls inlined
  const Function &p;
  ReverseDiff rd;
  bool ok = true;
  std::vector<StmtPtr> hoisted;
  std::set<unsigned> activeVars;
  std::set<Dat *> active;
  std::map<Dat *, Dat *> adj; ///< active dat -> its adjoint in this request
};

} // namespace opdc::adj
#endif
