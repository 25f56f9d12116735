// IRPrinter.cpp - Deterministic text form of the Program IR (--emit=ir).
// SPDX-License-Identifier: Apache-2.0
//
// Format. Globals first, one per line, grouped by kind in this order and in
// source order within a kind:
//
//   program airfoil
//
//   const gam: f64 = 1.399999976158142
//   param niter: i32 = 1000
//   set nodes from meshfile              (or: set cells size nx * ny)
//   map pedge: edges -> nodes[2] from meshfile
//   map pfill: cells -> nodes[4] filled-by-program
//   block grid[2]
//   stencil cross[2] = [(0, 0), (1, 0), (-1, 0)]
//   dat x: nodes f64[2] from meshfile
//   dat q: cells f64[4] fill [1.0, 0.0, 0.0, 2.5]
//   dat u: grid f64 size [nx, ny] halo [1, 1] : [1, 1] base [0, 0] zero
//   dat dJ.x: nodes f64[2] zero derivative-of x
//
// then fns, kernels, procs and main, separated by blank lines:
//
//   kernel @res_calc(%x1: read f64[2], %u: read f64 @cross, %r: inc f64) {
//     let %dx: f64 = %x1[0] - %x2[0]        (var for mutable slots)
//     %r += %dx * 0.5
//     for %n: i32 in 0 .. 4 { ... }         (always half-open, step 1)
//   }
//   fn @sq(%x: f64) -> f64 { return %x * %x }
//   main {
//     loop @res_calc over edges
//       arg 0: x[pedge[0]]  indirect    read  f64[2] 16B
//       arg 1: pedge        map-direct  read  i32[2] 8B
//       arg 2: 0.5 * dt     global-read read  f64 8B
//       arg 3: %rms         reduction   sum   f64 8B
//     loop @jacobi over grid[1 .. nx - 1, 1 .. ny - 1]
//       arg 0: u@cross      stencil     read  f64 8B
//     loop @init over grid                  (whole block)
//     solve tridiagonal(a, b, c, d) along 0 over grid
//     swap(u, u2)
//     write q to "q.h5"                     (read q from ...)
//     print(%x, 1)                          (printf("%d\n", %i))
//     %J = adjoint @objective(%a) wrt (x -> dJ.x, @objective.%alpha ->
//          %dJ.alpha) checkpoints 10        (one line)
//     %d = tangent @objective(%a) along (x: dx, @objective.%alpha: 1.0)
//   }
//
// Names: `@` for functions, `%` for local slots and kernel parameters (a
// repeated name gets `.1`, `.2`, ... in slot order), globals bare. Loop
// arguments print as written (x[pedge[0]], u@cross, pedge, %rms or the
// global expression), then kind, mode, element type and bytes per element.
//
// Expressions are typed by construction; the printer shows each constant's
// type in its spelling (`1` i32, `1i64`, `1.0` f64, `1.0f` f32, `true`),
// every conversion as a cast `f64(%i)`, declarations with their type, and
// parenthesises by precedence. Floats use the shortest digits that read back
// exactly (in their own precision), in fixed notation for exponents -4..15
// and scientific notation otherwise (`1e-05`, `1e+30`). With a SourceManager, kernel headers and loop lines end with
// `; file:line:col` (basename only), aligned to column 48 when shorter;
// nothing else prints a location, so golden tests stay stable.
#include "ir/IRPrinter.h"

#include "ir/IR.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

namespace {

/// Shortest decimal that reads back as the same value: the fewest
/// significant digits (up to \p maxDigits) that round-trip through
/// \p roundTrips, shown in fixed notation for exponents -4..15 and in
/// scientific notation otherwise (as Python's repr does).
template <typename RoundTrips>
std::string shortestDecimal(double d, int maxDigits, RoundTrips roundTrips) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  int digits = maxDigits;
  for (int p = 1; p <= maxDigits; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, d);
    if (roundTrips(buf)) {
      digits = p;
      break;
    }
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, d);
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  std::string s;
  if (exponent >= -4 && exponent < 16) {
    int decimals = std::max(digits - 1 - exponent, 0);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, d);
    s = buf;
    if (s.find('.') == std::string::npos)
      s += ".0";
  } else {
    // d.ddde+XX: keep the mantissa as printed, drop a redundant ".0".
    s = buf;
  }
  return s;
}

std::string shortestDouble(double d) {
  return shortestDecimal(
      d, 17, [d](const char *text) { return std::strtod(text, nullptr) == d; });
}

