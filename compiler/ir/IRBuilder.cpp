// IRBuilder.cpp - Convenience construction of Program IR.
// SPDX-License-Identifier: Apache-2.0
#include "ir/IRBuilder.h"

namespace opdc::ir {

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

Const *IRBuilder::addConst(std::string name, ConstValue value, SourceRange r) {
  auto c = std::make_unique<Const>();
  c->name = std::move(name);
  c->value = std::move(value);
  c->range = r;
  program.consts.push_back(std::move(c));
  return program.consts.back().get();
}

Param *IRBuilder::addParam(std::string name, Type type, ConstValue defaultValue,
                           SourceRange r) {
  auto p = std::make_unique<Param>();
  p->name = std::move(name);
  p->type = type;
  p->defaultValue = std::move(defaultValue);
  p->range = r;
  program.params.push_back(std::move(p));
  return program.params.back().get();
}

Set *IRBuilder::addSet(std::string name, ExprPtr size, SourceRange r) {
  auto s = std::make_unique<Set>();
  s->name = std::move(name);
  s->size = std::move(size);
  s->range = r;
  program.sets.push_back(std::move(s));
  return program.sets.back().get();
}

Set *IRBuilder::addSetFromFile(std::string name, ExprPtr file, SourceRange r) {
  auto s = std::make_unique<Set>();
  s->name = std::move(name);
  s->fromFile = std::move(file);
  s->range = r;
  program.sets.push_back(std::move(s));
  return program.sets.back().get();
}

Map *IRBuilder::addMap(std::string name, Set *from, Set *to, unsigned arity,
                       ExprPtr file, SourceRange r) {
  auto m = std::make_unique<Map>();
  m->name = std::move(name);
  m->from = from;
  m->to = to;
  m->arity = arity;
  m->fromFile = std::move(file);
  m->range = r;
  program.maps.push_back(std::move(m));
  return program.maps.back().get();
}

Block *IRBuilder::addBlock(std::string name, unsigned dims, SourceRange r) {
  auto b = std::make_unique<Block>();
  b->name = std::move(name);
  b->dims = dims;
  b->range = r;
  program.blocks.push_back(std::move(b));
  return program.blocks.back().get();
}

Stencil *IRBuilder::addStencil(std::string name, unsigned dims,
                               std::vector<std::vector<int64_t>> points,
                               SourceRange r) {
  auto s = std::make_unique<Stencil>();
  s->name = std::move(name);
  s->dims = dims;
  s->points = std::move(points);
  s->range = r;
  program.stencils.push_back(std::move(s));
  return program.stencils.back().get();
}

Dat *IRBuilder::addDat(std::string name, Set *set, Type elem, SourceRange r) {
  auto d = std::make_unique<Dat>();
  d->name = std::move(name);
  d->set = set;
  d->elemType = elem;
  d->range = r;
  program.dats.push_back(std::move(d));
  return program.dats.back().get();
}

Dat *IRBuilder::addBlockDat(std::string name, Block *block, Type elem,
                            std::vector<ExprPtr> size,
                            std::vector<int64_t> haloMinus,
                            std::vector<int64_t> haloPlus, SourceRange r) {
  auto d = std::make_unique<Dat>();
  d->name = std::move(name);
  d->block = block;
  d->elemType = elem;
  d->size = std::move(size);
  unsigned dims = block ? block->dims : unsigned(d->size.size());
  d->haloMinus =
      haloMinus.empty() ? std::vector<int64_t>(dims, 0) : std::move(haloMinus);
  d->haloPlus =
      haloPlus.empty() ? std::vector<int64_t>(dims, 0) : std::move(haloPlus);
  d->base = std::vector<int64_t>(dims, 0);
  d->range = r;
  program.dats.push_back(std::move(d));
  return program.dats.back().get();
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

namespace {
std::unique_ptr<Function> makeFunction(FunctionKind k, std::string name,
                                       Type ret, SourceRange r) {
  auto f = std::make_unique<Function>();
  f->kind = k;
  f->name = std::move(name);
  f->returnType = ret;
  f->range = r;
  return f;
}
} // namespace

Function *IRBuilder::addKernel(std::string name, SourceRange r) {
  program.kernels.push_back(
      makeFunction(FunctionKind::Kernel, std::move(name), Type::voidType(), r));
  return program.kernels.back().get();
}

Function *IRBuilder::addUniqueKernel(const std::string &name, SourceRange r) {
  std::string unique = name;
  for (unsigned n = 2; program.findKernel(unique); ++n)
    unique = name + "_" + std::to_string(n);
  return addKernel(std::move(unique), r);
}

Function *IRBuilder::addFn(std::string name, Type returnType, SourceRange r) {
  program.fns.push_back(
      makeFunction(FunctionKind::Fn, std::move(name), returnType, r));
  return program.fns.back().get();
}

Function *IRBuilder::addProc(std::string name, Type returnType, SourceRange r) {
  program.procs.push_back(
      makeFunction(FunctionKind::Proc, std::move(name), returnType, r));
  return program.procs.back().get();
}

Function *IRBuilder::setMain(SourceRange r) {
  program.main = makeFunction(FunctionKind::Main, "main", Type::voidType(), r);
  return program.main.get();
}

unsigned IRBuilder::addKernelParam(Function &kernel, std::string name,
                                   AccessMode mode, Type type, Stencil *stencil,
                                   SourceRange r) {
  kernel.kernelParams.push_back({std::move(name), mode, type, stencil, r});
  return unsigned(kernel.kernelParams.size() - 1);
}

unsigned IRBuilder::addParamVar(Function &f, std::string name, Type type,
                                SourceRange r) {
  unsigned slot = f.addVar(std::move(name), type, /*isMutable=*/false, r);
  f.params.push_back(slot);
  return slot;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr IRBuilder::constant(ConstValue v, SourceRange r) {
  return std::make_unique<ConstantExpr>(std::move(v), r);
}

ExprPtr IRBuilder::var(const Function &f, unsigned slot, SourceRange r) {
  Type t = slot < f.vars.size() ? f.vars[slot].type : Type::error();
  return std::make_unique<VarRefExpr>(slot, t, r);
}

ExprPtr IRBuilder::param(Param *p, SourceRange r) {
  return std::make_unique<ParamRefExpr>(p, r);
}

ExprPtr IRBuilder::arg(const Function &kernel, unsigned index,
                       std::vector<int64_t> offset, SourceRange r) {
  Type t = index < kernel.kernelParams.size() ? kernel.kernelParams[index].type
                                              : Type::error();
  return std::make_unique<KernelArgExpr>(index, t, std::move(offset), r);
}

ExprPtr IRBuilder::unary(UnaryOp op, ExprPtr e, SourceRange r) {
  return std::make_unique<UnaryExpr>(op, std::move(e), r);
}

ExprPtr IRBuilder::binary(BinaryOp op, ExprPtr l, ExprPtr rhs, SourceRange r) {
  return std::make_unique<BinaryExpr>(op, std::move(l), std::move(rhs), r);
}

ExprPtr IRBuilder::cast(ScalarKind to, ExprPtr e, SourceRange r) {
  if (e->type == Type::scalarOf(to))
    return e;
  if (e->kind == ExprKind::Constant) {
    auto *c = static_cast<ConstantExpr *>(e.get());
    if (c->value.type.isScalar())
      return constant(convertConst(c->value, Type::scalarOf(to)),
                      r.valid() ? r : c->range);
  }
  return std::make_unique<CastExpr>(to, std::move(e), r);
}

ExprPtr IRBuilder::index(ExprPtr base, ExprPtr i, SourceRange r) {
  return std::make_unique<IndexExpr>(std::move(base), std::move(i), r);
}

ExprPtr IRBuilder::intrinsic(Intrinsic id, std::vector<ExprPtr> args,
                             SourceRange r) {
  return std::make_unique<IntrinsicExpr>(id, std::move(args), r);
}

ExprPtr IRBuilder::call(Function *callee, std::vector<ExprPtr> args,
                        SourceRange r) {
  return std::make_unique<CallExpr>(callee, std::move(args), r);
}

ExprPtr IRBuilder::arrayLit(std::vector<ExprPtr> elements, SourceRange r) {
  return std::make_unique<ArrayLitExpr>(std::move(elements), r);
}

ExprPtr IRBuilder::sizeOf(Set *s, SourceRange r) {
  return std::make_unique<SizeOfExpr>(s, nullptr, 0,
                                      Type::scalarOf(ScalarKind::I32), r);
}

ExprPtr IRBuilder::sizeOf(Dat *d, unsigned dim, SourceRange r) {
  return std::make_unique<SizeOfExpr>(nullptr, d, dim,
                                      Type::scalarOf(ScalarKind::I32), r);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

StmtPtr IRBuilder::decl(unsigned slot, ExprPtr init, SourceRange r) {
  return std::make_unique<DeclStmt>(slot, std::move(init), r);
}

StmtPtr IRBuilder::assign(ExprPtr target, ExprPtr value, AssignOp op,
                          SourceRange r) {
  return std::make_unique<AssignStmt>(op, std::move(target), std::move(value),
                                      r);
}

StmtPtr IRBuilder::eval(ExprPtr call, SourceRange r) {
  return std::make_unique<EvalStmt>(std::move(call), r);
}

StmtPtr IRBuilder::ifThen(ExprPtr cond, Body thenBody, Body elseBody,
                          SourceRange r) {
  return std::make_unique<IfStmt>(std::move(cond), std::move(thenBody),
                                  std::move(elseBody), r);
}

StmtPtr IRBuilder::forRange(unsigned slot, ExprPtr lo, ExprPtr hi, Body body,
                            SourceRange r) {
  return std::make_unique<ForStmt>(slot, std::move(lo), std::move(hi),
                                   std::move(body), r);
}

StmtPtr IRBuilder::whileLoop(ExprPtr cond, Body body, SourceRange r) {
  return std::make_unique<WhileStmt>(std::move(cond), std::move(body), r);
}

StmtPtr IRBuilder::ret(ExprPtr value, SourceRange r) {
  return std::make_unique<ReturnStmt>(std::move(value), r);
}

StmtPtr IRBuilder::print(std::vector<ExprPtr> args, SourceRange r) {
  return std::make_unique<PrintStmt>(false, "", std::move(args), r);
}

StmtPtr IRBuilder::printFormatted(std::string format, std::vector<ExprPtr> args,
                                  SourceRange r) {
  return std::make_unique<PrintStmt>(true, std::move(format), std::move(args),
                                     r);
}

StmtPtr IRBuilder::swap(Dat *a, Dat *b, SourceRange r) {
  return std::make_unique<SwapStmt>(a, b, r);
}

StmtPtr IRBuilder::write(std::vector<Dat *> dats, ExprPtr file, SourceRange r) {
  return std::make_unique<DatIOStmt>(false, std::move(dats), std::move(file),
                                     r);
}

StmtPtr IRBuilder::read(std::vector<Dat *> dats, ExprPtr file, SourceRange r) {
  return std::make_unique<DatIOStmt>(true, std::move(dats), std::move(file), r);
}

std::unique_ptr<ParLoopStmt> IRBuilder::loopOverSet(Function *kernel, Set *set,
                                                    SourceRange r) {
  auto l = std::make_unique<ParLoopStmt>(r);
  l->kernel = kernel;
  l->set = set;
  return l;
}

std::unique_ptr<ParLoopStmt>
IRBuilder::loopOverBlock(Function *kernel, Block *block,
                         std::vector<LoopRange> ranges, SourceRange r) {
  auto l = std::make_unique<ParLoopStmt>(r);
  l->kernel = kernel;
  l->block = block;
  l->ranges = std::move(ranges);
  return l;
}

//===----------------------------------------------------------------------===//
// Access descriptors
//===----------------------------------------------------------------------===//

namespace {
AccessDescriptor shaped(ArgKind k, AccessMode mode, ScalarKind s,
                        unsigned dim) {
  AccessDescriptor d;
  d.kind = k;
  d.mode = mode;
  d.scalar = s;
  d.dim = dim;
  d.bytes = scalarBytes(s) * dim;
  return d;
}
} // namespace

AccessDescriptor IRBuilder::direct(Dat *dat, AccessMode mode) {
  AccessDescriptor d = shaped(ArgKind::Direct, mode, dat->scalar(), dat->dim());
  d.dat = dat;
  return d;
}

AccessDescriptor IRBuilder::indirect(Dat *dat, Map *m, int index,
                                     AccessMode mode) {
  AccessDescriptor d =
      shaped(ArgKind::Indirect, mode, dat->scalar(), dat->dim());
  d.dat = dat;
  d.map = m;
  d.mapIndex = index;
  return d;
}

AccessDescriptor IRBuilder::stencil(Dat *dat, Stencil *s, AccessMode mode) {
  AccessDescriptor d =
      shaped(ArgKind::Stencil, mode, dat->scalar(), dat->dim());
  d.dat = dat;
  d.stencil = s;
  return d;
}

AccessDescriptor IRBuilder::mapDirect(Map *m, AccessMode mode) {
  AccessDescriptor d =
      shaped(ArgKind::MapDirect, mode, ScalarKind::I32, m ? m->arity : 1);
  d.map = m;
  return d;
}

AccessDescriptor IRBuilder::globalRead(ExprPtr value) {
  Type t = value ? value->type : Type::error();
  AccessDescriptor d =
      shaped(ArgKind::GlobalRead, AccessMode::Read, t.scalar, t.dim());
  d.value = std::move(value);
  return d;
}

AccessDescriptor IRBuilder::reduction(int slot, Type type, AccessMode mode) {
  AccessDescriptor d =
      shaped(ArgKind::Reduction, mode, type.scalar, type.dim());
  d.var = slot;
  return d;
}

Body makeBody(std::vector<StmtPtr> stmts) {
  Body b;
  b.stmts = std::move(stmts);
  return b;
}

} // namespace opdc::ir
