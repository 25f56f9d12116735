// AdjointZeros.cpp - Assign instead of zeroing then incrementing adjoints in
// reversed time loops.
// SPDX-License-Identifier: Apache-2.0
//
// The adjoint of `loop step (u @ star7, v: out); swap(u, v)` in a time loop
// is, per reversed step (passes/deriv/Adjoint.cpp):
//
//   swap(u.b, v.b)
//   loop G over I: u.b += (transposed stencil of v.b)   interior gather
//   frames over (R + t) \ I: u.b += ...                  thin slabs
//   loop Z over R: reads v.b, then v.b = 0               out's adjoint
//
// Z zeroes v.b because the buffer's next reader, after the next step's
// swap as u.b, increments it: G of the next step. So G adds to zeros on I,
// and Z writes zeros there that only G reads: 16 of the sweep's 40 bytes a
// point in heat3d (v.b written back, u.b read). This pass makes G assign
// (`u.b = ...`: its first increment of u.b becomes `=`), drops the zeroing
// from Z (v.b only read) and zeroes only R \ I after Z, in slabs (the
// frames add to those points), and zeroes v.b over I after the time loop,
// which restores the state the loop left, unless nothing reads v.b there
// before zeros overwrite it (the next adjoint call's seed) or main ends.
//
// Legal when, with X the dat Z zeroes and Y the name its buffer has at G
// (through the swaps before G in the body):
//   * Z's kernel ends with `p = 0` at the centre, p's only other uses being
//     reads, and no statement after Z in the body mentions X: at the end of
//     every step X is zero on R (now: on R \ I, garbage on I);
//   * the statements before G only swap X's buffer or leave it alone, and
//     G is the first to touch it, incrementing it at the centre over I
//     within R, as the first top-level statement of its kernel that uses
//     the parameter: from the second step on, G read zeros on I and now
//     overwrites whatever is there, with the same result;
//   * before the time loop, X is zeroed over a range containing I, and
//     nothing between that and the loop touches it: the first step's G
//     read zeros too (the state after zero steps is unchanged by the zero
//     loop after the time loop);
//   * no break, continue or return in the step (every step that starts
//     ends after Z, and the loop ends after a whole step);
//   * for a checkpoint reverse, both reverse bodies (re-run and taped
//     steps alternate in one sweep) qualify with the same X, G and Z
//     ranges, and neither the forward re-run body nor the snapshot state
//     mentions X or Y.
// Nothing else reads X on I between Z and the next G, so every value the
// program reads is the one it read before.
//
// The same pair also meets within one body: a time loop unrolled by two
// (passes/loops/UnrollSteps.cpp) reverses two steps per body, and the second
// step's Z zeroes the adjoint that the first step's G increments next, in
// the same run of the body (rewriteWithin). There it is enough that the
// first statement after Z that touches X's buffer (through the swaps) is
// G, over a range within Z's, with no jump between: G read zeros on I and
// now assigns them, the zero loops over R \ I follow Z, and nothing needs
// zeroing after the time loop. Poisson's pair reverse then reads and
// writes two fewer arrays (bench/adjoint/README.md).
//
// Z, once it only reads, also moves before G on a 3D block when it sums
// (a derivative with respect to a parameter) and commutes with every loop
// from G to it (leadWithKept): the fuse pass then makes it the first loop
// of the step's skewed sweep, whose reductions run beside the sweep's rows
// rather than whole chunks behind. Loops that commute give the same values
// in either order, and a leading reduction sums the same chunks in the
// same order (lib/exec/Skew.cpp), so the bits are unchanged.
//
// Z, once it only reads X, also splits at G's range when it neither
// reduces nor goes through a map (splitKept): Z over I and Z over R \ I in
// slabs, before the zero loops of those slabs. Each point runs Z's kernel
// once, as before, and Z reaches what it writes only at the point, so the
// order of the points does not matter. Over I, the fuse pass puts it in
// G's kernel: Poisson's source share (`f.b += 0.01 * 0.25 * w * q.b`) no
// longer sweeps the step's rows a second time (docs/decisions/0470).
//
// This file holds the plan and the rewrite; what statements and kernels
// touch, and the bounds compared, are AdjointZerosFacts.cpp.
#include "passes/deriv/AdjointZeros.h"
#include "passes/deriv/AdjointZerosImpl.h"