std::string shortestFloat(float f) {
  return shortestDecimal(double(f), 9, [f](const char *text) {
    return std::strtof(text, nullptr) == f;
  });
}

std::string componentToString(const ConstValue &v, unsigned i) {
  switch (v.type.scalar) {
  case ScalarKind::Bool:
    return v.asInt(i) ? "true" : "false";
  case ScalarKind::I32:
    return std::to_string(v.asInt(i));
  case ScalarKind::I64:
    return std::to_string(v.asInt(i)) + "i64";
  case ScalarKind::F32:
    return shortestFloat(float(v.asDouble(i))) + "f";
  case ScalarKind::F64:
    return shortestDouble(v.asDouble(i));
  }
  return "?";
}


} // namespace

std::string constToString(const ConstValue &v) {
  switch (v.type.kind) {
  case Type::Kind::String:
    return quoteString(v.text);
  case Type::Kind::Scalar:
    return componentToString(v, 0);
  case Type::Kind::Array: {
    std::string out = "[";
    for (unsigned i = 0; i < v.type.length; ++i) {
      if (i)
        out += ", ";
      out += componentToString(v, i);
    }
    return out + "]";
  }
  case Type::Kind::Void:
    return "void";
  case Type::Kind::Error:
    break;
  }
  return "<invalid>";
}

//===----------------------------------------------------------------------===//
// Printer
//===----------------------------------------------------------------------===//

namespace {

constexpr unsigned LocColumn = 48;

/// Unique printed names (without the `%`) for a function's kernel parameters
/// and variable slots.
struct NameTable {
  std::vector<std::string> params, vars;

  explicit NameTable(const Function *f) {
    if (!f)
      return;
    std::set<std::string> used;
    auto unique = [&](const std::string &base) {
      std::string n = base.empty() ? "v" : base;
      for (unsigned k = 1; used.count(n); ++k)
        n = base + "." + std::to_string(k);
      used.insert(n);
      return n;
    };
    for (const auto &p : f->kernelParams)
      params.push_back(unique(p.name));
    for (const auto &v : f->vars)
      vars.push_back(unique(v.name));
  }
  std::string var(int slot) const {
    if (slot >= 0 && unsigned(slot) < vars.size())
      return "%" + vars[slot];
    return "%" + std::to_string(slot);
  }
  std::string param(unsigned i) const {
    if (i < params.size())
      return "%" + params[i];
    return "%arg" + std::to_string(i);
  }
};

std::string typeToString(Type t) { return t.str(); }

std::string elemToString(ScalarKind s, unsigned dim) {
  std::string out = scalarName(s);
  if (dim != 1)
    out += "[" + std::to_string(dim) + "]";
  return out;
}

int precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return 1;
  case BinaryOp::And:
    return 2;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return 3;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return 4;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 5;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem:
    return 6;
  }
  return 0;
}

constexpr int UnaryPrecedence = 7;
constexpr int PostfixPrecedence = 8;

int precedenceOf(const Expr &e) {
  if (auto *b = dyn_cast<BinaryExpr>(&e))
    return precedence(b->op);
  if (isa<UnaryExpr>(&e))
    return UnaryPrecedence;
  if (auto *c = dyn_cast<ConstantExpr>(&e)) {
    // A negative constant reads like a unary minus.
    if (c->value.type.isScalar() && c->value.type.scalar != ScalarKind::Bool &&
        componentToString(c->value, 0)[0] == '-')
      return UnaryPrecedence;
  }
  return PostfixPrecedence;
}

class Printer {
public:
  Printer(llvm::raw_ostream &os, const SourceManager *sm) : os(os), sm(sm) {}

  void program(const Program &p);
  void function(const Function &f);
  std::string expr(const Expr &e, const NameTable &names);

private:
  /// Returns true if it printed anything.
  bool globals(const Program &p);
  void body(const Body &b, const Function &f, const NameTable &names,
            unsigned indent);
  void stmt(const Stmt &s, const Function &f, const NameTable &names,
            unsigned indent);
  void parLoop(const ParLoopStmt &l, const NameTable &names, unsigned indent);
  std::string argText(const AccessDescriptor &a, const NameTable &names);
  std::string ranges(const std::vector<LoopRange> &rs, const NameTable &names);
  std::string operand(const ExprPtr &e, const NameTable &names, int prec,
                      bool rightSide = false);
  std::string exprOrNull(const ExprPtr &e, const NameTable &names) {
    return e ? expr(*e, names) : "<null>";
  }
  std::string target(const DerivTarget &t, const Function *proc);
  /// Writes \p line, then the location comment of \p r if any, then '\n'.
  void lineWithLoc(const std::string &line, SourceRange r);
  void indentBy(unsigned n) { os.indent(n * 2); }

