// CUDAHostStmts.cpp - Host-only statements of an IR function as C++.
// SPDX-License-Identifier: Apache-2.0
//
// Loops go to CUDALoops.cpp. Every other host statement (swap, dat I/O,
// print, the tridiagonal solve, the tape and the checkpointed loop) is
// lowered to the host-program form (codegen/common/HostProgram.h), the
// protocol the CPU backend prints too, and printed here as C++ calls into
// the runtime (opd_rt.h) and lib/cuda/opd_cuda.cuh. The printer decides
// nothing; residency operations become opd::dat_to_host (the host copy made
// current before the runtime reads it) and opd::dat_host_changed (the
// device copy stale after the runtime wrote the host's). The tridiagonal
// solve stays on the device (HostTraits::deviceSolves: opd::solve_
// tridiagonal of lib/cuda/opd_cuda_tridiag.cuh).
#include "codegen/cuda/CUDAEmitter.h"
#include "codegen/cuda/CUDALoopWriter.h"

#include "codegen/common/HostProgram.h"
#include "support/Assert.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using llvm::cast;
using namespace ir;

// Element i of a host variable (a scalar's only one) as 64 bits.
std::string CUDAFunctionWriter::bits(unsigned slot, unsigned i) {
  const Type &t = fn.vars[slot].type;
  std::string v = var(slot), et = cudaScalarType(t.scalar);
  if (t.isArray())
    v += "[" + std::to_string(i) + "]";
  return "opd::to_bits<" + et + ">(" + v + ")";
}

void CUDAFunctionWriter::setBits(unsigned slot, unsigned i,
                                 const std::string &from, int indent) {
  const Type &t = fn.vars[slot].type;
  std::string v = var(slot);
  if (t.isArray())
    v += "[" + std::to_string(i) + "]";
  line(indent, v + " = opd::from_bits<" + cudaScalarType(t.scalar) + ">(" +
                   from + ");");
}

struct CUDAFunctionWriter::HostPrinter {
  CUDAFunctionWriter &w;
  const host::Program &p;
  std::vector<std::string> names;

  static const char *typeName(host::Ty t) {
    switch (t) {
    case host::Ty::I32:
      return "int32_t";
    case host::Ty::I64:
      return "int64_t";
    case host::Ty::W64:
      return "uint64_t";
    case host::Ty::Ptr:
      return "void *";
    }
    OPDC_UNREACHABLE("unknown host type");
  }

  void declareLocals(int in) {
    for (const host::Local &l : p.locals) {
      std::string name = "opd_" + cudaIdent(l.name);
      if (!l.exactName)
        name += std::to_string(w.temps++);
      if (l.isTable()) {
        // A row a line.
        std::string rowBreak = "\n" + std::string(size_t(in + 1) * 2, ' ');
        w.line(in, "static " + l.table.text + " " + name + "[" +
                       std::to_string(l.length) + "] = {" + rowBreak +
                       rowsList(l.table, rowBreak) + "};");
        names.push_back(name);
        continue;
      }
      std::string type = l.ty == host::Ty::Ptr && !l.pointee.empty()
                             ? l.pointee + " *"
                             : std::string(typeName(l.ty)) + " ";
      w.line(in, (l.persistent ? "static " : "") + type + name +
                     (l.length ? "[" + std::to_string(l.length) + "] = {};"
                               : " = {};"));
      names.push_back(name);
    }
  }

  std::string convert(const ir::Expr &x, host::Operand::Conv c) {
    std::string v = w.expr(x);
    using C = host::Operand::Conv;
    switch (c) {
    case C::None:
      return v;
    case C::ToI64:
      return "int64_t(" + v + ")";
    case C::ToI32:
      return "int32_t(" + v + ")";
    case C::ToF64:
      return "double(" + v + ")";
    }
    OPDC_UNREACHABLE("unknown conversion");
  }

