// HostPrinter.cpp - The host-program form (codegen/common/HostProgram.h)
// as LLVM IR.
// SPDX-License-Identifier: Apache-2.0
//
// Prints what lowerHostStmt decided and decides nothing: each call is a
// call of the opd_rt.h function of that name (declared by RuntimeABI), each
// local an alloca in the entry block, each `if`, counted loop and dispatch
// loop a few basic blocks. The CPU has one copy of each dat, so residency
// operations print as nothing.
#include "codegen/llvm/HostCodeGen.h"

#include "codegen/common/HostProgram.h"
#include "support/Assert.h"

namespace opdc {

struct HostProgramPrinter::Impl {
  FunctionEmitter &e;
  const host::Program &p;
  std::vector<llvm::Value *> locals;
  std::vector<llvm::Type *> localTypes;
  llvm::IRBuilder<> &b = e.b;
  CodeGenModule &cgm = e.cgm;

  llvm::Type *scalarType(host::Ty t) const {
    switch (t) {
    case host::Ty::I32:
      return cgm.i32Ty;
    case host::Ty::I64:
    case host::Ty::W64:
      return cgm.i64Ty;
    case host::Ty::Ptr:
      return cgm.ptrTy;
    }
    OPDC_UNREACHABLE("unknown host type");
  }

  void declareLocals() {
    for (const host::Local &l : p.locals) {
      llvm::Type *t = scalarType(l.ty);
      if (l.length)
        t = llvm::ArrayType::get(t, l.length);
      if (l.isTable()) {
        llvm::Constant *init = rowsConstant(l.table);
        localTypes.push_back(init->getType());
        locals.push_back(new llvm::GlobalVariable(
            cgm.module, init->getType(), false,
            llvm::GlobalValue::InternalLinkage, init, "opd_" + l.name));
        continue;
      }
      localTypes.push_back(t);
      if (l.persistent)
        locals.push_back(new llvm::GlobalVariable(
            cgm.module, t, false, llvm::GlobalValue::InternalLinkage,
            llvm::Constant::getNullValue(t), "opd_" + l.name));
      else
        locals.push_back(e.createTemp(t, l.name));
    }
  }

  llvm::Value *elementAddr(int l, int64_t i) {
    const host::Local &loc = p.locals[size_t(l)];
    if (!loc.length)
      return locals[size_t(l)];
    return b.CreateConstInBoundsGEP2_32(localTypes[size_t(l)],
                                        locals[size_t(l)], 0, unsigned(i));
  }

  llvm::Value *loadLocal(int l, int64_t i = 0) {
    return b.CreateLoad(scalarType(p.locals[size_t(l)].ty), elementAddr(l, i));
  }

  llvm::Value *convert(const ir::Expr &x, host::Operand::Conv c) {
    llvm::Value *v = e.emitExpr(x);
    const Type &t = x.type;
    using C = host::Operand::Conv;
    switch (c) {
    case C::None:
      return v;
    case C::ToI64:
    case C::ToI32: {
      llvm::Type *to = c == C::ToI64 ? cgm.i64Ty : cgm.i32Ty;
      return t.isBool() ? b.CreateZExt(v, to) : b.CreateSExtOrTrunc(v, to);
    }
    case C::ToF64:
      return b.CreateFPExt(v, llvm::Type::getDoubleTy(cgm.context));
    }
    OPDC_UNREACHABLE("unknown conversion");
  }

