// HostLowering.cpp - Host statements as the runtime protocol, once for
// every backend (HostProgram.h says why).
// SPDX-License-Identifier: Apache-2.0
//
// The protocols written here:
// - swap, dat I/O, print and the tridiagonal solve: the runtime calls, the
//   dats whose host copies a call reads (NeedHost) or writes (HostWrote);
//   a target that solves on the device (HostTraits::deviceSolves) gets
//   its device runtime's solve instead, which keeps the dats there;
// - the tape: a push saves dats and host variables (as 64-bit words), a pop
//   restores them in reverse order;
// - the checkpointed loop (lib/exec/Adjoint.cpp): forward, opd_ckpt_begin,
//   then per step opd_ckpt_forward says whether to save a snapshot and
//   whether the step runs taped; reverse, a loop over opd_ckpt_next's
//   actions (advance, save, restore, reverse, reverse taped) until done.
// One rule decides what a target with device copies (HostTraits::
// deviceCopies, the CUDA backend) does differently: its runtime registers
// a device store (opd_rt_adjoint_store, lib/cuda/opd_cuda_tape.cuh) that
// keeps the tape's and the snapshots' dats beside their device copies, so
// no host copy is made current before a save and none is stale after a
// restore (the store reads and writes the device copies and their state
// itself), and the store copies at every save instead of taking storage
// at a later loop's prepare (a CUDA loop reads its device pointers before
// that prepare). Pops and restores hand the saved buffer over on both.
#include "codegen/common/HostProgram.h"

#include "ir/AccessRules.h"
#include "ir/IRVisitor.h"
#include "support/Assert.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include "opd_rt.h"

namespace opdc::host {

using llvm::cast;
using namespace ir;

unsigned varWords(const ir::Function &fn, unsigned slot) {
  const Type &t = fn.vars[slot].type;
  OPDC_ASSERT(t.isScalar() || t.isArray(), "tape of a non-numeric variable");
  return t.isArray() ? unsigned(t.length) : 1;
}

unsigned varWords(const ir::Function &fn, const std::vector<unsigned> &vars) {
  unsigned n = 0;
  for (unsigned v : vars)
    n += varWords(fn, v);
  return n;
}

bool isProtocolStmt(const ir::Stmt &s) {
  switch (s.kind) {
  case StmtKind::Swap:
  case StmtKind::Write:
  case StmtKind::Read:
  case StmtKind::Print:
  case StmtKind::Solve:
  case StmtKind::Tape:
  case StmtKind::Checkpoint:
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
    return true;
  default:
    return false;
  }
}

bool meshReadyAtStart(const ir::Program &p) {
  // Every function, derivatives included: a map filled anywhere keeps the
  // partition at the first set loop.
  struct Scan : IRVisitor {
    bool setLoop = false, fillsMap = false;
    void visitParLoop(const ParLoopStmt &s) override {
      setLoop = setLoop || s.set != nullptr;
      for (const AccessDescriptor &a : s.args)
        fillsMap = fillsMap ||
                   (a.kind == ArgKind::MapDirect && a.mode != AccessMode::Read);
      IRVisitor::visitParLoop(s);
    }
  } scan;
  scan.visitProgram(p);
  return scan.setLoop && !scan.fillsMap;
}

namespace {

class Lowering {
public:
  Lowering(const ir::Function &fn, const HostTraits &t, DiagnosticEngine &d,
           Program &p)
      : fn(fn), traits(t), diags(d), p(p) {}

  bool lower(const ir::Stmt &s, std::vector<Op> &ops);

private:
  void datIO(const DatIOStmt &io, std::vector<Op> &ops);
  void print(const PrintStmt &s, std::vector<Op> &ops);
  bool solve(const SolveStmt &s, std::vector<Op> &ops);
  void tape(const TapeStmt &s, std::vector<Op> &ops);
  void checkpointForward(const CheckpointStmt &s, std::vector<Op> &ops);
  void checkpointReverse(const CheckpointStmt &s, std::vector<Op> &ops);
  /// A snapshot of the state into \p slot: the dats' host copies current,
  /// the variables packed into \p vals, then opd_ckpt_save.
  std::vector<Op> save(const CheckpointStmt &s, int vals, Operand slot);
  /// Arrays of the ranges' bounds (i64); null pointers for none.
  std::pair<Operand, Operand> ranges(const std::vector<LoopRange> &rs,
                                     const std::string &what,
                                     std::vector<Op> &ops);

