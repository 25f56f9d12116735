// IRPrinterTest.cpp - Program IR: builder, printer, verifier and walkers.
// SPDX-License-Identifier: Apache-2.0
#include "ir/IRPrinter.h"
#include "ir/IR.h"
#include "ir/IRBuilder.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace opdc;
using namespace opdc::ir;
using B = IRBuilder;

namespace {

const Type F64 = Type::scalarOf(ScalarKind::F64);
const Type F32 = Type::scalarOf(ScalarKind::F32);
const Type I32 = Type::scalarOf(ScalarKind::I32);
const Type F64x2 = Type::arrayOf(ScalarKind::F64, 2);

std::string print(const Program &p) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printIR(p, os);
  return s;
}

/// A small unstructured program: an indirect increment loop with a sum
/// reduction inside a host for loop.
struct Demo {
  Program p;
  Set *nodes, *edges;
  Map *pedge;
  Dat *x, *res;
  Function *flux, *main;
  ParLoopStmt *loop;
  unsigned rms;

  Demo() {
    B b(p);
    p.name = "demo";
    b.addConst("gam", ConstValue::ofFloat(ScalarKind::F64, 1.4));
    Param *niter =
        b.addParam("niter", I32, ConstValue::ofInt(ScalarKind::I32, 10));
    nodes = b.addSet("nodes", B::i32(100));
    edges = b.addSetFromFile("edges", B::str("mesh.h5"));
    pedge = b.addMap("pedge", edges, nodes, 2, B::str("mesh.h5"));
    x = b.addDat("x", nodes, F64x2);
    x->init = DatInit::File;
    x->initFile = B::str("mesh.h5");
    res = b.addDat("res", nodes, F64);

    flux = b.addKernel("flux");
    B::addKernelParam(*flux, "x1", AccessMode::Read, F64x2);
    B::addKernelParam(*flux, "x2", AccessMode::Read, F64x2);
    B::addKernelParam(*flux, "r1", AccessMode::Inc, F64);
    B::addKernelParam(*flux, "r2", AccessMode::Inc, F64);
    B::addKernelParam(*flux, "s", AccessMode::Sum, F64);
    unsigned d = flux->addVar("d", F64, false);
    flux->body.stmts.push_back(
        B::decl(d, B::binary(BinaryOp::Sub, B::index(B::arg(*flux, 0), 0),
                             B::index(B::arg(*flux, 1), 0))));
    flux->body.stmts.push_back(
        B::assign(B::arg(*flux, 2), B::var(*flux, d), AssignOp::Add));
    flux->body.stmts.push_back(
        B::assign(B::arg(*flux, 3), B::var(*flux, d), AssignOp::Sub));
    flux->body.stmts.push_back(
        B::assign(B::arg(*flux, 4),
                  B::binary(BinaryOp::Mul, B::var(*flux, d), B::var(*flux, d)),
                  AssignOp::Add));

    main = b.setMain();
    rms = main->addVar("rms", F64, true);
    unsigned i = main->addVar("i", I32, false);
    main->body.stmts.push_back(B::decl(rms, B::f64(0.0)));
    auto l = B::loopOverSet(flux, edges);
    l->args.push_back(B::indirect(x, pedge, 0, AccessMode::Read));
    l->args.push_back(B::indirect(x, pedge, 1, AccessMode::Read));
    l->args.push_back(B::indirect(res, pedge, 0, AccessMode::Inc));
    l->args.push_back(B::indirect(res, pedge, 1, AccessMode::Inc));
    l->args.push_back(B::reduction(int(rms), F64, AccessMode::Sum));
    loop = l.get();
    Body body;
    body.stmts.push_back(std::move(l));
    main->body.stmts.push_back(
        B::forRange(i, B::i32(0), B::param(niter), std::move(body)));
    main->body.stmts.push_back(B::print(exprs(B::var(*main, rms))));
  }
};

const char *DemoText = R"(program demo

const gam: f64 = 1.4
param niter: i32 = 10
set nodes size 100
set edges from "mesh.h5"
map pedge: edges -> nodes[2] from "mesh.h5"
dat x: nodes f64[2] from "mesh.h5"
dat res: nodes f64 zero

kernel @flux(%x1: read f64[2], %x2: read f64[2], %r1: inc f64, %r2: inc f64, %s: sum f64) {
  let %d: f64 = %x1[0] - %x2[0]
  %r1 += %d
  %r2 -= %d
  %s += %d * %d
}

main {
  var %rms: f64 = 0.0
  for %i: i32 in 0 .. niter {
    loop @flux over edges
      arg 0: x[pedge[0]]    indirect    read  f64[2] 16B
      arg 1: x[pedge[1]]    indirect    read  f64[2] 16B
      arg 2: res[pedge[0]]  indirect    inc   f64 8B
      arg 3: res[pedge[1]]  indirect    inc   f64 8B
      arg 4: %rms           reduction   sum   f64 8B
  }
  print(%rms)
}
)";