  llvm::raw_ostream &os;
  const SourceManager *sm;
};

void Printer::lineWithLoc(const std::string &line, SourceRange r) {
  os << line;
  if (sm && r.valid() && sm->bufferOf(r.begin) != 0) {
    auto [lineNo, col] = sm->lineAndColumn(r.begin);
    llvm::StringRef name = sm->bufferName(sm->bufferOf(r.begin));
    unsigned width = unsigned(line.size());
    os.indent(width < LocColumn ? LocColumn - width : 2);
    os << "; " << llvm::sys::path::filename(name) << ":" << lineNo << ":"
       << col;
  }
  os << "\n";
}

std::string Printer::operand(const ExprPtr &e, const NameTable &names, int prec,
                             bool rightSide) {
  if (!e)
    return "<null>";
  std::string s = expr(*e, names);
  int p = precedenceOf(*e);
  if (p < prec || (rightSide && p == prec))
    return "(" + s + ")";
  return s;
}

std::string Printer::expr(const Expr &e, const NameTable &names) {
  auto list = [&](const std::vector<ExprPtr> &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out += ", ";
      out += exprOrNull(v[i], names);
    }
    return out;
  };
  switch (e.kind) {
  case ExprKind::Constant:
    return constToString(cast<ConstantExpr>(e).value);
  case ExprKind::VarRef:
    return names.var(int(cast<VarRefExpr>(e).slot));
  case ExprKind::ParamRef: {
    const auto &p = cast<ParamRefExpr>(e);
    return p.param ? p.param->name : "<null param>";
  }
  case ExprKind::KernelArg: {
    const auto &a = cast<KernelArgExpr>(e);
    std::string out = names.param(a.index);
    if (!a.offset.empty()) {
      out += "(";
      for (size_t i = 0; i < a.offset.size(); ++i) {
        if (i)
          out += ", ";
        out += std::to_string(a.offset[i]);
      }
      out += ")";
    }
    return out;
  }
  case ExprKind::Unary: {
    const auto &u = cast<UnaryExpr>(e);
    return std::string(spelling(u.op)) +
           operand(u.operand, names, UnaryPrecedence + 1);
  }
  case ExprKind::Binary: {
    const auto &b = cast<BinaryExpr>(e);
    int p = precedence(b.op);
    return operand(b.lhs, names, p) + " " + spelling(b.op) + " " +
           operand(b.rhs, names, p, /*rightSide=*/true);
  }
  case ExprKind::Cast: {
    const auto &c = cast<CastExpr>(e);
    return std::string(scalarName(c.to())) + "(" +
           exprOrNull(c.operand, names) + ")";
  }
  case ExprKind::Index: {
    const auto &i = cast<IndexExpr>(e);
    return operand(i.base, names, PostfixPrecedence) + "[" +
           exprOrNull(i.index, names) + "]";
  }
  case ExprKind::Intrinsic: {
    const auto &i = cast<IntrinsicExpr>(e);
    return std::string(intrinsicName(i.id)) + "(" + list(i.args) + ")";
  }
  case ExprKind::Call: {
    const auto &c = cast<CallExpr>(e);
    return "@" + (c.callee ? c.callee->name : std::string("<null>")) + "(" +
           list(c.args) + ")";
  }
  case ExprKind::ArrayLit:
    return "[" + list(cast<ArrayLitExpr>(e).elements) + "]";
  case ExprKind::SizeOf: {
    const auto &s = cast<SizeOfExpr>(e);
    if (s.set)
      return "size(" + s.set->name + ")";
    if (s.dat)
      return "size(" + s.dat->name + ", " + std::to_string(s.dim) + ")";
    return "size(<null>)";
  }
  }
  return "<?>";
}

std::string Printer::ranges(const std::vector<LoopRange> &rs,
                            const NameTable &names) {
  if (rs.empty())
    return "";
  std::string out = "[";
  for (size_t i = 0; i < rs.size(); ++i) {
    if (i)
      out += ", ";
    out += exprOrNull(rs[i].lo, names) + " .. " + exprOrNull(rs[i].hi, names);
  }
  return out + "]";
}

