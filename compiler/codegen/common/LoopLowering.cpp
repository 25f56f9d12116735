// LoopLowering.cpp - A parallel loop's host protocol in the host-program
// form, once for every backend.
// SPDX-License-Identifier: Apache-2.0
//
// A loop `loop K over S (args)` runs, on every backend:
//
//   over a block: lo/hi = its range; checks that the range stays within
//                 each dat's halo (a range computed at run time may not)
//   opd_halo_group / opd_loop_extend_next   (a rewritten chain's first
//                 loop; passes/loops/CommAvoid.cpp)
//   args  = static opd_arg table (kind, mode, map index, bytes, stencil
//           extents are constants; dat and map handles stored each time)
//   l = opd_loop_prepare(&cache, name, S, n, args)    (_block: lo, hi,
//           which the runtime clips to the points the rank owns)
//   opd_loop_set_location(l, "file.opd:L:C")
//   PHASE: the backend's own: the context, the run (CPU) or the launches
//          (CUDA); it leaves each reduction's partials in host memory and
//          their count (chunks on the CPU, blocks on CUDA)
//   for each reduction v:
//     -frepro-sum float sums: opd_reduce_sum_exact(&v, type, dim,
//                                                  partials, chunks)
//     else: opd_reduce_local(&v, ...)   (MPI: the old value counts once)
//           v = v (+|min|max) partials[c] for c = 0, 1, ... in order
//           opd_reduce_global(&v, ...)  (MPI_Allreduce; else nothing)
//
// The CPU backend (llvm/LoopHost.cpp) and the CUDA backend
// (cuda/CUDALoopHost.cpp) print this and write only their phase. What the
// arguments allow (race class, stencil extents, the dat of a whole-block
// range) comes from analyzeLoopAccess(); the runtime's values from
// RuntimeMapping.
#include "codegen/common/HostProgram.h"
#include "codegen/common/RuntimeMapping.h"

#include "support/Assert.h"

#include <algorithm>