#include "passes/deriv/DerivUtils.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IRBuilder.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using namespace azeros;

namespace {

constexpr const char *PassName = "adjoint-zeros";

//===----------------------------------------------------------------------===//
// The pass.
//===----------------------------------------------------------------------===//

/// One rewrite found in a reversed step's body.
struct Plan {
  Dat *x = nullptr; ///< the dat Z zeroes
  Dat *y = nullptr; ///< its buffer's name at G
  size_t g = 0, z = 0;
  int gArg = -1, zArg = -1;
};

/// The name the buffer called \p cur has after \p w.
void followSwap(const SwapStmt &w, Dat *&cur) {
  if (w.a == cur)
    cur = w.b;
  else if (w.b == cur)
    cur = w.a;
}

/// Whether the loops \p a and \p b may run in either order: neither
/// writes a dat the other touches, nor reduces into a host variable the
/// other reads or reduces into.
bool commute(const ParLoopStmt &a, const ParLoopStmt &b) {
  auto clash = [](const AccessDescriptor &x, const AccessDescriptor &y) {
    if (x.usesDat() && y.usesDat())
      return x.dat == y.dat &&
             (x.mode != AccessMode::Read || y.mode != AccessMode::Read);
    if (x.kind != ArgKind::Reduction)
      return false;
    if (y.kind == ArgKind::Reduction)
      return x.var == y.var;
    return y.value && refsSlot(*y.value, {unsigned(x.var)});
  };
  for (const AccessDescriptor &x : a.args)
    for (const AccessDescriptor &y : b.args)
      if (clash(x, y) || clash(y, x))
        return false;
  return true;
}

/// G for \p z: along b.stmts[from, to), with \p cur the name of Z's
/// buffer (renamed by the swaps on the way), the first statement that
/// touches the buffer, when it is a loop incrementing it at the centre over
/// a range within Z's; no break, continue or return before it. Sets \p g
/// and \p gArg and returns true when found.
bool findG(const Body &b, size_t from, size_t to, Dat *&cur,
           const ParLoopStmt &z, size_t &g, int &gArg) {
  for (size_t k = from; k < to; ++k) {
    const Stmt &s = *b.stmts[k];
    if (jumps(s))
      return false;
    if (auto *w = dyn_cast<SwapStmt>(&s)) {
      followSwap(*w, cur);
      continue;
    }
    if (!mentions(s, cur))
      continue;
    const auto *gl = dyn_cast<ParLoopStmt>(&s);
    const int gi = gl ? incrementArg(*gl, cur) : -1;
    if (gi < 0 || !within(gl->ranges, z.ranges))
      return false;
    g = k;
    gArg = gi;
    return true;
  }
  return false;
}

/// The rewrite of \p body, a reversed step, for the dat \p only (any when
/// null), or nothing.
std::optional<Plan> findPlan(const Body &body, const Dat *only) {
  const std::vector<StmtPtr> &st = body.stmts;
  for (size_t z = st.size(); z-- > 0;) {
    const auto *zl = dyn_cast<ParLoopStmt>(st[z].get());
    if (!zl)
      continue;
    for (const AccessDescriptor &a : zl->args) {
      if (!a.usesDat() || (only && a.dat != only))
        continue;
      Plan p;
      p.x = a.dat;
      p.z = z;
      p.zArg = zeroingArg(*zl, p.x);
      if (p.zArg < 0)
        continue;
      bool later = false;
      for (size_t k = z + 1; k < st.size(); ++k)
        later = later || mentions(*st[k], p.x);
      if (later)
        continue;
      // From the top of the next step: the buffer's name, to the first
      // statement that touches it.
      Dat *cur = p.x;
      if (findG(body, 0, z, cur, *zl, p.g, p.gArg)) {
        p.y = cur;
        return p;
      }
    }
  }
  return std::nullopt;
}

/// Whether the statements before \p at in \p b zero the buffer named \p x
/// at \p at over a range containing \p range, with nothing touching it
/// in between.
bool zeroBefore(const Body &b, size_t at, Dat *x,
                const std::vector<LoopRange> &range) {
  Dat *cur = x;
  for (size_t k = at; k-- > 0;) {
    const Stmt &s = *b.stmts[k];
    if (auto *w = dyn_cast<SwapStmt>(&s)) {
      followSwap(*w, cur);
      continue;
    }
    if (!mentions(s, cur))
      continue;
    const auto *l = dyn_cast<ParLoopStmt>(&s);
    return l && zeroes(*l, cur) && within(range, l->ranges);
  }
  return false;
}

/// What becomes of the values of the buffer \p cur (renamed by swaps) along
/// the statements [from, to) of \p b: overwritten with zeros over a range
/// containing \p range before anything reads them (Dead), possibly read
/// (Live), or neither (Open: \p cur is the buffer's name after them).
enum class Fate { Dead, Live, Open };
Fate fateAlong(const Body &b, size_t from, size_t to, Dat *&cur,
               const std::vector<LoopRange> &range) {
  for (size_t k = from; k < to; ++k) {
    const Stmt &s = *b.stmts[k];
    if (isa<BreakStmt>(s) || isa<ContinueStmt>(s) || isa<ReturnStmt>(s))
      return Fate::Live; // the path goes elsewhere: not followed
    if (auto *w = dyn_cast<SwapStmt>(&s)) {
      followSwap(*w, cur);
      continue;
    }
    if (auto *i = dyn_cast<IfStmt>(&s)) {
      Dat *t = cur, *e = cur;
      Fate ft = fateAlong(i->thenBody, 0, i->thenBody.stmts.size(), t, range);
      Fate fe = fateAlong(i->elseBody, 0, i->elseBody.stmts.size(), e, range);
      if (ft == Fate::Live || fe == Fate::Live)
        return Fate::Live;
      if (ft == Fate::Dead && fe == Fate::Dead)
        return Fate::Dead;
      if (ft == Fate::Open && fe == Fate::Open && t != e)
        return Fate::Live;
      cur = ft == Fate::Open ? t : e;
      continue;
    }
    if (isa<ForStmt>(s) || isa<WhileStmt>(s)) {
      const Body &body =
          isa<ForStmt>(s) ? cast<ForStmt>(s).body : cast<WhileStmt>(s).body;
      if (mentions(s, cur) || jumps(body))
        return Fate::Live; // not followed
      continue;
    }
    if (!mentions(s, cur))
      continue;
    const auto *l = dyn_cast<ParLoopStmt>(&s);
    return l && zeroes(*l, cur) && within(range, l->ranges) ? Fate::Dead
                                                            : Fate::Live;
  }
  return Fate::Open;
}

class Rewriter {
public:
  Rewriter(Program &p, PassContext &c)
      : program(p), ctx(c), fill(p, "adjoint") {}