  // Tables an operand needs are declared on lines before the statement
  // that uses them, in the same block.
  std::string operand(const host::Operand &o, int in) {
    using K = host::Operand::Kind;
    switch (o.kind) {
    case K::Int:
      if (!o.text.empty())
        return o.text + "(" + std::to_string(o.value) + ")";
      return o.ty == host::Ty::I32 ? std::to_string(o.value)
                                   : "INT64_C(" + std::to_string(o.value) + ")";
    case K::Str:
      return cudaStringLiteral(o.text);
    case K::Null:
      return "nullptr";
    case K::Handle:
      return o.dat   ? CUDAModule::handle(o.dat)
             : o.set ? CUDAModule::handle(o.set)
             : o.map ? CUDAModule::handle(o.map)
                     : CUDAModule::handle(o.block);
    case K::Dats: {
      if (o.dats.empty())
        return "nullptr";
      std::string name = "opd_dats" + std::to_string(w.temps++), list;
      for (const ir::Dat *d : o.dats)
        list += (list.empty() ? "" : ", ") + CUDAModule::handle(d);
      w.line(in, "opd_dat *const " + name + "[] = {" + list + "};");
      return name;
    }
    case K::Bytes: {
      std::string name = "opd_" + cudaIdent(o.text) + std::to_string(w.temps++),
                  list;
      for (uint8_t v : o.bytes)
        list += (list.empty() ? "" : ", ") + std::to_string(v);
      w.line(in, "static const uint8_t " + name + "[] = {" + list + "};");
      return name;
    }
    case K::Local:
      return names[size_t(o.local)];
    case K::LocalAt:
      return names[size_t(o.local)] + "[" + std::to_string(o.value) + "]";
    case K::LocalAddr:
      return (p.locals[size_t(o.local)].length ? "" : "&") +
             names[size_t(o.local)];
    case K::Diff:
      return "(" + names[size_t(o.local)] + " - " + names[size_t(o.other)] +
             ")";
    case K::Expr:
      return convert(*o.expr, o.conv);
    case K::VarBits:
      return w.bits(o.var, unsigned(o.value));
    case K::VarAddr:
      return w.fn.vars[o.var].type.isArray() ? w.var(o.var) + ".v"
                                             : "&" + w.var(o.var);
    case K::Plus:
      return "(" + operand(o.parts[0], in) + " + " + std::to_string(o.value) +
             ")";
    case K::I64s: {
      std::string name = "opd_" + o.text + std::to_string(w.temps++), list;
      for (int64_t v : o.ints)
        list +=
            (list.empty() ? "" : ", ") + ("INT64_C(" + std::to_string(v) + ")");
      w.line(in, "static const int64_t " + name + "[] = {" + list + "};");
      return name;
    }
    case K::Rows: {
      std::string name = "opd_rows" + std::to_string(w.temps++);
      w.line(in, "static const " + o.text + " " + name + "[] = {" +
                     rowsList(o) + "};");
      return name;
    }
    }
    OPDC_UNREACHABLE("unknown operand");
  }

  // The initialiser of an array of structs, a row in braces, and the
  // fields named `x[0]`, `x[1]`, ... (an array among the fields) too.
  static std::string rowsList(const host::Operand &o,
                              const std::string &rowBreak = " ") {
    std::string list;
    size_t n = o.fields.size();
    std::vector<std::pair<unsigned, int>> at = host::rowFields(o);
    for (size_t i = 0; i < o.ints.size(); ++i) {
      size_t f = i % n;
      list += f ? ", " : (i ? "," + rowBreak + "{" : "{");
      if (at[f].second == 0)
        list += "{";
      list += o.fields[f] == host::Ty::Ptr ? "nullptr"
              : o.fields[f] == host::Ty::I32
                  ? std::to_string(o.ints[i])
                  : "INT64_C(" + std::to_string(o.ints[i]) + ")";
      if (at[f].second >= 0 && (f + 1 == n || at[f + 1].second <= 0))
        list += "}";
      if (f == n - 1)
        list += "}";
    }
    return list;
  }

  std::string call(const std::string &fn, const std::vector<host::Operand> &as,
                   int in) {
    std::string list;
    for (const host::Operand &o : as)
      list += (list.empty() ? "" : ", ") + operand(o, in);
    return fn + "(" + list + ")";
  }

  static const char *predText(host::Pred pr) {
    switch (pr) {
    case host::Pred::Eq:
      return " == ";
    case host::Pred::Ne:
      return " != ";
    case host::Pred::Lt:
      return " < ";
    case host::Pred::Gt:
      return " > ";
    case host::Pred::Ge:
      return " >= ";
    }
    OPDC_UNREACHABLE("unknown predicate");
  }

  void ops(const std::vector<host::Op> &os, int in) {
    for (const host::Op &o : os)
      op(o, in);
  }