namespace opdc::host {

using namespace ir;

namespace {

// Over a block: lo/hi as the loop's range (global indices, hi exclusive),
// dimensions past the block's 0 .. 1.
void lowerRange(const ParLoopStmt &loop, const LoopAccess &access,
                unsigned dims, unsigned length, int lo, int hi, Program &p) {
  auto pad = [&] {
    for (unsigned d = dims; d < length; ++d) {
      p.ops.push_back(store(lo, d, Operand::i64(0)));
      p.ops.push_back(store(hi, d, Operand::i64(1)));
    }
  };
  if (!loop.ranges.empty()) {
    for (unsigned d = 0; d < dims; ++d) {
      p.ops.push_back(
          store(lo, d, Operand::ir(*loop.ranges[d].lo, Operand::Conv::ToI64)));
      p.ops.push_back(
          store(hi, d, Operand::ir(*loop.ranges[d].hi, Operand::Conv::ToI64)));
    }
    return pad();
  }
  // The whole block: the extent of the loop's first dat, from its base.
  // Sema rejects a whole-block loop without a dat argument.
  const Dat *dat = access.extentDat;
  OPDC_ASSERT(dat, "a loop over a whole block without a dat argument");
  int ext = p.addLocal(Ty::I64, 0, "extent");
  for (unsigned d = 0; d < dims; ++d) {
    int64_t base = d < dat->base.size() ? dat->base[d] : 0;
    p.ops.push_back(
        call("opd_dat_extent", {Operand::handle(dat), Operand::i32(d)}, ext));
    p.ops.push_back(store(lo, d, Operand::i64(base)));
    p.ops.push_back(store(hi, d, Operand::plus(Operand::read(ext), base)));
  }
  pad();
}

// A range computed at run time may reach beyond a dat's halo; stop with
// the loop's location instead of reading or writing outside its storage.
void lowerHaloChecks(const ParLoopStmt &loop, const LoopAccess &access,
                     unsigned dims, const std::string &location, int lo, int hi,
                     Program &p) {
  int last = p.addLocal(Ty::I64, 0, "last");
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (!a.usesDat())
      continue;
    const ArgAccess &acc = access.args[i];
    const Dat *dat = a.dat;
    std::string what = location + ": loop '" + loop.kernel->name + "' over '" +
                       loop.block->name + "' " +
                       (a.mode == AccessMode::Read ? "reads" : "writes") +
                       " dat '" + dat->name + "'";
    for (unsigned d = 0; d < dims; ++d) {
      auto at = [&](const std::vector<int64_t> &v) {
        return d < v.size() ? v[d] : 0;
      };
      // Valid indices: [first, last]; the loop reaches [lo + mn, hi - 1 + mx].
      const Operand first = Operand::i64(at(dat->base) - at(dat->haloMinus));
      std::vector<Op> check{
          call("opd_dat_extent", {Operand::handle(dat), Operand::i32(d)}, last),
          store(last, 0,
                Operand::plus(Operand::read(last),
                              at(dat->base) + at(dat->haloPlus) - 1))};
      Operand low = Operand::plus(Operand::at(lo, d), acc.lo[d]);
      Operand high = Operand::plus(Operand::at(hi, d), acc.hi[d] - 1);
      auto fail = [&](const Operand &index) {
        return std::vector<Op>{call("opd_rt_fail_outside",
                                    {Operand::str(what), index, Operand::i32(d),
                                     first, Operand::read(last)})};
      };
      check.push_back(ifThen(low, Pred::Lt, first, fail(low)));
      check.push_back(ifThen(high, Pred::Gt, Operand::read(last), fail(high)));
      p.ops.push_back(ifThen(Operand::at(lo, d), Pred::Lt, Operand::at(hi, d),
                             std::move(check)));
    }
  }
}

void lowerCommAvoid(const ParLoopStmt &loop, const std::string &location,
                    Program &p) {
  if (loop.haloGroup) {
    const HaloGroup &g = *loop.haloGroup;
    std::vector<ir::Dat *> dats;
    std::vector<int64_t> depth;
    for (const auto &gd : g.dats) {
      dats.push_back(gd.dat);
      depth.insert(depth.end(), gd.depth.begin(), gd.depth.end());
    }
    if (depth.empty())
      depth.assign(3, 0);
    // opd_chain_loop {i64 bytes, i64 extension, i32 exchanges, i32 depth,
    //                 i64 cached}
    std::vector<int64_t> costs;
    for (const HaloGroup::LoopCost &c : g.loops)
      costs.insert(costs.end(),
                   {c.bytes, c.extension, c.exchanges, c.depth, c.cached});
    int cache = p.addLocal(Ty::Ptr, 0, "group");
    p.locals[size_t(cache)].persistent = true;
    p.locals[size_t(cache)].pointee = "opd_loop";
    p.ops.push_back(
        call("opd_halo_group",
             {Operand::addr(cache), Operand::str("chain at " + location),
              Operand::i32(g.mode == HaloGroup::Mode::On ? 1 : 0),
              Operand::i32(int64_t(dats.size())), Operand::datList(dats),
              Operand::table("group_depth", std::move(depth)),
              Operand::i32(int64_t(g.loops.size())),
              Operand::rows("opd_chain_loop",
                            {Ty::I64, Ty::I64, Ty::I32, Ty::I32, Ty::I64},
                            std::move(costs))}));
  }
  if (loop.extended())
    p.ops.push_back(call("opd_loop_extend_next",
                         {Operand::table("extend_lo", {loop.extendLo.begin(),
                                                       loop.extendLo.end()}),
                          Operand::table("extend_hi", {loop.extendHi.begin(),
                                                       loop.extendHi.end()})}));
}

// The opd_arg table, the runtime's prepare and the loop's location.
void lowerPrepare(const ParLoopStmt &loop, const LoopAccess &access,
                  const LoopTraits &traits, LoopProgram &lp, Program &p) {
  size_t n = loop.args.size();
  int cache = p.addLocal(Ty::Ptr, 0, "loop_cache");
  p.locals[size_t(cache)].persistent = true;
  p.locals[size_t(cache)].pointee = "opd_loop";
  Operand table = Operand::null();
  if (n) {
    std::vector<int64_t> values;
    for (unsigned i = 0; i < n; ++i) {
      RuntimeArgEntry e = runtimeArgEntry(loop.args[i], access.args[i],
                                          traits.atomicIncrements);
      values.insert(values.end(), {0, 0, e.idx, e.kind, e.mode, e.bytes});
      values.insert(values.end(), e.lo.begin(), e.lo.end());
      values.insert(values.end(), e.hi.begin(), e.hi.end());
      values.push_back(e.flags);
    }
    // opd_arg (opd_rt.h), field by field.
    std::vector<Ty> fields{Ty::Ptr, Ty::Ptr, Ty::I32, Ty::I32, Ty::I32,
                           Ty::I32, Ty::I32, Ty::I32, Ty::I32, Ty::I32,
                           Ty::I32, Ty::I32, Ty::I32};
    int args = p.addLocal(Ty::Ptr, unsigned(n), "args");
    Local &l = p.locals[size_t(args)];
    l.persistent = true;
    l.table = Operand::rows("opd_arg", std::move(fields), std::move(values));
    l.table.names = {"dat",   "map",   "idx",   "kind",  "mode",
                     "bytes", "lo[0]", "lo[1]", "lo[2]", "hi[0]",
                     "hi[1]", "hi[2]", "flags"};
    for (unsigned i = 0; i < n; ++i) {
      const AccessDescriptor &a = loop.args[i];
      if (a.usesDat())
        p.ops.push_back(storeField(args, i, 0, Operand::handle(a.dat)));
      if (a.map)
        p.ops.push_back(storeField(args, i, 1, Operand::handle(a.map)));
    }
    table = Operand::addr(args);
  }
  Operand name = Operand::str(traits.name);
  if (!traits.stagedName.empty()) {
    int staged = p.addLocal(Ty::I32, 0, "staged");
    int text = p.addLocal(Ty::Ptr, 0, "name");
    p.locals[size_t(text)].pointee = "const char";
    p.ops.push_back(call(traits.stagingCall, {}, staged));
    p.ops.push_back(ifThen(Operand::read(staged), Pred::Ne, Operand::i32(0),
                           {store(text, 0, Operand::str(traits.stagedName))},
                           {store(text, 0, name)}));
    name = Operand::read(text);
  }
  lp.loop = p.addLocal(Ty::Ptr, 0, "l");
  p.locals[size_t(lp.loop)].pointee = "opd_loop";
  p.locals[size_t(lp.loop)].exactName = true;
  if (loop.block)
    p.ops.push_back(
        call("opd_loop_prepare_block",
             {Operand::addr(cache), name, Operand::handle(loop.block),
              Operand::addr(lp.lo), Operand::addr(lp.hi),
              Operand::i32(int64_t(n)), table},
             lp.loop));
  else
    p.ops.push_back(call("opd_loop_prepare",
                         {Operand::addr(cache), name, Operand::handle(loop.set),
                          Operand::i32(int64_t(n)), table},
                         lp.loop));
  p.ops.push_back(
      call("opd_loop_set_location",
           {Operand::read(lp.loop), Operand::str(traits.location)}));
}

// Each reduction's partials into its variable, in the order of the
// partials, on every rank.
void lowerReductions(const ParLoopStmt &loop, const LoopTraits &traits,
                     LoopProgram &lp, Program &p) {
  int slot = -1;
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (lp.partials[i] < 0)
      continue;
    Operand target = Operand::varAddr(unsigned(a.var));
    Operand type = Operand::enumValue("opd_scalar",
                                      runtimeScalar(Type::scalarOf(a.scalar)));
    Operand dim = Operand::i32(a.dim);
    Operand partials = Operand::read(lp.partials[i]);
    if (exactSum(a, traits.reproSum)) {
      // v + every chunk's exact sum on every rank, rounded once.
      p.ops.push_back(call("opd_reduce_sum_exact", {target, type, dim, partials,
                                                    Operand::read(lp.chunks)}));
      continue;
    }
    std::vector<Operand> reduce{
        target, type, Operand::enumValue("opd_access", runtimeMode(a.mode)),
        dim};
    p.ops.push_back(call("opd_reduce_local", reduce));
    if (slot < 0)
      slot = p.addLocal(Ty::I64, 0, "slot");
    std::vector<Op> combine;
    for (unsigned k = 0; k < a.dim; ++k) {
      Op c;
      c.kind = Op::Kind::Combine;
      c.var = unsigned(a.var);
      c.index = k;
      c.mode = a.mode;
      c.dim = a.dim;
      c.args = {partials, Operand::read(slot)};
      combine.push_back(std::move(c));
    }
    p.ops.push_back(forRange(slot, Operand::i64(0), Operand::read(lp.chunks),
                             std::move(combine)));
    p.ops.push_back(call("opd_reduce_global", std::move(reduce)));
  }
}

} // namespace