  llvm::Value *operand(const host::Operand &o) {
    using K = host::Operand::Kind;
    switch (o.kind) {
    case K::Int:
      return llvm::ConstantInt::get(scalarType(o.ty), uint64_t(o.value), true);
    case K::Str:
      return cgm.string(o.text);
    case K::Null:
      return llvm::ConstantPointerNull::get(cgm.ptrTy);
    case K::Handle:
      return b.CreateLoad(cgm.ptrTy, o.dat   ? cgm.handle(o.dat)
                                     : o.set ? cgm.handle(o.set)
                                     : o.map ? cgm.handle(o.map)
                                             : cgm.handle(o.block));
    case K::Dats:
      return o.dats.empty() ? llvm::ConstantPointerNull::get(cgm.ptrTy)
                            : e.datArray(o.dats);
    case K::Bytes: {
      auto *init = llvm::ConstantDataArray::get(cgm.context, o.bytes);
      return new llvm::GlobalVariable(cgm.module, init->getType(), true,
                                      llvm::GlobalValue::PrivateLinkage, init,
                                      o.text);
    }
    case K::Local:
      return loadLocal(o.local);
    case K::LocalAt:
      return loadLocal(o.local, o.value);
    case K::LocalAddr:
      return locals[size_t(o.local)];
    case K::Diff:
      return b.CreateSub(loadLocal(o.local), loadLocal(o.other));
    case K::Expr:
      return convert(*o.expr, o.conv);
    case K::VarBits:
      return e.varBits(o.var, unsigned(o.value));
    case K::VarAddr:
      return e.slot(o.var);
    case K::Plus:
      return b.CreateAdd(operand(o.parts[0]), b.getInt64(uint64_t(o.value)));
    case K::I64s:
      return constant(llvm::ConstantDataArray::get(
                          cgm.context,
                          llvm::ArrayRef<uint64_t>(
                              reinterpret_cast<const uint64_t *>(o.ints.data()),
                              o.ints.size())),
                      "opd_" + o.text);
    case K::Rows:
      return rows(o);
    }
    OPDC_UNREACHABLE("unknown operand");
  }

  llvm::Value *constant(llvm::Constant *init, const std::string &name) {
    return new llvm::GlobalVariable(cgm.module, init->getType(), true,
                                    llvm::GlobalValue::InternalLinkage, init,
                                    name);
  }

  // The LLVM struct of a row of \p o with the C layout of the runtime's
  // struct (natural alignment, as LLVM lays out a struct type): fields
  // named `x[0]`, `x[1]`, ... form an array; `at[f]`: flat field f's
  // struct field and its index in the array (-1: not an array).
  struct RowLayout {
    llvm::StructType *ty;
    std::vector<std::pair<unsigned, int>> at;
  };
  RowLayout rowLayout(const host::Operand &o) {
    RowLayout r{nullptr, host::rowFields(o)};
    std::vector<llvm::Type *> fieldTys;
    for (size_t f = 0; f < o.fields.size(); ++f) {
      llvm::Type *t = scalarType(o.fields[f]);
      auto [field, index] = r.at[f];
      if (field == fieldTys.size())
        fieldTys.push_back(index < 0 ? t : llvm::ArrayType::get(t, 1));
      else
        fieldTys[field] = llvm::ArrayType::get(t, unsigned(index) + 1);
    }
    // Named after the C struct, for readable IR.
    r.ty = llvm::StructType::getTypeByName(cgm.context, o.text);
    if (!r.ty)
      r.ty = llvm::StructType::create(cgm.context, fieldTys, o.text);
    return r;
  }

  // A constant array of the rows of \p o.
  llvm::Constant *rowsConstant(const host::Operand &o) {
    RowLayout layout = rowLayout(o);
    std::vector<llvm::Constant *> rs;
    size_t n = o.fields.size();
    for (size_t r = 0; r * n < o.ints.size(); ++r) {
      std::vector<std::vector<llvm::Constant *>> fs(
          layout.ty->getNumElements());
      for (size_t f = 0; f < n; ++f) {
        llvm::Type *t = scalarType(o.fields[f]);
        fs[layout.at[f].first].push_back(
            o.fields[f] == host::Ty::Ptr
                ? llvm::Constant::getNullValue(t)
                : llvm::ConstantInt::get(t, uint64_t(o.ints[r * n + f]), true));
      }
      std::vector<llvm::Constant *> row;
      for (unsigned k = 0; k < fs.size(); ++k) {
        llvm::Type *t = layout.ty->getElementType(k);
        row.push_back(t->isArrayTy()
                          ? llvm::ConstantArray::get(
                                llvm::cast<llvm::ArrayType>(t), fs[k])
                          : fs[k][0]);
      }
      rs.push_back(llvm::ConstantStruct::get(layout.ty, row));
    }
    return llvm::ConstantArray::get(llvm::ArrayType::get(layout.ty, rs.size()),
                                    rs);
  }

