// ParserTest.cpp - Unit tests of the Bison grammar and AST construction.
// SPDX-License-Identifier: Apache-2.0
#include "frontend/Parser.h"
#include "ast/AST.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace opdc;
using namespace opdc::ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// One parsed buffer; keeps the SourceManager alive for the ranges.
struct Parsed {
  SourceManager sm;
  std::string diagText;
  llvm::raw_string_ostream os{diagText};
  DiagnosticEngine diags{sm, os};
  std::unique_ptr<Module> module;

  explicit Parsed(llvm::StringRef text) {
    diags.setErrorLimit(1000);
    unsigned id = sm.addBuffer(text, "test.opd");
    module = parseModule(sm, id, diags);
  }
  unsigned errors() const { return diags.errorCount(); }
  const Decl *decl(size_t i) const { return module->decls.at(i).get(); }
  /// Text a range covers.
  std::string text(SourceRange r) const {
    return std::string(r.begin.getPointer(),
                       r.end.getPointer() - r.begin.getPointer());
  }
  std::pair<unsigned, unsigned> at(SourceRange r) const {
    return sm.lineAndColumn(r.begin);
  }
};

/// Parses `main { BODY }` and returns main's statements.
struct ParsedMain : Parsed {
  explicit ParsedMain(const std::string &body)
      : Parsed("main {\n" + body + "\n}\n") {}
  const std::vector<StmtPtr> &stmts() const {
    return cast<MainDecl>(decl(0))->body->stmts;
  }
  const Stmt *stmt(size_t i) const { return stmts().at(i).get(); }
};

/// Parses `const x = EXPR` and returns the initialiser.
struct ParsedExpr : Parsed {
  explicit ParsedExpr(const std::string &expr)
      : Parsed("const x = " + expr + "\n") {}
  const Expr *expr() const { return cast<ConstDecl>(decl(0))->init.get(); }
};

