// SemaTest.cpp - Name resolution, folding, typing and loop descriptors.
// SPDX-License-Identifier: Apache-2.0
#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>

using namespace opdc;
using namespace opdc::ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// Parses and analyses one program given as text.
struct Checked {
  SourceManager sm;
  std::string messages;
  llvm::raw_string_ostream os{messages};
  DiagnosticEngine diags{sm, os};
  std::unique_ptr<Program> prog;
  bool ok = false;

  explicit Checked(llvm::StringRef text, const FrontendOptions &opts = {},
                   llvm::StringRef name = "t.opd") {
    prog = loadProgramFromText(text, name, sm, diags, opts);
    if (prog && !diags.hasErrors())
      ok = analyzeProgram(*prog, diags) && !diags.hasErrors();
  }
  template <typename T> T *global(const std::string &n) {
    auto it = prog->globals.find(n);
    return it == prog->globals.end() ? nullptr : dyn_cast<T>(it->second);
  }
  bool mentions(llvm::StringRef s) const {
    return llvm::StringRef(messages).contains(s);
  }
};

/// The statements of main.
std::vector<StmtPtr> &mainStmts(Checked &c) {
  return c.prog->main->body->stmts;
}

/// The first loop statement found in main (not nested).
LoopStmt *firstLoop(Checked &c, unsigned skip = 0) {
  for (auto &s : mainStmts(c))
    if (auto *l = dyn_cast<LoopStmt>(s.get()))
      if (skip-- == 0)
        return l;
  return nullptr;
}

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

TEST(SemaLoops, IndirectOutIsRejected) {
  Checked c(R"(program t
set edges size 8
set cells size 5
map pecell: edges -> cells[2]
dat res: cells f64
kernel k(r: out f64) {
  r = 1.0
}
main {
  loop k over edges (res[pecell[0]])
})");
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.mentions("t.opd:10:22: error: indirect 'out' access to 'res' "
                         "through map 'pecell' is not race-free; declare the "
                         "parameter 'inc'"))
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

/// A scratch directory with .opd files, removed at the end.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { llvm::sys::fs::createUniqueDirectory("opdc-sema", path); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name, const std::string &text) {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(p));
    std::ofstream(std::string(p)) << text;
    return std::string(p);
  }
};

TEST(SemaImports, EachModuleLoadedOnceImportsFirst) {
  TempDir dir;
  dir.file("lib/shapes.opd", "import \"common.opd\"\nconst sides = 4\n");
  dir.file("lib/common.opd", "const unit = 1.0\n");
  std::string root = dir.file(
      "main.opd", "program p\nimport lib.shapes\nimport \"lib/common.opd\"\n"
                  "main {\n  print(sides, unit)\n}\n");
  SourceManager sm;
  std::string msgs;
  llvm::raw_string_ostream os(msgs);
  DiagnosticEngine diags(sm, os);
  auto prog = loadProgram(root, sm, diags, {});
  ASSERT_NE(prog, nullptr);
  EXPECT_FALSE(diags.hasErrors()) << msgs;
  ASSERT_EQ(prog->modules.size(), 3u);
  EXPECT_TRUE(llvm::StringRef(prog->modules[0]->path).ends_with("common.opd"));
  EXPECT_TRUE(llvm::StringRef(prog->modules[1]->path).ends_with("shapes.opd"));
  EXPECT_EQ(prog->modules[2].get(), prog->root);
  EXPECT_EQ(prog->root->imports[0].resolved, prog->modules[1].get());
  EXPECT_EQ(prog->root->imports[1].resolved, prog->modules[0].get());
  EXPECT_TRUE(analyzeProgram(*prog, diags)) << msgs;
}

TEST(SemaImports, CyclesAndMissingModulesAreReported) {
  TempDir dir;
  dir.file("a.opd", "import b\nconst x = 1\n");
  dir.file("b.opd", "import a\nconst y = 2\n");
  std::string root =
      dir.file("main.opd", "program p\nimport a\nimport nowhere\nmain {\n}\n");
  SourceManager sm;
  std::string msgs;
  llvm::raw_string_ostream os(msgs);
  DiagnosticEngine diags(sm, os);
  FrontendOptions opts;
  opts.importPaths.push_back(std::string(dir.path) + "/inc");
  auto prog = loadProgram(root, sm, diags, opts);
  ASSERT_NE(prog, nullptr);
  llvm::StringRef m(msgs);
  EXPECT_TRUE(m.contains("b.opd:1:1: error: import of 'a' creates a cycle"))
      << msgs;
  EXPECT_TRUE(m.contains("a.opd:1:1: note: 'a.opd' imports 'b.opd' here"))
      << msgs;
  EXPECT_TRUE(m.contains("error: module 'nowhere' not found")) << msgs;
  EXPECT_TRUE(m.contains("inc/nowhere.opd'")) << msgs;
}

