// SemaCompletenessTest.cpp - Valid programs leave no sema annotation empty.
// SPDX-License-Identifier: Apache-2.0
#include "SemaTestHelpers.h"

#include <gtest/gtest.h>

#include "llvm/Support/FileSystem.h"

#include <algorithm>

using namespace opdc;
using namespace opdc::ast;
using namespace opdc::sematest;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

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
      if (sv.along)
        expect(sv.alongDim >= 0 && sv.space.decl, "solve");
      for (auto &a : sv.args)
        expect(a.decl != nullptr, "solve dat");
      for (auto &o : sv.options)
        if (o.name.name != "precond")
          expr(*o.value);
      if (sv.iters)
        expect(!sv.iters->type.isError() && !sv.residual->type.isError(),
               "solve results");
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