std::string Printer::argText(const AccessDescriptor &a,
                             const NameTable &names) {
  auto datName = [&] { return a.dat ? a.dat->name : std::string("<null>"); };
  auto mapName = [&] { return a.map ? a.map->name : std::string("<null>"); };
  switch (a.kind) {
  case ArgKind::Direct:
    return datName();
  case ArgKind::Indirect:
    return datName() + "[" + mapName() + "[" + std::to_string(a.mapIndex) +
           "]]";
  case ArgKind::Stencil:
    return datName() + "@" + (a.stencil ? a.stencil->name : "<null>");
  case ArgKind::MapDirect:
    return mapName();
  case ArgKind::GlobalRead:
    return exprOrNull(a.value, names);
  case ArgKind::Reduction:
    return names.var(a.var);
  }
  return "<?>";
}

void Printer::parLoop(const ParLoopStmt &l, const NameTable &names,
                      unsigned indent) {
  std::string head(indent * 2, ' ');
  head +=
      "loop @" + (l.kernel ? l.kernel->name : std::string("<null>")) + " over ";
  if (l.set)
    head += l.set->name;
  else if (l.block)
    head += l.block->name + ranges(l.ranges, names);
  else
    head += "<null>";
  lineWithLoc(head, l.range);

  std::vector<std::string> texts;
  size_t width = 0;
  for (const auto &a : l.args) {
    texts.push_back(argText(a, names));
    width = std::max(width, texts.back().size());
  }
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    indentBy(indent + 1);
    std::string kind = argKindName(a.kind);
    std::string mode = accessModeName(a.mode);
    os << "arg " << i << ": " << texts[i];
    os.indent(unsigned(width - texts[i].size()) + 2);
    os << kind;
    os.indent(unsigned(12 - std::min<size_t>(kind.size(), 11)));
    os << mode;
    os.indent(unsigned(6 - std::min<size_t>(mode.size(), 5)));
    os << elemToString(a.scalar, a.dim) << " " << a.bytes << "B\n";
  }
}

std::string Printer::target(const DerivTarget &t, const Function *proc) {
  if (t.dat)
    return t.dat->name;
  std::string procName = proc ? proc->name : "<null>";
  if (proc && t.param >= 0 && unsigned(t.param) < proc->params.size()) {
    NameTable procNames(proc);
    return "@" + procName + "." + procNames.var(int(proc->params[t.param]));
  }
  return "@" + procName + ".%arg" + std::to_string(t.param);
}

void Printer::body(const Body &b, const Function &f, const NameTable &names,
                   unsigned indent) {
  for (const auto &s : b.stmts)
    stmt(*s, f, names, indent);
}

