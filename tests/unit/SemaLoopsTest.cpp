// SemaLoopsTest.cpp - Loop descriptors, solvers, derivatives and printf.
// SPDX-License-Identifier: Apache-2.0
#include "SemaTestHelpers.h"

#include <gtest/gtest.h>

#include <functional>

using namespace opdc;
using namespace opdc::ast;
using namespace opdc::sematest;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

TEST(SemaLoops, AccessDescriptorsOfAnIndirectLoop) {
  Checked c(R"(program t
set edges size 8
set cells size 5
map pecell: edges -> cells[2]
dat q: cells f64[4]
dat res: cells f64[4]
dat w: edges f64
kernel flux(q1: f64[4], q2: f64[4], we: f64, dt: f64, r1: inc f64[4],
            ids: i32[2], total: sum f64) {
  for n in 0..4 {
    r1[n] += dt * we * (q1[n] - q2[n])
  }
  total += we
}
main {
  var total = 0.0
  loop flux over edges (q[pecell[0]], q[pecell[1]], w, 0.5, res[pecell[1]],
                        pecell, total)
})");
  ASSERT_TRUE(c.ok) << c.messages;
  LoopStmt *l = firstLoop(c);
  ASSERT_NE(l, nullptr);
  auto *k = c.global<KernelDecl>("flux");
  auto *pecell = c.global<MapDecl>("pecell");
  auto *q = c.global<DatDecl>("q");
  EXPECT_EQ(l->kernel.decl, k);
  EXPECT_EQ(l->space.decl, c.global<SetDecl>("edges"));
  ASSERT_EQ(l->args.size(), 7u);
  for (unsigned i = 0; i < 7; ++i)
    EXPECT_EQ(l->args[i].param, k->params[i].get());

  EXPECT_EQ(l->args[0].kind, ArgKind::Indirect);
  EXPECT_EQ(l->args[0].dat, q);
  EXPECT_EQ(l->args[0].map, pecell);
  EXPECT_EQ(l->args[0].mapIndex, 0);
  EXPECT_EQ(l->args[1].mapIndex, 1);

  EXPECT_EQ(l->args[2].kind, ArgKind::Direct);
  EXPECT_EQ(l->args[2].dat, c.global<DatDecl>("w"));

  EXPECT_EQ(l->args[3].kind, ArgKind::GlobalRead);
  EXPECT_EQ(l->args[3].expr->type, Type::scalarOf(ScalarKind::F64));

  EXPECT_EQ(l->args[4].kind, ArgKind::Indirect);
  EXPECT_EQ(l->args[4].param->mode, AccessMode::Inc);
  EXPECT_EQ(l->args[4].dat, c.global<DatDecl>("res"));
  EXPECT_EQ(l->args[4].mapIndex, 1);

  EXPECT_EQ(l->args[5].kind, ArgKind::MapDirect);
  EXPECT_EQ(l->args[5].map, pecell);

  EXPECT_EQ(l->args[6].kind, ArgKind::Reduction);
  auto *totalVar = cast<VarDeclStmt>(mainStmts(c)[0].get())->var.get();
  EXPECT_EQ(l->args[6].var, totalVar);
}

TEST(SemaLoops, StencilArgumentsAndStencilReads) {
  Checked c(R"(program t
block grid[2]
stencil point = [(0, 0)]
stencil cross = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]
dat u, v: grid f64 size [16, 16] halo 1
kernel smooth(a: f64 @ cross, b: out f64 @ point) {
  b(0, 0) = 0.25 * (a(1, 0) + a(-1, 0) + a(0, 1) + a(0, -1))
}
main {
  loop smooth over grid[1..15, 1..15] (u, v)
  swap(u, v)
})");
  ASSERT_TRUE(c.ok) << c.messages;
  LoopStmt *l = firstLoop(c);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->args[0].kind, ArgKind::Stencil);
  EXPECT_EQ(l->args[0].stencil, c.global<StencilDecl>("cross"));
  EXPECT_EQ(l->args[1].kind, ArgKind::Stencil);
  EXPECT_EQ(l->args[1].stencil, c.global<StencilDecl>("point"));
  auto *k = c.global<KernelDecl>("smooth");
  auto *assign = cast<AssignStmt>(k->body->stmts[0].get());
  auto *target = cast<CallExpr>(assign->target.get());
  EXPECT_EQ(target->target, CallTarget::StencilRead);
  EXPECT_EQ(target->stencilOffset, (std::vector<int64_t>{0, 0}));
  auto *mul = cast<BinaryExpr>(assign->value.get());
  std::function<CallExpr *(Expr *)> firstCall = [&](Expr *e) -> CallExpr * {
    if (auto *ce = dyn_cast<CallExpr>(e))
      return ce;
    if (auto *b = dyn_cast<BinaryExpr>(e)) {
      if (auto *r = firstCall(b->lhs.get()))
        return r;
      return firstCall(b->rhs.get());
    }
    return nullptr;
  };
  CallExpr *read = firstCall(mul->rhs.get());
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->calleeDecl, k->params[0].get());
  EXPECT_EQ(read->stencilOffset, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(read->type, Type::scalarOf(ScalarKind::F64));
}

TEST(SemaLoops, IndirectOutIsAccepted) {
  Checked c(R"(program t
set edges size 8
set cells size 5
map pecell: edges -> cells[2]
dat res: cells f64
kernel k(r: out f64, s: inout f64) {
  r = 1.0
  s = s * 2.0
}
main {
  loop k over edges (res[pecell[0]], res[pecell[1]])
})");
  EXPECT_TRUE(c.ok) << c.messages;
}

