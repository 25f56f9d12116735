// DatLiveness.cpp - Which dat values a host function may still read.
// SPDX-License-Identifier: Apache-2.0
#include "analysis/DatLiveness.h"

#include "ir/AccessRules.h"
#include "ir/IR.h"
#include "ir/IRExprs.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <vector>

namespace opdc {

using namespace ir;
using llvm::BitVector;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

class DatLivenessWalk {
public:
  DatLivenessWalk(DatLiveness &out, const Program &program,
                  const Function &f)
      : out(out), inMain(&f == program.main.get()) {
    for (const auto &d : program.dats)
      out.index.emplace(d.get(), unsigned(out.index.size()));
    all = BitVector(unsigned(out.index.size()), true);
    notScratch = all;
    for (const auto &d : program.dats)
      if (d->scratch)
        notScratch.reset(at(d.get()));
    body(f.body, inMain ? BitVector(all.size()) : notScratch);
  }

private:
  unsigned at(const Dat *d) const { return out.index.at(d); }

  /// The dats a statement or expression names, through the procs it calls.
  struct Named : IRVisitor {
    DatLivenessWalk &w;
    BitVector bits;
    explicit Named(DatLivenessWalk &w) : w(w), bits(w.all.size()) {}
    void dat(const Dat *d) {
      if (d)
        bits.set(w.at(d));
    }
    void visitParLoop(const ParLoopStmt &l) override {
      for (const AccessDescriptor &a : l.args)
        if (a.usesDat())
          dat(a.dat);
      IRVisitor::visitParLoop(l);
    }
    void visitSwap(const SwapStmt &s) override {
      dat(s.a);
      dat(s.b);
    }
    void visitDatIO(const DatIOStmt &s) override {
      for (const Dat *d : s.dats)
        dat(d);
      IRVisitor::visitDatIO(s);
    }
    void visitSolve(const SolveStmt &s) override {
      for (const Dat *d : s.dats)
        dat(d);
      dat(s.precond);
      if (s.op)
        bits |= w.procReads(*s.op);
      IRVisitor::visitSolve(s);
    }
    void visitTape(const TapeStmt &s) override {
      for (const Dat *d : s.dats)
        dat(d);
    }
    void visitCheckpoint(const CheckpointStmt &s) override {
      for (const Dat *d : s.dats)
        dat(d);
      IRVisitor::visitCheckpoint(s);
    }
    void visitDerivative(const DerivativeStmt &s) override {
      bits |= w.all; // the request's proc and targets: anything
      IRVisitor::visitDerivative(s);
    }
    void visitCall(const CallExpr &e) override {
      if (e.callee && e.callee->isHost())
        bits |= w.procReads(*e.callee);
      IRVisitor::visitCall(e);
    }
  };

  /// Every dat proc \p f may read (everything it names), memoised; a
  /// recursive call reads everything.
  BitVector procReads(const Function &f) {
    auto it = procs.find(&f);
    if (it != procs.end())
      return it->second;
    procs[&f] = all;
    Named n(*this);
    n.visitBody(f.body);
    return procs[&f] = n.bits;
  }

  BitVector reads(const Expr *e) {
    Named n(*this);
    if (e)
      n.visitExpr(*e);
    return n.bits;
  }
  BitVector reads(const Stmt &s) {
    Named n(*this);
    n.visitStmt(s);
    return n.bits;
  }

  /// Whether loop \p l overwrites \p d whole: every argument of \p l on
  /// \p d is a direct `out` whose parameter the kernel assigns whole, and
  /// the loop runs over all of d: d's set, or d's block over every stored
  /// point, halos included (as the adjoint's copies aside and its fills
  /// run: passes/deriv/DerivUtils.h FillLoops).
  static bool overwritesWhole(const ParLoopStmt &l, const Dat *d) {
    if (!l.kernel || (l.set ? d->set != l.set : !coversStorage(l, *d)))
      return false;
    bool any = false;
    for (unsigned i = 0; i < l.args.size(); ++i) {
      const AccessDescriptor &a = l.args[i];
      if (!a.usesDat() || a.dat != d)
        continue;
      if (a.kind != ArgKind::Direct || a.mode != AccessMode::Write ||
          !assignsWhole(*l.kernel, i))
        return false;
      any = true;
    }
    return any;
  }

  /// Whether block loop \p l runs over every stored point of \p d: from
  /// base - halo- to size + base + halo+ in each dimension.
  static bool coversStorage(const ParLoopStmt &l, const Dat &d) {
    if (!l.block || d.block != l.block || l.ranges.size() != d.size.size())
      return false;
    auto isInt = [](const Expr *e, int64_t v) {
      const auto *c = dyn_cast_or_null<ConstantExpr>(e);
      return c && c->value.type.isIntegerScalar() && c->value.asInt() == v;
    };
    for (size_t k = 0; k < d.size.size(); ++k) {
      const int64_t base = k < d.base.size() ? d.base[k] : 0;
      const auto *hi = dyn_cast<BinaryExpr>(l.ranges[k].hi.get());
      if (!isInt(l.ranges[k].lo.get(), base - d.haloMinus[k]) || !hi ||
          hi->op != BinaryOp::Add ||
          !isInt(hi->rhs.get(), base + d.haloPlus[k]) ||
          exprToString(*hi->lhs) != exprToString(*d.size[k]))
        return false;
    }
    return true;
  }

  BitVector body(const Body &b, BitVector live) {
    for (auto s = b.stmts.rbegin(); s != b.stmts.rend(); ++s)
      if (*s)
        live = stmt(**s, std::move(live));
    return live;
  }

