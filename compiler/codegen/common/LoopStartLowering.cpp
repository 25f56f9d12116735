// LoopStartLowering.cpp - The first phases of a parallel loop in the
// host-program form, once for every backend.
// SPDX-License-Identifier: Apache-2.0
//
// Before a backend's own phases (the runtime's prepare with the argument
// table, the context, the run or the launches, the reductions), a loop
// over a block computes its range and checks it against each dat's halo,
// and the first loop of a rewritten chain (passes/loops/CommAvoid.cpp)
// starts the chain's grouped halo exchange and announces its extension.
// The CPU backend (llvm/LoopHost.cpp) and the CUDA backend
// (cuda/CUDALoopHost.cpp) print these from here.
#include "codegen/common/HostProgram.h"

#include "support/Assert.h"

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

} // namespace

LoopStart lowerLoopStart(const ParLoopStmt &loop, const LoopAccess &access,
                         unsigned rangeLength, const std::string &location,
                         Program &p) {
  LoopStart start;
  if (loop.block) {
    unsigned dims = loop.block->dims;
    OPDC_ASSERT(rangeLength >= dims, "a range shorter than the block");
    start.lo = p.addLocal(Ty::I64, rangeLength, "lo");
    start.hi = p.addLocal(Ty::I64, rangeLength, "hi");
    p.locals[size_t(start.lo)].exactName = true;
    p.locals[size_t(start.hi)].exactName = true;
    lowerRange(loop, access, dims, rangeLength, start.lo, start.hi, p);
    lowerHaloChecks(loop, access, dims, location, start.lo, start.hi, p);
  }
  lowerCommAvoid(loop, location, p);
  return start;
}

} // namespace opdc::host
