// SemaTest.cpp - Name resolution, constant folding, types and declarations.
// SPDX-License-Identifier: Apache-2.0
#include "SemaTestHelpers.h"

#include <gtest/gtest.h>

using namespace opdc;
using namespace opdc::ast;
using namespace opdc::sematest;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

//===----------------------------------------------------------------------===//
// Name resolution
//===----------------------------------------------------------------------===//

TEST(SemaNames, ResolvesGlobalsLocalsAndParameters) {
  Checked c(R"(program t
const scale = 2.0
kernel k(a: f64, b: out f64) {
  let t = a * scale
  b = t
}
main {
})");
  ASSERT_TRUE(c.ok) << c.messages;
  auto *k = c.global<KernelDecl>("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->params[1]->kernel, k);
  EXPECT_EQ(k->params[1]->index, 1u);
  auto *let = cast<VarDeclStmt>(k->body->stmts[0].get());
  auto *mul = cast<BinaryExpr>(let->var->init.get());
  EXPECT_EQ(cast<NameExpr>(mul->lhs.get())->decl, k->params[0].get());
  EXPECT_EQ(cast<NameExpr>(mul->rhs.get())->decl, c.global<ConstDecl>("scale"));
  EXPECT_EQ(let->var->type, Type::scalarOf(ScalarKind::F64));
  auto *assign = cast<AssignStmt>(k->body->stmts[1].get());
  EXPECT_EQ(cast<NameExpr>(assign->value.get())->decl, let->var.get());
  EXPECT_NE(c.prog->main, nullptr);
}

TEST(SemaNames, UnknownDatSuggestsTheClosestDat) {
  Checked c(R"(program t
set cells size 4
dat temp: cells f64
kernel k(a: f64) {
}
main {
  loop k over cells (tempr)
})");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("unknown name 'tempr'; did you mean 'temp'?"))
      << c.messages;
  EXPECT_TRUE(c.mentions("note: 'temp' declared here")) << c.messages;
}

TEST(SemaNames, RedefinitionHasANoteAtTheFirst) {
  Checked c("program t\nset cells size 4\ndat cells: cells f64\nmain {\n}\n");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("t.opd:3:5: error: redefinition of 'cells'"))
      << c.messages;
  EXPECT_TRUE(c.mentions("t.opd:2:5: note: previous declaration of 'cells'"))
      << c.messages;
}

TEST(SemaNames, WrongKindNamesBoth) {
  Checked c(
      "program t\nset cells size 4\nmain {\n  write cells to \"f.h5\"\n}\n");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("error: 'cells' is a set, expected a dat"))
      << c.messages;
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

TEST(SemaFolding, F32ConstantWidenedToF64KeepsSinglePrecisionDigits) {
  Checked c("program t\nconst gam = f64(1.4f)\nconst gm1 = gam - 1.0\n"
            "main {\n}\n");
  ASSERT_TRUE(c.ok) << c.messages;
  auto *gam = c.global<ConstDecl>("gam");
  EXPECT_EQ(gam->value.type, Type::scalarOf(ScalarKind::F64));
  EXPECT_EQ(gam->value.asDouble(), 1.399999976158142);
  EXPECT_EQ(c.global<ConstDecl>("gm1")->value.asDouble(),
            1.399999976158142 - 1.0);
}

TEST(SemaFolding, F32ArithmeticIsDoneInSinglePrecision) {
  Checked c("program t\nconst a: f32 = 0.1\nconst b = a * 3.0f + 1.0f\n"
            "main {\n}\n");
  ASSERT_TRUE(c.ok) << c.messages;
  float expected = 0.1f * 3.0f + 1.0f;
  auto *b = c.global<ConstDecl>("b");
  EXPECT_EQ(b->value.type, Type::scalarOf(ScalarKind::F32));
  EXPECT_EQ(b->value.asDouble(), double(expected));
}

