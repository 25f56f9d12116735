// IRPrinterImpl.h - The IR printer's state, shared by IRPrinter.cpp and
// IRPrinterStmts.cpp (internal to compiler/ir).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_IRPRINTERIMPL_H
#define OPDC_IR_IRPRINTERIMPL_H

#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"

#include <set>
#include <string>
#include <vector>

namespace opdc::ir::printer {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

/// The column location comments start at (two spaces after a longer line).
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

inline std::string typeToString(Type t) { return t.str(); }

inline std::string elemToString(ScalarKind s, unsigned dim) {
  std::string out = scalarName(s);
  if (dim != 1)
    out += "[" + std::to_string(dim) + "]";
  return out;
}

/// Component \p i of \p v as a constant prints it (IRPrinter.cpp).
std::string componentToString(const ConstValue &v, unsigned i);

/// Writes the text form; the member functions live in IRPrinter.cpp
/// (functions, globals, program) and IRPrinterStmts.cpp (statements,
/// loops, expressions).
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
  void hostStmt(const Stmt &s, const Function &f, const NameTable &names,
                unsigned indent);
  void solveStmt(const SolveStmt &v, const NameTable &names);
  void derivativeStmt(const DerivativeStmt &d, const NameTable &names);
  void parLoop(const ParLoopStmt &l, const NameTable &names, unsigned indent);
  std::string argText(const AccessDescriptor &a, const NameTable &names);
  std::string ranges(const std::vector<LoopRange> &rs, const NameTable &names);
  std::string operand(const ExprPtr &e, const NameTable &names, int prec,
                      bool rightSide = false);
  /// Expressions separated by ", ".
  std::string exprList(const std::vector<ExprPtr> &v, const NameTable &names) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out += ", ";
      out += exprOrNull(v[i], names);
    }
    return out;
  }
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

} // namespace opdc::ir::printer
#endif