  /// A loop over \p bodies (each iteration runs one of them) whose exit
  /// leads to \p exit and whose head reads \p headReads: the live set at
  /// its head, to a fixed point.
  BitVector loop(std::initializer_list<const Body *> bodies,
                 const BitVector &exit, const BitVector &headReads) {
    BitVector head = exit;
    head |= headReads;
    while (true) {
      loops.push_back({exit, head});
      BitVector next = exit;
      next |= headReads;
      for (const Body *b : bodies)
        next |= body(*b, head);
      loops.pop_back();
      if (next == head)
        return head;
      head = std::move(next);
    }
  }

  BitVector stmt(const Stmt &s, BitVector live) {
    switch (s.kind) {
    case StmtKind::If: {
      const auto &i = cast<IfStmt>(s);
      BitVector in = body(i.thenBody, live);
      in |= body(i.elseBody, live);
      in |= reads(i.cond.get());
      return in;
    }
    case StmtKind::For: {
      const auto &f = cast<ForStmt>(s);
      BitVector in = loop({&f.body}, live, BitVector(all.size()));
      in |= reads(f.lo.get());
      in |= reads(f.hi.get());
      return in;
    }
    case StmtKind::While: {
      const auto &w = cast<WhileStmt>(s);
      return loop({&w.body}, live, reads(w.cond.get()));
    }
    case StmtKind::Break:
      return loops.empty() ? all : loops.back().exit;
    case StmtKind::Continue:
      return loops.empty() ? all : loops.back().head;
    case StmtKind::Return: {
      BitVector in = inMain ? BitVector(all.size()) : notScratch;
      in |= reads(cast<ReturnStmt>(s).value.get());
      return in;
    }
    case StmtKind::ParLoop: {
      const auto &l = cast<ParLoopStmt>(s);
      for (const AccessDescriptor &a : l.args)
        if (a.usesDat() && overwritesWhole(l, a.dat))
          live.reset(at(a.dat));
      for (const AccessDescriptor &a : l.args) {
        if (a.usesDat() && a.mode != AccessMode::Write)
          live.set(at(a.dat));
        live |= reads(a.value.get());
      }
      for (const LoopRange &r : l.ranges) {
        live |= reads(r.lo.get());
        live |= reads(r.hi.get());
      }
      return live;
    }
    case StmtKind::Swap: {
      const auto &w = cast<SwapStmt>(s);
      bool a = live.test(at(w.a)), b = live.test(at(w.b));
      live[at(w.a)] = b;
      live[at(w.b)] = a;
      return live;
    }
    case StmtKind::Tape: {
      const auto &t = cast<TapeStmt>(s);
      BitVector &after = out.afterTape[&t];
      after.resize(all.size());
      after |= live;
      for (const Dat *d : t.dats)
        live[at(d)] = t.push;
      return live;
    }
    case StmtKind::Checkpoint:
      return checkpoint(cast<CheckpointStmt>(s), std::move(live));
    default:
      // Host statements, I/O, solves, derivative requests: they read what
      // they name and overwrite nothing whole.
      live |= reads(s);
      return live;
    }
  }

  BitVector checkpoint(const CheckpointStmt &c, BitVector exit) {
    BitVector state(all.size());
    for (const Dat *d : c.dats)
      state.set(at(d));
    if (!c.reverse) {
      // Steps of `body` or `tapedBody`, the state saved before any.
      BitVector in = loop({&c.body, &c.tapedBody}, exit, state);
      in |= reads(c.lo.get());
      in |= reads(c.hi.get());
      in |= reads(c.snapshots.get());
      return in;
    }
    // Taped steps, last to first, then the end.
    BitVector taped = loop({&c.tapedReverseBody}, exit, BitVector(all.size()));
    BitVector tapedIn(all.size());
    {
      loops.push_back({exit, taped});
      tapedIn = body(c.tapedReverseBody, taped);
      loops.pop_back();
    }
    // The schedule: after a restore (which overwrites the state) a re-run
    // step, a save or a reversed step; after a re-run step the same or a
    // restore; after a reversed step a restore, a taped step or the end.
    BitVector rerunIn(all.size()), reversedIn(all.size()), restoreIn;
    while (true) {
      restoreIn = rerunIn;
      restoreIn |= reversedIn;
      restoreIn.reset(state);
      BitVector reversedOut = restoreIn;
      reversedOut |= tapedIn;
      reversedOut |= exit;
      BitVector rerunOut = rerunIn;
      rerunOut |= state;
      rerunOut |= reversedIn;
      rerunOut |= restoreIn;
      loops.push_back({exit, reversedOut});
      BitVector r = body(c.reverseBody, reversedOut);
      BitVector f = body(c.body, rerunOut);
      loops.pop_back();
      if (r == reversedIn && f == rerunIn)
        break;
      reversedIn = std::move(r);
      rerunIn = std::move(f);
    }
    BitVector in = restoreIn;
    in |= taped;
    in |= reversedIn;
    in |= rerunIn;
    return in;
  }

  DatLiveness &out;
  bool inMain;
  BitVector all, notScratch;
  struct Loop {
    BitVector exit, head;
  };
  std::vector<Loop> loops;
  std::map<const Function *, BitVector> procs;
};

DatLiveness::DatLiveness(const Program &program, const Function &f) {
  DatLivenessWalk walk(*this, program, f);
  (void)walk;
}

bool DatLiveness::liveAfter(const TapeStmt &t, const Dat *d) const {
  auto it = afterTape.find(&t);
  auto i = index.find(d);
  if (it == afterTape.end() || i == index.end())
    return true;
  return it->second.test(i->second);
}

} // namespace opdc
