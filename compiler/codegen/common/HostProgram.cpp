// HostProgram.cpp - The host-program form as text (tests and debugging).
// SPDX-License-Identifier: Apache-2.0
#include "codegen/common/HostProgram.h"

namespace opdc::host {

namespace {

std::string localName(const Program &p, int l) {
  return "%" + p.locals[size_t(l)].name;
}

std::string operand(const Program &p, const Operand &o) {
  using K = Operand::Kind;
  switch (o.kind) {
  case K::Int:
    return (o.ty == Ty::I32 ? "i32 " : "i64 ") + std::to_string(o.value);
  case K::Str:
    return "\"" + o.text + "\"";
  case K::Null:
    return "null";
  case K::Handle:
    return o.dat->name;
  case K::Dats: {
    std::string r = "[";
    for (size_t i = 0; i < o.dats.size(); ++i)
      r += (i ? ", " : "") + o.dats[i]->name;
    return r + "]";
  }
  case K::Bytes: {
    std::string r = "bytes[";
    for (size_t i = 0; i < o.bytes.size(); ++i)
      r += (i ? ", " : "") + std::to_string(o.bytes[i]);
    return r + "]";
  }
  case K::Local:
    return localName(p, o.local);
  case K::LocalAt:
    return localName(p, o.local) + "[" + std::to_string(o.value) + "]";
  case K::LocalAddr:
    return "&" + localName(p, o.local);
  case K::Diff:
    return localName(p, o.local) + " - " + localName(p, o.other);
  case K::Expr:
    return std::string("expr") + (o.conv == Operand::Conv::ToI64     ? ":i64"
                                  : o.conv == Operand::Conv::ToI32   ? ":i32"
                                  : o.conv == Operand::Conv::Promote ? ":vararg"
                                                                     : "");
  case K::VarBits:
    return "bits(var" + std::to_string(o.var) + "[" + std::to_string(o.value) +
           "])";
  }
  return "?";
}

std::string args(const Program &p, const std::vector<Operand> &as) {
  std::string r;
  for (size_t i = 0; i < as.size(); ++i)
    r += (i ? ", " : "") + operand(p, as[i]);
  return r;
}

const char *predName(Pred pr) {
  switch (pr) {
  case Pred::Eq:
    return "==";
  case Pred::Ne:
    return "!=";
  case Pred::Lt:
    return "<";
  case Pred::Ge:
    return ">=";
  }
  return "?";
}

void ops(const Program &p, const std::vector<Op> &os, int in,
         std::string &out) {
  auto line = [&](const std::string &t) {
    out += std::string(size_t(in) * 2, ' ') + t + "\n";
  };
  for (const Op &o : os) {
    switch (o.kind) {
    case Op::Kind::Call:
      line((o.result >= 0 ? localName(p, o.result) + " = " : "") + o.fn + "(" +
           args(p, o.args) + ")");
      break;
    case Op::Kind::Store:
      line(localName(p, o.local) + "[" + std::to_string(o.index) +
           "] = " + operand(p, o.args[0]));
      break;
    case Op::Kind::SetVar:
      line("var" + std::to_string(o.var) + " = " + operand(p, o.args[0]));
      break;
    case Op::Kind::SetVarBits:
      line("var" + std::to_string(o.var) + "[" + std::to_string(o.index) +
           "] = from_bits(" + operand(p, o.args[0]) + ")");
      break;
    case Op::Kind::Run:
      line("run " + std::to_string(o.body->stmts.size()) + " statements");
      break;
    case Op::Kind::If:
      line("if " + operand(p, o.args[0]) + " " + predName(o.pred) + " " +
           operand(p, o.args[1]) + " {");
      ops(p, o.then, in + 1, out);
      if (!o.otherwise.empty()) {
        line("} else {");
        ops(p, o.otherwise, in + 1, out);
      }
      line("}");
      break;
    case Op::Kind::For:
      line("for " + localName(p, o.local) + " in " + operand(p, o.args[0]) +
           " .. " + operand(p, o.args[1]) + " {");
      ops(p, o.then, in + 1, out);
      line("}");
      break;
    case Op::Kind::Dispatch:
      line("dispatch " + localName(p, o.result) + " = " + o.fn + "(" +
           args(p, o.args) + ") {");
      for (const auto &[value, body] : o.cases) {
        line("case " + std::to_string(value) + ":");
        ops(p, body, in + 1, out);
      }
      line("}");
      break;
    case Op::Kind::NeedHost:
      line("need-host " + o.dat->name);
      break;
    case Op::Kind::HostWrote:
      line("host-wrote " + o.dat->name);
      break;
    }
  }
}

} // namespace

std::string dump(const Program &p) {
  std::string out;
  ops(p, p.ops, 0, out);
  return out;
}

} // namespace opdc::host
