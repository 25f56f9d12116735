// DerivUtils.cpp - What the tangent and adjoint passes share.
// SPDX-License-Identifier: Apache-2.0
#include "passes/deriv/DerivUtils.h"

#include "passes/deriv/SolveFlow.h"
#include "passes/kernels/Inline.h"

#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <memory>
#include <vector>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;

void reportRequest(PassContext &ctx, const char *pass, SourceRange at,
                   const std::string &proc, size_t dats) {
  ctx.stats.add(pass, "requests", std::string(pass) + " requests expanded");
  ctx.diags.remark(at,
                   std::string(pass) + " of '" + proc +
                       "' built: " + std::to_string(dats) + " " + pass +
                       " dat" + (dats == 1 ? "" : "s"),
                   pass);
}

std::unique_ptr<Function>
procWithCallsInlined(Program &program, const Function &proc, PassContext &ctx) {
  std::unique_ptr<Function> copy = proc.clone();
  inlineProcCallsIn(program, *copy, ctx);
  return copy;
}

std::vector<Function *> hostFunctions(const Program &program) {
  std::vector<Function *> hosts;
  for (auto &p : program.procs)
    hosts.push_back(p.get());
  if (program.main)
    hosts.push_back(program.main.get());
  return hosts;
}

bool refsSlot(const Expr &e, const std::set<unsigned> &slots) {
  struct Finder : IRVisitor {
    const std::set<unsigned> &slots;
    bool found = false;
    explicit Finder(const std::set<unsigned> &s) : slots(s) {}
    void visitVarRef(const VarRefExpr &v) override {
      found = found || slots.count(v.slot);
    }
  } f(slots);
  f.visitExpr(e);
  return f.found;
}

/// The first statement of \p b (recursively) that a tangent cannot contain.
const Stmt *firstForbidden(const Body &b) {
  for (const StmtPtr &s : b.stmts) {
    switch (s->kind) {
    case StmtKind::Print:
    case StmtKind::Write:
    case StmtKind::Read:
    case StmtKind::Adjoint:
    case StmtKind::Tangent:
      return s.get();
    case StmtKind::Eval:
      if (auto *c = dyn_cast<CallExpr>(cast<EvalStmt>(*s).expr.get()))
        if (c->callee->isHost())
          return s.get();
      break;
    case StmtKind::If: {
      const auto &i = cast<IfStmt>(*s);
      if (const Stmt *f = firstForbidden(i.thenBody))
        return f;
      if (const Stmt *f = firstForbidden(i.elseBody))
        return f;
      break;
    }
    case StmtKind::For:
      if (const Stmt *f = firstForbidden(cast<ForStmt>(*s).body))
        return f;
      break;
    case StmtKind::While:
      if (const Stmt *f = firstForbidden(cast<WhileStmt>(*s).body))
        return f;
      break;
    default:
      break;
    }
  }
  return nullptr;
}

const char *forbiddenWhat(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Print:
    return "it prints";
  case StmtKind::Write:
    return "it writes dats to a file";
  case StmtKind::Read:
    return "it reads dats from a file";
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
    return "it asks for a derivative itself";
  default:
    return "it calls a proc, which cannot be inlined here";
  }
}

std::set<Dat *> activeDats(const Body &body, std::set<Dat *> active,
                           const std::set<unsigned> &vars) {
  struct Collect : IRVisitor {
    std::vector<const Stmt *> stmts;
    void visitParLoop(const ParLoopStmt &s) override { stmts.push_back(&s); }
    void visitSwap(const SwapStmt &s) override { stmts.push_back(&s); }
    void visitSolve(const SolveStmt &s) override { stmts.push_back(&s); }
  } collect;
  collect.visitBody(body);
  for (bool grew = true; grew;) {
    grew = false;
    for (const Stmt *s : collect.stmts) {
      if (auto *w = dyn_cast<SwapStmt>(s)) {
        if (active.count(w->a) || active.count(w->b))
          grew |= active.insert(w->a).second | active.insert(w->b).second;
        continue;
      }
      if (auto *v = dyn_cast<SolveStmt>(s)) {
        for (Dat *d : solveReached(*v, active))
          grew |= active.insert(d).second;
        continue;
      }
      const auto &l = cast<ParLoopStmt>(*s);
      bool readsActive = false;
      for (const AccessDescriptor &a : l.args)
        if (isFloat(a.scalar) &&
            ((a.usesDat() && modeReads(a.mode) && active.count(a.dat)) ||
             (a.kind == ArgKind::GlobalRead && refsSlot(*a.value, vars))))
          readsActive = true;
      if (!readsActive)
        continue;
      for (const AccessDescriptor &a : l.args)
        if (a.usesDat() && modeWrites(a.mode) && isFloat(a.scalar))
          grew |= active.insert(a.dat).second;
    }
  }
  return active;
}