  /// Rewrites the time loops in \p b, the body of \p owner (null: of the
  /// function, \p isMain when it is main's).
  bool run(Body &b, const Stmt *owner, bool isMain = false) {
    bool changed = rewriteWithin(b);
    frames.push_back({&b, 0, owner, isMain});
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      frames.back().index = i;
      Stmt *s = b.stmts[i].get();
      if (auto *f = dyn_cast<ForStmt>(s)) {
        changed |= run(f->body, s);
        changed |= rewrite(b, i, {&f->body}, nullptr);
      } else if (auto *c = dyn_cast<CheckpointStmt>(s)) {
        changed |= run(c->body, s) | run(c->reverseBody, s) |
                   run(c->tapedBody, s) | run(c->tapedReverseBody, s);
        if (c->reverse) {
          std::vector<Body *> steps;
          for (Body *r : {&c->reverseBody, &c->tapedReverseBody})
            if (!r->empty())
              steps.push_back(r);
          changed |= rewrite(b, i, steps, c);
        }
      } else if (auto *f = dyn_cast<IfStmt>(s)) {
        changed |= run(f->thenBody, s) | run(f->elseBody, s);
      } else if (auto *w = dyn_cast<WhileStmt>(s)) {
        changed |= run(w->body, s);
      }
    }
    frames.pop_back();
    return changed;
  }

private:
  /// Z and G within one body, Z first: the same rewrite as across steps,
  /// where Z's zeros reach G in the same run of the body (two reversed
  /// steps of an unrolled time loop: the second step's Z zeroes the
  /// adjoint that the first step's G increments next). Legal when, through
  /// the swaps between, the first statement after Z that touches X's
  /// buffer is G, incrementing it at the centre over a range within Z's,
  /// with no break, continue or return between: G read zeros on its range
  /// and now overwrites it with the same values (`0.0 + e`), and the rest
  /// of Z's range is still zeroed (in slabs right after Z).
  bool rewriteWithin(Body &b) {
    bool changed = false;
    for (size_t z = 0; z < b.stmts.size(); ++z) {
      auto *zl = dyn_cast<ParLoopStmt>(b.stmts[z].get());
      if (!zl)
        continue;
      for (size_t ai = 0; ai < zl->args.size(); ++ai) {
        if (!zl->args[ai].usesDat())
          continue;
        Dat *x = zl->args[ai].dat;
        const int zArg = zeroingArg(*zl, x);
        // (A loop that only zeroes would keep nothing: left alone.)
        if (zArg < 0 || zeroes(*zl, x))
          continue;
        Dat *cur = x;
        size_t g = 0;
        int gArg = -1;
        if (!findG(b, z + 1, b.stmts.size(), cur, *zl, g, gArg))
          continue;
        std::vector<LoopRange> inner;
        for (const LoopRange &r : cast<ParLoopStmt>(*b.stmts[g]).ranges)
          inner.push_back(r.clone());
        z += assignAndKeep(b, g, gArg, z, zArg, x, inner);
        changed = true;
        ctx.stats.add(PassName, "assigned-within",
                      "adjoint increments made assignments within a step");
        break;
      }
    }
    return changed;
  }

