// KernelZeros.cpp - Increments of zeroed kernel variables as plain
// assignments where no result sees the sign of a zero.
// SPDX-License-Identifier: Apache-2.0
//
// A kernel adjoint (passes/deriv/ReverseDiff.cpp) declares each adjoint
// variable zero and increments it: `var avg.b = 0.0; avg.b += w * g`, which
// is `0.0 + w * g`. IEEE says that addition is not w * g (it turns -0.0
// into +0.0), so LLVM keeps it. In the transposed stencil of a Jacobi or
// heat step, fused into one gather kernel, every shifted term carries two
// of them:
//
//   u.b = 0.0 + u.b.1                               (u.b.1 = 0.0 + c0 * g0)
//   u.b += 0.0 + 0.25 * (0.0 + w * g1)              (one such line a shift)
//
// ten additions of zero out of twenty-five operations a point in Poisson's
// reverse step, whose sweep is bound by them, not by memory
// (bench/adjoint/README.md). This pass makes `x += e` a plain `x = e` where
// that cannot change any bit the kernel writes.
//
// What is changed. In a kernel whose statements are all declarations and
// assignments (no branch, loop, call statement or return), a float scalar
// variable x declared `= 0.0` whose one assignment is `x += e`, read only
// after it, becomes `x = e` when x is quiet: every read of x lies in a
// quiet position. A position is quiet when the sign of a zero there cannot
// change the value the statement assigns beyond the sign of a zero of it,
// and that assigned value is itself quiet or loses that sign:
//   * the whole value of `x += e` or `x = e` for a variable x of either
//     kind (read only after its one assignment): quiet when x is;
//   * the whole value of `t += e` or `t -= e` (t another variable or a
//     parameter) when t's value before it is never -0.0: t was declared
//     0.0 and only ever incremented or decremented, or last assigned a
//     value that is never -0.0 (`0.0 + a`, a constant other than -0.0, a
//     variable that is never -0.0);
//   * either operand of `0.0 + a` or `a + 0.0`, anywhere; b in `a + b` and
//     `a - b` where a is a variable that is never -0.0 at that point;
//   * within a quiet position, the operands of + and -, * and unary -, the
//     dividend of /, the operand of a conversion between float types.
// Everything else (comparisons, intrinsics, calls, divisors, array
// components, conversions to integers) is loud. Quietness is the greatest
// fixed point: all such variables start quiet; one read in a loud position
// makes a variable loud, and the positions it fed are looked at again.
//
// Why the bits stay the same. `0.0 + e` and e differ only when e is -0.0
// (the sum is +0.0); otherwise they are the same value, a NaN's payload
// included (the sum only quiets it, as every later arithmetic operation
// does). The operations passed through keep "differs at most in the sign
// of a zero": a zero times or divided by anything is a zero or the same
// default NaN, a sum or difference with a zero operand is the other
// operand or a zero. At the end such a value is added to one that is never
// -0.0 (a + (+-0) = a for every such a, +0.0 + -0.0 being +0.0), added to
// +0.0 (which yields +0.0 either way), or kept in a quiet variable whose
// reads end the same way. A sum t + e with t never -0.0 is never -0.0 in
// the default rounding (only -0 + -0 is), which is why an incremented
// variable declared 0.0 stays never -0.0. So every parameter, reduction and
// variable read loudly gets the bits it got before; only the sign of zeros
// that no output sees changes. Under -ffp-contract=fast, which lets LLVM
// fuse a product into a following sum (an fma rounds once), the kernel may
// round differently, as any change of a kernel's expressions may there.
#include "passes/kernels/KernelZeros.h"

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <cmath>
#include <map>
#include <vector>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

constexpr const char *PassName = "kernel-zeros";

bool isConstant(const Expr *e, bool negativeZero) {
  const auto *c = dyn_cast_or_null<ConstantExpr>(e);
  if (!c || !c->type.isFloatScalar())
    return false;
  const double v = c->value.asDouble();
  return negativeZero ? !(v == 0.0 && std::signbit(v))
                      : v == 0.0 && !std::signbit(v);
}
/// +0.0.
bool isPlusZero(const Expr *e) { return isConstant(e, false); }

/// A variable that is assigned once: `x += e` after `var x = 0.0`, or `x =
/// e` (or its declaration's value), and read only after that.
struct Single {
  bool inc = false;
  size_t at = 0;             ///< the statement that assigns it
  AssignStmt *add = nullptr; ///< inc: the increment
  bool quiet = true;
};