TEST(SemaImports, StdlibModulesComeFromTheStdlibDir) {
  TempDir dir;
  dir.file("std/math.opd", "const pi: f64 = 3.14159\n");
  FrontendOptions opts;
  opts.stdlibDir = std::string(dir.path) + "/std";
  Checked c("program p\nimport std.math\nmain {\n  print(pi)\n}\n", opts);
  EXPECT_TRUE(c.ok) << c.messages;
  Checked none("program p\nimport std.nosuch\nmain {\n}\n", opts);
  EXPECT_TRUE(none.mentions("error: module 'std.nosuch' not found"))
      << none.messages;
}

//===----------------------------------------------------------------------===//
// Completeness: every "sema:" field is filled in a valid program
//===----------------------------------------------------------------------===//

/// Walks an analysed program and records every annotation sema left empty.
class AnnotationAudit {
public:
  std::vector<std::string> problems;

  void program(const Program &p) {
    for (auto &m : p.modules) {
      for (auto &imp : m->imports)
        expect(imp.resolved != nullptr, "import " + imp.name);
      for (auto &d : m->decls)
        decl(*d);
    }
  }

private:
  void expect(bool ok, const std::string &what) {
    if (!ok)
      problems.push_back(what);
  }
  void type(const TypeRef &t, const std::string &what) {
    expect(!t.resolved.isError(), "type of " + what);
    if (t.length)
      expr(*t.length);
  }
  void expr(const Expr &e) {
    std::string at =
        "expression at offset " +
        std::to_string(uintptr_t(e.range.begin.getPointer()) & 0xffff);
    expect(!e.type.isError(), "type of " + at);
    switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
      expect(e.constValue.has_value(), "value of literal");
      if (e.kind == ExprKind::IntLit)
        expect(e.type.isIntegerScalar(), "integer literal of a float type");
      break;
    case ExprKind::StringLit:
      break;
    case ExprKind::Name:
      expect(cast<NameExpr>(e).decl != nullptr,
             "decl of " + cast<NameExpr>(e).name);
      break;
    case ExprKind::Unary:
      expr(*cast<UnaryExpr>(e).operand);
      break;
    case ExprKind::Binary: {
      auto &b = cast<BinaryExpr>(e);
      expr(*b.lhs);
      expr(*b.rhs);
      expect(b.lhs->type == b.rhs->type, "operand types of a binary");
      if (!isComparison(b.op) && !isLogical(b.op))
        expect(b.type == b.lhs->type, "result type of a binary");
      break;
    }
    case ExprKind::Call: {
      auto &c = cast<CallExpr>(e);
      expect(c.target != CallTarget::Unresolved, "target of " + c.callee);
      if (c.target == CallTarget::Intrinsic)
        expect(c.intrinsic != Intrinsic::None, "intrinsic " + c.callee);
      if (c.target == CallTarget::Fn || c.target == CallTarget::Proc ||
          c.target == CallTarget::StencilRead)
        expect(c.calleeDecl != nullptr, "callee of " + c.callee);
      if (c.target == CallTarget::StencilRead)
        expect(!c.stencilOffset.empty(), "offset of " + c.callee);
      for (auto &a : c.args)
        if (!(c.intrinsic == Intrinsic::Size && a.get() == c.args[0].get()))
          expr(*a);
      break;
    }
    case ExprKind::Cast:
      expr(*cast<CastExpr>(e).operand);
      break;
    case ExprKind::Index:
      expr(*cast<IndexExpr>(e).base);
      expr(*cast<IndexExpr>(e).index);
      break;
    case ExprKind::Member:
      expect(cast<MemberExpr>(e).decl != nullptr, "field decl");
      break;
    case ExprKind::ArrayLit:
      for (auto &x : cast<ArrayLitExpr>(e).elements)
        expr(*x);
      break;
    }
  }
  void var(const VarDecl &v) {
    expect(!v.type.isError(), "type of variable " + v.name);
    if (v.declaredType)
      type(*v.declaredType, v.name);
    if (v.init)
      expr(*v.init);
  }
  void ranges(const std::vector<RangeExpr> &rs) {
    for (auto &r : rs) {
      expr(*r.lo);
      expr(*r.hi);
    }
  }
  void stmt(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Block:
      for (auto &x : cast<Block>(s).stmts)
        stmt(*x);
      break;
    case StmtKind::VarDecl:
      var(*cast<VarDeclStmt>(s).var);
      break;
    case StmtKind::Expr:
      expr(*cast<ExprStmt>(s).expr);
      break;
    case StmtKind::Assign:
      expr(*cast<AssignStmt>(s).target);
      expr(*cast<AssignStmt>(s).value);
      break;
    case StmtKind::If: {
      auto &i = cast<IfStmt>(s);
      expr(*i.cond);
      stmt(*i.thenBlock);
      if (i.elseStmt)
        stmt(*i.elseStmt);
      break;
    }
    case StmtKind::For: {
      auto &f = cast<ForStmt>(s);
      expect(!f.var->type.isError(), "induction variable type");
      expr(*f.bounds.lo);
      expr(*f.bounds.hi);
      stmt(*f.body);
      break;
    }
    case StmtKind::While:
      expr(*cast<WhileStmt>(s).cond);
      stmt(*cast<WhileStmt>(s).body);
      break;
    case StmtKind::Return:
      if (cast<ReturnStmt>(s).value)
        expr(*cast<ReturnStmt>(s).value);
      break;
    case StmtKind::Loop: {
      auto &l = cast<LoopStmt>(s);
      expect(l.kernel.decl && l.space.decl, "loop names");
      ranges(l.ranges);
      for (auto &a : l.args) {
        expect(a.kind && a.param, "loop argument");
        expr(*a.expr);
        switch (a.kind.value_or(ArgKind::GlobalRead)) {
        case ArgKind::Direct:
          expect(a.dat, "direct dat");
          break;
        case ArgKind::Indirect:
          expect(a.dat && a.map && a.mapIndex >= 0, "indirect descriptor");
          break;
        case ArgKind::Stencil:
          expect(a.dat && a.stencil, "stencil descriptor");
          break;
        case ArgKind::MapDirect:
          expect(a.map, "map descriptor");
          break;
        case ArgKind::Reduction:
          expect(a.var, "reduction variable");
          break;
        default:
          break;
        }
      }
      break;
    }
    case StmtKind::Swap:
      expect(cast<SwapStmt>(s).a.decl && cast<SwapStmt>(s).b.decl, "swap");
      break;
    case StmtKind::Write:
      for (auto &d : cast<WriteStmt>(s).dats)
        expr(*d);
      expr(*cast<WriteStmt>(s).file);
      break;
    case StmtKind::Read:
      for (auto &d : cast<ReadStmt>(s).dats)
        expr(*d);
      expr(*cast<ReadStmt>(s).file);
      break;
    case StmtKind::Print:
      for (auto &a : cast<PrintStmt>(s).args)
        expr(*a);
      break;
    case StmtKind::Solve: {
      auto &sv = cast<SolveStmt>(s);
      expect(sv.alongDim >= 0 && sv.space.decl, "solve");
      for (auto &a : sv.args)
        expect(a.decl != nullptr, "solve dat");
      ranges(sv.ranges);
      break;
    }
    case StmtKind::Adjoint: {
      auto &a = cast<AdjointStmt>(s);
      expect(a.proc.decl && !a.value->type.isError(), "adjoint");
      expect(a.grad->fields.size() == a.wrt.size(), "gradient fields");
      for (auto &w : a.wrt)
        expect(w.decl != nullptr, "wrt " + w.name);
      for (auto &x : a.callArgs)
        expr(*x);
      break;
    }
    case StmtKind::Tangent: {
      auto &t = cast<TangentStmt>(s);
      expect(t.proc.decl && !t.result->type.isError(), "tangent");
      for (auto &seed : t.along) {
        expect(seed.target.decl != nullptr, "seed target");
        expr(*seed.value);
      }
      break;
    }
    default:
      break;
    }
  }
  void decl(const Decl &d) {
    expect(d.module != nullptr, "module of " + d.name);
    switch (d.kind) {
    case DeclKind::Const: {
      auto &c = cast<ConstDecl>(d);
      expect(c.value.valid(), "value of const " + d.name);
      if (c.declaredType)
        type(*c.declaredType, d.name);
      expr(*c.init);
      break;
    }
    case DeclKind::Param: {
      auto &p = cast<ParamDecl>(d);
      type(p.type, d.name);
      expect(p.defaultValue.valid(), "default of param " + d.name);
      expr(*p.init);
      break;
    }
    case DeclKind::Set: {
      auto &st = cast<SetDecl>(d);
      if (st.size)
        expr(*st.size);
      if (st.fromFile)
        expr(*st.fromFile);
      break;
    }
    case DeclKind::Map: {
      auto &m = cast<MapDecl>(d);
      expect(m.arity >= 1 && m.from.decl && m.to.decl, "map " + d.name);
      break;
    }
    case DeclKind::Dat: {
      auto &dt = cast<DatDecl>(d);
      expect(dt.on.decl != nullptr, "set of dat " + d.name);
      type(dt.elemType, d.name);
      if (dt.structured) {
        size_t dims = size_t(cast<BlockDecl>(dt.on.decl)->dims);
        expect(dt.haloM.size() == dims && dt.haloP.size() == dims &&
                   dt.baseOffset.size() == dims,
               "halo of dat " + d.name);
        for (auto &sz : dt.size)
          expr(*sz);
      }
      if (dt.initExpr)
        expr(*dt.initExpr);
      break;
    }
    case DeclKind::Block:
      expect(cast<BlockDecl>(d).dims >= 1, "dims of block " + d.name);
      break;
    case DeclKind::Stencil: {
      auto &st = cast<StencilDecl>(d);
      expect(st.dims >= 1 && st.offsets.size() == st.points.size(),
             "stencil " + d.name);
      break;
    }
    case DeclKind::Kernel: {
      auto &k = cast<KernelDecl>(d);
      for (auto &p : k.params) {
        expect(p->kernel == &k, "kernel of parameter " + p->name);
        type(p->type, p->name);
        if (p->stencil)
          expect(p->stencil->decl != nullptr, "stencil of " + p->name);
      }
      stmt(*k.body);
      break;
    }
    case DeclKind::Fn: {
      auto &f = cast<FnDecl>(d);
      for (auto &p : f.params)
        var(*p);
      if (f.returnType)
        type(*f.returnType, d.name);
      stmt(*f.body);
      break;
    }
    case DeclKind::Proc: {
      auto &f = cast<ProcDecl>(d);
      for (auto &p : f.params)
        var(*p);
      if (f.returnType)
        type(*f.returnType, d.name);
      stmt(*f.body);
      break;
    }
    case DeclKind::Main:
      stmt(*cast<MainDecl>(d).body);
      break;
    default:
      break;
    }
  }
};

