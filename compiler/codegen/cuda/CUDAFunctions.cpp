// CUDAFunctions.cpp - Statements and expressions of one IR function as C++.
// SPDX-License-Identifier: Apache-2.0
//
// The same walk for host code, fns (__host__ __device__) and kernels
// (__device__). The arithmetic is the CPU backend's (FunctionEmitter.cpp),
// written with the helpers of lib/cuda/opd_cuda.cuh where C++ differs:
//   - floats: plain operators; nvcc compiles with --fmad=false (no fused
//     multiply-add unless -ffp-contract=fast), IEEE division and sqrt;
//   - integers: +, -, * and unary - wrap (opd::add ...); / and % stop the
//     program on a zero divisor, x / -1 wraps (opd::div, opd::rem); shift
//     counts are checked (opd::shl, opd::shr); non-constant array indices
//     are checked (opd::at);
//   - float to integer saturates, NaN gives 0 (opd::f2i);
//   - min/max are IEEE 754-2019 minimum/maximum (opd::vmin, opd::vmax).
// Every variable slot is declared at the top of its function (as the CPU
// backend gives each an alloca), so a declaration statement is an
// assignment and scopes never matter. The host-only statements are
// written in CUDAHostStmts.cpp.
#include "codegen/cuda/CUDAEmitter.h"

#include "ast/ScalarSemantics.h"

#include "support/Assert.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace opdc {

using llvm::cast;
using llvm::dyn_cast;
using namespace ir;

std::string cudaIdent(const std::string &name) {
  std::string r;
  for (char c : name)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return r;
}

std::string cudaStringLiteral(const std::string &text) {
  std::string r = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      r += "\\\"";
      break;
    case '\\':
      r += "\\\\";
      break;
    case '\n':
      r += "\\n";
      break;
    case '\t':
      r += "\\t";
      break;
    default:
      if (c < 32 || c >= 127 || c == '?') {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\%03o", c);
        r += buf;
      } else {
        r += char(c);
      }
    }
  }
  return r + "\"";
}

const char *cudaScalarType(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool:
    return "bool";
  case ScalarKind::I32:
    return "int32_t";
  case ScalarKind::I64:
    return "int64_t";
  case ScalarKind::F32:
    return "float";
  case ScalarKind::F64:
    return "double";
  }
  OPDC_UNREACHABLE("unknown scalar kind");
}

std::string cudaValueType(const Type &t) {
  if (t.isVoid())
    return "void";
  if (t.isString())
    return "const char *";
  if (t.isArray())
    return std::string("opd::arr<") + cudaScalarType(t.scalar) + ", " +
           std::to_string(t.length) + ">";
  return cudaScalarType(t.scalar);
}

std::string CUDAModule::fnName(const ir::Function &f) {
  return (f.kind == FunctionKind::Proc ? "proc_" : "fn_") + cudaIdent(f.name);
}

std::string CUDAFunctionWriter::var(unsigned s) const {
  return "v" + std::to_string(s) + "_" + cudaIdent(fn.vars[s].name);
}

void CUDAFunctionWriter::line(int indent, const std::string &text) {
  out.append(size_t(indent) * 2, ' ');
  out += text;
  out += '\n';
}

void CUDAFunctionWriter::declareVars(int indent) {
  std::vector<bool> isParam(fn.vars.size(), false);
  for (unsigned p : fn.params)
    isParam[p] = true;
  for (unsigned s = 0; s < fn.vars.size(); ++s)
    if (!isParam[s])
      line(indent, "[[maybe_unused]] " + cudaValueType(fn.vars[s].type) +
                       " " + var(s) + "{};");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void CUDAFunctionWriter::body(const ir::Body &b, int indent) {
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    // A stencil chain the fuse pass marked (a group of 2: the CUDA
    // backend has no skewed sweeps) is one kernel.
    const auto *l = llvm::dyn_cast<ParLoopStmt>(b.stmts[i].get());
    const auto *next = i + 1 < b.stmts.size()
                           ? llvm::dyn_cast<ParLoopStmt>(b.stmts[i + 1].get())
                           : nullptr;
    if (l && next && l->skew.member && l->skew.count == 2) {
      emitCUDATileChain(*this, *l, *next, indent);
      ++i;
      continue;
    }
    stmt(*b.stmts[i], indent);
  }
}