  llvm::Value *rows(const host::Operand &o) {
    return constant(rowsConstant(o), "opd_rows");
  }

  // A reduction's partial into its variable (Op::Kind::Combine).
  void combine(const host::Op &o) {
    const Type &vt = e.fn.vars[o.var].type;
    Type elem = Type::scalarOf(vt.scalar);
    llvm::Type *mem = cgm.memType(vt.scalar);
    llvm::Value *slot =
        b.CreateAdd(b.CreateMul(operand(o.args[1]), b.getInt64(o.dim)),
                    b.getInt64(uint64_t(o.index)));
    llvm::Value *part =
        e.loadValue(b.CreateInBoundsGEP(mem, operand(o.args[0]), slot), elem);
    llvm::Value *ptr = e.slot(o.var);
    if (vt.isArray())
      ptr = b.CreateConstInBoundsGEP2_32(cgm.storageType(vt), ptr, 0,
                                         unsigned(o.index));
    llvm::Value *v = e.loadValue(ptr, elem);
    llvm::Value *r =
        o.mode == ir::AccessMode::Sum
            ? e.emitArithmetic(ir::BinaryOp::Add, vt.scalar, v, part, {})
            : e.emitMinMax(o.mode == ir::AccessMode::Min, vt.scalar, v, part);
    e.storeValue(r, ptr, elem);
  }

  llvm::FunctionCallee callee(const std::string &name) {
    if (llvm::Function *f = cgm.module.getFunction(name))
      return f;
    // Declared on first use only (RuntimeABI.h).
    if (name == "opd_halo_group")
      return cgm.rt.haloGroup();
    if (name == "opd_loop_extend_next")
      return cgm.rt.loopExtendNext();
    OPDC_UNREACHABLE("a runtime function RuntimeABI does not declare");
  }

  llvm::Value *call(const std::string &name,
                    const std::vector<host::Operand> &as) {
    llvm::FunctionCallee f = callee(name);
    std::vector<llvm::Value *> args;
    for (const host::Operand &o : as)
      args.push_back(operand(o));
    return b.CreateCall(f, args);
  }

  llvm::BasicBlock *block(const char *name) {
    return llvm::BasicBlock::Create(cgm.context, name, e.llvmFn);
  }

  void ops(const std::vector<host::Op> &os) {
    for (const host::Op &o : os)
      op(o);
  }

  llvm::Value *compare(const host::Op &o) {
    llvm::Value *l = operand(o.args[0]), *r = operand(o.args[1]);
    switch (o.pred) {
    case host::Pred::Eq:
      return b.CreateICmpEQ(l, r);
    case host::Pred::Ne:
      return b.CreateICmpNE(l, r);
    case host::Pred::Lt:
      return b.CreateICmpSLT(l, r);
    case host::Pred::Gt:
      return b.CreateICmpSGT(l, r);
    case host::Pred::Ge:
      return b.CreateICmpSGE(l, r);
    }
    OPDC_UNREACHABLE("unknown predicate");
  }

  void ifThen(const host::Op &o) {
    auto *thenBB = block("host.then");
    auto *elseBB = o.otherwise.empty() ? nullptr : block("host.else");
    auto *endBB = block("host.endif");
    b.CreateCondBr(compare(o), thenBB, elseBB ? elseBB : endBB);
    b.SetInsertPoint(thenBB);
    ops(o.then);
    b.CreateBr(endBB);
    if (elseBB) {
      b.SetInsertPoint(elseBB);
      ops(o.otherwise);
      b.CreateBr(endBB);
    }
    b.SetInsertPoint(endBB);
  }

  void forLoop(const host::Op &o) {
    llvm::Value *k = locals[size_t(o.local)];
    b.CreateStore(operand(o.args[0]), k);
    auto *condBB = block("host.for");
    auto *bodyBB = block("host.body");
    auto *endBB = block("host.endfor");
    b.CreateBr(condBB);
    b.SetInsertPoint(condBB);
    b.CreateCondBr(b.CreateICmpSLT(loadLocal(o.local), operand(o.args[1])),
                   bodyBB, endBB);
    b.SetInsertPoint(bodyBB);
    ops(o.then);
    b.CreateStore(b.CreateAdd(loadLocal(o.local), b.getInt64(1)), k);
    b.CreateBr(condBB);
    b.SetInsertPoint(endBB);
  }