TEST(SemaLoops, IndirectOutBesideAReadIsRejected) {
  Checked c(R"(program t
set edges size 8
set cells size 5
map pecell: edges -> cells[2]
dat res: cells f64
kernel k(r: out f64, s: f64) {
  r = s
}
main {
  loop k over edges (res[pecell[0]], res[pecell[1]])
})");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("t.opd:10:38: error: dat 'res' is written through "
                         "map 'pecell' ('out') and read through map 'pecell' "
                         "in the same loop"))
      << c.messages;
}

TEST(SemaLoops, MapIndexAndSetsAreChecked) {
  Checked c(R"(program t
set edges size 8
set cells size 5
map pecell: edges -> cells[2]
dat q: cells f64
kernel k(a: f64) {
}
main {
  loop k over edges (q[pecell[2]])
  loop k over cells (q[pecell[0]])
})");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("map index 2 is out of range for map 'pecell' of "
                         "arity 2"))
      << c.messages;
  EXPECT_TRUE(c.mentions("map 'pecell' maps from set 'edges' but the loop is "
                         "over set 'cells'"))
      << c.messages;
}

//===----------------------------------------------------------------------===//
// Other families: solvers, derivatives, printf, imports
//===----------------------------------------------------------------------===//

TEST(SemaSolvers, TridiagonalAlongFolds) {
  Checked c(R"(program t
const d1 = 1
block grid[2]
dat a, b, c, d: grid f64 size [8, 8]
main {
  solve tridiagonal(a, b, c, d) along d1 over grid
})");
  ASSERT_TRUE(c.ok) << c.messages;
  auto *s = cast<SolveStmt>(mainStmts(c)[0].get());
  EXPECT_EQ(s->alongDim, 1);
  EXPECT_EQ(s->args[3].decl, c.global<DatDecl>("d"));
  Checked bad(R"(program t
block grid[2]
dat a, b, c: grid f64 size [8, 8]
dat d: grid i32 size [8, 8]
main {
  solve tridiagonal(a, b, c, d) along 0 over grid
})");
  EXPECT_TRUE(bad.mentions("'tridiagonal' needs scalar 'f64' or 'f32' dats"))
      << bad.messages;
}

TEST(SemaDerivatives, AdjointCreatesGradientFields) {
  Checked c(R"(program t
set nodes size 4
dat x: nodes f64[2]
kernel norm(a: f64[2], s: sum f64) {
  s += a[0] * a[0] + a[1] * a[1]
}
proc objective(alpha: f64) -> f64 {
  var s = 0.0
  loop norm over nodes (x, s)
  return alpha * s
}
main {
  let (J, dJ) = adjoint objective(2.0) wrt (x, alpha) checkpoints 2
  printf("%f %f\n", J, dJ.alpha)
  write dJ.x to "g.h5"
})");
  ASSERT_TRUE(c.ok) << c.messages;
  auto *adj = cast<AdjointStmt>(mainStmts(c)[0].get());
  EXPECT_EQ(adj->proc.decl, c.global<ProcDecl>("objective"));
  EXPECT_EQ(adj->value->type, Type::scalarOf(ScalarKind::F64));
  ASSERT_EQ(adj->grad->fields.size(), 2u);
  auto *gx = dyn_cast<DatDecl>(adj->grad->field("x"));
  ASSERT_NE(gx, nullptr);
  EXPECT_EQ(gx->adjointOf, c.global<DatDecl>("x"));
  EXPECT_EQ(gx->on.decl, c.global<SetDecl>("nodes"));
  EXPECT_EQ(gx->elemType.resolved, Type::arrayOf(ScalarKind::F64, 2));
  auto *ga = dyn_cast<VarDecl>(adj->grad->field("alpha"));
  ASSERT_NE(ga, nullptr);
  EXPECT_EQ(ga->type, Type::scalarOf(ScalarKind::F64));
  auto *w = cast<WriteStmt>(mainStmts(c)[2].get());
  EXPECT_EQ(cast<MemberExpr>(w->dats[0].get())->decl, gx);
}

TEST(SemaDerivatives, OnlyProcsReturningFloatsAreDifferentiated) {
  Checked c(R"(program t
proc count() -> i32 {
  return 1
}
main {
  let d = tangent count() along (x: 1.0)
})");
  EXPECT_TRUE(c.mentions("proc 'count' returns 'i32'; only a proc returning "
                         "'f64' or 'f32' can be differentiated"))
      << c.messages;
}

TEST(SemaPrintf, ConversionsMatchArguments) {
  Checked ok(R"(program t
main {
  let n = 3
  let big = 5i64
  let x: f32 = 1.5
  printf("%5d %ld %8.3f %e %s %%\n", n, big, x, 2.0, "s")
})");
  EXPECT_TRUE(ok.ok) << ok.messages;
  Checked bad("program t\nmain {\n  printf(\"%d %f\\n\", 1.5)\n}\n");
  EXPECT_TRUE(bad.mentions("format string has 2 conversions but 1 argument was "
                           "given"))
      << bad.messages;
  Checked wide("program t\nmain {\n  let n = 5i64\n  printf(\"%d\", n)\n}\n");
  EXPECT_TRUE(wide.mentions("use '%ld'")) << wide.messages;
}

} // namespace