TEST(IRPrinter, PrintsDemoProgram) {
  Demo d;
  EXPECT_EQ(print(d.p), DemoText);
}

TEST(IRPrinter, ConstantsShowTheirType) {
  EXPECT_EQ(constToString(ConstValue::ofInt(ScalarKind::I32, -3)), "-3");
  EXPECT_EQ(constToString(ConstValue::ofInt(ScalarKind::I64, 5)), "5i64");
  EXPECT_EQ(constToString(ConstValue::ofFloat(ScalarKind::F64, 0.1)), "0.1");
  EXPECT_EQ(constToString(ConstValue::ofFloat(ScalarKind::F64, 2)), "2.0");
  EXPECT_EQ(constToString(ConstValue::ofFloat(ScalarKind::F32, 1.4)), "1.4f");
  // f64(1.4f): the single-precision value, printed exactly as a double.
  EXPECT_EQ(constToString(
                convertConst(ConstValue::ofFloat(ScalarKind::F32, 1.4), F64)),
            "1.399999976158142");
  EXPECT_EQ(constToString(ConstValue::ofFloat(ScalarKind::F64, 1e-300)),
            "1e-300");
  EXPECT_EQ(constToString(ConstValue::ofBool(true)), "true");
  EXPECT_EQ(constToString(ConstValue::ofString("a\"b\n")), "\"a\\\"b\\n\"");
  EXPECT_EQ(constToString(convertConst(ConstValue::ofInt(ScalarKind::I64, 0),
                                       Type::arrayOf(ScalarKind::F32, 2))),
            "[0.0f, 0.0f]");
}

TEST(IRPrinter, ParenthesisesByPrecedence) {
  // (a + b) * c and a - (b - c); a * b + c needs none.
  ExprPtr e1 = B::binary(
      BinaryOp::Mul, B::binary(BinaryOp::Add, B::f64(1), B::f64(2)), B::f64(3));
  EXPECT_EQ(exprToString(*e1), "(1.0 + 2.0) * 3.0");
  ExprPtr e2 = B::binary(BinaryOp::Sub, B::f64(1),
                         B::binary(BinaryOp::Sub, B::f64(2), B::f64(3)));
  EXPECT_EQ(exprToString(*e2), "1.0 - (2.0 - 3.0)");
  ExprPtr e3 = B::binary(
      BinaryOp::Add, B::binary(BinaryOp::Mul, B::f64(1), B::f64(2)), B::f64(3));
  EXPECT_EQ(exprToString(*e3), "1.0 * 2.0 + 3.0");
  ExprPtr e4 =
      B::unary(UnaryOp::Neg, B::binary(BinaryOp::Add, B::f64(1), B::f64(2)));
  EXPECT_EQ(exprToString(*e4), "-(1.0 + 2.0)");
  ExprPtr e5 =
      B::cast(ScalarKind::F64, B::intrinsic(Intrinsic::Idx, exprs(B::i32(1))));
  EXPECT_EQ(exprToString(*e5), "f64(idx(1))");
  // Casting a constant folds it.
  EXPECT_EQ(exprToString(*B::cast(ScalarKind::F32, B::i32(3))), "3.0f");
}

TEST(IRPrinter, StructuredLoopWithStencilAndRange) {
  Program p;
  B b(p);
  Param *nx = b.addParam("nx", I32, ConstValue::ofInt(ScalarKind::I32, 8));
  Block *grid = b.addBlock("grid", 2);
  Stencil *cross =
      b.addStencil("cross", 2, {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}});
  std::vector<ExprPtr> size;
  size.push_back(B::param(nx));
  size.push_back(B::param(nx));
  Dat *u = b.addBlockDat("u", grid, F64, std::move(size), {1, 1}, {1, 1});
  std::vector<ExprPtr> size2;
  size2.push_back(B::param(nx));
  size2.push_back(B::i32(4));
  Dat *v = b.addBlockDat("v", grid, F64, std::move(size2));
  Function *k = b.addKernel("avg");
  B::addKernelParam(*k, "u", AccessMode::Read, F64, cross);
  B::addKernelParam(*k, "v", AccessMode::Write, F64);
  k->body.stmts.push_back(B::assign(
      B::arg(*k, 1), B::binary(BinaryOp::Mul, B::f64(0.5),
                               B::binary(BinaryOp::Add, B::arg(*k, 0, {-1, 0}),
                                         B::arg(*k, 0, {1, 0})))));
  Function *m = b.setMain();
  std::vector<LoopRange> ranges;
  ranges.push_back(
      {B::i32(1), B::binary(BinaryOp::Sub, B::param(nx), B::i32(1))});
  ranges.push_back({B::i32(0), B::param(nx)});
  auto l = B::loopOverBlock(k, grid, std::move(ranges));
  l->args.push_back(B::stencil(u, cross, AccessMode::Read));
  l->args.push_back(B::direct(v, AccessMode::Write));
  m->body.stmts.push_back(std::move(l));
  m->body.stmts.push_back(B::swap(u, v));

  std::string why;
  EXPECT_TRUE(verifyIR(p, why)) << why;
  EXPECT_EQ(print(p), R"(param nx: i32 = 8
block grid[2]
stencil cross[2] = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]
dat u: grid f64 size [nx, nx] halo [1, 1] : [1, 1] base [0, 0] zero
dat v: grid f64 size [nx, 4] halo [0, 0] : [0, 0] base [0, 0] zero

