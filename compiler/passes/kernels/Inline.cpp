// Inline.cpp - Inline fn calls into the kernels and fns that make them.
// SPDX-License-Identifier: Apache-2.0
//
// A call `f(a, b)` in a statement S of a kernel or fn becomes, before S:
//
//   let %f.x = a                  one let per parameter, in order
//   let %f.y = b
//   <f's body, its slots renumbered into the caller, each `return v` in
//    tail position turned into `%f = v` (a var declared first), or, when
//    the body's only return is its last statement, `let %f = v`>
//
// and the call itself becomes `%f`. This is legal because a fn is pure:
// sema lets it read only its parameters, params and consts, write only its
// own locals, and never recurse, and expressions have no side effects. So
// evaluating the call once, just before the statement that contains it,
// gives the value the call had, provided the call was going to be
// evaluated exactly once anyway. It is not in three places, which keep
// their calls:
//   * a while condition is evaluated once per trip;
//   * the right operand of && and || is evaluated only when needed, and so
//     is each arm of select; hoisting would run the fn when the program did
//     not (`n != 0 && f(n) > 1`, where f divides by n, would stop with an
//     integer division by zero).
// Early returns are made tail returns first: `if c { ...; return x }`
// followed by more statements puts those statements into the if's else
// (they ran only when c was false). A fn that still returns from any other
// place (inside a for or while) is not inlined: a return there would need
// control flow the structured IR has no statement for.
//
// Calls in the inlined body are inlined too (fns do not recurse, so this
// ends). Host code keeps its fn calls; fns that nothing calls afterwards
// are removed.
//
// inlineProcCallsIn does the same for the proc calls of one host function
// (a proc about to be differentiated, so that the derivative follows the
// procs it calls). A proc is not pure, but a call evaluated exactly once
// still runs its loops exactly once and in the same order when it moves
// just before its statement: the rest of a host expression reads only
// variables and params, which the proc cannot change.
#include "passes/kernels/Inline.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

constexpr const char *PassName = "inline";

enum class NoInlineReason {
  WhileCondition,
  ConditionalOperand,
  ReturnInLoop,
};

const char *describe(NoInlineReason r) {
  switch (r) {
  case NoInlineReason::WhileCondition:
    return "the call is in a while condition, evaluated once per trip";
  case NoInlineReason::ConditionalOperand:
    return "the call is evaluated only when needed (an operand of '&&' or "
           "'||', or an arm of select)";
  case NoInlineReason::ReturnInLoop:
    return "the fn returns from inside a loop";
  }
  return "";
}

class Inliner : public IRMutator {
public:
  Inliner(Program &p, PassContext &ctx, bool procs = false)
      : program(p), ctx(ctx), procs(procs) {}
  bool run();
  /// Inlines the calls of \p f only.
  bool runOn(ir::Function &f) {
    mutateFunction(f);
    return changed;
  }

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override;
  StmtPtr mutateEval(std::unique_ptr<EvalStmt> s) override;
  StmtPtr mutateWhile(std::unique_ptr<WhileStmt> s) override;
  ExprPtr mutateBinary(std::unique_ptr<BinaryExpr> e) override;
  ExprPtr mutateIntrinsic(std::unique_ptr<IntrinsicExpr> e) override;
  ExprPtr mutateCall(std::unique_ptr<CallExpr> e) override;

private:
  /// Why \p callee cannot be inlined at all, if it cannot.
  std::optional<NoInlineReason> whyNotInlinable(Function &callee);
  /// Emits the inlined body of \p call into `pending`; returns the value of
  /// the call (null for a void fn).
  ExprPtr inlineCall(std::unique_ptr<CallExpr> call);
  void remarkNotInlined(const CallExpr &call, NoInlineReason why);
  void removeUncalledFns();

  Program &program;
  PassContext &ctx;
  /// Inline proc calls too (host code about to be differentiated).
  bool procs = false;
  bool changed = false;
  /// Statements to put before the statement being rewritten.
  std::vector<StmtPtr> pending;
  /// Nonzero inside an operand that may not be evaluated (or is evaluated
  /// repeatedly): calls there stay.
  unsigned conditional = 0;
  NoInlineReason conditionalReason = NoInlineReason::ConditionalOperand;
  /// Callees prepared once (early returns sunk): their verdict.
  std::map<const Function *, std::optional<NoInlineReason>> verdicts;
};