  /// Rewrites the reversed steps \p steps of the time loop at \p b.stmts[at]
  /// (\p c when a checkpoint reverse) when they all qualify alike.
  bool rewrite(Body &b, size_t at, const std::vector<Body *> &steps,
               const CheckpointStmt *c) {
    if (steps.empty() || std::any_of(steps.begin(), steps.end(),
                                     [](const Body *s) { return jumps(*s); }))
      return false;
    std::vector<Plan> plans;
    for (Body *s : steps) {
      std::optional<Plan> p =
          findPlan(*s, plans.empty() ? nullptr : plans.front().x);
      if (!p)
        return false;
      plans.push_back(*p);
    }
    const Plan &first = plans.front();
    auto loopAt = [](Body *s, size_t k) {
      return cast<ParLoopStmt>(s->stmts[k].get());
    };
    const ParLoopStmt *g0 = loopAt(steps[0], first.g);
    const ParLoopStmt *z0 = loopAt(steps[0], first.z);
    for (size_t k = 1; k < plans.size(); ++k) {
      const ParLoopStmt *g = loopAt(steps[k], plans[k].g);
      const ParLoopStmt *z = loopAt(steps[k], plans[k].z);
      if (plans[k].y != first.y || !within(g->ranges, g0->ranges) ||
          !within(g0->ranges, g->ranges) || !within(z->ranges, z0->ranges) ||
          !within(z0->ranges, z->ranges))
        return false;
    }
    if (c) {
      for (const Dat *d : {first.x, first.y}) {
        bool inState =
            std::find(c->dats.begin(), c->dats.end(), d) != c->dats.end();
        bool inRerun =
            std::any_of(c->body.stmts.begin(), c->body.stmts.end(),
                        [&](const StmtPtr &s) { return s && mentions(*s, d); });
        if (inState || inRerun)
          return false;
      }
    }
    if (!zeroBefore(b, at, first.x, g0->ranges))
      return false;

    std::vector<LoopRange> inner;
    for (const LoopRange &r : g0->ranges)
      inner.push_back(r.clone());
    for (size_t k = 0; k < steps.size(); ++k) {
      Body &s = *steps[k];
      const Plan &p = plans[k];
      assignAndKeep(s, p.g, p.gArg, p.z, p.zArg, p.x, inner);
      leadWithKept(s, p.g, p.z);
    }
    if (readAfter(first.x, inner))
      b.stmts.insert(b.stmts.begin() + std::ptrdiff_t(at + 1),
                     zeroLoop(*g0, first.x, std::move(inner)));
    else
      ctx.stats.add(PassName, "dead-zeros",
                    "zero loops after a time loop not made (never read)");
    ctx.stats.add(PassName, "assigned", "adjoint increments made assignments");
    return true;
  }

