// IRPrinterStmts.cpp - Text form of the Program IR: statements, loops and
// expressions (the format is described in IRPrinter.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "ir/IRPrinterImpl.h"


namespace opdc::ir::printer {

namespace {

// "a, b": the names of \p v.
std::string datList(const std::vector<Dat *> &v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      out += ", ";
    out += v[i] ? v[i]->name : "<null>";
  }
  return out;
}

int precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return 1;
  case BinaryOp::And:
    return 2;
  case BinaryOp::BitOr:
    return 3;
  case BinaryOp::BitXor:
    return 4;
  case BinaryOp::BitAnd:
    return 5;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return 6;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return 7;
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    return 8;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 9;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem:
    return 10;
  }
  return 0;
}

constexpr int UnaryPrecedence = 11;
constexpr int PostfixPrecedence = 12;

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

} // namespace

void Printer::lineWithLoc(const std::string &line, SourceRange r) {
  os << line;
  std::string at = sm && r.valid() ? sm->shortLocation(r.begin) : "";
  if (!at.empty()) {
    unsigned width = unsigned(line.size());
    os.indent(width < LocColumn ? LocColumn - width : 2);
    os << "; " << at;
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
    return exprList(v, names);
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
  auto triple = [](const std::array<int64_t, 3> &v, unsigned n) {
    std::string t = "(";
    for (unsigned d = 0; d < n; ++d)
      t += (d ? ", " : "") + std::to_string(v[d]);
    return t + ")";
  };
  const unsigned dims = l.block ? unsigned(l.block->dims) : 1;
  if (l.haloGroup) {
    const HaloGroup &g = *l.haloGroup;
    std::string h(indent * 2, ' ');
    h += std::string("halo group ") +
         (g.mode == HaloGroup::Mode::On ? "on" : "auto") + " (";
    for (size_t i = 0; i < g.dats.size(); ++i)
      h += (i ? ", " : "") +
           (g.dats[i].dat ? g.dats[i].dat->name : std::string("<null>")) +
           " " + triple(g.dats[i].depth, dims);
    h += ") cost [";
    for (size_t i = 0; i < g.loops.size(); ++i) {
      const HaloGroup::LoopCost &c = g.loops[i];
      h += (i ? ", " : "") + std::to_string(c.bytes) + "B ext " +
           std::to_string(c.extension) + " plain " +
           std::to_string(c.exchanges) + "x" + std::to_string(c.depth) +
           (c.cached ? " cached " + std::to_string(c.cached) + "B" : "");
    }
    os << h << "]\n";
  }
  std::string head(indent * 2, ' ');
  head +=
      "loop @" + (l.kernel ? l.kernel->name : std::string("<null>")) + " over ";
  if (l.set)
    head += l.set->name;
  else if (l.block)
    head += l.block->name + ranges(l.ranges, names);
  else
    head += "<null>";
  if (l.extended())
    head += " extend " + triple(l.extendLo, dims) + " " +
            triple(l.extendHi, dims);
  if (l.skew.member) {
    head += " skew";
    if (l.skew.count > 1)
      head += " group " + std::to_string(l.skew.count);
    head += " lag " + std::to_string(l.skew.lag) + " lead " +
            std::to_string(l.skew.lead) + " trail " +
            std::to_string(l.skew.trail);
    if (l.skew.cached)
      head += " cached";
    if (l.skew.needsExtension)
      head += " needs-extension";
  }
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
  case StmtKind::Swap:
  case StmtKind::Write:
  case StmtKind::Read:
  case StmtKind::Print:
  case StmtKind::Solve:
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
  case StmtKind::Tape:
  case StmtKind::Checkpoint:
    hostStmt(s, f, names, indent);
    return;
  }
}