std::vector<StmtPtr> Inliner::mutateStmt(StmtPtr s) {
  std::vector<StmtPtr> saved = std::move(pending);
  unsigned savedConditional = conditional;
  pending.clear();
  conditional = 0;
  std::vector<StmtPtr> out = IRMutator::mutateStmt(std::move(s));
  std::vector<StmtPtr> result = std::move(pending);
  for (StmtPtr &r : out)
    if (r)
      result.push_back(std::move(r));
  pending = std::move(saved);
  conditional = savedConditional;
  return result;
}

StmtPtr Inliner::mutateEval(std::unique_ptr<EvalStmt> s) {
  mutateInPlace(s->expr);
  // A void fn inlined leaves nothing to evaluate.
  if (!s->expr)
    return nullptr;
  return s;
}

StmtPtr Inliner::mutateWhile(std::unique_ptr<WhileStmt> s) {
  ++conditional;
  NoInlineReason saved = conditionalReason;
  conditionalReason = NoInlineReason::WhileCondition;
  mutateInPlace(s->cond);
  conditionalReason = saved;
  --conditional;
  mutateBody(s->body);
  return s;
}

ExprPtr Inliner::mutateBinary(std::unique_ptr<BinaryExpr> e) {
  if (!isLogical(e->op))
    return IRMutator::mutateBinary(std::move(e));
  mutateInPlace(e->lhs);
  ++conditional;
  mutateInPlace(e->rhs);
  --conditional;
  return e;
}

ExprPtr Inliner::mutateIntrinsic(std::unique_ptr<IntrinsicExpr> e) {
  if (e->id != Intrinsic::Select)
    return IRMutator::mutateIntrinsic(std::move(e));
  mutateInPlace(e->args[0]);
  ++conditional;
  mutateInPlace(e->args[1]);
  mutateInPlace(e->args[2]);
  --conditional;
  return e;
}

ExprPtr Inliner::mutateCall(std::unique_ptr<CallExpr> e) {
  mutateAll(e->args);
  if (e->callee->kind != FunctionKind::Fn &&
      !(procs && e->callee->kind == FunctionKind::Proc))
    return e;
  if (conditional) {
    remarkNotInlined(*e, conditionalReason);
    return e;
  }
  if (auto why = whyNotInlinable(*e->callee)) {
    remarkNotInlined(*e, *why);
    return e;
  }
  return inlineCall(std::move(e));
}

std::optional<NoInlineReason> Inliner::whyNotInlinable(Function &callee) {
  auto it = verdicts.find(&callee);
  if (it != verdicts.end())
    return it->second;
  // Sinking statements into an else changes no behaviour, so the callee
  // itself may keep the sunk form whether or not it is inlined.
  sinkAfterEarlyReturns(callee.body);
  std::optional<NoInlineReason> why;
  if (!returnsOnlyInTail(callee.body, true))
    why = NoInlineReason::ReturnInLoop;
  verdicts[&callee] = why;
  return why;
}