/// A key for a variable (its slot) or a parameter (-1 - index).
int64_t keyOf(const Expr &t) {
  if (const auto *v = dyn_cast<VarRefExpr>(&t))
    return int64_t(v->slot);
  if (const auto *a = dyn_cast<KernelArgExpr>(&t)) {
    for (int64_t o : a->offset)
      if (o != 0)
        return INT64_MIN;
    return -1 - int64_t(a->index);
  }
  return INT64_MIN;
}

class Kernel {
public:
  explicit Kernel(Function &k) : k(k) {}

  /// The increments made plain assignments (none when the kernel is not
  /// straight-line).
  int64_t run() {
    for (const StmtPtr &s : k.body.stmts)
      if (!s || !(isa<DeclStmt>(s.get()) || isa<AssignStmt>(s.get())))
        return 0;
    findSingles();
    if (singles.empty())
      return 0;
    do {
      changed = false;
      walkBody();
    } while (changed);
    int64_t n = 0;
    for (auto &[slot, s] : singles)
      if (s.inc && s.quiet) {
        s.add->op = AssignOp::Set;
        ++n;
      }
    return n;
  }

private:
  Function &k;
  std::map<unsigned, Single> singles;
  std::map<int64_t, bool> never; ///< never -0.0 before the statement walked
  bool changed = false;

  struct Reads {
    std::map<unsigned, size_t> first; ///< the first statement reading it
    void expr(const Expr *e, size_t at) {
      if (!e)
        return;
      if (const auto *v = dyn_cast<VarRefExpr>(e)) {
        first.emplace(v->slot, at);
      } else if (const auto *u = dyn_cast<UnaryExpr>(e)) {
        expr(u->operand.get(), at);
      } else if (const auto *b = dyn_cast<BinaryExpr>(e)) {
        expr(b->lhs.get(), at);
        expr(b->rhs.get(), at);
      } else if (const auto *c = dyn_cast<CastExpr>(e)) {
        expr(c->operand.get(), at);
      } else if (const auto *x = dyn_cast<IndexExpr>(e)) {
        expr(x->base.get(), at);
        expr(x->index.get(), at);
      } else if (const auto *i = dyn_cast<IntrinsicExpr>(e)) {
        for (const ExprPtr &a : i->args)
          expr(a.get(), at);
      } else if (const auto *c = dyn_cast<CallExpr>(e)) {
        for (const ExprPtr &a : c->args)
          expr(a.get(), at);
      } else if (const auto *l = dyn_cast<ArrayLitExpr>(e)) {
        for (const ExprPtr &a : l->elements)
          expr(a.get(), at);
      }
    }
  };

  void findSingles() {
    std::map<unsigned, std::vector<size_t>> writes;
    std::map<unsigned, bool> zeroDecl;
    Reads reads;
    for (size_t i = 0; i < k.body.stmts.size(); ++i) {
      Stmt *s = k.body.stmts[i].get();
      if (auto *d = dyn_cast<DeclStmt>(s)) {
        if (isPlusZero(d->init.get()))
          zeroDecl[d->slot] = true;
        else
          writes[d->slot].push_back(i);
        reads.expr(d->init.get(), i);
        continue;
      }
      auto *a = cast<AssignStmt>(s);
      if (const auto *v = dyn_cast<VarRefExpr>(a->target.get())) {
        writes[v->slot].push_back(i);
        if (a->op != AssignOp::Set) // reads its own value too
          reads.first.emplace(v->slot, i);
      } else if (!isa<KernelArgExpr>(a->target.get())) {
        reads.expr(a->target.get(), i); // an array's component: loud
      }
      reads.expr(a->value.get(), i);
    }
    for (auto &[slot, w] : writes) {
      if (slot >= k.vars.size() || !k.vars[slot].type.isFloatScalar() ||
          w.size() != 1)
        continue;
      auto r = reads.first.find(slot);
      Single s;
      s.at = w[0];
      if (r != reads.first.end() && r->second <= s.at &&
          !(r->second == s.at && zeroDecl.count(slot)))
        continue; // read before (or in) its assignment
      Stmt *st = k.body.stmts[s.at].get();
      if (auto *a = dyn_cast<AssignStmt>(st)) {
        if (a->op == AssignOp::Add && zeroDecl.count(slot)) {
          s.inc = true;
          s.add = a;
        } else if (a->op != AssignOp::Set) {
          continue;
        }
        // An own read in `x += e`'s value is a read of 0.0: excluded.
        if (s.inc) {
          Reads own;
          own.expr(a->value.get(), s.at);
          if (own.first.count(slot))
            continue;
        }
      }
      singles[slot] = s;
    }
  }