void CUDAFunctionWriter::stmt(const ir::Stmt &s, int indent) {
  switch (s.kind) {
  case StmtKind::Decl: {
    const auto &d = cast<DeclStmt>(s);
    line(indent, var(d.slot) + " = " + expr(*d.init) + ";");
    return;
  }
  case StmtKind::Assign: {
    const auto &a = cast<AssignStmt>(s);
    const Type &t = a.target->type;
    std::string value = expr(*a.value);
    if (a.op == AssignOp::Set) {
      // A whole array parameter of a kernel is stored component by
      // component (its components may be strided).
      if (t.isArray() && llvm::isa<KernelArgExpr>(*a.target)) {
        const auto &k = cast<KernelArgExpr>(*a.target);
        std::string i = std::to_string(k.index);
        line(indent, "opd::store(a" + i + " + " + stencilOffset(k) + ", s" +
                         i + ", " + value + ");");
        return;
      }
      line(indent, lvalue(*a.target) + " = " + value + ";");
      return;
    }
    OPDC_ASSERT(t.isScalar(), "compound assignment to a non-scalar");
    std::string target = lvalue(*a.target);
    line(indent, target + " = " +
                     arithmetic(binaryOpOf(a.op), t.scalar, target, value,
                                a.range) +
                     ";");
    return;
  }
  case StmtKind::Eval:
    line(indent, expr(*cast<EvalStmt>(s).expr) + ";");
    return;
  case StmtKind::If: {
    const auto &i = cast<IfStmt>(s);
    line(indent, "if (" + expr(*i.cond) + ") {");
    body(i.thenBody, indent + 1);
    if (!i.elseBody.empty()) {
      line(indent, "} else {");
      body(i.elseBody, indent + 1);
    }
    line(indent, "}");
    return;
  }
  case StmtKind::For: {
    const auto &f = cast<ForStmt>(s);
    std::string v = var(f.slot);
    std::string hi = "opd_hi" + std::to_string(temps++);
    line(indent, "{");
    line(indent + 1, "const " + cudaValueType(fn.vars[f.slot].type) + " " +
                         hi + " = " + expr(*f.hi) + ";");
    line(indent + 1, "for (" + v + " = " + expr(*f.lo) + "; " + v + " < " +
                         hi + "; ++" + v + ") {");
    body(f.body, indent + 2);
    line(indent + 1, "}");
    line(indent, "}");
    return;
  }
  case StmtKind::While: {
    const auto &w = cast<WhileStmt>(s);
    line(indent, "while (" + expr(*w.cond) + ") {");
    body(w.body, indent + 1);
    line(indent, "}");
    return;
  }
  case StmtKind::Break:
    line(indent, "break;");
    return;
  case StmtKind::Continue:
    line(indent, "continue;");
    return;
  case StmtKind::Return: {
    const auto &r = cast<ReturnStmt>(s);
    if (fn.kind == FunctionKind::Main)
      line(indent, "return opd_main_end();");
    else if (r.value)
      line(indent, "return " + expr(*r.value) + ";");
    else
      line(indent, "return;");
    return;
  }
  default:
    OPDC_ASSERT(mode == Mode::Host, "host statement outside host code");
    return hostStmt(s, indent);
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

namespace {

std::string scalarLiteral(ScalarKind k, const ConstValue &v, unsigned i) {
  char buf[64];
  switch (k) {
  case ScalarKind::Bool:
    return v.asInt(i) ? "true" : "false";
  case ScalarKind::I32: {
    int64_t x = v.asInt(i);
    if (x == INT32_MIN)
      return "(-2147483647 - 1)";
    return x < 0 ? "(" + std::to_string(x) + ")" : std::to_string(x);
  }
  case ScalarKind::I64: {
    int64_t x = v.asInt(i);
    if (x == INT64_MIN)
      return "(-INT64_C(9223372036854775807) - 1)";
    return "INT64_C(" + std::to_string(x) + ")";
  }
  case ScalarKind::F32: {
    float f = float(v.asDouble(i));
    if (!std::isfinite(f)) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      std::snprintf(buf, sizeof buf, "opd::f32_bits(0x%08" PRIx32 "u)", bits);
      return buf;
    }
    std::snprintf(buf, sizeof buf, "%af", double(f));
    return std::signbit(f) ? std::string("(") + buf + ")" : buf;
  }
  case ScalarKind::F64: {
    double d = v.asDouble(i);
    if (!std::isfinite(d)) {
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      std::snprintf(buf, sizeof buf, "opd::f64_bits(0x%016" PRIx64 "ull)",
                    bits);
      return buf;
    }
    std::snprintf(buf, sizeof buf, "%a", d);
    return std::signbit(d) ? std::string("(") + buf + ")" : buf;
  }
  }
  OPDC_UNREACHABLE("unknown scalar kind");
}

/// The C library's name of a <math.h> function for \p k (sinf for f32).
std::string libm(const char *name, ScalarKind k) {
  return std::string(name) + (k == ScalarKind::F32 ? "f" : "");
}

} // namespace

std::string CUDAFunctionWriter::constant(const ConstValue &v) {
  const Type &t = v.type;
  if (t.isString())
    return cudaStringLiteral(v.text);
  if (t.isArray()) {
    std::string r = cudaValueType(t) + "{{";
    for (unsigned i = 0; i < t.length; ++i)
      r += (i ? ", " : "") + scalarLiteral(t.scalar, v, i);
    return r + "}}";
  }
  return scalarLiteral(t.scalar, v, 0);
}

std::string CUDAFunctionWriter::expr(const ir::Expr &e) {
  switch (e.kind) {
  case ExprKind::Constant:
    return constant(cast<ConstantExpr>(e).value);
  case ExprKind::VarRef:
    return var(cast<VarRefExpr>(e).slot);
  case ExprKind::ParamRef: {
    // Host code reads the host copy, kernels the __constant__ one, fns
    // (compiled for both) the one of the side compiling (OPD_P).
    std::string n = cudaIdent(cast<ParamRefExpr>(e).param->name);
    std::string p = mode == Mode::Host     ? "opd_p_" + n
                    : mode == Mode::Kernel ? "opd_dp_" + n
                                           : "OPD_P(" + n + ")";
    return e.type.isBool() ? "(" + p + " != 0)" : p;
  }
  case ExprKind::KernelArg:
    return kernelArg(cast<KernelArgExpr>(e), nullptr);
  case ExprKind::Unary: {
    const auto &u = cast<UnaryExpr>(e);
    std::string v = expr(*u.operand);
    switch (u.op) {
    case UnaryOp::Not:
      return "(!" + v + ")";
    case UnaryOp::BitNot:
      return "(" + std::string(cudaScalarType(e.type.scalar)) + ")(~" + v + ")";
    case UnaryOp::Neg:
      return isFloat(e.type.scalar) ? "(-" + v + ")" : "opd::neg(" + v + ")";
    }
    OPDC_UNREACHABLE("unknown unary operator");
  }
  case ExprKind::Binary:
    return binary(cast<BinaryExpr>(e));
  case ExprKind::Cast:
    return castExpr(cast<CastExpr>(e));
  case ExprKind::Index: {
    const auto &ix = cast<IndexExpr>(e);
    std::string i;
    if (const auto *c = dyn_cast<ConstantExpr>(ix.index.get()))
      i = std::to_string(c->value.asInt(0));
    else
      i = "opd::at(" + expr(*ix.index) + ", " +
          std::to_string(ix.base->type.length) + ", " +
          cudaStringLiteral(m.location(ix.index->range) +
                            ": index out of bounds of an array of " +
                            std::to_string(ix.base->type.length)) +
          ")";
    if (const auto *k = dyn_cast<KernelArgExpr>(ix.base.get()))
      return kernelArg(*k, &i);
    return expr(*ix.base) + "[" + i + "]";
  }
  case ExprKind::Intrinsic:
    return intrinsic(cast<IntrinsicExpr>(e));
  case ExprKind::Call: {
    const auto &c = cast<CallExpr>(e);
    std::string r = CUDAModule::fnName(*c.callee) + "(";
    for (size_t i = 0; i < c.args.size(); ++i)
      r += (i ? ", " : "") + expr(*c.args[i]);
    return r + ")";
  }
  case ExprKind::ArrayLit: {
    const auto &a = cast<ArrayLitExpr>(e);
    std::string r = cudaValueType(e.type) + "{{";
    for (size_t i = 0; i < a.elements.size(); ++i)
      r += (i ? ", " : "") + expr(*a.elements[i]);
    return r + "}}";
  }
  case ExprKind::SizeOf: {
    OPDC_ASSERT(mode == Mode::Host, "size() outside host code");
    const auto &s = cast<SizeOfExpr>(e);
    std::string n =
        s.set ? (e.type.scalar == ScalarKind::I32 ? "opd_set_size_i32("
                                                  : "opd_set_size(") +
                    CUDAModule::handle(s.set) + ")"
              : "opd_dat_extent(" + CUDAModule::handle(s.dat) + ", " +
                    std::to_string(s.dim) + ")";
    return "(" + std::string(cudaScalarType(e.type.scalar)) + ")(" + n + ")";
  }
  }
  OPDC_UNREACHABLE("unknown expression kind");
}

std::string CUDAFunctionWriter::lvalue(const ir::Expr &e) {
  switch (e.kind) {
  case ExprKind::VarRef:
  case ExprKind::KernelArg:
  case ExprKind::Index:
    return expr(e);
  default:
    OPDC_UNREACHABLE("assignment to an expression that is not an lvalue");
  }
}

std::string CUDAFunctionWriter::stencilOffset(const ir::KernelArgExpr &e) {
  bool centre = true;
  for (int64_t o : e.offset)
    centre = centre && o == 0;
  if (centre)
    return "0";
  const AccessDescriptor &a = loop->args[e.index];
  // Block dats keep the host layout: dimension 0 is unit stride in
  // elements, the others use the strides (in components) passed in.
  std::string i = std::to_string(e.index);
  std::string off = std::to_string(e.offset[0] * int64_t(a.dim));
  for (size_t d = 1; d < e.offset.size(); ++d)
    if (e.offset[d] != 0)
      off += " + " + std::to_string(e.offset[d]) + " * t" + i + "_" +
             std::to_string(d);
  return "(" + off + ")";
}

std::string CUDAFunctionWriter::kernelArg(const ir::KernelArgExpr &e,
                                          const std::string *index) {
  OPDC_ASSERT(mode == Mode::Kernel && loop, "kernel parameter outside a kernel");
  std::string i = std::to_string(e.index);
  std::string off = stencilOffset(e);
  if (index)
    return "a" + i + "[" + *index + " * s" + i + " + " + off + "]";
  if (e.type.isArray())
    return "opd::load<" + std::string(cudaScalarType(e.type.scalar)) + ", " +
           std::to_string(e.type.length) + ">(a" + i + " + " + off + ", s" +
           i + ")";
  return "a" + i + "[" + off + "]";
}

std::string CUDAFunctionWriter::arithmetic(BinaryOp op, ScalarKind k,
                                           const std::string &l,
                                           const std::string &r,
                                           SourceRange where) {
  if (isFloat(k)) {
    if (op == BinaryOp::Rem)
      return libm("fmod", k) + "(" + l + ", " + r + ")";
    return "(" + l + " " + spelling(op) + " " + r + ")";
  }
  auto checked = [&](const char *fn, const std::string &msg) {
    return std::string("opd::") + fn + "(" + l + ", " + r + ", " +
           cudaStringLiteral(m.location(where) + ": " + msg) + ")";
  };
  unsigned bits = k == ScalarKind::I64 ? 64 : 32;
  switch (op) {
  case BinaryOp::Add:
    return "opd::add(" + l + ", " + r + ")";
  case BinaryOp::Sub:
    return "opd::sub(" + l + ", " + r + ")";
  case BinaryOp::Mul:
    return "opd::mul(" + l + ", " + r + ")";
  case BinaryOp::Div:
    return checked("div", "integer division by zero");
  case BinaryOp::Rem:
    return checked("rem", "integer remainder by zero");
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
    return "(" + l + " " + spelling(op) + " " + r + ")";
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    return checked(op == BinaryOp::Shl ? "shl" : "shr",
                   "shift count out of range for i" + std::to_string(bits) +
                       " (0 to " + std::to_string(bits - 1) + ")");
  default:
    break;
  }
  OPDC_UNREACHABLE("not an arithmetic operator");
}

std::string CUDAFunctionWriter::binary(const ir::BinaryExpr &e) {
  std::string l = expr(*e.lhs), r = expr(*e.rhs);
  if (e.lhs->type.isString())
    return "(std::strcmp(" + l + ", " + r + ")" +
           (e.op == BinaryOp::Eq ? " == 0)" : " != 0)");
  if (isLogical(e.op) || isComparison(e.op))
    return "(" + l + " " + spelling(e.op) + " " + r + ")";
  return arithmetic(e.op, e.lhs->type.scalar, l, r, e.range);
}

std::string CUDAFunctionWriter::castExpr(const ir::CastExpr &e) {
  std::string v = expr(*e.operand);
  ScalarKind from = e.operand->type.scalar, to = e.to();
  if (from == to)
    return v;
  std::string t = cudaScalarType(to);
  if (to == ScalarKind::Bool)
    return "(" + v + (isFloat(from) ? " != 0.0" : " != 0") + ")";
  if (isFloat(from) && isInteger(to))
    return "opd::f2i<" + t + ">(" + v + ")";
  return "(" + t + ")(" + v + ")";
}

std::string CUDAFunctionWriter::intrinsic(const ir::IntrinsicExpr &e) {
  std::vector<std::string> a;
  auto args = [&]() {
    std::string r;
    for (size_t i = 0; i < a.size(); ++i)
      r += (i ? ", " : "") + a[i];
    return r;
  };
  switch (e.id) {
  case Intrinsic::Select:
    return "(" + expr(*e.args[0]) + " ? " + expr(*e.args[1]) + " : " +
           expr(*e.args[2]) + ")";
  case Intrinsic::Idx: {
    const auto *c = dyn_cast<ConstantExpr>(e.args[0].get());
    OPDC_ASSERT(c && mode == Mode::Kernel, "idx() outside a kernel");
    return "int32_t(c" + std::to_string(c->value.asInt(0)) + ")";
  }
  case Intrinsic::Wtime:
    return "opd_rt_wtime()";
  case Intrinsic::RngUniform:
  case Intrinsic::RngNormal: {
    OPDC_ASSERT(mode == Mode::Kernel, "random numbers outside a kernel");
    unsigned dims = loop->block ? loop->block->dims : 1;
    std::string r = std::string("opd::rng(") +
                    (e.id == Intrinsic::RngNormal ? "true" : "false") + ", " +
                    expr(*e.args[0]) + ", " + expr(*e.args[1]) + ", " +
                    std::to_string(dims);
    for (unsigned d = 0; d < 3; ++d)
      r += d < dims ? ", c" + std::to_string(d) : ", 0";
    return r + ")";
  }
  default:
    break;
  }
  for (const auto &x : e.args)
    a.push_back(expr(*x));
  ScalarKind k = isFloatPredicate(e.id) ? e.args[0]->type.scalar : e.type.scalar;
  auto call = [&](const char *name) {
    return libm(name, k) + "(" + args() + ")";
  };
  switch (e.id) {
  case Intrinsic::Abs:
    return isFloat(k) ? call("fabs") : "opd::iabs(" + args() + ")";
  case Intrinsic::Min:
    return "opd::vmin(" + args() + ")";
  case Intrinsic::Max:
    return "opd::vmax(" + args() + ")";
  case Intrinsic::IsNan:
    return "opd::is_nan(" + args() + ")";
  case Intrinsic::IsFinite:
    return "opd::is_finite(" + args() + ")";
  default:
    // The C library's functions (ast/ScalarSemantics.h), CUDA's on the
    // device.
    if (const char *name = scalar::libmName(e.id))
      return call(name);
    break;
  }
  OPDC_UNREACHABLE("unknown intrinsic");
}

} // namespace opdc
