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

namespace {

struct ProgramPrinter {
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
      return b.CreateLoad(cgm.ptrTy, cgm.handle(o.dat));
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

  // A constant array of structs whose fields have the C layout of the
  // runtime's struct (natural alignment, as LLVM lays out a struct type).
  llvm::Value *rows(const host::Operand &o) {
    std::vector<llvm::Type *> fieldTys;
    for (host::Ty t : o.fields)
      fieldTys.push_back(scalarType(t));
    auto *rowTy = llvm::StructType::get(cgm.context, fieldTys);
    std::vector<llvm::Constant *> rs;
    size_t n = o.fields.size();
    for (size_t r = 0; r * n < o.ints.size(); ++r) {
      std::vector<llvm::Constant *> fs;
      for (size_t f = 0; f < n; ++f)
        fs.push_back(llvm::ConstantInt::get(fieldTys[f],
                                            uint64_t(o.ints[r * n + f]), true));
      rs.push_back(llvm::ConstantStruct::get(rowTy, fs));
    }
    auto *arrTy = llvm::ArrayType::get(rowTy, rs.size());
    return constant(llvm::ConstantArray::get(arrTy, rs), "opd_rows");
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

} // namespace

std::vector<llvm::Value *> printHostProgram(FunctionEmitter &e,
                                            const host::Program &p) {
  ProgramPrinter printer{e, p, {}, {}};
  printer.declareLocals();
  printer.ops(p.ops);
  return {printer.locals.begin(), printer.locals.end()};
}

} // namespace opdc