ExprPtr Inliner::inlineCall(std::unique_ptr<CallExpr> call) {
  Function &caller = *currentFunction;
  const Function &callee = *call->callee;
  SourceRange at = call->range;

  std::vector<unsigned> slots(callee.vars.size());
  for (size_t v = 0; v < callee.vars.size(); ++v) {
    const Var &var = callee.vars[v];
    slots[v] = caller.addVar(callee.name + "." + var.name, var.type,
                             var.isMutable, var.range);
  }
  // The arguments were rewritten by mutateCall already.
  for (size_t i = 0; i < callee.params.size(); ++i) {
    SourceRange r = call->args[i]->range;
    pending.push_back(std::make_unique<DeclStmt>(slots[callee.params[i]],
                                                 std::move(call->args[i]), r));
  }

  Body body = callee.body.clone();
  remapSlots(body, slots);

  // The value: a let of the returned value when the body's last statement
  // is its only return, else a var that every tail return assigns.
  ExprPtr value;
  Type type = callee.returnType;
  if (type.isVoid()) {
    replaceTailReturns(body, -1);
  } else {
    std::unique_ptr<ReturnStmt> last;
    if (!body.stmts.empty() && isa<ReturnStmt>(*body.stmts.back())) {
      last.reset(cast<ReturnStmt>(body.stmts.back().release()));
      body.stmts.pop_back();
    }
    if (last && last->value && !containsReturn(body)) {
      unsigned slot = caller.addVar(callee.name, type, false, callee.range);
      body.stmts.push_back(std::make_unique<DeclStmt>(
          slot, std::move(last->value), last->range));
      value = std::make_unique<VarRefExpr>(slot, type, at);
    } else {
      if (last)
        body.stmts.push_back(std::move(last));
      unsigned slot = caller.addVar(callee.name, type, true, callee.range);
      pending.push_back(std::make_unique<DeclStmt>(
          slot, std::make_unique<ConstantExpr>(zeroOf(type)), at));
      replaceTailReturns(body, int(slot));
      value = std::make_unique<VarRefExpr>(slot, type, at);
    }
  }
  // Calls in the inlined body are inlined in turn.
  for (StmtPtr &s : body.stmts)
    for (StmtPtr &r : mutateStmt(std::move(s)))
      pending.push_back(std::move(r));

  changed = true;
  ctx.stats.add(PassName, "inlined", "calls inlined");
  ctx.diags.remark(
      at, "'" + callee.name + "' inlined into '" + caller.name + "'", PassName);
  return value;
}

void Inliner::remarkNotInlined(const CallExpr &call, NoInlineReason why) {
  ctx.stats.add(PassName, "not-inlined", "calls not inlined");
  ctx.diags.remark(call.range,
                   "'" + call.callee->name + "' not inlined into '" +
                       currentFunction->name + "': " + describe(why),
                   PassName);
}

bool Inliner::run() {
  // Fns first, so that a fn called from several kernels is flattened once
  // (inlining a call clones the callee as it is at that moment; the result
  // is the same either way, since the clone's calls are inlined in turn).
  for (auto &f : program.fns)
    mutateFunction(*f);
  for (auto &k : program.kernels)
    mutateFunction(*k);
  removeUncalledFns();
  return changed;
}

void Inliner::removeUncalledFns() {
  struct Calls : IRVisitor {
    std::vector<const Function *> found;
    void visitCall(const CallExpr &e) override {
      if (e.callee->kind == FunctionKind::Fn)
        found.push_back(e.callee);
      IRVisitor::visitCall(e);
    }
  };
  // Fns reachable from kernels, procs and main through calls.
  std::set<const Function *> live;
  std::vector<const Function *> work;
  for (Function *f : program.functions())
    if (f->kind != FunctionKind::Fn)
      work.push_back(f);
  while (!work.empty()) {
    const Function *f = work.back();
    work.pop_back();
    Calls calls;
    calls.visitFunction(*f);
    for (const Function *c : calls.found)
      if (live.insert(c).second)
        work.push_back(c);
  }
  auto &fns = program.fns;
  size_t before = fns.size();
  fns.erase(std::remove_if(fns.begin(), fns.end(),
                           [&](const std::unique_ptr<Function> &f) {
                             return !live.count(f.get());
                           }),
            fns.end());
  if (fns.size() != before) {
    changed = true;
    ctx.stats.add(PassName, "removed-fns", "fns removed (no calls left)",
                  int64_t(before - fns.size()));
  }
}

} // namespace

bool inlineCalls(Program &program, PassContext &ctx) {
  return Inliner(program, ctx).run();
}

bool inlineCallsIn(Program &program, Function &fn, PassContext &ctx) {
  return Inliner(program, ctx).runOn(fn);
}

bool inlineProcCallsIn(Program &program, Function &fn, PassContext &ctx) {
  return Inliner(program, ctx, /*procs=*/true).runOn(fn);
}

} // namespace opdc