void Printer::stmt(const Stmt &s, const Function &f, const NameTable &names,
                   unsigned indent) {
  auto list = [&](const std::vector<ExprPtr> &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out += ", ";
      out += exprOrNull(v[i], names);
    }
    return out;
  };
  auto dats = [](const std::vector<Dat *> &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out += ", ";
      out += v[i] ? v[i]->name : "<null>";
    }
    return out;
  };

  if (s.kind == StmtKind::ParLoop)
    return parLoop(cast<ParLoopStmt>(s), names, indent);

  indentBy(indent);
  switch (s.kind) {
  case StmtKind::Decl: {
    const auto &d = cast<DeclStmt>(s);
    bool isMut = d.slot < f.vars.size() && f.vars[d.slot].isMutable;
    Type t = d.slot < f.vars.size() ? f.vars[d.slot].type : Type::error();
    os << (isMut ? "var " : "let ") << names.var(int(d.slot)) << ": "
       << typeToString(t) << " = " << exprOrNull(d.init, names) << "\n";
    return;
  }
  case StmtKind::Assign: {
    const auto &a = cast<AssignStmt>(s);
    os << exprOrNull(a.target, names) << " " << spelling(a.op) << " "
       << exprOrNull(a.value, names) << "\n";
    return;
  }
  case StmtKind::Eval:
    os << exprOrNull(cast<EvalStmt>(s).expr, names) << "\n";
    return;
  case StmtKind::If: {
    const IfStmt *i = &cast<IfStmt>(s);
    os << "if " << exprOrNull(i->cond, names) << " {\n";
    for (;;) {
      body(i->thenBody, f, names, indent + 1);
      if (i->elseBody.empty())
        break;
      indentBy(indent);
      // `else if`: an else body holding exactly one if.
      if (i->elseBody.stmts.size() == 1 &&
          i->elseBody.stmts[0]->kind == StmtKind::If) {
        i = &cast<IfStmt>(*i->elseBody.stmts[0]);
        os << "} else if " << exprOrNull(i->cond, names) << " {\n";
        continue;
      }
      os << "} else {\n";
      body(i->elseBody, f, names, indent + 1);
      break;
    }
    indentBy(indent);
    os << "}\n";
    return;
  }
  case StmtKind::For: {
    const auto &l = cast<ForStmt>(s);
    Type t = l.slot < f.vars.size() ? f.vars[l.slot].type : Type::error();
    os << "for " << names.var(int(l.slot)) << ": " << typeToString(t) << " in "
       << exprOrNull(l.lo, names) << " .. " << exprOrNull(l.hi, names)
       << " {\n";
    body(l.body, f, names, indent + 1);
    indentBy(indent);
    os << "}\n";
    return;
  }
  case StmtKind::While: {
    const auto &w = cast<WhileStmt>(s);
    os << "while " << exprOrNull(w.cond, names) << " {\n";
    body(w.body, f, names, indent + 1);
    indentBy(indent);
    os << "}\n";
    return;
  }
  case StmtKind::Break:
    os << "break\n";
    return;
  case StmtKind::Continue:
    os << "continue\n";
    return;
  case StmtKind::Return: {
    const auto &r = cast<ReturnStmt>(s);
    os << "return";
    if (r.value)
      os << " " << expr(*r.value, names);
    os << "\n";
    return;
  }
  case StmtKind::ParLoop:
    return;
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    os << "swap(" << (w.a ? w.a->name : "<null>") << ", "
       << (w.b ? w.b->name : "<null>") << ")\n";
    return;
  }
  case StmtKind::Write:
  case StmtKind::Read: {
    const auto &io = cast<DatIOStmt>(s);
    os << (io.isRead() ? "read " : "write ") << dats(io.dats)
       << (io.isRead() ? " from " : " to ") << exprOrNull(io.file, names)
       << "\n";
    return;
  }
  case StmtKind::Print: {
    const auto &p = cast<PrintStmt>(s);
    if (p.formatted) {
      os << "printf(" << quoteString(p.format);
      if (!p.args.empty())
        os << ", " << list(p.args);
      os << ")\n";
    } else {
      os << "print(" << list(p.args) << ")\n";
    }
    return;
  }
  case StmtKind::Solve: {
    const auto &v = cast<SolveStmt>(s);
    os << "solve " << solverName(v.solver) << "(" << dats(v.dats) << ") along "
       << v.along << " over " << (v.block ? v.block->name : "<null>")
       << ranges(v.ranges, names) << "\n";
    return;
  }
  case StmtKind::Adjoint:
  case StmtKind::Tangent: {
    const auto &d = cast<DerivativeStmt>(s);
    bool adjoint = d.isAdjoint();
    std::string procName = d.proc ? d.proc->name : "<null>";
    os << names.var(d.resultVar) << " = " << d.keyword() << " @" << procName
       << "(" << list(d.args) << ") " << (adjoint ? "wrt" : "along") << " (";
    for (size_t i = 0; i < d.entries.size(); ++i) {
      const DerivEntry &e = d.entries[i];
      if (i)
        os << ", ";
      os << target(e.of, d.proc) << (adjoint ? " -> " : ": ");
      if (e.dat)
        os << e.dat->name;
      else if (adjoint)
        os << names.var(e.var);
      else
        os << exprOrNull(e.value, names);
    }
    os << ")";
    if (auto *a = dyn_cast<AdjointStmt>(&d); a && a->checkpoints)
      os << " checkpoints " << expr(*a->checkpoints, names);
    os << "\n";
    return;
  }
  }
}