  void op(const host::Op &o, int in) {
    switch (o.kind) {
    case host::Op::Kind::Call: {
      std::string c = call(o.fn, o.args, in);
      w.line(in,
             (o.result >= 0 ? names[size_t(o.result)] + " = " : "") + c + ";");
      return;
    }
    case host::Op::Kind::Store: {
      std::string v = operand(o.args[0], in);
      const std::string &n = names[size_t(o.local)];
      w.line(in, (p.locals[size_t(o.local)].length
                      ? n + "[" + std::to_string(o.index) + "]"
                      : n) +
                     " = " + v + ";");
      return;
    }
    case host::Op::Kind::StoreField:
      w.line(in, names[size_t(o.local)] + "[" + std::to_string(o.index) + "]." +
                     p.locals[size_t(o.local)].table.names[size_t(o.field)] +
                     " = " + operand(o.args[0], in) + ";");
      return;
    case host::Op::Kind::SetVar:
      w.line(in, w.var(o.var) + " = " + cudaValueType(w.fn.vars[o.var].type) +
                     "(" + operand(o.args[0], in) + ");");
      return;
    case host::Op::Kind::SetVarBits:
      w.setBits(o.var, unsigned(o.index), operand(o.args[0], in), in);
      return;
    case host::Op::Kind::Run:
      w.body(*o.body, in);
      return;
    case host::Op::Kind::If: {
      std::string l = operand(o.args[0], in), r = operand(o.args[1], in);
      w.line(in, "if (" + l + predText(o.pred) + r + ") {");
      ops(o.then, in + 1);
      if (!o.otherwise.empty()) {
        w.line(in, "} else {");
        ops(o.otherwise, in + 1);
      }
      w.line(in, "}");
      return;
    }
    case host::Op::Kind::For: {
      const std::string &k = names[size_t(o.local)];
      std::string lo = operand(o.args[0], in), hi = operand(o.args[1], in);
      w.line(in, "for (" + k + " = " + lo + "; " + k + " < " + hi + "; ++" + k +
                     ") {");
      ops(o.then, in + 1);
      w.line(in, "}");
      return;
    }
    case host::Op::Kind::Dispatch: {
      const std::string &r = names[size_t(o.result)];
      w.line(in, "for (;;) {");
      w.line(in + 1, r + " = " + call(o.fn, o.args, in + 1) + ";");
      std::string chain = "if";
      for (const auto &[value, body] : o.cases) {
        w.line(in + 1,
               chain + " (" + r + " == " + std::to_string(value) + ") {");
        ops(body, in + 2);
        w.line(in + 1, "}");
        chain = "else if";
      }
      w.line(in + 1, "else break;");
      w.line(in, "}");
      return;
    }
    case host::Op::Kind::NeedHost:
      w.line(in, "opd::dat_to_host(" + CUDAModule::handle(o.dat) + ");");
      return;
    case host::Op::Kind::HostWrote:
      w.line(in, "opd::dat_host_changed(" + CUDAModule::handle(o.dat) + ");");
      return;
    case host::Op::Kind::Combine: {
      const Type &t = w.fn.vars[o.var].type;
      std::string v = w.var(o.var);
      if (t.isArray())
        v += "[" + std::to_string(o.index) + "]";
      const char *op = cuda_loop::reduceOp(o.mode);
      w.line(in, v + " = opd::combine<" + op + ">(" + v +
                     ", static_cast<const " + cudaScalarType(t.scalar) +
                     " *>(" + operand(o.args[0], in) + ")[" +
                     operand(o.args[1], in) + " * " + std::to_string(o.dim) +
                     " + " + std::to_string(o.index) + "]);");
      return;
    }
    case host::Op::Kind::Phase:
      OPDC_UNREACHABLE("a phase inside an operation");
    }
  }
};

void CUDAFunctionWriter::hostStmt(const ir::Stmt &s, int indent) {
  if (s.kind == StmtKind::ParLoop)
    return emitCUDALoop(*this, cast<ParLoopStmt>(s), indent);
  OPDC_ASSERT(host::isProtocolStmt(s), "unknown host statement");
  host::Program p;
  host::HostTraits traits;
  traits.deviceCopies = true;
  traits.deviceSolves = true;
  if (!host::lowerHostStmt(fn, s, traits, m.diags, p)) {
    m.failed = true;
    return;
  }
  line(indent, "{");
  printHostProgram(p, indent + 1);
  line(indent, "}");
}

std::vector<std::string>
CUDAFunctionWriter::printHostProgram(const host::Program &p, int indent) {
  ProgramPrinter printer(*this, p, indent);
  bool phase = printer.printToPhase(indent);
  OPDC_ASSERT(!phase, "a statement's program with a phase");
  std::vector<std::string> names;
  for (size_t l = 0; l < p.locals.size(); ++l)
    names.push_back(printer.local(int(l)));
  return names;
}

CUDAFunctionWriter::ProgramPrinter::ProgramPrinter(CUDAFunctionWriter &w,
                                                   const host::Program &p,
                                                   int indent)
    : impl(new HostPrinter{w, p, {}}) {
  impl->declareLocals(indent);
}

CUDAFunctionWriter::ProgramPrinter::~ProgramPrinter() = default;

bool CUDAFunctionWriter::ProgramPrinter::printToPhase(int indent) {
  const std::vector<host::Op> &ops = impl->p.ops;
  for (; next < ops.size(); ++next) {
    if (ops[next].kind == host::Op::Kind::Phase) {
      ++next;
      return true;
    }
    impl->op(ops[next], indent);
  }
  return false;
}

const std::string &CUDAFunctionWriter::ProgramPrinter::local(int l) const {
  return impl->names[size_t(l)];
}

} // namespace opdc
