// HostProgram.cpp - The host-program form as text (tests and debugging).
// SPDX-License-Identifier: Apache-2.0
#include "codegen/common/HostProgram.h"

namespace opdc::host {

Operand Operand::i32(int64_t v) {
  Operand o;
  o.kind = Kind::Int;
  o.ty = Ty::I32;
  o.value = v;
  return o;
}
Operand Operand::i64(int64_t v) {
  Operand o = i32(v);
  o.ty = Ty::I64;
  return o;
}
Operand Operand::str(std::string s) {
  Operand o;
  o.kind = Kind::Str;
  o.ty = Ty::Ptr;
  o.text = std::move(s);
  return o;
}
Operand Operand::null() {
  Operand o;
  o.kind = Kind::Null;
  o.ty = Ty::Ptr;
  return o;
}
Operand Operand::handle(const ir::Dat *d) {
  Operand o = null();
  o.kind = Kind::Handle;
  o.dat = d;
  return o;
}
Operand Operand::enumValue(std::string ctype, int64_t v) {
  Operand o = i32(v);
  o.text = std::move(ctype);
  return o;
}
Operand Operand::handle(const ir::Set *s) {
  Operand o = null();
  o.kind = Kind::Handle;
  o.set = s;
  return o;
}
Operand Operand::handle(const ir::Map *m) {
  Operand o = null();
  o.kind = Kind::Handle;
  o.map = m;
  return o;
}
Operand Operand::handle(const ir::Block *b) {
  Operand o = null();
  o.kind = Kind::Handle;
  o.block = b;
  return o;
}
Operand Operand::datList(const std::vector<ir::Dat *> &ds) {
  Operand o = null();
  o.kind = Kind::Dats;
  o.dats.assign(ds.begin(), ds.end());
  return o;
}
Operand Operand::byteTable(std::string hint, std::vector<uint8_t> b) {
  Operand o = null();
  o.kind = Kind::Bytes;
  o.text = std::move(hint);
  o.bytes = std::move(b);
  return o;
}
Operand Operand::read(int l) {
  Operand o;
  o.kind = Kind::Local;
  o.local = l;
  return o;
}
Operand Operand::at(int l, int64_t index) {
  Operand o = read(l);
  o.kind = Kind::LocalAt;
  o.value = index;
  return o;
}
Operand Operand::addr(int l) {
  Operand o = read(l);
  o.kind = Kind::LocalAddr;
  o.ty = Ty::Ptr;
  return o;
}
Operand Operand::diff(int l, int minus) {
  Operand o = read(l);
  o.kind = Kind::Diff;
  o.other = minus;
  return o;
}
Operand Operand::ir(const ir::Expr &e, Conv c) {
  Operand o;
  o.kind = Kind::Expr;
  o.expr = &e;
  o.conv = c;
  return o;
}
Operand Operand::varBits(unsigned slot, unsigned element) {
  Operand o;
  o.kind = Kind::VarBits;
  o.var = slot;
  o.value = element;
  return o;
}
Operand Operand::varAddr(unsigned slot) {
  Operand o = null();
  o.kind = Kind::VarAddr;
  o.var = slot;
  return o;
}

Operand Operand::plus(Operand x, int64_t c) {
  if (c == 0)
    return x;
  Operand o;
  o.kind = Kind::Plus;
  o.value = c;
  o.parts.push_back(std::move(x));
  return o;
}
Operand Operand::table(std::string hint, std::vector<int64_t> v) {
  Operand o = null();
  o.kind = Kind::I64s;
  o.text = std::move(hint);
  o.ints = std::move(v);
  return o;
}
Operand Operand::rows(std::string ctype, std::vector<Ty> fields,
                      std::vector<int64_t> values) {
  Operand o = null();
  o.kind = Kind::Rows;
  o.text = std::move(ctype);
  o.fields = std::move(fields);
  o.ints = std::move(values);
  return o;
}

Op call(std::string fn, std::vector<Operand> args, int result) {
  Op o;
  o.kind = Op::Kind::Call;
  o.fn = std::move(fn);
  o.args = std::move(args);
  o.result = result;
  return o;
}

Op residency(Op::Kind k, const ir::Dat *d) {
  Op o;
  o.kind = k;
  o.dat = d;
  return o;
}

Op store(int local, int64_t index, Operand v) {
  Op o;
  o.kind = Op::Kind::Store;
  o.local = local;
  o.index = index;
  o.args.push_back(std::move(v));
  return o;
}

Op run(const ir::Body &b) {
  Op o;
  o.kind = Op::Kind::Run;
  o.body = &b;
  return o;
}

Op setVar(unsigned var, Operand v) {
  Op o;
  o.kind = Op::Kind::SetVar;
  o.var = var;
  o.args.push_back(std::move(v));
  return o;
}

Op setVarBits(unsigned var, unsigned element, Operand bits) {
  Op o;
  o.kind = Op::Kind::SetVarBits;
  o.var = var;
  o.index = element;
  o.args.push_back(std::move(bits));
  return o;
}

Op ifThen(Operand l, Pred p, Operand r, std::vector<Op> then,
          std::vector<Op> otherwise) {
  Op o;
  o.kind = Op::Kind::If;
  o.args = {std::move(l), std::move(r)};
  o.pred = p;
  o.then = std::move(then);
  o.otherwise = std::move(otherwise);
  return o;
}

Op forRange(int local, Operand lo, Operand hi, std::vector<Op> body) {
  Op o;
  o.kind = Op::Kind::For;
  o.local = local;
  o.args = {std::move(lo), std::move(hi)};
  o.then = std::move(body);
  return o;
}

Op storeField(int table, int64_t row, int field, Operand v) {
  Op o = store(table, row, std::move(v));
  o.kind = Op::Kind::StoreField;
  o.field = field;
  return o;
}

std::vector<std::pair<unsigned, int>> rowFields(const Operand &rows) {
  auto array = [&](size_t f) {
    if (f >= rows.names.size())
      return std::string();
    const std::string &n = rows.names[f];
    return n.find('[') == std::string::npos ? std::string()
                                            : n.substr(0, n.find('['));
  };
  std::vector<std::pair<unsigned, int>> at;
  unsigned next = 0;
  for (size_t f = 0; f < rows.fields.size(); ++f) {
    std::string a = array(f);
    if (!a.empty() && f > 0 && array(f - 1) == a)
      at.push_back({at.back().first, at.back().second + 1});
    else
      at.push_back({next++, a.empty() ? -1 : 0});
  }
  return at;
}

std::string handleName(const Operand &o) {
  return o.dat     ? o.dat->name
         : o.set   ? o.set->name
         : o.map   ? o.map->name
         : o.block ? o.block->name
                   : "?";
}

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
    return handleName(o);
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
    return std::string("expr") + (o.conv == Operand::Conv::ToI64   ? ":i64"
                                  : o.conv == Operand::Conv::ToI32 ? ":i32"
                                  : o.conv == Operand::Conv::ToF64 ? ":f64"
                                                                   : "");
  case K::VarBits:
    return "bits(var" + std::to_string(o.var) + "[" + std::to_string(o.value) +
           "])";
  case K::VarAddr:
    return "&var" + std::to_string(o.var);
  case K::Plus:
    return operand(p, o.parts[0]) + " + " + std::to_string(o.value);
  case K::I64s:
  case K::Rows: {
    std::string r = o.kind == K::Rows ? o.text + "[" : "i64[";
    for (size_t i = 0; i < o.ints.size(); ++i)
      r += (i ? ", " : "") + std::to_string(o.ints[i]);
    return r + "]";
  }
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
  case Pred::Gt:
    return ">";
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
    case Op::Kind::StoreField:
      line(localName(p, o.local) + "[" + std::to_string(o.index) + "]." +
           std::to_string(o.field) + " = " + operand(p, o.args[0]));
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
    case Op::Kind::Combine:
      line("var" + std::to_string(o.var) + "[" + std::to_string(o.index) +
           "] " +
           std::string(o.mode == ir::AccessMode::Min   ? "min"
                       : o.mode == ir::AccessMode::Max ? "max"
                                                       : "+") +
           "= " + operand(p, o.args[0]) + "[" + operand(p, o.args[1]) + " * " +
           std::to_string(o.dim) + " + " + std::to_string(o.index) + "]");
      break;
    case Op::Kind::Phase:
      line("phase");
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
