// AdjointZerosFacts.cpp - What the adjoint-zeros pass asks of statements
// and kernels: which dats a statement may touch, whether a body jumps,
// which loop zeroes (Z) or first increments (G) an adjoint, and whether one
// range lies within another.
// SPDX-License-Identifier: Apache-2.0
//
// Apart from AdjointZeros.cpp, whose comment says when the rewrite is
// legal: these are the facts its conditions are made of, each answered
// conservatively (a statement that may touch a dat does; bounds not
// provably ordered are not).
#include "passes/deriv/AdjointZerosImpl.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace opdc::azeros {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Bounds: `e + c` with e an expression compared as text.
//===----------------------------------------------------------------------===//

struct Linear {
  std::string base; ///< "" for a constant
  int64_t c = 0;
};

Linear linear(const Expr &e) {
  if (auto *k = dyn_cast<ConstantExpr>(&e))
    return {"", k->value.asInt()};
  if (auto *b = dyn_cast<BinaryExpr>(&e)) {
    auto *k = dyn_cast<ConstantExpr>(b->rhs.get());
    if (k && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub)) {
      Linear l = linear(*b->lhs);
      l.c += b->op == BinaryOp::Add ? k->value.asInt() : -k->value.asInt();
      return l;
    }
  }
  return {exprToString(e), 0};
}

/// a <= b whatever the run-time values (same base, smaller constant).
bool provablyLE(const Expr &a, const Expr &b) {
  if (auto *m = dyn_cast<IntrinsicExpr>(&b);
      m && m->id == Intrinsic::Max && m->args.size() == 2)
    if (provablyLE(a, *m->args[0]) || provablyLE(a, *m->args[1]))
      return true;
  if (auto *m = dyn_cast<IntrinsicExpr>(&a);
      m && m->id == Intrinsic::Max && m->args.size() == 2)
    return provablyLE(*m->args[0], b) && provablyLE(*m->args[1], b);
  Linear x = linear(a), y = linear(b);
  return x.base == y.base && x.c <= y.c;
}