TEST(SemaFolding, ConstsFoldInAnyOrderAndArraysIndex) {
  Checked c(R"(program t
const n2 = n * 2
const n = 3
const v: f64[3] = [1.0, 2.0, 4.0]
const last = v[n - 1]
main {
})");
  ASSERT_TRUE(c.ok) << c.messages;
  EXPECT_EQ(c.global<ConstDecl>("n2")->value.asInt(), 6);
  EXPECT_EQ(c.global<ConstDecl>("n2")->value.type,
            Type::scalarOf(ScalarKind::I32));
  EXPECT_EQ(c.global<ConstDecl>("last")->value.asDouble(), 4.0);
  EXPECT_EQ(c.global<ConstDecl>("v")->value.str(), "[1.0, 2.0, 4.0]");
}

TEST(SemaFolding, DeclarationsFold) {
  Checked c(R"(program t
const two = 2
set edges size 8
set nodes size 5
map pedge: edges -> nodes[two]
block grid[two]
stencil cross = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -two)]
param n: i32 = 10 * two
dat u: grid f64 size [n, n] halo [1, 2] : 3 base [-1, 0]
main {
})");
  ASSERT_TRUE(c.ok) << c.messages;
  EXPECT_EQ(c.global<MapDecl>("pedge")->arity, 2);
  EXPECT_EQ(c.global<BlockDecl>("grid")->dims, 2);
  auto *s = c.global<StencilDecl>("cross");
  EXPECT_EQ(s->dims, 2);
  ASSERT_EQ(s->offsets.size(), 5u);
  EXPECT_EQ(s->offsets[4], (std::vector<int64_t>{0, -2}));
  EXPECT_EQ(c.global<ParamDecl>("n")->defaultValue.asInt(), 20);
  auto *u = c.global<DatDecl>("u");
  EXPECT_TRUE(u->structured);
  EXPECT_EQ(u->haloM, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(u->haloP, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(u->baseOffset, (std::vector<int64_t>{-1, 0}));
}

TEST(SemaFolding, OverflowAndDivisionByZeroInConstsAreErrors) {
  Checked over("program t\nconst a: i32 = 2147483647\nconst b = a + 1\n"
               "main {\n}\n");
  EXPECT_FALSE(over.ok);
  EXPECT_TRUE(over.mentions("t.opd:3:13: error: integer overflow in constant "
                            "expression"))
      << over.messages;
  Checked div("program t\nconst z = 0.0\nconst d = 1.0 / z\nmain {\n}\n");
  EXPECT_FALSE(div.ok);
  EXPECT_TRUE(div.mentions("division by zero in constant expression"))
      << div.messages;
}

TEST(SemaFolding, NonConstantArrayLengthPointsAtTheParam) {
  Checked c("program t\nparam n: i32 = 3\nset s size 4\ndat q: s f64[n]\n"
            "main {\n}\n");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("error: array length is not a compile-time constant"))
      << c.messages;
  EXPECT_TRUE(c.mentions("note: 'n' is a param")) << c.messages;
}

//===----------------------------------------------------------------------===//
// Types and literal adaptation
//===----------------------------------------------------------------------===//

TEST(SemaTypes, UntypedLiteralsTakeTheOtherOperandsType) {
  Checked c(R"(program t
kernel k(a: f32, b: out f32, i: i64, j: out i64) {
  b = a * 2 + 0.1
  j = i + 1
}
main {
})");
  ASSERT_TRUE(c.ok) << c.messages;
  auto *k = c.global<KernelDecl>("k");
  auto *b = cast<AssignStmt>(k->body->stmts[0].get());
  auto *add = cast<BinaryExpr>(b->value.get());
  EXPECT_EQ(add->type, Type::scalarOf(ScalarKind::F32));
  auto *mul = cast<BinaryExpr>(add->lhs.get());
  // The integer 2 became a float literal of type f32.
  auto *two = dyn_cast<FloatLitExpr>(mul->rhs.get());
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->type, Type::scalarOf(ScalarKind::F32));
  EXPECT_EQ(two->constValue->asDouble(), 2.0);
  // 0.1 is rounded to single precision.
  auto *tenth = cast<FloatLitExpr>(add->rhs.get());
  EXPECT_EQ(tenth->type, Type::scalarOf(ScalarKind::F32));
  EXPECT_EQ(tenth->constValue->asDouble(), double(0.1f));
  auto *j = cast<AssignStmt>(k->body->stmts[1].get());
  auto *one = cast<BinaryExpr>(j->value.get())->rhs.get();
  EXPECT_EQ(one->type, Type::scalarOf(ScalarKind::I64));
}