/// Every valid program we have: the examples and the positive sema tests.
std::vector<std::string> validPrograms() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const char *dir :
       {OPDC_SOURCE_DIR "/examples", OPDC_SOURCE_DIR "/tests/lit/sema"}) {
    for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
         it != end && !ec; it.increment(ec)) {
      llvm::StringRef p = it->path();
      if (p.ends_with(".opd") && !p.contains("/Inputs/"))
        out.push_back(p.str());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SemaCompleteness, EveryAnnotationIsFilledInValidPrograms) {
  std::vector<std::string> files = validPrograms();
  unsigned audited = 0;
  for (const std::string &path : files) {
    SourceManager sm;
    std::string msgs;
    llvm::raw_string_ostream os(msgs);
    DiagnosticEngine diags(sm, os);
    FrontendOptions opts;
    opts.stdlibDir = OPDC_STDLIB_DIR;
    auto prog = loadProgram(path, sm, diags, opts);
    if (!prog || diags.hasErrors() || !analyzeProgram(*prog, diags))
      continue; // negative cases are the lit tests' business
    ++audited;
    AnnotationAudit audit;
    audit.program(*prog);
    std::string all;
    for (auto &p : audit.problems)
      all += "\n  " + p;
    EXPECT_TRUE(audit.problems.empty()) << path << ":" << all;
  }
  // The examples and tests/lit/sema hold several valid programs.
  EXPECT_GE(audited, 5u);
}

} // namespace