/// The host-only statements but loops, after their line's indent.
void Printer::hostStmt(const Stmt &s, const Function &f, const NameTable &names,
                       unsigned indent) {
  auto list = [&](const std::vector<ExprPtr> &v) { return exprList(v, names); };
  // "a, b; %x, %y": the dats and variables of a tape or checkpoint.
  auto state = [&](const std::vector<Dat *> &ds,
                   const std::vector<unsigned> &vs, const NameTable &names) {
    std::string out = datList(ds);
    if (!vs.empty()) {
      out += "; ";
      for (size_t i = 0; i < vs.size(); ++i)
        out += (i ? ", " : "") + names.var(int(vs[i]));
    }
    return out;
  };

  switch (s.kind) {
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    os << "swap(" << (w.a ? w.a->name : "<null>") << ", "
       << (w.b ? w.b->name : "<null>") << ")\n";
    return;
  }
  case StmtKind::Write:
  case StmtKind::Read: {
    const auto &io = cast<DatIOStmt>(s);
    os << (io.isRead() ? "read " : "write ") << datList(io.dats);
    if (!io.ranges.empty())
      os << " over " << ranges(io.ranges, names);
    os << (io.isRead() ? " from " : " to ") << exprOrNull(io.file, names)
       << "\n";
    return;
  }
  case StmtKind::Print: {
    const auto &p = cast<PrintStmt>(s);
    if (p.formatted) {
      os << (p.to == PrintTo::Warning ? "warnf("
             : p.to == PrintTo::Error ? "failf("
                                      : "printf(")
         << quoteString(p.format);
      if (!p.args.empty())
        os << ", " << list(p.args);
      os << ")\n";
    } else {
      os << "print(" << list(p.args) << ")\n";
    }
    return;
  }
  case StmtKind::Solve:
    solveStmt(cast<SolveStmt>(s), names);
    return;
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
    derivativeStmt(cast<DerivativeStmt>(s), names);
    return;
  case StmtKind::Tape: {
    const auto &t = cast<TapeStmt>(s);
    os << "tape " << (t.push ? "push" : "pop") << " ("
       << state(t.dats, t.vars, names) << ")";
    std::string over;
    for (size_t i = 0; i < t.overwritten.size() && i < t.dats.size(); ++i)
      if (t.overwritten[i])
        over += (over.empty() ? "" : ", ") + t.dats[i]->name;
    if (!over.empty())
      os << " overwritten (" << over << ")";
    os << "\n";
    return;
  }
  case StmtKind::Checkpoint: {
    const auto &c = cast<CheckpointStmt>(s);
    os << "checkpoint " << (c.reverse ? "reverse " : "forward ")
       << names.var(int(c.slot));
    if (!c.reverse) {
      os << " in " << exprOrNull(c.lo, names) << " .. "
         << exprOrNull(c.hi, names);
      if (c.snapshots)
        os << " snapshots " << expr(*c.snapshots, names);
    }
    os << " state (" << state(c.dats, c.vars, names) << ") {\n";
    body(c.body, f, names, indent + 1);
    indentBy(indent);
    if (c.reverse) {
      os << "} reverse {\n";
      body(c.reverseBody, f, names, indent + 1);
      indentBy(indent);
    }
    if (!c.tapedBody.empty() || !c.tapedReverseBody.empty()) {
      os << "} " << (c.reverse ? "taped reverse" : "taped") << " {\n";
      body(c.reverse ? c.tapedReverseBody : c.tapedBody, f, names, indent + 1);
      indentBy(indent);
    }
    os << "}\n";
    return;
  }
  default:
    os << "<not a host statement>\n";
    return;
  }
}

void Printer::solveStmt(const SolveStmt &v, const NameTable &names) {
  if (v.solver == SolverKind::CG) {
    if (v.itersVar >= 0)
      os << "(" << names.var(v.itersVar) << ", " << names.var(v.residualVar)
         << (v.resultsAssigned ? ") := " : ") = ");
    os << "solve cg(@" << (v.op ? v.op->name : "<null>") << ", ";
    for (size_t i = 0; i < v.dats.size(); ++i)
      os << (i == 0   ? ""
             : i == 1 ? " -> "
                      : ", ")
         << (v.dats[i] ? v.dats[i]->name : "<null>");
    os << ") tol " << exprOrNull(v.tol, names) << " maxiter "
       << exprOrNull(v.maxiter, names);
    if (v.warn)
      os << " warn " << exprOrNull(v.warn, names);
    if (v.precond)
      os << " precond " << v.precond->name;
    os << "\n";
    return;
  }
  os << "solve " << solverName(v.solver) << "(" << datList(v.dats) << ") along "
     << v.along << " over " << (v.block ? v.block->name : "<null>")
     << ranges(v.ranges, names) << "\n";
  return;
}

void Printer::derivativeStmt(const DerivativeStmt &d, const NameTable &names) {
  bool adjoint = d.isAdjoint();
  std::string procName = d.proc ? d.proc->name : "<null>";
  os << names.var(d.resultVar) << " = " << d.keyword() << " @" << procName
     << "(" << exprList(d.args, names) << ") " << (adjoint ? "wrt" : "along")
     << " (";
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

} // namespace opdc::ir::printer