Dat *makeDerivativeDat(Program &program, Dat &primal, std::string name) {
  auto d = std::make_unique<Dat>();
  // A second expansion of the same kind (a tangent adjoint-linear asks
  // for) must not reuse a name.
  d->name = name;
  for (unsigned n = 2; program.findDat(d->name); ++n)
    d->name = name + std::to_string(n);
  d->set = primal.set;
  d->block = primal.block;
  d->elemType = primal.elemType;
  for (const ExprPtr &s : primal.size)
    d->size.push_back(cloneExpr(s));
  d->haloMinus = primal.haloMinus;
  d->haloPlus = primal.haloPlus;
  d->base = primal.base;
  d->init = DatInit::Zero;
  d->isDerivative = true;
  d->primal = &primal;
  d->range = primal.range;
  Dat *out = d.get();
  program.dats.push_back(std::move(d));
  return out;
}

Function *FillLoops::kernel(Type elem, bool copy) {
  std::string name =
      prefix + (copy ? "_copy_" : "_zero_") + scalarName(elem.scalar);
  if (elem.isArray())
    name += "x" + std::to_string(elem.dim());
  Function *&k = kernels[name];
  if (!k) // another pass's FillLoops of the same prefix may have made it
    k = program.findKernel(name);
  if (k)
    return k;
  auto f = std::make_unique<Function>();
  f->kind = FunctionKind::Kernel;
  f->name = name;
  if (copy)
    f->kernelParams.push_back({"src", AccessMode::Read, elem, nullptr, {}});
  f->kernelParams.push_back({"dst", AccessMode::Write, elem, nullptr, {}});
  unsigned dst = copy ? 1 : 0;
  Type scalar = Type::scalarOf(elem.scalar);
  auto value = [&](ExprPtr index) -> ExprPtr {
    if (!copy)
      return std::make_unique<ConstantExpr>(zeroOf(scalar));
    ExprPtr src = std::make_unique<KernelArgExpr>(0, elem);
    if (!index)
      return src;
    return std::make_unique<IndexExpr>(std::move(src), std::move(index));
  };
  if (!elem.isArray()) {
    f->body.stmts.push_back(std::make_unique<AssignStmt>(
        AssignOp::Set, std::make_unique<KernelArgExpr>(dst, elem),
        value(nullptr)));
  } else {
    unsigned i = f->addVar("i", Type::scalarOf(ScalarKind::I32), false);
    auto at = [&] {
      return std::make_unique<VarRefExpr>(i, Type::scalarOf(ScalarKind::I32));
    };
    Body body;
    body.stmts.push_back(std::make_unique<AssignStmt>(
        AssignOp::Set,
        std::make_unique<IndexExpr>(std::make_unique<KernelArgExpr>(dst, elem),
                                    at()),
        value(at())));
    f->body.stmts.push_back(std::make_unique<ForStmt>(
        i,
        std::make_unique<ConstantExpr>(ConstValue::ofInt(ScalarKind::I32, 0)),
        std::make_unique<ConstantExpr>(
            ConstValue::ofInt(ScalarKind::I32, int64_t(elem.dim()))),
        std::move(body)));
  }
  k = f.get();
  program.kernels.push_back(std::move(f));
  return k;
}

StmtPtr FillLoops::loop(Dat *src, Dat *dst, SourceRange at, bool halos) {
  Function *k = kernel(dst->elemType, src != nullptr);
  auto loop = std::make_unique<ParLoopStmt>(at);
  loop->kernel = k;
  loop->set = dst->set;
  loop->block = dst->block;
  if (halos && dst->structured()) {
    // Every stored point: [base - halo-, base + size + halo+).
    for (size_t d = 0; d < dst->size.size(); ++d) {
      ScalarKind ik = dst->size[d]->type.scalar;
      int64_t base = d < dst->base.size() ? dst->base[d] : 0;
      auto c = [&](int64_t v) {
        return std::make_unique<ConstantExpr>(ConstValue::ofInt(ik, v));
      };
      LoopRange r;
      r.lo = c(base - dst->haloMinus[d]);
      r.hi = std::make_unique<BinaryExpr>(BinaryOp::Add, dst->size[d]->clone(),
                                          c(base + dst->haloPlus[d]));
      loop->ranges.push_back(std::move(r));
    }
  }
  auto arg = [&](Dat *d, AccessMode m) {
    AccessDescriptor a;
    a.kind = ArgKind::Direct;
    a.mode = m;
    a.scalar = d->scalar();
    a.dim = d->dim();
    a.bytes = d->bytesPerElement();
    a.dat = d;
    a.range = at;
    return a;
  };
  if (src)
    loop->args.push_back(arg(src, AccessMode::Read));
  loop->args.push_back(arg(dst, AccessMode::Write));
  return loop;
}

} // namespace opdc