  void dispatch(const host::Op &o) {
    auto *nextBB = block("host.next");
    auto *endBB = block("host.done");
    b.CreateBr(nextBB);
    b.SetInsertPoint(nextBB);
    llvm::Value *act = call(o.fn, o.args);
    b.CreateStore(act, locals[size_t(o.result)]);
    llvm::SwitchInst *sw = b.CreateSwitch(act, endBB, unsigned(o.cases.size()));
    for (const auto &[value, body] : o.cases) {
      auto *caseBB = block("host.case");
      sw->addCase(llvm::cast<llvm::ConstantInt>(llvm::ConstantInt::get(
                      act->getType(), uint64_t(int64_t(value)), true)),
                  caseBB);
      b.SetInsertPoint(caseBB);
      ops(body);
      b.CreateBr(nextBB);
    }
    b.SetInsertPoint(endBB);
  }

  void op(const host::Op &o) {
    switch (o.kind) {
    case host::Op::Kind::Call: {
      llvm::Value *r = call(o.fn, o.args);
      if (o.result >= 0)
        b.CreateStore(r, locals[size_t(o.result)]);
      return;
    }
    case host::Op::Kind::Store:
      b.CreateStore(operand(o.args[0]), elementAddr(o.local, o.index));
      return;
    case host::Op::Kind::StoreField: {
      auto [field, index] =
          rowLayout(p.locals[size_t(o.local)].table).at[size_t(o.field)];
      std::vector<llvm::Value *> path{b.getInt64(0), b.getInt64(o.index),
                                      b.getInt32(field)};
      if (index >= 0)
        path.push_back(b.getInt64(uint64_t(index)));
      b.CreateStore(operand(o.args[0]),
                    b.CreateInBoundsGEP(localTypes[size_t(o.local)],
                                        locals[size_t(o.local)], path));
      return;
    }
    case host::Op::Kind::Combine:
      return combine(o);
    case host::Op::Kind::Phase:
      OPDC_UNREACHABLE("a phase inside an operation");
    case host::Op::Kind::SetVar: {
      llvm::Type *t = cgm.storageType(e.fn.vars[o.var].type);
      b.CreateStore(b.CreateSExtOrTrunc(operand(o.args[0]), t), e.slot(o.var));
      return;
    }
    case host::Op::Kind::SetVarBits:
      e.setVarBits(o.var, unsigned(o.index), operand(o.args[0]));
      return;
    case host::Op::Kind::Run:
      e.emitBody(*o.body);
      return;
    case host::Op::Kind::If:
      return ifThen(o);
    case host::Op::Kind::For:
      return forLoop(o);
    case host::Op::Kind::Dispatch:
      return dispatch(o);
    case host::Op::Kind::NeedHost:
    case host::Op::Kind::HostWrote:
      return; // one copy of each dat
    }
  }
};

HostProgramPrinter::HostProgramPrinter(FunctionEmitter &e,
                                       const host::Program &p)
    : impl(new Impl{e, p, {}, {}}) {
  impl->declareLocals();
}

HostProgramPrinter::~HostProgramPrinter() = default;

bool HostProgramPrinter::printToPhase() {
  const std::vector<host::Op> &ops = impl->p.ops;
  for (; next < ops.size(); ++next) {
    if (ops[next].kind == host::Op::Kind::Phase) {
      ++next;
      return true;
    }
    impl->op(ops[next]);
  }
  return false;
}

llvm::Value *HostProgramPrinter::local(int l) const {
  return impl->locals[size_t(l)];
}

std::vector<llvm::Value *> printHostProgram(FunctionEmitter &e,
                                            const host::Program &p) {
  HostProgramPrinter printer(e, p);
  bool phase = printer.printToPhase();
  OPDC_ASSERT(!phase, "a statement's program with a phase");
  return printer.impl->locals;
}

} // namespace opdc