/// Whether every point of \p s lies in \p r. A dimension of s whose upper
/// bound is max(A, lo) is empty or ends at A.
bool within(const std::vector<LoopRange> &s, const std::vector<LoopRange> &r) {
  if (s.empty() || s.size() != r.size())
    return false;
  for (size_t d = 0; d < s.size(); ++d) {
    if (!provablyLE(*r[d].lo, *s[d].lo))
      return false;
    const Expr *hi = s[d].hi.get();
    if (auto *m = dyn_cast<IntrinsicExpr>(hi);
        m && m->id == Intrinsic::Max && m->args.size() == 2 &&
        exprToString(*m->args[1]) == exprToString(*s[d].lo))
      hi = m->args[0].get();
    if (!provablyLE(*hi, *r[d].hi))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// What statements and kernels touch.
//===----------------------------------------------------------------------===//

/// Whether \p s may touch dat \p d (any statement whose dats are not all
/// named, such as a call, may).
bool mentions(const Stmt &s, const Dat *d) {
  auto inBody = [&](const Body &b) {
    return std::any_of(b.stmts.begin(), b.stmts.end(),
                       [&](const StmtPtr &x) { return x && mentions(*x, d); });
  };
  auto has = [&](const std::vector<Dat *> &v) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  switch (s.kind) {
  case StmtKind::Decl:
  case StmtKind::Assign:
  case StmtKind::Print:
  case StmtKind::Break:
  case StmtKind::Continue:
  case StmtKind::Return:
    return false;
  case StmtKind::ParLoop:
    for (const AccessDescriptor &a : cast<ParLoopStmt>(s).args)
      if (a.usesDat() && a.dat == d)
        return true;
    return false;
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    return w.a == d || w.b == d;
  }
  case StmtKind::Tape:
    return has(cast<TapeStmt>(s).dats);
  case StmtKind::Write:
  case StmtKind::Read:
    return has(cast<DatIOStmt>(s).dats);
  case StmtKind::If: {
    const auto &i = cast<IfStmt>(s);
    return inBody(i.thenBody) || inBody(i.elseBody);
  }
  case StmtKind::For:
    return inBody(cast<ForStmt>(s).body);
  case StmtKind::While:
    return inBody(cast<WhileStmt>(s).body);
  case StmtKind::Checkpoint: {
    const auto &c = cast<CheckpointStmt>(s);
    return has(c.dats) || inBody(c.body) || inBody(c.reverseBody) ||
           inBody(c.tapedBody) || inBody(c.tapedReverseBody);
  }
  default:
    return true; // calls, solves, derivative requests
  }
}

/// Finds uses of kernel parameter p in what it visits.
struct ParamUse : IRVisitor {
  explicit ParamUse(unsigned p) : p(p) {}
  void visitKernelArg(const KernelArgExpr &a) override {
    found = found || a.index == p;
  }
  unsigned p;
  bool found = false;
};

/// Whether \p b may leave a step early or skip its end: a break, continue
/// or return anywhere in it (the state after the time loop, or at the next
/// step's top, would no longer be the one after Z).
struct JumpFinder : IRVisitor {
  bool found = false;
  void visitBreak(const BreakStmt &) override { found = true; }
  void visitContinue(const ContinueStmt &) override { found = true; }
  void visitReturn(const ReturnStmt &s) override {
    found = true;
    IRVisitor::visitReturn(s);
  }
};
bool jumps(const Body &b) {
  JumpFinder f;
  f.visitBody(b);
  return f.found;
}
/// The same for one statement, itself included.
bool jumps(const Stmt &s) {
  JumpFinder f;
  f.visitStmt(s);
  return f.found;
}

/// Whether \p e uses kernel parameter \p p.
bool usesParam(const Expr &e, unsigned p) {
  ParamUse f(p);
  f.visitExpr(e);
  return f.found;
}
bool usesParam(const Stmt &s, unsigned p) {
  ParamUse f(p);
  f.visitStmt(s);
  return f.found;
}

/// The variable or parameter an lvalue assigns (a component's root).
const Expr &assignedRoot(const AssignStmt &a) {
  const Expr *t = a.target.get();
  while (auto *x = dyn_cast<IndexExpr>(t))
    t = x->base.get();
  return *t;
}

/// Whether \p s assigns (anywhere inside) variable slot \p slot, or kernel
/// parameter \p param.
bool assignsTo(const Stmt &s, std::optional<unsigned> slot,
               std::optional<unsigned> param) {
  struct Assigns : IRVisitor {
    std::optional<unsigned> slot, param;
    bool found = false;
    void visitAssign(const AssignStmt &a) override {
      const Expr &t = assignedRoot(a);
      if (auto *v = dyn_cast<VarRefExpr>(&t))
        found = found || (slot && v->slot == *slot);
      if (auto *k = dyn_cast<KernelArgExpr>(&t))
        found = found || (param && k->index == *param);
      IRVisitor::visitAssign(a);
    }
  } w;
  w.slot = slot;
  w.param = param;
  w.visitStmt(s);
  return w.found;
}

/// `param = value` or `param op= value` at the centre, whole element.
const AssignStmt *centreAssign(const Stmt &s, unsigned p) {
  const auto *a = dyn_cast<AssignStmt>(&s);
  const auto *t = a ? dyn_cast<KernelArgExpr>(a->target.get()) : nullptr;
  if (!t || t->index != p || usesParam(*a->value, p) ||
      !std::all_of(t->offset.begin(), t->offset.end(),
                   [](int64_t o) { return o == 0; }))
    return nullptr;
  return a;
}

/// A float +0.0 constant (not -0.0: the assignment `0.0 + e` stands for
/// an increment of +0.0).
bool isZero(const Expr &e) {
  auto *k = dyn_cast<ConstantExpr>(&e);
  return k && e.type.isScalar() && isFloat(e.type.scalar) &&
         k->value.asDouble() == 0.0 && !std::signbit(k->value.asDouble());
}

/// Whether \p v, read by top-level statement \p at of a kernel body, is
/// zero: a zero constant, or a local variable whose last assignment
/// before, at the top level, sets it to a zero constant (the adjoint
/// kernels read an out parameter's adjoint into a local, zero the local,
/// and store it back at the end).
bool zeroAt(const std::vector<StmtPtr> &stmts, size_t at, const Expr &v) {
  if (isZero(v))
    return true;
  const auto *r = dyn_cast<VarRefExpr>(&v);
  if (!r)
    return false;
  for (size_t k = at; k-- > 0;) {
    const Stmt &s = *stmts[k];
    if (const auto *d = dyn_cast<DeclStmt>(&s); d && d->slot == r->slot)
      return d->init && isZero(*d->init);
    if (!assignsTo(s, r->slot, std::nullopt))
      continue;
    const auto *a = dyn_cast<AssignStmt>(&s);
    const auto *t = a ? dyn_cast<VarRefExpr>(a->target.get()) : nullptr;
    return t && t->slot == r->slot && a->op == AssignOp::Set &&
           isZero(*a->value);
  }
  return false;
}

/// The one argument of \p l on \p d, or -1 when none or several.
int argOn(const ParLoopStmt &l, const Dat *d) {
  int found = -1;
  for (size_t i = 0; i < l.args.size(); ++i)
    if (l.args[i].usesDat() && l.args[i].dat == d) {
      if (found >= 0)
        return -1;
      found = int(i);
    }
  return found;
}

/// A scalar float argument at the centre of a block loop with a range.
bool centreScalar(const ParLoopStmt &l, int i) {
  if (i < 0 || !l.block || l.ranges.empty() || l.extended())
    return false;
  const AccessDescriptor &a = l.args[size_t(i)];
  if (a.dim != 1 || !isFloat(a.scalar) ||
      !l.kernel->kernelParams[size_t(i)].type.isScalar())
    return false;
  if (a.kind == ArgKind::Direct)
    return true;
  return a.kind == ArgKind::Stencil && a.stencil && a.stencil->isCentreOnly();
}

/// Z: loop \p l ends by zeroing its argument on \p d, whose other uses in
/// the kernel are reads. Returns the argument, or -1.
int zeroingArg(const ParLoopStmt &l, const Dat *d) {
  int i = argOn(l, d);
  if (!centreScalar(l, i) || containsReturn(l.kernel->body))
    return -1;
  const AccessMode m = l.args[size_t(i)].mode;
  if (m != AccessMode::Write && m != AccessMode::ReadWrite)
    return -1;
  const std::vector<StmtPtr> &stmts = l.kernel->body.stmts;
  size_t last = stmts.size();
  while (last > 0 && !usesParam(*stmts[last - 1], unsigned(i)))
    --last;
  if (last == 0)
    return -1;
  const AssignStmt *z = centreAssign(*stmts[last - 1], unsigned(i));
  if (!z || z->op != AssignOp::Set || !zeroAt(stmts, last - 1, *z->value))
    return -1;
  // Every earlier use only reads: no statement assigns the parameter.
  for (size_t k = 0; k + 1 < last; ++k)
    if (assignsTo(*stmts[k], std::nullopt, unsigned(i)))
      return -1;
  return i;
}

/// A seed: loop \p l only zeroes \p d (a zero-fill kernel's one statement).
bool zeroes(const ParLoopStmt &l, const Dat *d) {
  int i = argOn(l, d);
  if (!centreScalar(l, i) || l.args[size_t(i)].mode != AccessMode::Write)
    return false;
  for (const StmtPtr &s : l.kernel->body.stmts)
    if (usesParam(*s, unsigned(i))) {
      const AssignStmt *a = centreAssign(*s, unsigned(i));
      if (!a || a->op != AssignOp::Set || !isZero(*a->value))
        return false;
    }
  return true;
}

/// G: loop \p l increments its argument on \p d at the centre, first of all
/// in a top-level statement of its kernel. Returns the argument, or -1.
int incrementArg(const ParLoopStmt &l, const Dat *d) {
  int i = argOn(l, d);
  if (!centreScalar(l, i) || l.args[size_t(i)].mode != AccessMode::Inc ||
      containsReturn(l.kernel->body))
    return -1;
  for (const StmtPtr &s : l.kernel->body.stmts)
    if (usesParam(*s, unsigned(i))) {
      const AssignStmt *a = centreAssign(*s, unsigned(i));
      return a && (a->op == AssignOp::Add || a->op == AssignOp::Sub) ? i : -1;
    }
  return -1;
}

} // namespace opdc::azeros