  const ir::Function &fn;
  const HostTraits &traits;
  DiagnosticEngine &diags;
  Program &p;
};

std::pair<Operand, Operand> Lowering::ranges(const std::vector<LoopRange> &rs,
                                             const std::string &what,
                                             std::vector<Op> &ops) {
  if (rs.empty())
    return {Operand::null(), Operand::null()};
  int lo = p.addLocal(Ty::I64, unsigned(rs.size()), what + ".lo");
  int hi = p.addLocal(Ty::I64, unsigned(rs.size()), what + ".hi");
  for (size_t d = 0; d < rs.size(); ++d) {
    ops.push_back(
        store(lo, int64_t(d), Operand::ir(*rs[d].lo, Operand::Conv::ToI64)));
    ops.push_back(
        store(hi, int64_t(d), Operand::ir(*rs[d].hi, Operand::Conv::ToI64)));
  }
  return {Operand::addr(lo), Operand::addr(hi)};
}

void Lowering::datIO(const DatIOStmt &io, std::vector<Op> &ops) {
  if (!io.isRead())
    for (const Dat *d : io.dats)
      ops.push_back(residency(Op::Kind::NeedHost, d));
  Operand dats = Operand::datList(io.dats);
  Operand n = Operand::i32(int64_t(io.dats.size()));
  Operand file = Operand::ir(*io.file);
  if (!io.ranges.empty()) {
    auto [lo, hi] = ranges(io.ranges, "write", ops);
    ops.push_back(
        call("opd_dat_write_range",
             {dats, n, file, lo, hi, Operand::i32(int64_t(io.ranges.size()))}));
  } else {
    ops.push_back(
        call(io.isRead() ? "opd_dat_read" : "opd_dat_write", {dats, n, file}));
  }
  if (io.isRead())
    for (const Dat *d : io.dats)
      ops.push_back(residency(Op::Kind::HostWrote, d));
}

void Lowering::print(const PrintStmt &s, std::vector<Op> &ops) {
  if (s.formatted) {
    // `fail` ends the program on every rank, warnings go to stderr.
    std::vector<Operand> args{Operand::str(s.format)};
    // C's default argument promotions: bool to int, float to double.
    for (const auto &a : s.args)
      args.push_back(Operand::ir(*a, a->type.isBool() ? Operand::Conv::ToI32
                                     : a->type.isScalar() &&
                                             a->type.scalar == ScalarKind::F32
                                         ? Operand::Conv::ToF64
                                         : Operand::Conv::None));
    ops.push_back(call(s.to == PrintTo::Error     ? "opd_rt_fail_allf"
                       : s.to == PrintTo::Warning ? "opd_rt_warnf"
                                                  : "opd_rt_printf",
                       std::move(args)));
    return;
  }
  for (size_t i = 0; i < s.args.size(); ++i) {
    const ir::Expr &a = *s.args[i];
    Operand first = Operand::i32(i == 0);
    if (a.type.isString()) {
      ops.push_back(call("opd_rt_print_str", {Operand::ir(a), first}));
      continue;
    }
    switch (a.type.scalar) {
    case ScalarKind::Bool:
      ops.push_back(call("opd_rt_print_bool",
                         {Operand::ir(a, Operand::Conv::ToI32), first}));
      break;
    case ScalarKind::I32:
    case ScalarKind::I64:
      ops.push_back(call("opd_rt_print_i64",
                         {Operand::ir(a, Operand::Conv::ToI64), first}));
      break;
    case ScalarKind::F32:
      ops.push_back(call("opd_rt_print_f32", {Operand::ir(a), first}));
      break;
    case ScalarKind::F64:
      ops.push_back(call("opd_rt_print_f64", {Operand::ir(a), first}));
      break;
    }
  }
  ops.push_back(call("opd_rt_print_end", {}));
}

bool Lowering::solve(const SolveStmt &s, std::vector<Op> &ops) {
  if (s.solver == SolverKind::CG) {
    // Conjugate gradients are loops of the program: the expand-cg pass
    // (in the default pipeline) writes them; a --passes list without it
    // leaves the solve here.
    diags.error(s.range,
                "'solve cg' needs the 'expand-cg' pass; add it to --passes");
    return false;
  }
  OPDC_ASSERT(s.solver == SolverKind::Tridiagonal && s.dats.size() == 4,
              "a solve other than tridiagonal(a, b, c, d)");
  // The runtime solves with the host copies, and d's change there; a
  // target that solves on its device copies keeps them there.
  if (!traits.deviceSolves)
    for (const Dat *d : s.dats)
      ops.push_back(residency(Op::Kind::NeedHost, d));
  std::vector<Operand> args;
  for (const Dat *d : s.dats)
    args.push_back(Operand::handle(d));
  args.push_back(Operand::i32(s.along));
  // The range as loops pass theirs (global indices, hi exclusive); none
  // for the whole block, which the runtime takes from d's interior.
  auto [lo, hi] = ranges(s.ranges, "solve", ops);
  args.push_back(lo);
  args.push_back(hi);
  ops.push_back(call(traits.deviceSolves ? "opd::solve_tridiagonal"
                                         : "opd_solve_tridiagonal",
                     std::move(args)));
  if (!traits.deviceSolves)
    ops.push_back(residency(Op::Kind::HostWrote, s.dats[3]));
  return true;
}

void Lowering::tape(const TapeStmt &s, std::vector<Op> &ops) {
  if (s.push) {
    for (size_t i = 0; i < s.dats.size(); ++i) {
      // The runtime takes the storage of a dat the next loop overwrites
      // whole; a device store copies.
      bool over =
          i < s.overwritten.size() && s.overwritten[i] && !traits.deviceCopies;
      ops.push_back(
          call(over ? "opd_tape_push_dat_overwritten" : "opd_tape_push_dat",
               {Operand::handle(s.dats[i])}));
    }
    for (unsigned v : s.vars)
      for (unsigned i = 0; i < varWords(fn, v); ++i)
        ops.push_back(call("opd_tape_push_value", {Operand::varBits(v, i)}));
    return;
  }
  if (!s.vars.empty()) {
    int bits = p.addLocal(Ty::W64, 0, "bits");
    for (auto v = s.vars.rbegin(); v != s.vars.rend(); ++v)
      for (unsigned i = varWords(fn, *v); i-- > 0;) {
        ops.push_back(call("opd_tape_pop_value", {}, bits));
        ops.push_back(setVarBits(*v, i, Operand::read(bits)));
      }
  }
  for (auto d = s.dats.rbegin(); d != s.dats.rend(); ++d)
    ops.push_back(call("opd_tape_pop_dat", {Operand::handle(*d)}));
}

std::vector<Op> Lowering::save(const CheckpointStmt &s, int vals,
                               Operand slot) {
  std::vector<Op> ops;
  unsigned w = 0;
  for (unsigned v : s.vars)
    for (unsigned i = 0; i < varWords(fn, v); ++i)
      ops.push_back(store(vals, w++, Operand::varBits(v, i)));
  // State dats the step's first loop overwrites (1), or the next step's
  // first loop (2: the step only reads them and swaps them there), or a
  // later loop of the step (3: the loops before it only read them): a
  // snapshot may take their storage at that loop's prepare when that body
  // runs (the runtime knows whether it does) instead of copying them.
  std::vector<uint8_t> overwritten;
  if (!traits.deviceCopies)
    overwritten = ir::stateTakes(s.body, s.dats);
  if (!overwritten.empty())
    ops.push_back(
        call("opd_ckpt_save_overwritten",
             {std::move(slot), Operand::addr(vals),
              Operand::byteTable("ckpt.overwritten", std::move(overwritten))}));
  else
    ops.push_back(
        call("opd_ckpt_save", {std::move(slot), Operand::addr(vals)}));
  return ops;
}

void Lowering::checkpointForward(const CheckpointStmt &s,
                                 std::vector<Op> &ops) {
  int vals =
      p.addLocal(Ty::W64, std::max(varWords(fn, s.vars), 1u), "ckpt.vals");
  int lo = p.addLocal(Ty::I64, 0, "ckpt.lo");
  int hi = p.addLocal(Ty::I64, 0, "ckpt.hi");
  int step = p.addLocal(Ty::I64, 0, "ckpt.step");
  int slot = p.addLocal(Ty::I32, 0, "ckpt.slot");
  ops.push_back(store(lo, 0, Operand::ir(*s.lo, Operand::Conv::ToI64)));
  ops.push_back(store(hi, 0, Operand::ir(*s.hi, Operand::Conv::ToI64)));
  ops.push_back(
      call("opd_ckpt_begin",
           {Operand::read(lo), Operand::diff(hi, lo),
            s.snapshots ? Operand::ir(*s.snapshots, Operand::Conv::ToI64)
                        : Operand::i64(0),
            Operand::datList(s.dats), Operand::i32(int64_t(s.dats.size())),
            Operand::i32(varWords(fn, s.vars))}));
  Op loop;
  loop.kind = Op::Kind::For;
  loop.local = step;
  loop.args = {Operand::read(lo), Operand::read(hi)};
  loop.then.push_back(setVar(s.slot, Operand::read(step)));
  loop.then.push_back(call("opd_ckpt_forward", {Operand::read(step)}, slot));
  loop.then.push_back(ifThen(Operand::read(slot), Pred::Ge, Operand::i32(0),
                             save(s, vals, Operand::read(slot))));
  // OPD_CKPT_TAPE: the step goes on the tape (snapshots >= steps).
  loop.then.push_back(ifThen(Operand::read(slot), Pred::Ne,
                             Operand::i32(OPD_CKPT_TAPE), {run(s.body)},
                             {run(s.tapedBody)}));
  ops.push_back(std::move(loop));
}

void Lowering::checkpointReverse(const CheckpointStmt &s,
                                 std::vector<Op> &ops) {
  int vals =
      p.addLocal(Ty::W64, std::max(varWords(fn, s.vars), 1u), "ckpt.vals");
  int step = p.addLocal(Ty::I64, 0, "ckpt.step");
  int slot = p.addLocal(Ty::I32, 0, "ckpt.slot");
  int act = p.addLocal(Ty::I32, 0, "ckpt.act");
  Op loop;
  loop.kind = Op::Kind::Dispatch;
  loop.fn = "opd_ckpt_next";
  loop.args = {Operand::addr(step), Operand::addr(slot)};
  loop.result = act;
  auto stepBody = [&](const ir::Body &b) {
    return std::vector<Op>{setVar(s.slot, Operand::read(step)), run(b)};
  };
  loop.cases.emplace_back(OPD_CKPT_ADVANCE, stepBody(s.body));
  loop.cases.emplace_back(OPD_CKPT_SAVE, save(s, vals, Operand::read(slot)));
  std::vector<Op> restore{
      call("opd_ckpt_restore", {Operand::read(slot), Operand::addr(vals)})};
  unsigned w = 0;
  for (unsigned v : s.vars)
    for (unsigned i = 0; i < varWords(fn, v); ++i)
      restore.push_back(setVarBits(v, i, Operand::at(vals, w++)));
  loop.cases.emplace_back(OPD_CKPT_RESTORE, std::move(restore));
  loop.cases.emplace_back(OPD_CKPT_REVERSE, stepBody(s.reverseBody));
  loop.cases.emplace_back(OPD_CKPT_REVERSE_TAPED, stepBody(s.tapedReverseBody));
  ops.push_back(std::move(loop));
  ops.push_back(call("opd_ckpt_end", {}));
}

bool Lowering::lower(const ir::Stmt &s, std::vector<Op> &ops) {
  switch (s.kind) {
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    // Device copies are keyed by the host storage, so they follow it.
    ops.push_back(
        call("opd_dat_swap", {Operand::handle(w.a), Operand::handle(w.b)}));
    return true;
  }
  case StmtKind::Write:
  case StmtKind::Read:
    datIO(cast<DatIOStmt>(s), ops);
    return true;
  case StmtKind::Print:
    print(cast<PrintStmt>(s), ops);
    return true;
  case StmtKind::Solve:
    return solve(cast<SolveStmt>(s), ops);
  case StmtKind::Tape:
    tape(cast<TapeStmt>(s), ops);
    return true;
  case StmtKind::Checkpoint: {
    const auto &c = cast<CheckpointStmt>(s);
    if (c.reverse)
      checkpointReverse(c, ops);
    else
      checkpointForward(c, ops);
    return true;
  }
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
    // The adjoint and tangent passes replace these; a --passes list
    // without them leaves them here.
    {
      const char *what = s.kind == StmtKind::Adjoint ? "adjoint" : "tangent";
      diags.error(s.range, std::string("'") + what + "' needs the '" + what +
                               "' pass; add it to --passes");
    }
    return false;
  default:
    OPDC_UNREACHABLE("not a protocol statement");
  }
}

} // namespace

bool lowerHostStmt(const ir::Function &fn, const ir::Stmt &s,
                   const HostTraits &traits, DiagnosticEngine &diags,
                   Program &out) {
  Lowering l(fn, traits, diags, out);
  return l.lower(s, out.ops);
}

} // namespace opdc::host