/// Fully parenthesised form of an expression, to check precedence.
std::string shape(const Expr *e) {
  switch (e->kind) {
  case ExprKind::IntLit:
    return std::to_string(cast<IntLitExpr>(e)->value);
  case ExprKind::FloatLit:
    return cast<FloatLitExpr>(e)->spelling;
  case ExprKind::BoolLit:
    return cast<BoolLitExpr>(e)->value ? "true" : "false";
  case ExprKind::StringLit:
    return "\"" + cast<StringLitExpr>(e)->value + "\"";
  case ExprKind::Name:
    return cast<NameExpr>(e)->name;
  case ExprKind::Unary: {
    auto *u = cast<UnaryExpr>(e);
    return std::string("(") + spelling(u->op) + shape(u->operand.get()) + ")";
  }
  case ExprKind::Binary: {
    auto *b = cast<BinaryExpr>(e);
    return "(" + shape(b->lhs.get()) + " " + spelling(b->op) + " " +
           shape(b->rhs.get()) + ")";
  }
  case ExprKind::Call: {
    auto *c = cast<CallExpr>(e);
    std::string s = c->callee + "(";
    for (size_t i = 0; i < c->args.size(); ++i)
      s += (i ? ", " : "") + shape(c->args[i].get());
    return s + ")";
  }
  case ExprKind::Cast: {
    auto *c = cast<CastExpr>(e);
    return std::string("cast<") + scalarName(c->to) + ">(" +
           shape(c->operand.get()) + ")";
  }
  case ExprKind::Index: {
    auto *x = cast<IndexExpr>(e);
    return shape(x->base.get()) + "[" + shape(x->index.get()) + "]";
  }
  case ExprKind::Member: {
    auto *m = cast<MemberExpr>(e);
    return shape(m->base.get()) + "." + m->field;
  }
  case ExprKind::ArrayLit: {
    auto *a = cast<ArrayLitExpr>(e);
    std::string s = "[";
    for (size_t i = 0; i < a->elements.size(); ++i)
      s += (i ? ", " : "") + shape(a->elements[i].get());
    return s + "]";
  }
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Module structure
//===----------------------------------------------------------------------===//

TEST(Parser, EmptyFileIsAModule) {
  Parsed p("");
  EXPECT_EQ(p.errors(), 0u);
  EXPECT_FALSE(p.module->isProgram);
  EXPECT_TRUE(p.module->decls.empty());
  EXPECT_EQ(p.module->path, "test.opd");
}

TEST(Parser, ProgramAndImports) {
  Parsed p("program airfoil\nimport std.math\nimport \"lib/mesh.opd\";\n"
           "import a.b.c");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  EXPECT_TRUE(p.module->isProgram);
  EXPECT_EQ(p.module->programName, "airfoil");
  EXPECT_EQ(p.text(p.module->programRange), "program airfoil");
  ASSERT_EQ(p.module->imports.size(), 3u);
  EXPECT_EQ(p.module->imports[0].name, "std.math");
  EXPECT_FALSE(p.module->imports[0].isPath);
  EXPECT_EQ(p.text(p.module->imports[0].range), "import std.math");
  EXPECT_EQ(p.module->imports[1].name, "lib/mesh.opd");
  EXPECT_TRUE(p.module->imports[1].isPath);
  EXPECT_EQ(p.module->imports[2].name, "a.b.c");
}

TEST(Parser, ProgramMustComeFirst) {
  Parsed p("const a = 1\nprogram late\n");
  EXPECT_EQ(p.errors(), 1u);
  EXPECT_NE(p.diagText.find("test.opd:2:1: error: 'program' must come before "
                            "every import and declaration"),
            std::string::npos)
      << p.diagText;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

TEST(Parser, ConstAndParam) {
  Parsed p("const a = 1\nconst b: f64[4] = [1.0, 2.0, 3.0, 4.0]\n"
           "param n: i32 = 10\nparam f: str = \"m.h5\"");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  ASSERT_EQ(p.module->decls.size(), 4u);
  auto *a = cast<ConstDecl>(p.decl(0));
  EXPECT_EQ(a->name, "a");
  EXPECT_FALSE(a->declaredType);
  EXPECT_TRUE(isa<IntLitExpr>(a->init.get()));
  EXPECT_EQ(p.text(a->nameRange), "a");
  EXPECT_EQ(p.text(a->range), "const a = 1");
  EXPECT_EQ(a->module, p.module.get());
  auto *b = cast<ConstDecl>(p.decl(1));
  ASSERT_TRUE(b->declaredType);
  EXPECT_EQ(b->declaredType->scalar, ScalarKind::F64);
  ASSERT_TRUE(b->declaredType->length);
  EXPECT_EQ(cast<IntLitExpr>(b->declaredType->length.get())->value, 4);
  EXPECT_EQ(p.text(b->declaredType->range), "f64[4]");
  EXPECT_EQ(cast<ArrayLitExpr>(b->init.get())->elements.size(), 4u);
  auto *n = cast<ParamDecl>(p.decl(2));
  EXPECT_EQ(n->type.scalar, ScalarKind::I32);
  EXPECT_FALSE(n->type.length);
  auto *f = cast<ParamDecl>(p.decl(3));
  EXPECT_TRUE(f->type.isString);
  EXPECT_EQ(cast<StringLitExpr>(f->init.get())->value, "m.h5");
}

TEST(Parser, Sets) {
  Parsed p("set nodes, edges from meshfile\nset cells size n * 2\nset empty");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  ASSERT_EQ(p.module->decls.size(), 4u);
  auto *nodes = cast<SetDecl>(p.decl(0));
  auto *edges = cast<SetDecl>(p.decl(1));
  EXPECT_EQ(nodes->name, "nodes");
  EXPECT_EQ(edges->name, "edges");
  EXPECT_EQ(p.text(edges->nameRange), "edges");
  EXPECT_EQ(p.text(nodes->range), "set nodes, edges from meshfile");
  ASSERT_TRUE(nodes->fromFile && edges->fromFile);
  EXPECT_NE(nodes->fromFile.get(), edges->fromFile.get()); // cloned
  EXPECT_EQ(shape(nodes->fromFile.get()), "meshfile");
  EXPECT_FALSE(nodes->size);
  auto *cells = cast<SetDecl>(p.decl(2));
  EXPECT_EQ(shape(cells->size.get()), "(n * 2)");
  EXPECT_FALSE(cells->fromFile);
  auto *empty = cast<SetDecl>(p.decl(3));
  EXPECT_FALSE(empty->size || empty->fromFile);
}

TEST(Parser, Maps) {
  Parsed p("map pedge: edges -> nodes[2] from meshfile\n"
           "map m: a -> b[k + 1]");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *m = cast<MapDecl>(p.decl(0));
  EXPECT_EQ(m->name, "pedge");
  EXPECT_EQ(m->from.name, "edges");
  EXPECT_EQ(p.text(m->from.range), "edges");
  EXPECT_EQ(m->to.name, "nodes");
  EXPECT_EQ(shape(m->arityExpr.get()), "2");
  EXPECT_EQ(shape(m->fromFile.get()), "meshfile");
  auto *m2 = cast<MapDecl>(p.decl(1));
  EXPECT_EQ(shape(m2->arityExpr.get()), "(k + 1)");
  EXPECT_FALSE(m2->fromFile);
}

TEST(Parser, UnstructuredDats) {
  Parsed p("dat x: nodes f64[2] from meshfile\ndat q: cells f64[4] = qinf\n"
           "dat adt: cells f64");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *x = cast<DatDecl>(p.decl(0));
  EXPECT_EQ(x->on.name, "nodes");
  EXPECT_EQ(x->elemType.scalar, ScalarKind::F64);
  EXPECT_EQ(shape(x->elemType.length.get()), "2");
  EXPECT_EQ(x->init, DatInit::File);
  EXPECT_EQ(shape(x->initExpr.get()), "meshfile");
  EXPECT_FALSE(x->hasSize);
  auto *q = cast<DatDecl>(p.decl(1));
  EXPECT_EQ(q->init, DatInit::Fill);
  EXPECT_EQ(shape(q->initExpr.get()), "qinf");
  auto *adt = cast<DatDecl>(p.decl(2));
  EXPECT_EQ(adt->init, DatInit::Zero);
  EXPECT_FALSE(adt->initExpr);
  EXPECT_FALSE(adt->elemType.length);
}

TEST(Parser, StructuredDatsWithAllClauses) {
  Parsed p("dat u, u2: grid f64 size [nx, ny] halo 1\n"
           "dat v: grid f32[3] size [n] halo [1, 2] : 0 base [-1] = 0.5\n"
           "dat w: grid f64 size [a, b, c] from \"w.h5\"");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  ASSERT_EQ(p.module->decls.size(), 4u);
  auto *u = cast<DatDecl>(p.decl(0));
  auto *u2 = cast<DatDecl>(p.decl(1));
  EXPECT_EQ(u->name, "u");
  EXPECT_EQ(u2->name, "u2");
  for (auto *d : {u, u2}) {
    EXPECT_EQ(d->on.name, "grid");
    EXPECT_TRUE(d->hasSize);
    ASSERT_EQ(d->size.size(), 2u);
    EXPECT_EQ(shape(d->size[0].get()), "nx");
    EXPECT_EQ(shape(d->size[1].get()), "ny");
    EXPECT_EQ(shape(d->haloMinus.get()), "1");
    EXPECT_EQ(shape(d->haloPlus.get()), "1");
    EXPECT_FALSE(d->base);
    EXPECT_EQ(p.text(d->range), "dat u, u2: grid f64 size [nx, ny] halo 1");
  }
  EXPECT_NE(u->size[0].get(), u2->size[0].get());
  EXPECT_NE(u->haloMinus.get(), u->haloPlus.get());
  auto *v = cast<DatDecl>(p.decl(2));
  EXPECT_EQ(v->elemType.scalar, ScalarKind::F32);
  EXPECT_EQ(shape(v->haloMinus.get()), "[1, 2]");
  EXPECT_EQ(shape(v->haloPlus.get()), "0");
  EXPECT_EQ(shape(v->base.get()), "[(-1)]");
  EXPECT_EQ(v->init, DatInit::Fill);
  EXPECT_EQ(shape(v->initExpr.get()), "0.5");
  auto *w = cast<DatDecl>(p.decl(3));
  EXPECT_EQ(w->size.size(), 3u);
  EXPECT_FALSE(w->haloMinus);
  EXPECT_EQ(w->init, DatInit::File);
}

TEST(Parser, BlockAndStencil) {
  Parsed p("block grid[2]\nstencil cross = [(0,0), (1,0), (-1,0), (0,1), "
           "(0,-1)]\nstencil s1 = [(0)]");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *g = cast<BlockDecl>(p.decl(0));
  EXPECT_EQ(g->name, "grid");
  EXPECT_EQ(shape(g->dimsExpr.get()), "2");
  auto *s = cast<StencilDecl>(p.decl(1));
  ASSERT_EQ(s->points.size(), 5u);
  EXPECT_EQ(s->points[2].offsets.size(), 2u);
  EXPECT_EQ(shape(s->points[2].offsets[0].get()), "(-1)");
  EXPECT_EQ(p.text(s->points[2].range), "(-1,0)");
  auto *s1 = cast<StencilDecl>(p.decl(2));
  ASSERT_EQ(s1->points.size(), 1u);
  EXPECT_EQ(s1->points[0].offsets.size(), 1u);
}

TEST(Parser, KernelParameters) {
  Parsed p("kernel k(a: f64[2], b: out f64, c: inout i32, d: inc f64[4],\n"
           "         e: min f64, f: max f64, g: sum f64, u: f64 @ cross,\n"
           "         v: out f32 @ centre) {}\nkernel none() {}");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *k = cast<KernelDecl>(p.decl(0));
  ASSERT_EQ(k->params.size(), 9u);
  AccessMode modes[] = {
      AccessMode::Read, AccessMode::Write, AccessMode::ReadWrite,
      AccessMode::Inc,  AccessMode::Min,   AccessMode::Max,
      AccessMode::Sum,  AccessMode::Read,  AccessMode::Write};
  for (unsigned i = 0; i < 9; ++i) {
    EXPECT_EQ(k->params[i]->mode, modes[i]) << i;
    EXPECT_EQ(k->params[i]->index, i);
    EXPECT_EQ(k->params[i]->kernel, k);
    EXPECT_EQ(k->params[i]->module, p.module.get());
  }
  EXPECT_FALSE(k->params[0]->modeRange.valid());
  EXPECT_EQ(p.text(k->params[3]->modeRange), "inc");
  EXPECT_EQ(p.text(k->params[3]->range), "d: inc f64[4]");
  EXPECT_EQ(p.text(k->params[3]->nameRange), "d");
  EXPECT_FALSE(k->params[0]->stencil);
  ASSERT_TRUE(k->params[7]->stencil);
  EXPECT_EQ(k->params[7]->stencil->name, "cross");
  EXPECT_EQ(p.text(k->params[7]->range), "u: f64 @ cross");
  EXPECT_TRUE(k->body->stmts.empty());
  EXPECT_TRUE(cast<KernelDecl>(p.decl(1))->params.empty());
}

TEST(Parser, FnProcMain) {
  Parsed p("fn sq(x: f64) -> f64 { return x * x }\n"
           "proc objective(alpha: f64, n: i32) -> f64 { return 1.0 }\n"
           "proc run() { }\nmain { }");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *fn = cast<FnDecl>(p.decl(0));
  ASSERT_EQ(fn->params.size(), 1u);
  EXPECT_EQ(fn->params[0]->name, "x");
  EXPECT_FALSE(fn->params[0]->isMutable);
  EXPECT_EQ(fn->params[0]->declaredType->scalar, ScalarKind::F64);
  ASSERT_TRUE(fn->returnType);
  EXPECT_EQ(fn->body->stmts.size(), 1u);
  auto *obj = cast<ProcDecl>(p.decl(1));
  EXPECT_EQ(obj->params.size(), 2u);
  auto *run = cast<ProcDecl>(p.decl(2));
  EXPECT_FALSE(run->returnType);
  auto *m = cast<MainDecl>(p.decl(3));
  EXPECT_EQ(m->name, "main");
  EXPECT_EQ(p.text(m->nameRange), "main");
  EXPECT_EQ(p.text(m->body->range), "{ }");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

TEST(Parser, LetAndVar) {
  ParsedMain p("let a = 1\nlet b: f64 = 2.0\nvar c\nvar d: i32[3]\n"
               "var e: f64 = 0.0");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  ASSERT_EQ(p.stmts().size(), 5u);
  auto *a = cast<VarDeclStmt>(p.stmt(0))->var.get();
  EXPECT_EQ(a->name, "a");
  EXPECT_FALSE(a->isMutable);
  EXPECT_FALSE(a->declaredType);
  EXPECT_EQ(p.text(a->nameRange), "a");
  auto *b = cast<VarDeclStmt>(p.stmt(1))->var.get();
  EXPECT_EQ(b->declaredType->scalar, ScalarKind::F64);
  auto *c = cast<VarDeclStmt>(p.stmt(2))->var.get();
  EXPECT_TRUE(c->isMutable);
  EXPECT_FALSE(c->init);
  auto *d = cast<VarDeclStmt>(p.stmt(3))->var.get();
  EXPECT_EQ(shape(d->declaredType->length.get()), "3");
  auto *e = cast<VarDeclStmt>(p.stmt(4))->var.get();
  EXPECT_TRUE(e->isMutable && e->init && e->declaredType);
  EXPECT_EQ(p.text(p.stmt(4)->range), "var e: f64 = 0.0");
}

TEST(Parser, AssignmentsAndCalls) {
  ParsedMain p("x = 1\nx[i] += 2\ny.f -= 3\nz *= 4; w /= 5\nf(1, 2)\n"
               "g()\nu(0, 0)[1] = 2");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  ASSERT_EQ(p.stmts().size(), 8u);
  AssignOp ops[] = {AssignOp::Set, AssignOp::Add, AssignOp::Sub, AssignOp::Mul,
                    AssignOp::Div};
  for (unsigned i = 0; i < 5; ++i)
    EXPECT_EQ(cast<AssignStmt>(p.stmt(i))->op, ops[i]);
  EXPECT_EQ(shape(cast<AssignStmt>(p.stmt(1))->target.get()), "x[i]");
  EXPECT_EQ(shape(cast<AssignStmt>(p.stmt(2))->target.get()), "y.f");
  auto *call = cast<ExprStmt>(p.stmt(5));
  EXPECT_EQ(shape(call->expr.get()), "f(1, 2)");
  EXPECT_EQ(p.text(call->range), "f(1, 2)");
  EXPECT_EQ(shape(cast<ExprStmt>(p.stmt(6))->expr.get()), "g()");
  EXPECT_EQ(shape(cast<AssignStmt>(p.stmt(7))->target.get()), "u(0, 0)[1]");
}

TEST(Parser, ExpressionStatementMustBeACall) {
  ParsedMain p("x\ny = 1");
  EXPECT_EQ(p.errors(), 1u);
  EXPECT_NE(p.diagText.find("test.opd:3:1: error: unexpected identifier 'y'"),
            std::string::npos)
      << p.diagText;
}

TEST(Parser, IfElseChains) {
  ParsedMain p("if a { x = 1 }\nif b { } else { y = 2 }\n"
               "if c { } else if d { } else { }");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *i0 = cast<IfStmt>(p.stmt(0));
  EXPECT_EQ(shape(i0->cond.get()), "a");
  EXPECT_EQ(i0->thenBlock->stmts.size(), 1u);
  EXPECT_FALSE(i0->elseStmt);
  auto *i1 = cast<IfStmt>(p.stmt(1));
  EXPECT_TRUE(isa<Block>(i1->elseStmt.get()));
  auto *i2 = cast<IfStmt>(p.stmt(2));
  auto *elif = dyn_cast<IfStmt>(i2->elseStmt.get());
  ASSERT_TRUE(elif);
  EXPECT_EQ(shape(elif->cond.get()), "d");
  EXPECT_TRUE(isa<Block>(elif->elseStmt.get()));
  EXPECT_EQ(p.text(i2->range), "if c { } else if d { } else { }");
  EXPECT_EQ(p.text(elif->range), "if d { } else { }");
}

TEST(Parser, LoopsAndJumps) {
  ParsedMain p("for i in 0..n { break }\nfor j in 1..=m - 1 { continue }\n"
               "while x < 3 { x += 1 }");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *f = cast<ForStmt>(p.stmt(0));
  EXPECT_EQ(f->var->name, "i");
  EXPECT_FALSE(f->var->isMutable);
  EXPECT_FALSE(f->bounds.inclusive);
  EXPECT_EQ(shape(f->bounds.lo.get()), "0");
  EXPECT_EQ(shape(f->bounds.hi.get()), "n");
  EXPECT_EQ(p.text(f->bounds.range), "0..n");
  EXPECT_TRUE(isa<BreakStmt>(f->body->stmts[0].get()));
  auto *g = cast<ForStmt>(p.stmt(1));
  EXPECT_TRUE(g->bounds.inclusive);
  EXPECT_EQ(shape(g->bounds.hi.get()), "(m - 1)");
  EXPECT_TRUE(isa<ContinueStmt>(g->body->stmts[0].get()));
  auto *w = cast<WhileStmt>(p.stmt(2));
  EXPECT_EQ(shape(w->cond.get()), "(x < 3)");
}

TEST(Parser, Returns) {
  Parsed p("fn f() -> f64 { return 1.0 }\nproc g() { return }\n"
           "proc h() { if a { return } return; }");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *r1 = cast<ReturnStmt>(cast<FnDecl>(p.decl(0))->body->stmts[0].get());
  EXPECT_EQ(shape(r1->value.get()), "1.0");
  auto *r2 = cast<ReturnStmt>(cast<ProcDecl>(p.decl(1))->body->stmts[0].get());
  EXPECT_FALSE(r2->value);
  EXPECT_EQ(p.text(r2->range), "return");
  auto &hs = cast<ProcDecl>(p.decl(2))->body->stmts;
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_FALSE(cast<ReturnStmt>(hs[1].get())->value);
}

TEST(Parser, ReturnTakesTheFollowingExpression) {
  // Newlines are not tokens: `return` followed by a name returns it.
  Parsed p("proc f() -> f64 { return\n x }");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *r = cast<ReturnStmt>(cast<ProcDecl>(p.decl(0))->body->stmts[0].get());
  EXPECT_EQ(shape(r->value.get()), "x");
}

TEST(Parser, LoopStatements) {
  ParsedMain p("loop res_calc over edges (x[pedge[0]], q, rms, 2.0 * a)\n"
               "loop jacobi over grid[1..nx-1, 0..=ny] (u, f, u2)\n"
               "loop init over cells ()");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *l = cast<LoopStmt>(p.stmt(0));
  EXPECT_EQ(l->kernel.name, "res_calc");
  EXPECT_EQ(p.text(l->kernel.range), "res_calc");
  EXPECT_EQ(l->space.name, "edges");
  EXPECT_FALSE(l->hasRanges);
  ASSERT_EQ(l->args.size(), 4u);
  EXPECT_EQ(shape(l->args[0].expr.get()), "x[pedge[0]]");
  EXPECT_FALSE(l->args[0].kind.has_value());
  EXPECT_EQ(shape(l->args[3].expr.get()), "(2.0 * a)");
  auto *j = cast<LoopStmt>(p.stmt(1));
  EXPECT_TRUE(j->hasRanges);
  ASSERT_EQ(j->ranges.size(), 2u);
  EXPECT_EQ(shape(j->ranges[0].hi.get()), "(nx - 1)");
  EXPECT_FALSE(j->ranges[0].inclusive);
  EXPECT_TRUE(j->ranges[1].inclusive);
  EXPECT_EQ(cast<LoopStmt>(p.stmt(2))->args.size(), 0u);
}

TEST(Parser, HostStatements) {
  ParsedMain p("swap(u, u2)\nwrite q, dJ.x to \"out.h5\"\nread q from f\n"
               "print(a, \"b\", 1)\nprint()\nprintf(\"%d %f\\n\", i, x)\n"
               "solve tridiagonal(a, b, c, d) along 0 over grid\n"
               "solve tridiagonal(a, b, c, d) along 1 over grid[0..n, 1..m]");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *s = cast<SwapStmt>(p.stmt(0));
  EXPECT_EQ(s->a.name, "u");
  EXPECT_EQ(s->b.name, "u2");
  auto *w = cast<WriteStmt>(p.stmt(1));
  ASSERT_EQ(w->dats.size(), 2u);
  EXPECT_EQ(shape(w->dats[1].get()), "dJ.x");
  EXPECT_EQ(shape(w->file.get()), "\"out.h5\"");
  auto *r = cast<ReadStmt>(p.stmt(2));
  EXPECT_EQ(r->dats.size(), 1u);
  EXPECT_EQ(shape(r->file.get()), "f");
  auto *pr = cast<PrintStmt>(p.stmt(3));
  EXPECT_FALSE(pr->formatted);
  EXPECT_EQ(pr->args.size(), 3u);
  EXPECT_EQ(cast<PrintStmt>(p.stmt(4))->args.size(), 0u);
  auto *pf = cast<PrintStmt>(p.stmt(5));
  EXPECT_TRUE(pf->formatted);
  ASSERT_EQ(pf->args.size(), 3u);
  EXPECT_EQ(cast<StringLitExpr>(pf->args[0].get())->value, "%d %f\n");
  auto *sv = cast<SolveStmt>(p.stmt(6));
  EXPECT_EQ(sv->solver.name, "tridiagonal");
  ASSERT_EQ(sv->args.size(), 4u);
  EXPECT_EQ(sv->args[3].name, "d");
  EXPECT_EQ(shape(sv->along.get()), "0");
  EXPECT_EQ(sv->space.name, "grid");
  EXPECT_FALSE(sv->hasRanges);
  auto *sv2 = cast<SolveStmt>(p.stmt(7));
  EXPECT_TRUE(sv2->hasRanges);
  EXPECT_EQ(sv2->ranges.size(), 2u);
}

TEST(Parser, SolveCG) {
  ParsedMain p("let (k, r) = solve cg(apply, p -> ap, b, x, tol: 1e-6, "
               "maxiter: 2 * n, precond: d)\n"
               "solve cg(m.apply, p -> ap, b, x)");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *s = cast<SolveStmt>(p.stmt(0));
  EXPECT_EQ(s->solver.name, "cg");
  ASSERT_EQ(s->args.size(), 5u);
  EXPECT_EQ(s->args[0].name, "apply");
  EXPECT_EQ(s->args[2].name, "ap");
  ASSERT_EQ(s->arrows.size(), 1u);
  EXPECT_EQ(s->arrows[0], 1u); // p -> ap
  ASSERT_EQ(s->options.size(), 3u);
  EXPECT_EQ(s->options[0].name.name, "tol");
  EXPECT_EQ(s->options[1].name.name, "maxiter");
  EXPECT_EQ(shape(s->options[1].value.get()), "(2 * n)");
  EXPECT_EQ(s->options[2].position, 5u);
  EXPECT_FALSE(s->along);
  ASSERT_TRUE(s->iters && s->residual);
  EXPECT_EQ(s->iters->name, "k");
  EXPECT_EQ(s->residual->name, "r");
  auto *s2 = cast<SolveStmt>(p.stmt(1));
  EXPECT_FALSE(s2->iters);
  EXPECT_TRUE(s2->options.empty());
}

TEST(Parser, PrintfNeedsAFormatString) {
  ParsedMain p("printf(x)");
  EXPECT_EQ(p.errors(), 1u);
  EXPECT_NE(p.diagText.find("unexpected identifier 'x', expecting string "
                            "literal"),
            std::string::npos)
      << p.diagText;
}

TEST(Parser, DerivativeStatements) {
  ParsedMain p("let (J, dJ) = adjoint objective(alpha, 2) wrt (x, alpha) "
               "checkpoints 10\n"
               "let (K, dK) = adjoint objective(alpha) wrt (x)\n"
               "let d = tangent objective(alpha) along (x: dx, alpha: 1.0)");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *a = cast<AdjointStmt>(p.stmt(0));
  EXPECT_EQ(a->value->name, "J");
  EXPECT_EQ(a->grad->name, "dJ");
  EXPECT_EQ(p.text(a->grad->nameRange), "dJ");
  EXPECT_EQ(a->proc.name, "objective");
  EXPECT_EQ(a->callArgs.size(), 2u);
  ASSERT_EQ(a->wrt.size(), 2u);
  EXPECT_EQ(a->wrt[1].name, "alpha");
  EXPECT_EQ(shape(a->checkpoints.get()), "10");
  EXPECT_FALSE(cast<AdjointStmt>(p.stmt(1))->checkpoints);
  auto *t = cast<TangentStmt>(p.stmt(2));
  EXPECT_EQ(t->result->name, "d");
  EXPECT_EQ(t->proc.name, "objective");
  ASSERT_EQ(t->along.size(), 2u);
  EXPECT_EQ(t->along[0].target.name, "x");
  EXPECT_EQ(shape(t->along[0].value.get()), "dx");
  EXPECT_EQ(shape(t->along[1].value.get()), "1.0");
}

TEST(Parser, SemicolonsAreOptionalSeparators) {
  ParsedMain p("x = 1; y = 2;; f(x)\n;");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  EXPECT_EQ(p.stmts().size(), 3u);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST(Parser, Precedence) {
  struct Case {
    const char *in, *out;
  } cases[] = {
      {"a || b && c", "(a || (b && c))"},
      {"a && b == c", "(a && (b == c))"},
      {"a == b < c", "(a == (b < c))"},
      {"a < b + c", "(a < (b + c))"},
      {"a + b * c", "(a + (b * c))"},
      {"a - b - c", "((a - b) - c)"},
      {"a / b % c", "((a / b) % c)"},
      {"-a * b", "((-a) * b)"},
      {"!a && b", "((!a) && b)"},
      {"- -a", "(-(-a))"},
      {"-a[0]", "(-a[0])"},
      {"(a + b) * c", "((a + b) * c)"},
      {"a != b || c >= d", "((a != b) || (c >= d))"},
      {"a <= b > c", "((a <= b) > c)"},
  };
  for (const Case &c : cases) {
    ParsedExpr p(c.in);
    ASSERT_EQ(p.errors(), 0u) << c.in << "\n" << p.diagText;
    EXPECT_EQ(shape(p.expr()), c.out) << c.in;
  }
}

TEST(Parser, PostfixCastsAndIntrinsics) {
  struct Case {
    const char *in, *out;
  } cases[] = {
      {"f64(1.4f)", "cast<f64>(1.4f)"},
      {"i32(x) + i64(y)", "(cast<i32>(x) + cast<i64>(y))"},
      {"bool(1) || f32(2)", "(cast<bool>(1) || cast<f32>(2))"},
      {"u(-1, 0)", "u((-1), 0)"},
      {"u(1, 0)[2]", "u(1, 0)[2]"},
      {"min(a, b) + max(c, d)", "(min(a, b) + max(c, d))"},
      {"sum(a)", "sum(a)"},
      {"size(cells) * size(u, 1)", "(size(cells) * size(u, 1))"},
      {"wtime()", "wtime()"},
      {"dJ.alpha", "dJ.alpha"},
      {"a.b.c", "a.b.c"},
      {"q[i][j]", "q[i][j]"},
      {"[1, 2, 3][0]", "[1, 2, 3][0]"},
      {"[[1, 2], [3]]", "[[1, 2], [3]]"},
      {"(a)[1]", "a[1]"},
      {"true && false", "(true && false)"},
      {"\"s\"", "\"s\""},
  };
  for (const Case &c : cases) {
    ParsedExpr p(c.in);
    ASSERT_EQ(p.errors(), 0u) << c.in << "\n" << p.diagText;
    EXPECT_EQ(shape(p.expr()), c.out) << c.in;
  }
}

TEST(Parser, StrIsNotACast) {
  ParsedExpr p("str(1)");
  EXPECT_EQ(p.errors(), 1u);
}

TEST(Parser, LiteralValues) {
  ParsedExpr p("[1, 5i64, 1.5, 1.4f, true, \"a\\tb\"]");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto &e = cast<ArrayLitExpr>(p.expr())->elements;
  EXPECT_EQ(cast<IntLitExpr>(e[0].get())->value, 1);
  EXPECT_FALSE(cast<IntLitExpr>(e[0].get())->forceI64);
  EXPECT_TRUE(cast<IntLitExpr>(e[1].get())->forceI64);
  EXPECT_EQ(cast<FloatLitExpr>(e[2].get())->value, 1.5);
  auto *f = cast<FloatLitExpr>(e[3].get());
  EXPECT_TRUE(f->isF32);
  EXPECT_EQ(f->value, double(1.4f));
  EXPECT_EQ(f->spelling, "1.4f");
  EXPECT_TRUE(cast<BoolLitExpr>(e[4].get())->value);
  EXPECT_EQ(cast<StringLitExpr>(e[5].get())->value, "a\tb");
  for (auto &x : e)
    EXPECT_TRUE(x->type.isError()); // untyped until sema
}

TEST(Parser, ExpressionRanges) {
  ParsedExpr p("(a + b) * sqrt(c[1])");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *mul = cast<BinaryExpr>(p.expr());
  EXPECT_EQ(p.text(mul->range), "(a + b) * sqrt(c[1])");
  EXPECT_EQ(p.text(mul->opRange), "*");
  auto *add = cast<BinaryExpr>(mul->lhs.get());
  EXPECT_EQ(p.text(add->range), "a + b");
  EXPECT_EQ(p.text(add->opRange), "+");
  auto *call = cast<CallExpr>(mul->rhs.get());
  EXPECT_EQ(p.text(call->range), "sqrt(c[1])");
  EXPECT_EQ(p.text(call->calleeRange), "sqrt");
  EXPECT_EQ(p.text(call->args[0]->range), "c[1]");
  EXPECT_EQ(p.at(call->range), (std::pair<unsigned, unsigned>(1, 21)));
}

TEST(Parser, MemberRanges) {
  ParsedExpr p("dJ.x");
  ASSERT_EQ(p.errors(), 0u) << p.diagText;
  auto *m = cast<MemberExpr>(p.expr());
  EXPECT_EQ(p.text(m->range), "dJ.x");
  EXPECT_EQ(p.text(m->fieldRange), "x");
}

//===----------------------------------------------------------------------===//
// Errors and recovery
//===----------------------------------------------------------------------===//

TEST(Parser, SyntaxErrorMessage) {
  Parsed p("kernel k(x: f64, ) {}");
  EXPECT_EQ(p.errors(), 1u);
  EXPECT_EQ(p.diagText, "test.opd:1:18: error: unexpected ')', expecting "
                        "identifier\n"
                        "kernel k(x: f64, ) {}\n"
                        "                 ^\n");
}

TEST(Parser, UnexpectedEndOfFile) {
  Parsed p("main {\n  x = 1\n");
  EXPECT_EQ(p.errors(), 1u);
  EXPECT_NE(p.diagText.find("test.opd:2:8: error: unexpected end of file"),
            std::string::npos)
      << p.diagText;
}

TEST(Parser, RecoversAtStatements) {
  ParsedMain p("x = 1 +\n"
               "let = 2\n"
               "y = 3\n"
               "if a = b { z = 1 }\n"
               "print(a, )\n"
               "w = 4");
  EXPECT_EQ(p.errors(), 3u) << p.diagText;
  // The well-formed statements survive.
  unsigned assigns = 0;
  for (auto &s : p.stmts())
    assigns += isa<AssignStmt>(s.get());
  EXPECT_GE(assigns, 2u);
  EXPECT_TRUE(isa<AssignStmt>(p.stmts().back().get()));
}

TEST(Parser, RecoversAtDeclarations) {
  Parsed p("const a = (1 + )\n"
           "kernel k(x: , y: f64) { y = 1 }\n"
           "set s from\n"
           "dat d: s f64\n"
           "main { x = * }\n"
           "const ok = 1\n");
  EXPECT_EQ(p.errors(), 4u) << p.diagText;
  std::vector<std::string> names;
  for (auto &d : p.module->decls)
    names.push_back(d->name);
  EXPECT_EQ(names, (std::vector<std::string>{"d", "main", "ok"}));
}

TEST(Parser, RecoveryKeepsBlockStructure) {
  Parsed p("kernel k(x: f64) {\n"
           "  let a = x +* 2\n"
           "  if x { let b = ) }\n"
           "  let c = 1\n"
           "}\n"
           "main { loop k over s (a, ) }\n");
  EXPECT_EQ(p.errors(), 3u) << p.diagText;
  ASSERT_EQ(p.module->decls.size(), 2u);
  auto *k = cast<KernelDecl>(p.decl(0));
  ASSERT_EQ(k->body->stmts.size(), 2u); // the if and `let c`
  EXPECT_TRUE(isa<IfStmt>(k->body->stmts[0].get()));
  EXPECT_TRUE(isa<MainDecl>(p.decl(1)));
}

TEST(Parser, LexicalErrorsDoNotStopParsing) {
  Parsed p("const a = 12abc\nconst b = \"x\\q\"\nconst c = 1 $ + 2\n");
  EXPECT_EQ(p.errors(), 3u) << p.diagText;
  EXPECT_EQ(p.module->decls.size(), 3u);
}

TEST(Parser, GarbageNeverCrashes) {
  std::string inputs[] = {
      std::string("\0\0\0", 3),
      "}}}}{{{{",
      "main { main { main {",
      "kernel kernel kernel ( ( ( ) ) )",
      "let let let = = =",
      "\xff\xfe\x80",
      "import",
      "program",
      "return",
      "main { return return }",
      "const x = [[[[[[",
      "main { if { } else { } else if }",
      "stencil s = [(,)]",
      "dat u: g f64 size [] halo : base",
      std::string(5000, '}'),
      std::string(5000, ';'),
  };
  for (const std::string &in : inputs) {
    Parsed p(in);
    EXPECT_TRUE(p.module != nullptr);
  }
}

TEST(Parser, DeepNestingIsAnError) {
  Parsed p1("const a = " + std::string(1000, '(') + "1" +
            std::string(1000, ')'));
  EXPECT_NE(p1.diagText.find("nesting too deep"), std::string::npos);
  std::string chain = "main { if a {}";
  for (int i = 0; i < 2000; ++i)
    chain += " else if a {}";
  Parsed p2(chain + " }");
  EXPECT_NE(p2.diagText.find("nesting too deep"), std::string::npos);
  std::string sum = "const a = 1";
  for (int i = 0; i < 50000; ++i)
    sum += "+1";
  Parsed p3(sum);
  EXPECT_NE(p3.diagText.find("expression nested too deeply"),
            std::string::npos);
  EXPECT_EQ(p3.errors(), 1u);
  Parsed p4("const a = " + std::string(50000, '-') + "1");
  EXPECT_EQ(p4.errors(), 1u);
}

TEST(Parser, ReentrantParsers) {
  // Two interleaved parses share nothing.
  Parsed a("const a = 1");
  Parsed b("const b = (");
  Parsed c("const c = 2");
  EXPECT_EQ(a.errors(), 0u);
  EXPECT_EQ(b.errors(), 1u);
  EXPECT_EQ(c.errors(), 0u);
  EXPECT_EQ(cast<ConstDecl>(c.decl(0))->name, "c");
}

} // namespace
