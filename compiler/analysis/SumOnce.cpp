// SumOnce.cpp - Does a kernel add to a sum argument at most once an element?
// SPDX-License-Identifier: Apache-2.0
#include "analysis/SumOnce.h"

#include "ir/IR.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;

namespace {

class SumUses : public IRVisitor {
public:
  explicit SumUses(unsigned p) : param(p) {}
  bool once = true;

  void visitAssign(const AssignStmt &s) override {
    int64_t component = -1;
    if (isParam(*s.target)) {
      component = 0; // all of them (wholeAdds)
    } else if (const auto *ix = dyn_cast<IndexExpr>(s.target.get());
               ix && isParam(*ix->base)) {
      const auto *c = dyn_cast<ConstantExpr>(ix->index.get());
      if (c && c->value.type.isIntegerScalar())
        component = c->value.asInt();
    }
    if (component < 0) {
      IRVisitor::visitAssign(s); // a use elsewhere is found in the operands
      return;
    }
    // The whole parameter: every component (the language has no `+=` of
    // a whole array, but a pass might build one).
    if (isParam(*s.target))
      ++wholeAdds;
    else
      maxAdds = std::max(maxAdds, ++adds[component]);
    if (s.op != AssignOp::Add || loops > 0 || wholeAdds + maxAdds > 1)
      once = false;
    visitExpr(*s.value);
  }
  void visitKernelArg(const KernelArgExpr &e) override {
    if (e.index == param)
      once = false; // read, or passed on
  }
  void visitFor(const ForStmt &s) override {
    ++loops;
    IRVisitor::visitFor(s);
    --loops;
  }
  void visitWhile(const WhileStmt &s) override {
    ++loops;
    IRVisitor::visitWhile(s);
    --loops;
  }

private:
  bool isParam(const Expr &e) const {
    const auto *a = dyn_cast<KernelArgExpr>(&e);
    return a && a->index == param;
  }
  unsigned param;
  int loops = 0;
  std::map<int64_t, int> adds; ///< per component, at a constant index
  int maxAdds = 0;             ///< the most adds to one component
  int wholeAdds = 0;           ///< adds to the whole parameter
};

} // namespace

bool addsAtMostOnce(const Function &kernel, unsigned param) {
  SumUses uses(param);
  uses.visitBody(kernel.body);
  return uses.once;
}

} // namespace opdc