  bool neverNegZero(const Expr *e) {
    if (isConstant(e, true))
      return true;
    if (const auto *b = dyn_cast_or_null<BinaryExpr>(e))
      return b->op == BinaryOp::Add &&
             (isPlusZero(b->lhs.get()) || isPlusZero(b->rhs.get()));
    if (e && isa<VarRefExpr>(e)) {
      auto it = never.find(keyOf(*e));
      return it != never.end() && it->second;
    }
    return false;
  }

  /// Walks \p e in a quiet (\p quiet) or loud position.
  void walk(const Expr *e, bool quiet) {
    if (!e)
      return;
    if (const auto *v = dyn_cast<VarRefExpr>(e)) {
      auto it = singles.find(v->slot);
      if (!quiet && it != singles.end() && it->second.quiet) {
        it->second.quiet = false;
        changed = true;
      }
      return;
    }
    if (const auto *b = dyn_cast<BinaryExpr>(e)) {
      switch (b->op) {
      case BinaryOp::Add:
        if (quiet || isPlusZero(b->lhs.get()) || isPlusZero(b->rhs.get())) {
          walk(b->lhs.get(), true);
          walk(b->rhs.get(), true);
          return;
        }
        walk(b->lhs.get(), neverNegZero(b->rhs.get()));
        walk(b->rhs.get(), neverNegZero(b->lhs.get()));
        return;
      case BinaryOp::Sub:
        walk(b->lhs.get(), quiet);
        walk(b->rhs.get(), quiet || neverNegZero(b->lhs.get()));
        return;
      case BinaryOp::Mul:
        walk(b->lhs.get(), quiet);
        walk(b->rhs.get(), quiet);
        return;
      case BinaryOp::Div:
        walk(b->lhs.get(), quiet);
        walk(b->rhs.get(), false);
        return;
      default:
        walk(b->lhs.get(), false);
        walk(b->rhs.get(), false);
        return;
      }
    }
    if (const auto *u = dyn_cast<UnaryExpr>(e)) {
      walk(u->operand.get(), quiet && u->op == UnaryOp::Neg);
      return;
    }
    if (const auto *c = dyn_cast<CastExpr>(e)) {
      walk(c->operand.get(),
           quiet && isFloat(c->to()) && c->operand->type.isFloatScalar());
      return;
    }
    // Anything else reads its operands loudly.
    Reads r;
    r.expr(e, 0);
    for (const auto &[slot, at] : r.first) {
      auto it = singles.find(slot);
      if (it != singles.end() && it->second.quiet) {
        it->second.quiet = false;
        changed = true;
      }
    }
  }

  void walkBody() {
    never.clear();
    for (size_t i = 0; i < k.body.stmts.size(); ++i) {
      Stmt *s = k.body.stmts[i].get();
      if (auto *d = dyn_cast<DeclStmt>(s)) {
        auto it = singles.find(d->slot);
        const bool single = it != singles.end() && it->second.at == i;
        walk(d->init.get(), single && it->second.quiet);
        never[d->slot] = !single && neverNegZero(d->init.get());
        continue;
      }
      auto *a = cast<AssignStmt>(s);
      const int64_t key = keyOf(*a->target);
      if (key == INT64_MIN) {
        walk(a->target.get(), false);
        walk(a->value.get(), false);
        continue;
      }
      if (key >= 0) {
        auto it = singles.find(unsigned(key));
        if (it != singles.end()) {
          // Its one assignment: `x += e` adds e to +0.0 as long as x is
          // not changed, and x's own reads decide otherwise.
          walk(a->value.get(), it->second.inc || it->second.quiet);
          never[key] = false;
          continue;
        }
      }
      const bool before = never.count(key) && never[key];
      switch (a->op) {
      case AssignOp::Set:
        walk(a->value.get(), false);
        never[key] = neverNegZero(a->value.get());
        break;
      case AssignOp::Add:
      case AssignOp::Sub:
        walk(a->value.get(), before);
        break;
      default:
        walk(a->value.get(), false);
        never[key] = false;
        break;
      }
    }
  }
};

} // namespace

bool dropSignedZeros(Program &program, PassContext &ctx) {
  bool changed = false;
  for (auto &k : program.kernels) {
    const int64_t n = Kernel(*k).run();
    if (!n)
      continue;
    changed = true;
    ctx.stats.add(PassName, "increments",
                  "increments of zeroed variables made assignments", n);
    ctx.diags.remark(k->range,
                     "kernel '" + k->name + "': " + std::to_string(n) +
                         " increment(s) of a zeroed variable made "
                         "assignments (no result sees the sign of "
                         "a zero)",
                     PassName);
  }
  return changed;
}

} // namespace opdc