bool exactSum(const AccessDescriptor &a, bool reproSum) {
  return reproSum && a.kind == ArgKind::Reduction &&
         a.mode == AccessMode::Sum &&
         (a.scalar == ScalarKind::F64 || a.scalar == ScalarKind::F32);
}

bool gatherIncrements(const ParLoopStmt &loop, const LoopAccess &access,
                      bool reproSum) {
  return reproSum && !loop.block && access.race == RaceClass::IncStrips;
}

LoopProgram lowerLoop(const ParLoopStmt &loop, const LoopAccess &access,
                      const LoopTraits &traits, Program &p) {
  LoopProgram lp;
  if (loop.block) {
    unsigned dims = loop.block->dims;
    OPDC_ASSERT(traits.rangeLength >= dims, "a range shorter than the block");
    lp.lo = p.addLocal(Ty::I64, traits.rangeLength, "lo");
    lp.hi = p.addLocal(Ty::I64, traits.rangeLength, "hi");
    p.locals[size_t(lp.lo)].exactName = true;
    p.locals[size_t(lp.hi)].exactName = true;
    lowerRange(loop, access, dims, traits.rangeLength, lp.lo, lp.hi, p);
    lowerHaloChecks(loop, access, dims, traits.location, lp.lo, lp.hi, p);
  }
  lowerCommAvoid(loop, traits.location, p);
  lowerPrepare(loop, access, traits, lp, p);
  Op phase;
  phase.kind = Op::Kind::Phase;
  p.ops.push_back(phase);
  lp.partials.assign(loop.args.size(), -1);
  for (unsigned i = 0; i < loop.args.size(); ++i)
    if (loop.args[i].kind == ArgKind::Reduction) {
      lp.partials[i] = p.addLocal(Ty::Ptr, 0, "partials");
      // Exact accumulators are the words opd_reduce_sum_exact takes.
      if (exactSum(loop.args[i], traits.reproSum))
        p.locals[size_t(lp.partials[i])].pointee = "const int64_t";
    }
  if (std::any_of(lp.partials.begin(), lp.partials.end(),
                  [](int l) { return l >= 0; }))
    lp.chunks = p.addLocal(Ty::I64, 0, "chunks");
  lowerReductions(loop, traits, lp, p);
  return lp;
}

} // namespace opdc::host