  /// Whether the values of \p x on \p range after the statement the
  /// innermost frame is at (a time loop) may be read: unless on every path
  /// from there zeros overwrite them first, or main ends. The paths
  /// followed: on through the enclosing bodies, through both branches of
  /// an if, around an enclosing for or while loop (whose body must then
  /// overwrite them before it reaches the statement again) and out of it;
  /// anything else (a jump, a loop that mentions x, the end of a proc,
  /// whose caller may read x) counts as a read.
  bool readAfter(Dat *x, const std::vector<LoopRange> &range) const {
    Dat *cur = x;
    for (size_t f = frames.size(); f-- > 0;) {
      const Frame &fr = frames[f];
      const size_t n = fr.body->stmts.size();
      Fate r = fateAlong(*fr.body, fr.index + 1, n, cur, range);
      if (r != Fate::Open)
        return r == Fate::Live;
      if (!fr.owner)
        return !fr.isMain;
      if (isa<ForStmt>(fr.owner) || isa<WhileStmt>(fr.owner)) {
        // The next iteration, up to and into the statement the path
        // started from (which reads x when entered on the same path).
        Dat *again = cur;
        if (fateAlong(*fr.body, 0, fr.index + 1, again, range) != Fate::Dead)
          return true;
      } else if (!isa<IfStmt>(fr.owner)) {
        return true; // a checkpoint's body: not followed
      }
    }
    return true;
  }

  /// A body being walked, the statement reached in it and the statement
  /// it is the body of (null: a function's).
  struct Frame {
    Body *body;
    size_t index;
    const Stmt *owner;
    bool isMain;
  };
  std::vector<Frame> frames;

  /// G's kernel, copied: its first increment `p += e` of parameter \p p
  /// becomes `p = 0.0 + e` (`p -= e`: `p = 0.0 - e`), the very operation
  /// the increment did on the zero it read, so even a -0.0 rounds alike.
  void assignFirst(ParLoopStmt &l, unsigned p) {
    Function *&k = rewritten[{l.kernel, p, true}];
    if (!k) {
      std::unique_ptr<Function> c = l.kernel->clone();
      for (StmtPtr &s : c->body.stmts)
        if (usesParam(*s, p)) {
          auto &a = cast<AssignStmt>(*s);
          BinaryOp op = a.op == AssignOp::Sub ? BinaryOp::Sub : BinaryOp::Add;
          Type t = a.value->type;
          a.value = std::make_unique<BinaryExpr>(
              op, std::make_unique<ConstantExpr>(zeroOf(t)),
              std::move(a.value));
          a.op = AssignOp::Set;
          break;
        }
      c->kernelParams[p].mode = AccessMode::Write;
      k = add(std::move(c), l.kernel->name + std::string(AssignedSuffix));
    }
    l.args[p].mode = AccessMode::Write;
    l.kernel = k;
  }