TEST(SemaTypes, UntypedArithmeticIsFoldedWhenTyped) {
  Checked c(R"(program t
main {
  let x: f32 = 1.0 / 3.0
  let n = 2 * 3 + 1
  let m = -1
})");
  ASSERT_TRUE(c.ok) << c.messages;
  auto &stmts = mainStmts(c);
  auto *x = cast<VarDeclStmt>(stmts[0].get())->var.get();
  auto *lit = dyn_cast<FloatLitExpr>(x->init.get());
  ASSERT_NE(lit, nullptr);
  EXPECT_EQ(lit->type, Type::scalarOf(ScalarKind::F32));
  EXPECT_EQ(lit->constValue->asDouble(), double(float(1.0 / 3.0)));
  auto *n = cast<VarDeclStmt>(stmts[1].get())->var.get();
  EXPECT_EQ(n->type, Type::scalarOf(ScalarKind::I32));
  EXPECT_EQ(n->init->constValue->asInt(), 7);
  auto *m = cast<VarDeclStmt>(stmts[2].get())->var.get();
  EXPECT_EQ(m->init->type, Type::scalarOf(ScalarKind::I32));
  EXPECT_EQ(m->init->constValue->asInt(), -1);
}

TEST(SemaTypes, MixingTypesSuggestsACast) {
  Checked c(
      "program t\nmain {\n  let i = 3\n  let x = 2.5\n  let y = x * i\n}\n");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("t.opd:5:13: error: mismatched types 'f64' and 'i32' "
                         "in '*'; cast with f64(...)"))
      << c.messages;
}

TEST(SemaTypes, OneErrorPerMistake) {
  // The unknown name makes `a` erroneous; nothing that uses `a` reports.
  Checked c(R"(program t
main {
  let a = nosuch + 1.0
  let b = a * 2
  if a > b {
    print(a)
  }
})");
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.diags.errorCount(), 1u) << c.messages;
}

TEST(SemaTypes, AccessModesRestrictAssignments) {
  Checked inc("program t\nkernel k(r: inc f64) {\n  r *= 2.0\n}\nmain {\n}\n");
  EXPECT_TRUE(inc.mentions("'inc' parameter 'r' can only be incremented"))
      << inc.messages;
  Checked mn("program t\nkernel k(a: f64, m: min f64) {\n  m = min(a, m)\n"
             "}\nmain {\n}\n");
  EXPECT_TRUE(mn.ok) << mn.messages;
  Checked rd("program t\nkernel k(a: f64) {\n  a = 1.0\n}\nmain {\n}\n");
  EXPECT_TRUE(rd.mentions("cannot assign to read-only parameter 'a'"))
      << rd.messages;
}

TEST(SemaDeclarations, ShapesAreChecked) {
  Checked c(R"(program t
set s size 4
block cube[4]
block grid[2]
stencil mixed = [(0, 0), (1, 0, 0)]
map m: grid -> s[0]
dat u: grid f64 size [8] halo -1
main {
})");
  EXPECT_FALSE(c.ok);
  for (const char *msg :
       {"block 'cube' must have 1 to 3 dimensions, found 4",
        "stencil point has 3 offsets but the first point of 'mixed' has 2",
        "'grid' is a block, expected a set",
        "arity of map 'm' must be at least 1, found 0",
        "dat 'u' has 1 size but block 'grid' has 2 dimensions",
        "halo depth must not be negative, found -1"})
    EXPECT_TRUE(c.mentions(msg)) << msg << "\n" << c.messages;
  // Reported in source order.
  EXPECT_LT(c.messages.find("cube"), c.messages.find("mixed"));
  EXPECT_LT(c.messages.find("mixed"), c.messages.find("halo depth"));
}

} // namespace
