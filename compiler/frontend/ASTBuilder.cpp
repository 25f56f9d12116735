// ASTBuilder.cpp - The ParseDriver methods grammar actions call to build AST.
// SPDX-License-Identifier: Apache-2.0
//
// One method per grammar construct; they check syntax only (names and types
// are sema's). Expression depth is tracked here so that overlong operator
// chains are cut before recursive walkers see them.
#include "frontend/ParseDriver.h"

#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>

namespace opdc {

using namespace ast;

//===----------------------------------------------------------------------===//
// Tree depth
//===----------------------------------------------------------------------===//

unsigned ParseDriver::takeDepth(const void *node) {
  if (!node)
    return 0;
  auto it = depths.find(node);
  if (it == depths.end())
    return 1;
  unsigned d = it->second;
  depths.erase(it);
  return d;
}

ExprPtr ParseDriver::checked(ExprPtr e, unsigned depth) {
  if (depth <= MaxTreeDepth) {
    depths[e.get()] = depth;
    return e;
  }
  // Long operator chains (`a + a + ...`, `- - - x`) build trees that
  // recursive walkers could not handle; cut them here.
  if (!reportedTooDeep && !fatal)
    diags.error(e->range, "expression nested too deeply (more than " +
                              std::to_string(MaxTreeDepth) + " levels)");
  reportedTooDeep = true;
  return std::make_unique<IntLitExpr>(e->range, 0, false);
}

//===----------------------------------------------------------------------===//
// Module structure and declarations
//===----------------------------------------------------------------------===//

template <typename D> D *ParseDriver::own(std::unique_ptr<D> d) {
  d->module = module.get();
  D *raw = d.get();
  module->decls.push_back(std::move(d));
  return raw;
}

void ParseDriver::setProgram(const std::string &name, SourceRange range) {
  if (module->isProgram) {
    diags.error(range, "duplicate 'program' declaration");
    return;
  }
  if (!module->decls.empty() || !module->imports.empty()) {
    diags.error(range,
                "'program' must come before every import and declaration");
    return;
  }
  module->isProgram = true;
  module->programName = name;
  module->programRange = range;
}

void ParseDriver::addImport(const std::string &name, bool isPath,
                            SourceRange range, std::optional<NameRef> alias) {
  ImportDecl imp;
  imp.range = range;
  imp.name = name;
  imp.isPath = isPath;
  if (alias) {
    // `m.x` is recognised while parsing, so the alias must be known before
    // the first declaration that could use it.
    if (!module->decls.empty())
      diags.error(range, "an import with 'as' must come before every "
                         "declaration");
    imp.alias = alias->name;
    imp.aliasRange = alias->range;
  }
  module->imports.push_back(std::move(imp));
}

void ParseDriver::addSelectiveImport(const std::string &name, bool isPath,
                                     std::vector<NameRef> names,
                                     SourceRange range) {
  addImport(name, isPath, range);
  module->imports.back().selective = true;
  module->imports.back().names = std::move(names);
}

NameRef ParseDriver::qualify(NameRef alias, NameRef member,
                             SourceRange range) const {
  return makeName(alias.name + "." + member.name, range);
}

NameRef ParseDriver::makeName(const std::string &name,
                              SourceRange range) const {
  NameRef n;
  n.name = name;
  n.range = range;
  return n;
}

NameRef ParseDriver::joinDotted(NameRef prefix, const std::string &part,
                                SourceRange range) const {
  return makeName(prefix.name + "." + part, range);
}

TypeRef ParseDriver::makeType(ScalarKind k, ExprPtr length, SourceRange r) {
  TypeRef t;
  t.range = r;
  t.scalar = k;
  takeDepth(length.get());
  t.length = std::move(length);
  return t;
}

TypeRef ParseDriver::makeStringType(SourceRange r) {
  TypeRef t;
  t.range = r;
  t.isString = true;
  return t;
}

static ExprPtr cloneOrNull(const ExprPtr &e) {
  return e ? e->clone() : nullptr;
}

void ParseDriver::addConst(NameRef name, std::optional<TypeRef> type,
                           ExprPtr init, SourceRange range) {
  auto d = std::make_unique<ConstDecl>(name.name, name.range, range);
  d->declaredType = std::move(type);
  takeDepth(init.get());
  d->init = std::move(init);
  own(std::move(d));
}

void ParseDriver::addParam(NameRef name, TypeRef type, ExprPtr init,
                           SourceRange range) {
  auto d = std::make_unique<ParamDecl>(name.name, name.range, range);
  d->doc = commentAbove(range);
  d->type = std::move(type);
  takeDepth(init.get());
  d->init = std::move(init);
  own(std::move(d));
}

void ParseDriver::addSets(std::vector<NameRef> names, ExprPtr fromFile,
                          ExprPtr size, SourceRange range) {
  takeDepth(fromFile.get());
  takeDepth(size.get());
  for (size_t i = 0; i < names.size(); ++i) {
    auto d = std::make_unique<SetDecl>(names[i].name, names[i].range, range);
    d->fromFile =
        i + 1 == names.size() ? std::move(fromFile) : cloneOrNull(fromFile);
    d->size = i + 1 == names.size() ? std::move(size) : cloneOrNull(size);
    own(std::move(d));
  }
}

void ParseDriver::addMap(NameRef name, NameRef from, NameRef to, ExprPtr arity,
                         ExprPtr fromFile, SourceRange range) {
  auto d = std::make_unique<MapDecl>(name.name, name.range, range);
  d->from = std::move(from);
  d->to = std::move(to);
  takeDepth(arity.get());
  takeDepth(fromFile.get());
  d->arityExpr = std::move(arity);
  d->fromFile = std::move(fromFile);
  own(std::move(d));
}

void ParseDriver::addDats(std::vector<NameRef> names, NameRef on, TypeRef type,
                          std::optional<std::vector<ExprPtr>> size,
                          ParsedHalo halo, ExprPtr base, ParsedDatInit init,
                          SourceRange range) {
  if (size)
    for (auto &e : *size)
      takeDepth(e.get());
  takeDepth(halo.minus.get());
  takeDepth(halo.plus.get());
  takeDepth(base.get());
  takeDepth(init.expr.get());
  // One declaration per name; the first ones get copies of the clauses.
  for (size_t i = 0; i < names.size(); ++i) {
    bool lastName = i + 1 == names.size();
    auto d = std::make_unique<DatDecl>(names[i].name, names[i].range, range);
    d->on = on;
    d->elemType = lastName ? std::move(type) : type.clone();
    if (size) {
      d->hasSize = true;
      for (auto &e : *size)
        d->size.push_back(lastName ? std::move(e) : e->clone());
    }
    d->haloMinus = lastName ? std::move(halo.minus) : cloneOrNull(halo.minus);
    d->haloPlus = lastName ? std::move(halo.plus) : cloneOrNull(halo.plus);
    d->base = lastName ? std::move(base) : cloneOrNull(base);
    d->init = init.kind;
    d->initExpr = lastName ? std::move(init.expr) : cloneOrNull(init.expr);
    own(std::move(d));
  }
}

void ParseDriver::addBlock(NameRef name, ExprPtr dims, SourceRange range) {
  auto d = std::make_unique<BlockDecl>(name.name, name.range, range);
  takeDepth(dims.get());
  d->dimsExpr = std::move(dims);
  own(std::move(d));
}

StencilDecl::Point ParseDriver::makeStencilPoint(std::vector<ExprPtr> offsets,
                                                 SourceRange range) {
  StencilDecl::Point p;
  p.range = range;
  for (auto &e : offsets)
    takeDepth(e.get());
  p.offsets = std::move(offsets);
  return p;
}

void ParseDriver::addStencil(NameRef name,
                             std::vector<StencilDecl::Point> points,
                             SourceRange range) {
  auto d = std::make_unique<StencilDecl>(name.name, name.range, range);
  d->points = std::move(points);
  own(std::move(d));
}

ParsedMode ParseDriver::makeMode(AccessMode mode, SourceRange range) const {
  ParsedMode m;
  m.mode = mode;
  if (mode != AccessMode::Read)
    m.range = range;
  return m;
}

std::unique_ptr<KernelParamDecl>
ParseDriver::makeKernelParam(NameRef name, ParsedMode mode, TypeRef type,
                             std::optional<NameRef> stencil,
                             SourceRange range) {
  auto p = std::make_unique<KernelParamDecl>(name.name, name.range, range);
  p->module = module.get();
  p->mode = mode.mode;
  p->modeRange = mode.range;
  p->type = std::move(type);
  p->stencil = std::move(stencil);
  return p;
}

void ParseDriver::addKernel(
    NameRef name, std::vector<std::unique_ptr<KernelParamDecl>> params,
    std::unique_ptr<Block> body, SourceRange range) {
  auto d = std::make_unique<KernelDecl>(name.name, name.range, range);
  for (unsigned i = 0; i < params.size(); ++i) {
    params[i]->kernel = d.get();
    params[i]->index = i;
  }
  d->params = std::move(params);
  d->body = std::move(body);
  own(std::move(d));
}

std::unique_ptr<VarDecl> ParseDriver::makeParam(NameRef name, TypeRef type,
                                                SourceRange range) {
  auto v = std::make_unique<VarDecl>(name.name, name.range, range);
  v->module = module.get();
  v->declaredType = std::move(type);
  return v;
}

void ParseDriver::addFn(NameRef name,
                        std::vector<std::unique_ptr<VarDecl>> params,
                        std::optional<TypeRef> ret, std::unique_ptr<Block> body,
                        SourceRange range) {
  auto d = std::make_unique<FnDecl>(name.name, name.range, range);
  d->params = std::move(params);
  d->returnType = std::move(ret);
  d->body = std::move(body);
  own(std::move(d));
}

void ParseDriver::addProc(NameRef name,
                          std::vector<std::unique_ptr<VarDecl>> params,
                          std::optional<TypeRef> ret,
                          std::unique_ptr<Block> body, SourceRange range) {
  auto d = std::make_unique<ProcDecl>(name.name, name.range, range);
  d->params = std::move(params);
  d->returnType = std::move(ret);
  d->body = std::move(body);
  own(std::move(d));
}

void ParseDriver::addMain(SourceRange keyword, std::unique_ptr<Block> body,
                          SourceRange range) {
  auto d = std::make_unique<MainDecl>(keyword, range);
  d->body = std::move(body);
  own(std::move(d));
}

ParsedHalo ParseDriver::makeHalo(ExprPtr minus, ExprPtr plus) const {
  ParsedHalo h;
  if (!plus)
    plus = cloneOrNull(minus); // `halo H`: H on both sides
  h.minus = std::move(minus);
  h.plus = std::move(plus);
  return h;
}

ParsedDatInit ParseDriver::makeDatInit(DatInit kind, ExprPtr e) const {
  ParsedDatInit i;
  i.kind = kind;
  i.expr = std::move(e);
  return i;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::unique_ptr<Block> ParseDriver::makeBlock(SourceRange range) {
  return std::make_unique<Block>(range);
}

std::unique_ptr<Block> ParseDriver::appendStmt(std::unique_ptr<Block> block,
                                               StmtPtr stmt) {
  if (stmt) // null: a statement that error recovery skipped
    block->stmts.push_back(std::move(stmt));
  return block;
}

std::unique_ptr<Block> ParseDriver::appendReturn(std::unique_ptr<Block> block,
                                                 SourceRange range) {
  return appendStmt(std::move(block), makeReturn(nullptr, range));
}

std::unique_ptr<Block> ParseDriver::finishBlock(std::unique_ptr<Block> block,
                                                SourceRange range) {
  block->range = range;
  return block;
}

StmtPtr ParseDriver::makeLet(NameRef name, std::optional<TypeRef> type,
                             ExprPtr init, bool isMutable, SourceRange range) {
  auto v = std::make_unique<VarDecl>(name.name, name.range, range);
  v->module = module.get();
  v->isMutable = isMutable;
  v->declaredType = std::move(type);
  takeDepth(init.get());
  v->init = std::move(init);
  return std::make_unique<VarDeclStmt>(range, std::move(v));
}

StmtPtr ParseDriver::makeAssign(AssignOp op, ExprPtr target, ExprPtr value,
                                SourceRange range) {
  takeDepth(target.get());
  takeDepth(value.get());
  return std::make_unique<AssignStmt>(range, op, std::move(target),
                                      std::move(value));
}

StmtPtr ParseDriver::makeExprStmt(ExprPtr e, SourceRange range) {
  takeDepth(e.get());
  return std::make_unique<ExprStmt>(range, std::move(e));
}

StmtPtr ParseDriver::makeIf(ExprPtr cond, std::unique_ptr<Block> then,
                            StmtPtr elseStmt, SourceRange range) {
  takeDepth(cond.get());
  return std::make_unique<IfStmt>(range, std::move(cond), std::move(then),
                                  std::move(elseStmt));
}

StmtPtr ParseDriver::makeFor(NameRef var, RangeExpr bounds,
                             std::unique_ptr<Block> body, SourceRange range) {
  auto v = std::make_unique<VarDecl>(var.name, var.range, var.range);
  v->module = module.get();
  return std::make_unique<ForStmt>(range, std::move(v), std::move(bounds),
                                   std::move(body));
}

StmtPtr ParseDriver::makeWhile(ExprPtr cond, std::unique_ptr<Block> body,
                               SourceRange range) {
  takeDepth(cond.get());
  return std::make_unique<WhileStmt>(range, std::move(cond), std::move(body));
}

StmtPtr ParseDriver::makeBreak(SourceRange range) {
  return std::make_unique<BreakStmt>(range);
}

StmtPtr ParseDriver::makeContinue(SourceRange range) {
  return std::make_unique<ContinueStmt>(range);
}

StmtPtr ParseDriver::makeReturn(ExprPtr value, SourceRange range) {
  takeDepth(value.get());
  return std::make_unique<ReturnStmt>(range, std::move(value));
}

StmtPtr ParseDriver::makeLoop(NameRef kernel, NameRef space,
                              std::optional<std::vector<RangeExpr>> ranges,
                              std::vector<ExprPtr> args, SourceRange range) {
  auto s = std::make_unique<LoopStmt>(range);
  s->kernel = std::move(kernel);
  s->space = std::move(space);
  if (ranges) {
    s->hasRanges = true;
    s->ranges = std::move(*ranges);
  }
  for (auto &a : args) {
    takeDepth(a.get());
    LoopArg arg;
    arg.expr = std::move(a);
    s->args.push_back(std::move(arg));
  }
  return s;
}

StmtPtr ParseDriver::makeSwap(NameRef a, NameRef b, SourceRange range) {
  return std::make_unique<SwapStmt>(range, std::move(a), std::move(b));
}

StmtPtr ParseDriver::makeWrite(std::vector<ExprPtr> dats, ExprPtr file,
                               SourceRange range) {
  for (auto &d : dats)
    takeDepth(d.get());
  takeDepth(file.get());
  return std::make_unique<WriteStmt>(range, std::move(dats), std::move(file));
}

StmtPtr
ParseDriver::makeWriteRange(std::vector<ExprPtr> dats, NameRef space,
                            std::optional<std::vector<RangeExpr>> ranges,
                            ExprPtr file, SourceRange range) {
  StmtPtr s = makeWrite(std::move(dats), std::move(file), range);
  auto &w = static_cast<WriteStmt &>(*s);
  w.space = std::move(space);
  if (ranges) {
    w.hasRanges = true;
    w.ranges = std::move(*ranges);
  }
  return s;
}

StmtPtr ParseDriver::makeRead(std::vector<ExprPtr> dats, ExprPtr file,
                              SourceRange range) {
  for (auto &d : dats)
    takeDepth(d.get());
  takeDepth(file.get());
  return std::make_unique<ReadStmt>(range, std::move(dats), std::move(file));
}

StmtPtr ParseDriver::makePrint(bool formatted, std::vector<ExprPtr> args,
                               SourceRange range, bool fails) {
  for (auto &a : args)
    takeDepth(a.get());
  auto p = std::make_unique<PrintStmt>(range, formatted, std::move(args));
  p->fails = fails;
  return p;
}

ParsedSolveArg ParseDriver::makeSolveArg(NameRef name,
                                         std::optional<NameRef> to,
                                         ExprPtr value, SourceRange range) {
  takeDepth(value.get());
  ParsedSolveArg a;
  a.name = std::move(name);
  a.to = std::move(to);
  a.value = std::move(value);
  a.range = range;
  return a;
}

ParsedSolve ParseDriver::makeSolveCall(NameRef solver,
                                       std::vector<ParsedSolveArg> args,
                                       SourceRange range) {
  ParsedSolve c;
  c.solver = std::move(solver);
  c.args = std::move(args);
  c.range = range;
  return c;
}

namespace {
std::unique_ptr<SolveStmt> solveFromCall(ParsedSolve call, SourceRange range) {
  auto s = std::make_unique<SolveStmt>(range);
  s->solver = std::move(call.solver);
  for (ParsedSolveArg &a : call.args) {
    if (a.value) {
      s->options.push_back({std::move(a.name), std::move(a.value),
                            s->args.size()});
      continue;
    }
    s->args.push_back(std::move(a.name));
    if (a.to) {
      s->arrows.push_back(s->args.size() - 1);
      s->args.push_back(std::move(*a.to));
    }
  }
  return s;
}
} // namespace

StmtPtr ParseDriver::makeSolve(ParsedSolve call, ExprPtr along, NameRef space,
                               std::optional<std::vector<RangeExpr>> ranges,
                               SourceRange range) {
  auto s = solveFromCall(std::move(call), range);
  takeDepth(along.get());
  s->along = std::move(along);
  s->space = std::move(space);
  if (ranges) {
    s->hasRanges = true;
    s->ranges = std::move(*ranges);
  }
  return s;
}

StmtPtr ParseDriver::makeSolveLet(NameRef iters, NameRef residual,
                                  ParsedSolve call, SourceRange range) {
  auto s = solveFromCall(std::move(call), range);
  s->iters = std::make_unique<VarDecl>(iters.name, iters.range, range);
  s->iters->module = module.get();
  s->residual = std::make_unique<VarDecl>(residual.name, residual.range, range);
  s->residual->module = module.get();
  return s;
}

StmtPtr ParseDriver::makeAdjoint(NameRef value, NameRef grad, NameRef proc,
                                 std::vector<ExprPtr> args,
                                 std::vector<NameRef> wrt, ExprPtr checkpoints,
                                 SourceRange range) {
  auto s = std::make_unique<AdjointStmt>(range);
  s->value = std::make_unique<VarDecl>(value.name, value.range, range);
  s->value->module = module.get();
  s->grad = std::make_unique<GradientDecl>(grad.name, grad.range, range);
  s->grad->module = module.get();
  s->proc = std::move(proc);
  for (auto &a : args)
    takeDepth(a.get());
  s->callArgs = std::move(args);
  s->wrt = std::move(wrt);
  takeDepth(checkpoints.get());
  s->checkpoints = std::move(checkpoints);
  return s;
}

StmtPtr ParseDriver::makeTangent(NameRef result, NameRef proc,
                                 std::vector<ExprPtr> args,
                                 std::vector<TangentStmt::Seed> along,
                                 SourceRange range) {
  auto s = std::make_unique<TangentStmt>(range);
  s->result = std::make_unique<VarDecl>(result.name, result.range, range);
  s->result->module = module.get();
  s->proc = std::move(proc);
  for (auto &a : args)
    takeDepth(a.get());
  s->callArgs = std::move(args);
  s->along = std::move(along);
  return s;
}

TangentStmt::Seed ParseDriver::makeSeed(NameRef target, ExprPtr value) {
  takeDepth(value.get());
  TangentStmt::Seed s;
  s.target = std::move(target);
  s.value = std::move(value);
  return s;
}

RangeExpr ParseDriver::makeRange(ExprPtr lo, ExprPtr hi, bool inclusive,
                                 SourceRange range) {
  RangeExpr r;
  r.range = range;
  takeDepth(lo.get());
  takeDepth(hi.get());
  r.lo = std::move(lo);
  r.hi = std::move(hi);
  r.inclusive = inclusive;
  return r;
}

StmtPtr ParseDriver::makeErrorStmt(SourceRange) { return nullptr; }

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr ParseDriver::makeInt(IntToken v, SourceRange r) {
  return std::make_unique<IntLitExpr>(r, v.value, v.forceI64);
}

ExprPtr ParseDriver::makeFloat(FloatToken v, SourceRange r) {
  return std::make_unique<FloatLitExpr>(r, v.value, v.isF32,
                                        std::move(v.spelling));
}

ExprPtr ParseDriver::makeBool(bool v, SourceRange r) {
  return std::make_unique<BoolLitExpr>(r, v);
}

ExprPtr ParseDriver::makeString(const std::string &v, SourceRange r) {
  return std::make_unique<StringLitExpr>(r, v);
}

ExprPtr ParseDriver::makeNameExpr(NameRef name) {
  return std::make_unique<NameExpr>(name.range, std::move(name.name));
}

ExprPtr ParseDriver::makeUnary(UnaryOp op, ExprPtr e, SourceRange r) {
  unsigned d = takeDepth(e.get()) + 1;
  return checked(std::make_unique<UnaryExpr>(r, op, std::move(e)), d);
}

ExprPtr ParseDriver::makeBinary(BinaryOp op, SourceRange opRange, ExprPtr lhs,
                                ExprPtr rhs, SourceRange r) {
  unsigned d = std::max(takeDepth(lhs.get()), takeDepth(rhs.get())) + 1;
  return checked(std::make_unique<BinaryExpr>(r, op, opRange, std::move(lhs),
                                              std::move(rhs)),
                 d);
}

ExprPtr ParseDriver::makeCall(NameRef callee, std::vector<ExprPtr> args,
                              SourceRange r) {
  unsigned d = 0;
  for (auto &a : args)
    d = std::max(d, takeDepth(a.get()));
  return checked(std::make_unique<CallExpr>(r, std::move(callee.name),
                                            callee.range, std::move(args)),
                 d + 1);
}

ExprPtr ParseDriver::makeCast(ScalarKind to, ExprPtr e, SourceRange r) {
  unsigned d = takeDepth(e.get()) + 1;
  return checked(std::make_unique<CastExpr>(r, to, std::move(e)), d);
}

ExprPtr ParseDriver::makeIndex(ExprPtr base, ExprPtr index, SourceRange r) {
  unsigned d = std::max(takeDepth(base.get()), takeDepth(index.get())) + 1;
  return checked(
      std::make_unique<IndexExpr>(r, std::move(base), std::move(index)), d);
}

/// \p e is a plain name that an earlier import of the file declared as an
/// alias.
static bool isAliasName(const Expr *e, const Module &m) {
  auto *n = llvm::dyn_cast<NameExpr>(e);
  if (!n || n->name.find('.') != std::string::npos)
    return false;
  for (auto &imp : m.imports)
    if (imp.alias == n->name)
      return true;
  return false;
}

ExprPtr ParseDriver::makeMember(ExprPtr base, NameRef field, SourceRange r) {
  if (isAliasName(base.get(), *module)) {
    takeDepth(base.get());
    auto *n = llvm::cast<NameExpr>(base.get());
    return std::make_unique<NameExpr>(r, n->name + "." + field.name);
  }
  unsigned d = takeDepth(base.get()) + 1;
  return checked(std::make_unique<MemberExpr>(
                     r, std::move(base), std::move(field.name), field.range),
                 d);
}

ExprPtr ParseDriver::makeMemberCall(ExprPtr base, NameRef member,
                                    std::vector<ExprPtr> args, SourceRange r) {
  auto *n = llvm::dyn_cast<NameExpr>(base.get());
  if (!n || n->name.find('.') != std::string::npos) {
    // `a[i].f(x)`, `dJ.x.f(x)`: nothing but a module member can be called.
    takeDepth(base.get());
    for (auto &a : args)
      takeDepth(a.get());
    diags.error(member.range, "only a member of an imported module can be "
                              "called as 'module.name(...)'");
    return std::make_unique<IntLitExpr>(r, 0, false);
  }
  // Unknown aliases are left to sema ("unknown module 'q'").
  takeDepth(base.get());
  NameRef callee = qualify(makeName(n->name, n->range), std::move(member),
                           SourceRange(n->range.begin, member.range.end));
  return makeCall(std::move(callee), std::move(args), r);
}

ExprPtr ParseDriver::makeArray(std::vector<ExprPtr> elements, SourceRange r) {
  unsigned d = 0;
  for (auto &e : elements)
    d = std::max(d, takeDepth(e.get()));
  return checked(std::make_unique<ArrayLitExpr>(r, std::move(elements)), d + 1);
}

} // namespace opdc