  /// Z, now only reading, moved before G with the assignments just
  /// before it that start its reductions (`%P.gbl.b = 0.0`), when it
  /// reduces, runs over a 3D block and commutes with every loop from G
  /// on: Z reads X and the primal state that G and the frames read too.
  /// A reduction (heat3d's dJ/dlam) leading the skewed sweep that the fuse
  /// pass makes of them runs beside G's rows; after them it runs whole
  /// chunks up to a chunk behind (lib/exec/Skew.cpp), up to 16 planes of a
  /// 3D block: rows read twice, from memory at 2 threads (heat3d's sweep
  /// is faster led). A 2D chunk is about a row, and there leading lost
  /// time (Poisson; docs/performance.md, "Figures from code comments").
  void leadWithKept(Body &s, size_t g, size_t z) {
    const auto &zl = cast<ParLoopStmt>(*s.stmts[z]);
    if (zl.ranges.size() != 3)
      return;
    std::set<unsigned> sums;
    for (const AccessDescriptor &a : zl.args)
      if (a.kind == ArgKind::Reduction)
        sums.insert(unsigned(a.var));
    if (sums.empty())
      return;
    size_t h = z;
    while (h > g) {
      const auto *a = dyn_cast<AssignStmt>(s.stmts[h - 1].get());
      const auto *t = a ? dyn_cast<VarRefExpr>(a->target.get()) : nullptr;
      if (!t || !sums.count(t->slot) || refsSlot(*a->value, sums))
        break;
      --h;
    }
    for (size_t k = g; k < h; ++k) {
      const auto *l = dyn_cast<ParLoopStmt>(s.stmts[k].get());
      if (!l || !commute(*l, zl))
        return;
    }
    std::rotate(s.stmts.begin() + std::ptrdiff_t(g),
                s.stmts.begin() + std::ptrdiff_t(h),
                s.stmts.begin() + std::ptrdiff_t(z + 1));
    ctx.stats.add(PassName, "kept-first",
                  "reading adjoint loops moved before the gather");
  }

  /// The rewrite of one pair: G (b.stmts[g], argument gArg) assigns, Z
  /// (b.stmts[z], argument zArg on \p x) keeps its values, and zero loops
  /// of x over Z's range minus \p inner (G's) follow Z. Returns how many.
  size_t assignAndKeep(Body &b, size_t g, int gArg, size_t z, int zArg, Dat *x,
                       const std::vector<LoopRange> &inner) {
    assignFirst(cast<ParLoopStmt>(*b.stmts[g]), unsigned(gArg));
    auto &zl = cast<ParLoopStmt>(*b.stmts[z]);
    std::vector<StmtPtr> rest = shellZeros(zl, x, inner);
    keepValues(zl, unsigned(zArg));
    std::vector<StmtPtr> parts = splitKept(zl, inner);
    rest.insert(rest.begin(), std::make_move_iterator(parts.begin()),
                std::make_move_iterator(parts.end()));
    const size_t n = rest.size();
    b.stmts.insert(b.stmts.begin() + std::ptrdiff_t(z + 1),
                   std::make_move_iterator(rest.begin()),
                   std::make_move_iterator(rest.end()));
    return n;
  }

  /// Z, kept, split at G's range (splitPointwise), its slabs returned to
  /// follow it, before the zero loops of those slabs, whose points they
  /// read.
  std::vector<StmtPtr> splitKept(ParLoopStmt &zl,
                                 const std::vector<LoopRange> &inner) {
    std::vector<StmtPtr> out = splitPointwise(zl, inner);
    if (!out.empty())
      ctx.stats.add(PassName, "kept-split",
                    "kept adjoint loops split at the gather's range");
    return out;
  }