kernel @avg(%u: read f64 @cross, %v: out f64) {
  %v = 0.5 * (%u(-1, 0) + %u(1, 0))
}

main {
  loop @avg over grid[1 .. nx - 1, 0 .. nx]
    arg 0: u@cross  stencil     read  f64 8B
    arg 1: v        direct      out   f64 8B
  swap(u, v)
}
)");
}

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

std::string verifyError(const Program &p) {
  std::string why;
  EXPECT_FALSE(verifyIR(p, why));
  return why;
}

TEST(Verifier, AcceptsDemo) {
  Demo d;
  std::string why;
  EXPECT_TRUE(verifyIR(d.p, why)) << why;
}

TEST(Verifier, RejectsArgumentCountMismatch) {
  Demo d;
  d.loop->args.pop_back();
  EXPECT_NE(verifyError(d.p).find("4 arguments for 5 kernel parameters"),
            std::string::npos);
}

TEST(Verifier, RejectsOverwrittenTapePushWithoutItsLoop) {
  Demo d;
  auto t = std::make_unique<TapeStmt>(true, std::vector<Dat *>{d.res},
                                      std::vector<unsigned>{});
  t->overwritten = {true};
  d.main->body.stmts.insert(d.main->body.stmts.begin() + 1, std::move(t));
  std::string why = verifyError(d.p);
  EXPECT_NE(why.find("tape push of 'res' as overwritten, but no loop over "
                     "its set reaches it next"),
            std::string::npos)
      << why;
  // Before a set loop that increments it through a map.
  Demo e;
  auto u = std::make_unique<TapeStmt>(true, std::vector<Dat *>{e.res},
                                      std::vector<unsigned>{});
  u->overwritten = {true};
  auto &loopBody = static_cast<ForStmt &>(*e.main->body.stmts[1]).body;
  loopBody.stmts.insert(loopBody.stmts.begin(), std::move(u));
  why = verifyError(e.p);
  EXPECT_NE(why.find("tape push of 'res' as overwritten, but loop 'flux' "
                     "does not only write it directly"),
            std::string::npos)
      << why;
}

TEST(Verifier, RejectsModeDifferingFromParam) {
  Demo d;
  d.loop->args[2].mode = AccessMode::Write;
  std::string why = verifyError(d.p);
  EXPECT_NE(why.find("mode out differs from"), std::string::npos) << why;
}

TEST(Verifier, RejectsMapIndexOutOfRange) {
  Demo d;
  d.loop->args[1].mapIndex = 2;
  EXPECT_NE(verifyError(d.p).find("index 2 outside map 'pedge' of arity 2"),
            std::string::npos);
}

TEST(Verifier, RejectsDirectDatOnOtherSet) {
  Demo d;
  d.loop->args[2] = B::direct(d.res, AccessMode::Inc);
  EXPECT_NE(verifyError(d.p).find("direct dat 'res' is not on set 'edges'"),
            std::string::npos);
}

TEST(Verifier, RejectsMixedOperandTypes) {
  Demo d;
  auto &decl = static_cast<DeclStmt &>(*d.flux->body.stmts[0]);
  decl.init = B::binary(BinaryOp::Add, B::f64(1), B::f32(2));
  std::string why = verifyError(d.p);
  EXPECT_NE(why.find("operands of '+' have types f64 and f32"),
            std::string::npos)
      << why;
}

TEST(Verifier, RejectsStaleStoredType) {
  Demo d;
  auto &decl = static_cast<DeclStmt &>(*d.flux->body.stmts[0]);
  decl.init->type = F32;
  std::string why = verifyError(d.p);
  EXPECT_NE(why.find("is stored as f32 but its operands make it f64"),
            std::string::npos)
      << why;
}

TEST(Verifier, RejectsUseBeforeDeclaration) {
  Demo d;
  // Move `print(%rms)` before `var %rms`.
  auto &stmts = d.main->body.stmts;
  std::rotate(stmts.begin(), stmts.end() - 1, stmts.end());
  std::string why = verifyError(d.p);
  EXPECT_NE(why.find("use of %rms outside the scope of its declaration"),
            std::string::npos)
      << why;
}

