// ASTPrinter.cpp - Stable text dump of the AST (opdc --emit=ast).
// SPDX-License-Identifier: Apache-2.0
//
// Format: one node per line, children indented two spaces under their
// parent, in source order. A child whose role is not obvious from its
// position is prefixed with the role ("init: ", "cond: ", "from: ").
// Declarations and statements end with " <line:col>" of their first
// character when a SourceManager is given; expressions never do.
//
//   program NAME | module FILE          the file (FILE: its base name)
//   import std.math [as m] [(a, b)] [-> FILE]   resolved module after sema
//   const NAME[: TYPE] [= VALUE]        VALUE: folded by sema
//   param NAME: TYPE [= VALUE]
//   set NAME                            children from: / size:
//   map NAME: FROM -> TO[N]             [N]: arity after sema
//   dat NAME: ON TYPE [halo -[..] +[..] base [..]]  (structured, after sema)
//                                       children size: halo-: halo+: base:
//                                       fill: from:
//   block NAME[N], stencil NAME [(o, ..), ..]  (sema values)
//   kernel NAME                         children: param NAME: MODE TYPE
//                                       [@ STENCIL], then the body
//   fn NAME [-> TYPE], proc NAME [-> TYPE], main
//   block                               a { } statement list
//   let|var NAME[: TYPE], assign OP, expr, if, for NAME in ..|..=, while,
//   break, continue, return, loop KERNEL over SPACE, swap A B, write, read,
//   print, printf, solve NAME(A, ..) over SPACE [along D],
//   adjoint (V, G) = PROC wrt (X, ..), tangent V = PROC
//   arg [KIND MODE [via MAP[K]] [@ STENCIL]]   a loop argument, its
//                                       access descriptor after sema
//   range ..|..=                        children: lo, hi
//   int V[i64], float SPELLING, bool V, string "V", name N [-> DECLKIND],
//   unary OP, binary OP, call NAME [[intrinsic|fn|proc|stencil (o, ..)]],
//   cast TYPE, index, member .FIELD [-> DECLKIND], array
//
// Expressions end with " : TYPE" once sema has typed them (Expr::type is
// not Error). Output depends only on the tree, never on pointer values.
#include "ast/ASTPrinter.h"

#include "ast/AST.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/Path.h"

#include <algorithm>

#include <string>

