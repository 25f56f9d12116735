// VerifierImpl.h - The IR verifier's state, shared by Verifier.cpp,
// VerifierStmts.cpp and VerifierExprs.cpp (internal to compiler/ir).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_VERIFIERIMPL_H
#define OPDC_IR_VERIFIERIMPL_H

#include "ir/IR.h"
#include "ir/IRPrinter.h"

#include "llvm/Support/Casting.h"

#include <set>
#include <string>
#include <vector>

namespace opdc::ir::verifier {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

constexpr unsigned MaxProblems = 20;

/// One run of verifyIR over a Program. Member functions live in
/// Verifier.cpp (globals), VerifierStmts.cpp and VerifierExprs.cpp.
class Verifier {
public:
  explicit Verifier(const Program &p) : prog(p) {}
  bool run(std::string &why);

private:
  // Context of the statement or expression being checked.
  struct Scope {
    std::vector<bool> defined;  ///< slot -> currently in scope
    std::vector<bool> declared; ///< slot -> declared somewhere already
    unsigned loopDepth = 0;
  };

  void problem(const std::string &msg);
  std::string where() const;

  void checkGlobals();
  void checkFunction(const Function &f);
  void checkBody(const Body &b, Scope &sc);
  void checkStmt(const Stmt &s, Scope &sc, std::vector<unsigned> &declHere);
  /// VerifierHostStmts.cpp: the statements legal in host code only.
  void checkHostStmt(const Stmt &s, Scope &sc, std::vector<unsigned> &declHere);
  void checkDatIO(const DatIOStmt &io, Scope &sc);
  void checkCheckpoint(const CheckpointStmt &c, Scope &sc);
  /// A loop's shape, then each argument against ir/AccessRules.h.
  void checkParLoop(const ParLoopStmt &l, Scope &sc);
  void checkSkewGroups(const Body &b);
  void checkTapeOverwrites(const Body &b);
  /// The host variable of a reduction argument (\p an: message prefix).
  void checkReductionVar(const AccessDescriptor &a, const KernelParam &p,
                         Scope &sc, const std::string &an);
  /// An adjoint or tangent request: its proc and arguments, each entry,
  /// the result slot.
  void checkDerivative(const DerivativeStmt &d, Scope &sc,
                       std::vector<unsigned> &declHere);
  /// The dats and variables of a tape or checkpoint statement.
  void checkStateLists(const std::vector<Dat *> &ds,
                       const std::vector<unsigned> &vs, Scope &sc,
                       const char *what);
  void checkAssignTarget(const Expr &t, AssignOp op, Scope &sc);
  void checkRanges(const std::vector<LoopRange> &rs, const Block *b, Scope &sc,
                   const char *what);
  void checkSolveCG(const SolveStmt &v, Scope &sc,
                    std::vector<unsigned> &declHere);
  /// Declares \p slot at this point (problem if declared before).
  void declare(unsigned slot, Scope &sc, std::vector<unsigned> &declHere,
               const char *what);
  bool validSlot(int slot) const {
    return fn && slot >= 0 && unsigned(slot) < fn->vars.size();
  }

  /// Checks \p e and returns the type its operands give it.
  Type check(const Expr &e, Scope &sc);
  Type checkIntrinsic(const IntrinsicExpr &e, Scope &sc);
  /// \p x checked as \p what of its parent; a problem when it is missing.
  Type checkOperand(const ExprPtr &x, const char *what, Scope &sc);
  Type checkReference(const Expr &e, Scope &sc);
  Type checkOperator(const Expr &e, Scope &sc);
  void expectType(const ExprPtr &e, Type t, Scope &sc, const char *what);

  std::string str(const Expr &e) const { return exprToString(e, fn); }
  std::string name(const Dat *d) const {
    return d ? "'" + d->name + "'" : "<null>";
  }

  const Program &prog;
  const Function *fn = nullptr; ///< null while checking globals
  std::vector<std::string> problems;
  unsigned dropped = 0;

  std::set<const void *> sets, maps, blocks, stencils, dats, params, fns,
      kernels, procs;
};

} // namespace opdc::ir::verifier
#endif