TEST(Verifier, RejectsUseOutOfScope) {
  Demo d;
  // %i is only defined inside the for loop.
  d.main->body.stmts.push_back(B::print(exprs(B::var(*d.main, 1))));
  EXPECT_NE(verifyError(d.p).find("use of %i outside the scope"),
            std::string::npos);
}

TEST(Verifier, RejectsWriteToReadParameter) {
  Demo d;
  d.flux->body.stmts.push_back(
      B::assign(B::index(B::arg(*d.flux, 0), 0), B::f64(1)));
  EXPECT_NE(verifyError(d.p).find("assignment to read-only parameter %x1"),
            std::string::npos);
}

TEST(Verifier, RejectsIncrementBySet) {
  Demo d;
  d.flux->body.stmts.push_back(B::assign(B::arg(*d.flux, 2), B::f64(1)));
  EXPECT_NE(verifyError(d.p).find("expected '+=' or '-='"), std::string::npos);
}

TEST(Verifier, RejectsBreakOutsideLoop) {
  Demo d;
  d.flux->body.stmts.push_back(std::make_unique<BreakStmt>());
  EXPECT_NE(verifyError(d.p).find("break outside a loop"), std::string::npos);
}

TEST(Verifier, RejectsHostStatementInKernel) {
  Demo d;
  d.flux->body.stmts.push_back(B::swap(d.x, d.x));
  EXPECT_NE(verifyError(d.p).find("swap outside host code"), std::string::npos);
}

TEST(Verifier, RejectsReductionOnDat) {
  Demo d;
  d.loop->args[4] = B::direct(d.res, AccessMode::Sum);
  EXPECT_FALSE(verifyError(d.p).empty());
}

TEST(Verifier, RejectsRecursion) {
  Program p;
  B b(p);
  Function *f = b.addFn("f", F64);
  unsigned x = B::addParamVar(*f, "x", F64);
  std::vector<ExprPtr> args;
  args.push_back(B::var(*f, x));
  f->body.stmts.push_back(B::ret(B::call(f, std::move(args))));
  EXPECT_NE(verifyError(p).find("'f' calls itself"), std::string::npos);
}

TEST(Verifier, RejectsStencilPointOutsideStencil) {
  Program p;
  B b(p);
  Block *grid = b.addBlock("grid", 1);
  Stencil *s = b.addStencil("s", 1, {{0}, {1}});
  (void)grid;
  Function *k = b.addKernel("k");
  B::addKernelParam(*k, "u", AccessMode::Read, F64, s);
  unsigned t = k->addVar("t", F64, false);
  k->body.stmts.push_back(B::decl(t, B::arg(*k, 0, {-1})));
  EXPECT_NE(verifyError(p).find("at a point not in stencil 's'"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Walkers and cloning
//===----------------------------------------------------------------------===//

TEST(IRVisitor, CountsLoopsAndKernelArgs) {
  struct Counter : IRVisitor {
    unsigned loops = 0, args = 0;
    void visitParLoop(const ParLoopStmt &s) override {
      ++loops;
      IRVisitor::visitParLoop(s);
    }
    void visitKernelArg(const KernelArgExpr &) override { ++args; }
  } c;
  Demo d;
  c.visitProgram(d.p);
  EXPECT_EQ(c.loops, 1u);
  EXPECT_EQ(c.args, 5u);
}

TEST(IRMutator, RewritesAndDeletes) {
  // Replace every `%d` read by 2.0 in the kernel and delete print.
  struct Rewrite : IRMutator {
    ExprPtr mutateVarRef(std::unique_ptr<VarRefExpr> e) override {
      if (currentFunction && currentFunction->isKernel())
        return B::f64(2.0);
      return e;
    }
    StmtPtr mutatePrint(std::unique_ptr<PrintStmt>) override { return nullptr; }
  } r;
  Demo d;
  r.mutateProgram(d.p);
  std::string text = print(d.p);
  EXPECT_NE(text.find("%s += 2.0 * 2.0"), std::string::npos) << text;
  EXPECT_EQ(text.find("print("), std::string::npos);
  std::string why;
  EXPECT_TRUE(verifyIR(d.p, why)) << why;
}

TEST(IRClone, CloneIsDeepAndPrintsTheSame) {
  Demo d;
  Body copy = d.main->body.clone();
  std::string before = print(d.p);
  std::swap(copy, d.main->body);
  EXPECT_EQ(print(d.p), before);
  // The copy is independent: changing it leaves the original alone.
  auto &forStmt = static_cast<ForStmt &>(*d.main->body.stmts[1]);
  forStmt.lo = B::i32(5);
  EXPECT_NE(print(d.p), before);
  std::swap(copy, d.main->body);
  EXPECT_EQ(print(d.p), before);
}

} // namespace