namespace opdc {

using namespace ast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

std::string joinInts(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

/// Compact source-like text of an expression, for array lengths in types.
std::string inlineExpr(const Expr *e) {
  if (!e)
    return "";
  switch (e->kind) {
  case ExprKind::IntLit:
    return std::to_string(llvm::cast<IntLitExpr>(e)->value);
  case ExprKind::FloatLit:
    return llvm::cast<FloatLitExpr>(e)->spelling;
  case ExprKind::BoolLit:
    return llvm::cast<BoolLitExpr>(e)->value ? "true" : "false";
  case ExprKind::StringLit:
    return quoteString(llvm::cast<StringLitExpr>(e)->value);
  case ExprKind::Name:
    return llvm::cast<NameExpr>(e)->name;
  case ExprKind::Unary: {
    auto *u = llvm::cast<UnaryExpr>(e);
    return std::string(spelling(u->op)) + inlineExpr(u->operand.get());
  }
  case ExprKind::Binary: {
    auto *b = llvm::cast<BinaryExpr>(e);
    return "(" + inlineExpr(b->lhs.get()) + " " + spelling(b->op) + " " +
           inlineExpr(b->rhs.get()) + ")";
  }
  case ExprKind::Call: {
    auto *c = llvm::cast<CallExpr>(e);
    std::string s = c->callee + "(";
    for (size_t i = 0; i < c->args.size(); ++i)
      s += (i ? ", " : "") + inlineExpr(c->args[i].get());
    return s + ")";
  }
  case ExprKind::Cast: {
    auto *c = llvm::cast<CastExpr>(e);
    return std::string(scalarName(c->to)) + "(" + inlineExpr(c->operand.get()) +
           ")";
  }
  case ExprKind::Index: {
    auto *x = llvm::cast<IndexExpr>(e);
    return inlineExpr(x->base.get()) + "[" + inlineExpr(x->index.get()) + "]";
  }
  case ExprKind::Member: {
    auto *m = llvm::cast<MemberExpr>(e);
    return inlineExpr(m->base.get()) + "." + m->field;
  }
  case ExprKind::ArrayLit: {
    auto *a = llvm::cast<ArrayLitExpr>(e);
    std::string s = "[";
    for (size_t i = 0; i < a->elements.size(); ++i)
      s += (i ? ", " : "") + inlineExpr(a->elements[i].get());
    return s + "]";
  }
  }
  return "?";
}

/// A written type: the resolved one after sema, else as written.
std::string typeStr(const TypeRef &t) {
  if (!t.resolved.isError())
    return t.resolved.str();
  if (t.isString)
    return "str";
  std::string s = scalarName(t.scalar);
  if (t.length)
    s += "[" + inlineExpr(t.length.get()) + "]";
  return s;
}

class Printer {
public:
  Printer(llvm::raw_ostream &os, const SourceManager *sm) : os(os), sm(sm) {}

  void module(const Module &m) {
    if (m.isProgram)
      os << "program " << m.programName << "\n";
    else
      os << "module " << llvm::sys::path::filename(m.path) << "\n";
    Indent in(*this);
    for (const ImportDecl &imp : m.imports) {
      line();
      os << "import " << (imp.isPath ? quoteString(imp.name) : imp.name);
      if (!imp.alias.empty())
        os << " as " << imp.alias;
      if (imp.selective) {
        os << " (";
        for (size_t i = 0; i < imp.names.size(); ++i)
          os << (i ? ", " : "") << imp.names[i].name;
        os << ")";
      }
      if (imp.resolved)
        os << " -> " << llvm::sys::path::filename(imp.resolved->path);
      loc(imp.range);
    }
    for (const DeclPtr &d : m.decls)
      decl(*d);
  }

private:
  struct Indent {
    Printer &p;
    explicit Indent(Printer &p) : p(p) { ++p.depth; }
    ~Indent() { --p.depth; }
  };

  void line(llvm::StringRef role = {}) {
    os.indent(depth * 2);
    if (!role.empty())
      os << role << ": ";
  }

  void loc(SourceRange r) {
    if (sm && r.valid()) {
      auto [l, c] = sm->lineAndColumn(r.begin);
      if (l != 0)
        os << " <" << l << ":" << c << ">";
    }
    os << "\n";
  }

  //===------------------------------------------------------------------===//
  // Declarations
  //===------------------------------------------------------------------===//

  void stencilDecl(const StencilDecl &s) {
    os << "stencil " << s.name;
    if (!s.offsets.empty()) {
      os << " [";
      for (size_t i = 0; i < s.offsets.size(); ++i)
        os << (i ? ", " : "") << "(" << joinInts(s.offsets[i]) << ")";
      os << "]";
    }
    loc(s.range);
    Indent in(*this);
    for (const StencilDecl::Point &p : s.points) {
      line();
      os << "point\n";
      Indent in2(*this);
      for (const ExprPtr &e : p.offsets)
        expr(e.get());
    }
  }

  /// A fn or a proc: its signature, parameters and body.
  void callableDecl(const Decl &d) {
    bool isFn = d.kind == DeclKind::Fn;
    auto &params =
        isFn ? llvm::cast<FnDecl>(d).params : llvm::cast<ProcDecl>(d).params;
    auto &ret = isFn ? llvm::cast<FnDecl>(d).returnType
                     : llvm::cast<ProcDecl>(d).returnType;
    const Block *body = isFn ? llvm::cast<FnDecl>(d).body.get()
                             : llvm::cast<ProcDecl>(d).body.get();
    os << (isFn ? "fn " : "proc ") << d.name;
    if (ret)
      os << " -> " << typeStr(*ret);
    loc(d.range);
    Indent in(*this);
    for (auto &p : params) {
      line();
      os << "param " << p->name << ": "
         << (p->declaredType ? typeStr(*p->declaredType) : "?");
      loc(p->range);
    }
    block(body);
  }

  void decl(const Decl &d) {
    line();
    switch (d.kind) {
    case DeclKind::Const: {
      auto &c = llvm::cast<ConstDecl>(d);
      os << "const " << c.name;
      if (c.declaredType)
        os << ": " << typeStr(*c.declaredType);
      if (c.value.valid())
        os << " = " << c.value.str();
      loc(d.range);
      Indent in(*this);
      expr(c.init.get(), "init");
      return;
    }
    case DeclKind::Param: {
      auto &p = llvm::cast<ParamDecl>(d);
      os << "param " << p.name << ": " << typeStr(p.type);
      if (p.defaultValue.valid())
        os << " = " << p.defaultValue.str();
      loc(d.range);
      Indent in(*this);
      expr(p.init.get(), "init");
      return;
    }
    case DeclKind::Set: {
      auto &s = llvm::cast<SetDecl>(d);
      os << "set " << s.name;
      loc(d.range);
      Indent in(*this);
      expr(s.fromFile.get(), "from");
      expr(s.size.get(), "size");
      return;
    }
    case DeclKind::Map: {
      auto &m = llvm::cast<MapDecl>(d);
      os << "map " << m.name << ": " << m.from.name << " -> " << m.to.name;
      if (m.arity > 0)
        os << "[" << m.arity << "]";
      loc(d.range);
      Indent in(*this);
      expr(m.arityExpr.get(), "arity");
      expr(m.fromFile.get(), "from");
      return;
    }
    case DeclKind::Dat: {
      auto &x = llvm::cast<DatDecl>(d);
      os << "dat " << x.name << ": " << x.on.name << " " << typeStr(x.elemType);
      if (x.structured)
        os << " halo -[" << joinInts(x.haloM) << "] +[" << joinInts(x.haloP)
           << "] base [" << joinInts(x.baseOffset) << "]";
      loc(d.range);
      Indent in(*this);
      for (const ExprPtr &e : x.size)
        expr(e.get(), "size");
      expr(x.haloMinus.get(), "halo-");
      expr(x.haloPlus.get(), "halo+");
      expr(x.base.get(), "base");
      expr(x.initExpr.get(), x.init == DatInit::File ? "from" : "fill");
      return;
    }
    case DeclKind::Block: {
      auto &b = llvm::cast<BlockDecl>(d);
      os << "block " << b.name;
      if (b.dims > 0)
        os << "[" << b.dims << "]";
      loc(d.range);
      Indent in(*this);
      expr(b.dimsExpr.get(), "dims");
      return;
    }
    case DeclKind::Stencil:
      stencilDecl(llvm::cast<StencilDecl>(d));
      return;
    case DeclKind::Kernel: {
      auto &k = llvm::cast<KernelDecl>(d);
      os << "kernel " << k.name;
      loc(d.range);
      Indent in(*this);
      for (auto &p : k.params)
        decl(*p);
      block(k.body.get());
      return;
    }
    case DeclKind::KernelParam: {
      auto &p = llvm::cast<KernelParamDecl>(d);
      os << "param " << p.name << ": " << accessModeName(p.mode) << " "
         << typeStr(p.type);
      if (p.stencil)
        os << " @ " << p.stencil->name;
      loc(d.range);
      return;
    }
    case DeclKind::Fn:
    case DeclKind::Proc:
      callableDecl(d);
      return;
    case DeclKind::Main: {
      os << "main";
      loc(d.range);
      Indent in(*this);
      block(llvm::cast<MainDecl>(d).body.get());
      return;
    }
    case DeclKind::Var: {
      auto &v = llvm::cast<VarDecl>(d);
      os << (v.isMutable ? "var " : "let ") << v.name;
      if (!v.type.isError())
        os << ": " << v.type.str();
      else if (v.declaredType)
        os << ": " << typeStr(*v.declaredType);
      loc(d.range);
      Indent in(*this);
      expr(v.init.get(), "init");
      return;
    }
    case DeclKind::Gradient: {
      os << "gradient " << d.name;
      loc(d.range);
      Indent in(*this);
      for (auto &f : llvm::cast<GradientDecl>(d).fields) {
        line();
        os << "field " << f->name << " -> " << declKindName(f->kind) << "\n";
      }
      return;
    }
    }
    os << "?\n";
  }

  //===------------------------------------------------------------------===//
  // Statements
  //===------------------------------------------------------------------===//

  void block(const Block *b, llvm::StringRef role = {}) {
    if (!b)
      return;
    line(role);
    os << "block";
    loc(b->range);
    Indent in(*this);
    for (const StmtPtr &s : b->stmts)
      stmt(*s);
  }

  void range(const RangeExpr &r) {
    line();
    os << "range " << (r.inclusive ? "..=" : "..") << "\n";
    Indent in(*this);
    expr(r.lo.get());
    expr(r.hi.get());
  }

  void stmt(const Stmt &s, llvm::StringRef role = {}) {
    switch (s.kind) {
    case StmtKind::Block:
      block(llvm::cast<Block>(&s), role);
      return;
    case StmtKind::VarDecl: // never has a role: roles are for blocks/ifs
      decl(*llvm::cast<VarDeclStmt>(s).var);
      return;
    default:
      break;
    }
    line(role);
    switch (s.kind) {
    case StmtKind::Block:
    case StmtKind::VarDecl:
      return; // handled above
    case StmtKind::Expr: {
      os << "expr";
      loc(s.range);
      Indent in(*this);
      expr(llvm::cast<ExprStmt>(s).expr.get());
      return;
    }
    case StmtKind::Assign: {
      auto &a = llvm::cast<AssignStmt>(s);
      os << "assign " << spelling(a.op);
      loc(s.range);
      Indent in(*this);
      expr(a.target.get());
      expr(a.value.get());
      return;
    }
    case StmtKind::If: {
      auto &i = llvm::cast<IfStmt>(s);
      os << "if";
      loc(s.range);
      Indent in(*this);
      expr(i.cond.get(), "cond");
      block(i.thenBlock.get(), "then");
      if (i.elseStmt)
        stmt(*i.elseStmt, "else");
      return;
    }
    case StmtKind::For: {
      auto &f = llvm::cast<ForStmt>(s);
      os << "for " << f.var->name << " in "
         << (f.bounds.inclusive ? "..=" : "..");
      if (!f.var->type.isError())
        os << " : " << f.var->type.str();
      loc(s.range);
      Indent in(*this);
      expr(f.bounds.lo.get(), "lo");
      expr(f.bounds.hi.get(), "hi");
      block(f.body.get());
      return;
    }
    case StmtKind::While: {
      auto &w = llvm::cast<WhileStmt>(s);
      os << "while";
      loc(s.range);
      Indent in(*this);
      expr(w.cond.get(), "cond");
      block(w.body.get());
      return;
    }
    case StmtKind::Break:
      os << "break";
      loc(s.range);
      return;
    case StmtKind::Continue:
      os << "continue";
      loc(s.range);
      return;
    case StmtKind::Return: {
      os << "return";
      loc(s.range);
      Indent in(*this);
      expr(llvm::cast<ReturnStmt>(s).value.get());
      return;
    }
    case StmtKind::Loop: {
      auto &l = llvm::cast<LoopStmt>(s);
      os << "loop " << l.kernel.name << " over " << l.space.name;
      loc(s.range);
      Indent in(*this);
      for (const RangeExpr &r : l.ranges)
        range(r);
      for (const LoopArg &a : l.args)
        loopArg(a);
      return;
    }
    case StmtKind::Swap: {
      auto &w = llvm::cast<SwapStmt>(s);
      os << "swap " << w.a.name << " " << w.b.name;
      loc(s.range);
      return;
    }
    case StmtKind::Write:
    case StmtKind::Read: {
      bool isWrite = s.kind == StmtKind::Write;
      auto &dats = isWrite ? llvm::cast<WriteStmt>(s).dats
                           : llvm::cast<ReadStmt>(s).dats;
      const Expr *file = isWrite ? llvm::cast<WriteStmt>(s).file.get()
                                 : llvm::cast<ReadStmt>(s).file.get();
      os << (isWrite ? "write" : "read");
      if (isWrite && !llvm::cast<WriteStmt>(s).space.name.empty())
        os << " over " << llvm::cast<WriteStmt>(s).space.name;
      loc(s.range);
      Indent in(*this);
      for (const ExprPtr &d : dats)
        expr(d.get(), "dat");
      if (isWrite)
        for (const RangeExpr &r : llvm::cast<WriteStmt>(s).ranges)
          range(r);
      expr(file, "file");
      return;
    }
    case StmtKind::Print: {
      auto &p = llvm::cast<PrintStmt>(s);
      os << (p.fails ? "fail" : p.formatted ? "printf" : "print");
      loc(s.range);
      Indent in(*this);
      for (const ExprPtr &a : p.args)
        expr(a.get());
      return;
    }
    case StmtKind::Solve: {
      auto &v = llvm::cast<SolveStmt>(s);
      if (v.iters)
        os << "let (" << v.iters->name << ", " << v.residual->name << ") = ";
      os << "solve " << v.solver.name << "(";
      for (size_t i = 0; i < v.args.size(); ++i) {
        bool arrow = std::find(v.arrows.begin(), v.arrows.end(), i - 1) !=
                     v.arrows.end();
        os << (i ? (arrow ? " -> " : ", ") : "") << v.args[i].name;
      }
      os << ")";
      if (v.along)
        os << " over " << v.space.name;
      if (v.alongDim >= 0)
        os << " along " << v.alongDim;
      loc(s.range);
      Indent in(*this);
      expr(v.along.get(), "along");
      for (const SolveStmt::Option &o : v.options)
        expr(o.value.get(), o.name.name);
      for (const RangeExpr &r : v.ranges)
        range(r);
      return;
    }
    case StmtKind::Adjoint: {
      auto &a = llvm::cast<AdjointStmt>(s);
      os << "adjoint (" << a.value->name << ", " << a.grad->name
         << ") = " << a.proc.name << " wrt (";
      for (size_t i = 0; i < a.wrt.size(); ++i)
        os << (i ? ", " : "") << a.wrt[i].name;
      os << ")";
      if (!a.value->type.isError())
        os << " : " << a.value->type.str();
      loc(s.range);
      Indent in(*this);
      for (const ExprPtr &e : a.callArgs)
        expr(e.get(), "arg");
      expr(a.checkpoints.get(), "checkpoints");
      for (auto &f : a.grad->fields) {
        line();
        os << "field " << a.grad->name << "." << f->name << " -> "
           << declKindName(f->kind) << "\n";
      }
      return;
    }
    case StmtKind::Tangent: {
      auto &t = llvm::cast<TangentStmt>(s);
      os << "tangent " << t.result->name << " = " << t.proc.name;
      if (!t.result->type.isError())
        os << " : " << t.result->type.str();
      loc(s.range);
      Indent in(*this);
      for (const ExprPtr &e : t.callArgs)
        expr(e.get(), "arg");
      for (const TangentStmt::Seed &seed : t.along)
        expr(seed.value.get(), "along " + seed.target.name);
      return;
    }
    }
    os << "?\n";
  }

  void loopArg(const LoopArg &a) {
    line();
    os << "arg";
    if (a.kind) {
      os << " " << argKindShortName(*a.kind);
      if (a.param)
        os << " " << accessModeName(a.param->mode);
      if (a.kind == ArgKind::Indirect && a.map)
        os << " via " << a.map->name << "[" << a.mapIndex << "]";
      if (a.kind == ArgKind::Stencil && a.stencil)
        os << " @ " << a.stencil->name;
    }
    os << "\n";
    Indent in(*this);
    expr(a.expr.get());
  }

  //===------------------------------------------------------------------===//
  // Expressions
  //===------------------------------------------------------------------===//

  void expr(const Expr *e, llvm::StringRef role = {}) {
    if (!e)
      return;
    line(role);
    switch (e->kind) {
    case ExprKind::IntLit: {
      auto *i = llvm::cast<IntLitExpr>(e);
      os << "int " << i->value << (i->forceI64 ? "i64" : "");
      break;
    }
    case ExprKind::FloatLit:
      os << "float " << llvm::cast<FloatLitExpr>(e)->spelling;
      break;
    case ExprKind::BoolLit:
      os << "bool " << (llvm::cast<BoolLitExpr>(e)->value ? "true" : "false");
      break;
    case ExprKind::StringLit:
      os << "string " << quoteString(llvm::cast<StringLitExpr>(e)->value);
      break;
    case ExprKind::Name: {
      auto *n = llvm::cast<NameExpr>(e);
      os << "name " << n->name;
      if (n->decl)
        os << " -> " << declKindName(n->decl->kind);
      break;
    }
    case ExprKind::Unary:
      os << "unary " << spelling(llvm::cast<UnaryExpr>(e)->op);
      break;
    case ExprKind::Binary:
      os << "binary " << spelling(llvm::cast<BinaryExpr>(e)->op);
      break;
    case ExprKind::Call: {
      auto *c = llvm::cast<CallExpr>(e);
      os << "call " << c->callee;
      switch (c->target) {
      case CallTarget::Unresolved:
        break;
      case CallTarget::Intrinsic:
        os << " [intrinsic]";
        break;
      case CallTarget::Fn:
        os << " [fn]";
        break;
      case CallTarget::Proc:
        os << " [proc]";
        break;
      case CallTarget::StencilRead:
        os << " [stencil (" << joinInts(c->stencilOffset) << ")]";
        break;
      }
      break;
    }
    case ExprKind::Cast:
      os << "cast " << scalarName(llvm::cast<CastExpr>(e)->to);
      break;
    case ExprKind::Index:
      os << "index";
      break;
    case ExprKind::Member: {
      auto *m = llvm::cast<MemberExpr>(e);
      os << "member ." << m->field;
      if (m->decl)
        os << " -> " << declKindName(m->decl->kind);
      break;
    }
    case ExprKind::ArrayLit:
      os << "array";
      break;
    }
    if (!e->type.isError())
      os << " : " << e->type.str();
    os << "\n";

    Indent in(*this);
    switch (e->kind) {
    case ExprKind::Unary:
      expr(llvm::cast<UnaryExpr>(e)->operand.get());
      break;
    case ExprKind::Binary:
      expr(llvm::cast<BinaryExpr>(e)->lhs.get());
      expr(llvm::cast<BinaryExpr>(e)->rhs.get());
      break;
    case ExprKind::Call:
      for (const ExprPtr &a : llvm::cast<CallExpr>(e)->args)
        expr(a.get());
      break;
    case ExprKind::Cast:
      expr(llvm::cast<CastExpr>(e)->operand.get());
      break;
    case ExprKind::Index:
      expr(llvm::cast<IndexExpr>(e)->base.get());
      expr(llvm::cast<IndexExpr>(e)->index.get());
      break;
    case ExprKind::Member:
      expr(llvm::cast<MemberExpr>(e)->base.get());
      break;
    case ExprKind::ArrayLit:
      for (const ExprPtr &x : llvm::cast<ArrayLitExpr>(e)->elements)
        expr(x.get());
      break;
    default:
      break;
    }
  }

  llvm::raw_ostream &os;
  const SourceManager *sm;
  unsigned depth = 0;
};

} // namespace

void printModule(const Module &m, llvm::raw_ostream &os,
                 const SourceManager *sm) {
  Printer(os, sm).module(m);
}

void printProgram(const Program &p, llvm::raw_ostream &os,
                  const SourceManager *sm) {
  if (p.root)
    printModule(*p.root, os, sm);
}

} // namespace opdc