void Printer::function(const Function &f) {
  NameTable names(&f);
  std::string head;
  switch (f.kind) {
  case FunctionKind::Kernel: {
    head = "kernel @" + f.name + "(";
    for (size_t i = 0; i < f.kernelParams.size(); ++i) {
      const KernelParam &p = f.kernelParams[i];
      if (i)
        head += ", ";
      head += names.param(unsigned(i)) + ": " + accessModeName(p.mode) + " " +
              typeToString(p.type);
      if (p.stencil)
        head += " @" + p.stencil->name;
    }
    head += ") {";
    lineWithLoc(head, f.range);
    break;
  }
  case FunctionKind::Fn:
  case FunctionKind::Proc: {
    head = std::string(functionKindName(f.kind)) + " @" + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      unsigned slot = f.params[i];
      if (i)
        head += ", ";
      Type t = slot < f.vars.size() ? f.vars[slot].type : Type::error();
      head += names.var(int(slot)) + ": " + typeToString(t);
    }
    head += ")";
    if (!f.returnType.isVoid())
      head += " -> " + typeToString(f.returnType);
    os << head << " {\n";
    break;
  }
  case FunctionKind::Main:
    os << "main {\n";
    break;
  }
  body(f.body, f, names, 1);
  os << "}\n";
}

bool Printer::globals(const Program &p) {
  NameTable none(nullptr);
  auto e = [&](const ExprPtr &x) { return exprOrNull(x, none); };
  bool any = false;
  for (const auto &c : p.consts) {
    os << "const " << c->name << ": " << typeToString(c->value.type) << " = "
       << constToString(c->value) << "\n";
    any = true;
  }
  for (const auto &x : p.params) {
    os << "param " << x->name << ": " << typeToString(x->type) << " = "
       << constToString(x->defaultValue) << "\n";
    any = true;
  }
  for (const auto &s : p.sets) {
    os << "set " << s->name;
    if (s->fromFile)
      os << " from " << e(s->fromFile);
    if (s->size)
      os << " size " << e(s->size);
    os << "\n";
    any = true;
  }
  for (const auto &m : p.maps) {
    os << "map " << m->name << ": " << (m->from ? m->from->name : "<null>")
       << " -> " << (m->to ? m->to->name : "<null>") << "[" << m->arity << "]";
    if (m->fromFile)
      os << " from " << e(m->fromFile);
    else
      os << " filled-by-program";
    os << "\n";
    any = true;
  }
  for (const auto &b : p.blocks) {
    os << "block " << b->name << "[" << b->dims << "]\n";
    any = true;
  }
  for (const auto &s : p.stencils) {
    os << "stencil " << s->name << "[" << s->dims << "] = [";
    for (size_t i = 0; i < s->points.size(); ++i) {
      if (i)
        os << ", ";
      os << "(";
      for (size_t j = 0; j < s->points[i].size(); ++j) {
        if (j)
          os << ", ";
        os << s->points[i][j];
      }
      os << ")";
    }
    os << "]\n";
    any = true;
  }
  auto ints = [](const std::vector<int64_t> &v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out += ", ";
      out += std::to_string(v[i]);
    }
    return out + "]";
  };
  for (const auto &d : p.dats) {
    os << "dat " << d->name << ": ";
    if (d->set)
      os << d->set->name;
    else if (d->block)
      os << d->block->name;
    else
      os << "<null>";
    os << " " << typeToString(d->elemType);
    if (d->block) {
      os << " size [";
      for (size_t i = 0; i < d->size.size(); ++i) {
        if (i)
          os << ", ";
        os << e(d->size[i]);
      }
      os << "] halo " << ints(d->haloMinus) << " : " << ints(d->haloPlus)
         << " base " << ints(d->base);
    }
    switch (d->init) {
    case DatInit::Zero:
      os << " zero";
      break;
    case DatInit::Fill:
      os << " fill " << e(d->initValue);
      break;
    case DatInit::File:
      os << " from " << e(d->initFile);
      break;
    }
    if (d->isDerivative)
      os << " derivative-of " << (d->primal ? d->primal->name : "<null>");
    os << "\n";
    any = true;
  }
  return any;
}

void Printer::program(const Program &p) {
  if (!p.name.empty())
    os << "program " << p.name << "\n\n";
  bool first = !globals(p);
  for (const Function *f : p.functions()) {
    if (!first)
      os << "\n";
    first = false;
    function(*f);
  }
}

} // namespace

void printIR(const Program &p, llvm::raw_ostream &os, const SourceManager *sm) {
  Printer(os, sm).program(p);
}

void printFunction(const Function &f, llvm::raw_ostream &os,
                   const SourceManager *sm) {
  Printer(os, sm).function(f);
}

std::string exprToString(const Expr &e, const Function *context) {
  NameTable names(context);
  return Printer(llvm::nulls(), nullptr).expr(e, names);
}

} // namespace opdc