  /// Z's kernel, copied without its final zeroing of parameter \p p.
  void keepValues(ParLoopStmt &l, unsigned p) {
    Function *&k = rewritten[{l.kernel, p, false}];
    if (!k) {
      std::unique_ptr<Function> c = l.kernel->clone();
      size_t last = c->body.stmts.size();
      while (!usesParam(*c->body.stmts[last - 1], p))
        --last;
      c->body.stmts.erase(c->body.stmts.begin() + std::ptrdiff_t(last - 1));
      c->kernelParams[p].mode = AccessMode::Read;
      k = add(std::move(c), l.kernel->name + ".keep");
    }
    l.args[p].mode = AccessMode::Read;
    l.kernel = k;
  }

  /// Zero loops of \p x over Z's range minus \p inner, in slabs.
  std::vector<StmtPtr> shellZeros(const ParLoopStmt &z, Dat *x,
                                  const std::vector<LoopRange> &inner) {
    std::vector<StmtPtr> out;
    for (std::vector<LoopRange> &slab : slabsAround(z.ranges, inner))
      out.push_back(zeroLoop(z, x, std::move(slab)));
    return out;
  }

  /// `x = 0` over \p range, a loop at \p near's location.
  StmtPtr zeroLoop(const ParLoopStmt &near, Dat *x,
                   std::vector<LoopRange> range) {
    StmtPtr l = fill.loop(nullptr, x, near.range);
    cast<ParLoopStmt>(*l).ranges = std::move(range);
    ctx.stats.add(PassName, "zero-loops", "zero loops made");
    return l;
  }

  /// \p k added to the program under \p name, or name_2, ... when taken.
  Function *add(std::unique_ptr<Function> k, const std::string &name) {
    Function *f = IRBuilder(program).addUniqueKernel(name, k->range);
    k->name = f->name;
    *f = std::move(*k);
    return f;
  }

  Program &program;
  PassContext &ctx;
  FillLoops fill; ///< adjoint_zero_T, the adjoint pass's zero kernels
  /// The copies made, per (kernel, parameter, assigning or keeping).
  std::map<std::tuple<const Function *, unsigned, bool>, Function *> rewritten;
};

} // namespace

std::vector<StmtPtr>
azeros::splitPointwise(ParLoopStmt &l, const std::vector<LoopRange> &inner) {
  std::vector<StmtPtr> out;
  if (!l.block || l.ranges.size() != inner.size() || l.ranges.empty() ||
      !within(inner, l.ranges))
    return out;
  for (const AccessDescriptor &a : l.args) {
    if (a.kind == ArgKind::Reduction || a.kind == ArgKind::Indirect ||
        a.kind == ArgKind::MapDirect)
      return out;
    if (a.mode == AccessMode::Read)
      continue;
    for (const AccessDescriptor &o : l.args)
      if (o.usesDat() && o.dat == a.dat && o.kind == ArgKind::Stencil &&
          o.stencil && !o.stencil->isCentreOnly())
        return out;
  }
  for (std::vector<LoopRange> &slab : slabsAround(l.ranges, inner)) {
    StmtPtr c = l.clone();
    cast<ParLoopStmt>(*c).ranges = std::move(slab);
    out.push_back(std::move(c));
  }
  l.ranges.clear();
  for (const LoopRange &r : inner)
    l.ranges.push_back(r.clone());
  return out;
}

bool assignAdjointZeros(Program &program, PassContext &ctx) {
  Rewriter r(program, ctx);
  bool changed = false;
  for (Function *f : hostFunctions(program))
    changed |= r.run(f->body, nullptr, f == program.main.get());
  return changed;
}

} // namespace opdc
