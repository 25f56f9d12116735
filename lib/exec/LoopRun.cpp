// LoopRun.cpp - The loop phases, opd_loop_run, the timed variants
// (streaming stores, scalar bodies), the plan parts a backend runs itself,
// and reductions.
// SPDX-License-Identifier: Apache-2.0
//
// Apart from Loop.cpp (opd_loop_prepare, the registry): this is what runs
// a prepared loop. opd_loop_run is built from the same phases a backend
// calls one by one (opd_loop_begin, opd_loop_wait_halos, opd_loop_end;
// opd_rt.h); a chunk is one indirect call of the body, with neither
// allocation nor lock.
#include "exec/CommAvoid.h"
#include "exec/Loop.h"

#include "core/Dist.h"
#include "core/Pool.h"
#include "core/Runtime.h"
#include "exec/FPCheck.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace opdc::rt {
namespace {
// The loop between opd_loop_begin and opd_loop_end (exchanges in flight
// belong to it; lib/mpi keeps one set of pending requests).
opd_loop *activeLoop = nullptr;
// The loop that ended last: the reductions opd_reduce_global combines
// after it are its own.
opd_loop *lastEnded = nullptr;

bool hasReduction(const opd_loop &loop) {
  for (const opd_arg &a : loop.args)
    if (a.kind == OPD_ARG_REDUCTION)
      return true;
  return false;
}

} // namespace

void setActiveLoop(opd_loop *loop) { activeLoop = loop; }
void forgetEndedLoop() { lastEnded = nullptr; }

int TimedChoice::pick(int warmup, double exchangeSeconds) {
  if (choice >= 0)
    return choice;
  // Call 0 runs `warmup` untimed; calls 1, 2, ... the other, `warmup`, ...
  trial = trials % 2 == 0 ? warmup : 1 - warmup;
  exchange0 = exchangeSeconds;
  return trial;
}

void TimedChoice::record(double seconds, double exchangeSeconds, int warmup,
                         int trialsNeeded) {
  if (trial < 0)
    return;
  const int k = trials++; // 0: the untimed warm-up
  if (k > 0)
    best[trial] =
        std::min(best[trial], seconds - (exchangeSeconds - exchange0));
  trial = -1;
  if (k == trialsNeeded)
    choice = best[1 - warmup] < best[warmup] ? 1 - warmup : warmup;
}
} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

namespace {
enum class VariantMode { Off, Timed, Always };
/// The environment variable `var` that forces or forbids a timed variant
/// (`what`): unset, empty or 1 times it, 0 never runs it, always always.
VariantMode variantMode(const char *var, const char *what) {
  const char *env = std::getenv(var);
  if (!env || !*env || !std::strcmp(env, "1"))
    return VariantMode::Timed;
  if (!std::strcmp(env, "0"))
    return VariantMode::Off;
  if (!std::strcmp(env, "always"))
    return VariantMode::Always;
  failf("invalid value '%s' for environment variable %s: expected 1 (%s "
        "where timing says it is faster, the default), 0 or always",
        env, var, what);
}
} // namespace

int64_t opd_loop_chunks(const opd_loop *loop) { return loop->nchunks; }

int64_t opd_loop_partial_slots(const opd_loop *loop) {
  return loop->partialsPerPlane() ? loop->count : loop->nchunks;
}

int opd_loop_streams(const opd_loop *loop) {
  // On by default (OPD_STREAM_STORES=0 turns it off): with padded rows and
  // the peeled element loop, block loops stream whole aligned lines
  // (VMOVNTPD), and heat3d 400^3 ran 1-14 % faster per step than with plain
  // stores in every round on a quiet machine, at 1 and 2 threads
  // (docs/performance.md). Loops within the cache never stream: the data
  // would be evicted for the next loop to fetch again.
  //
  // Whether it pays is decided by timing: a 3D 7-point sweep with one
  // output streams faster, but one that also reads a second 7-point
  // stencil, or writes a second output, ran slower streaming
  // (docs/performance.md). So after a first call
  // (streaming, untimed: it also pays for cold TLBs and caches) the next
  // StreamTrials calls alternate the plain and the streaming body, and the
  // variant with the best of its times stays for the rest (endLoop records
  // the times). Values are the same bits either way. OPD_STREAM_STORES=0
  // never streams, =always streams every call beyond the cache untimed
  // (tests and measurements of the streaming bodies).
  static const VariantMode mode = variantMode("OPD_STREAM_STORES", "streaming");
  if (!loop)
    return 0;
  loop->stream.trial = -1;
  if (mode == VariantMode::Off ||
      loop->bytesPerCall <= double(lastLevelCacheBytes()))
    return 0;
  // The scalar body is timed first, and never streams (its stores are
  // scalar: streaming them would write partial lines).
  if (loop->hasScalar && loop->scalar.choice != 0)
    return 0;
  const int streams = mode == VariantMode::Always
                          ? 1
                          : loop->stream.pick(1, loop->exchangeSeconds);
  if (streams)
    ++loop->streamedCalls;
  return streams;
}

int opd_loop_scalar(const opd_loop *loop) {
  // Whether a kernel's branch pays as a branch or as selects over both arms
  // depends on how often the elements take the costly arm, so it is timed
  // as streaming is (opd_loop_streams): CloverLeaf's viscosity kernel ran
  // its scalar body faster than the vectorised one on the benchmark deck,
  // where most cells skip the costly arm (docs/performance.md).
  static const VariantMode mode =
      variantMode("OPD_SCALAR_BODIES", "the scalar body");
  if (!loop)
    return 0;
  loop->hasScalar = true;
  loop->scalar.trial = -1;
  if (mode == VariantMode::Off)
    return 0;
  const int scalar = mode == VariantMode::Always
                         ? 1
                         : loop->scalar.pick(0, loop->exchangeSeconds);
  if (scalar)
    ++loop->scalarCalls;
  return scalar;
}

void opd_loop_set_location(opd_loop *loop, const char *location) {
  if (loop && location != loop->locationSource) {
    loop->locationSource = location;
    loop->location = location ? location : "";
  }
}

namespace {
// Polls the messages in flight while a loop runs its core
// (dist::progressExchanges, decision 0475): on the thread that began the
// loop (MPI_THREAD_FUNNELED), between blocks, at most every PollSeconds,
// until all of them have arrived. Without it a rendezvous message (Open
// MPI: over 4 KiB; Airfoil's q halo is 36 KiB) moved only once both ranks
// had finished their cores, and each waited for the other there.
// OPD_HALO_POLL=0 in the environment turns it off (measurements, tests).
class CorePoll {
public:
  explicit CorePoll(bool inFlight)
      : caller(std::this_thread::get_id()), active(inFlight && enabled()) {}
  void operator()() {
    // The caller's thread alone reads and writes the state below.
    if (std::this_thread::get_id() != caller || !active)
      return;
    const double now = opd_rt_wtime();
    if (now < next)
      return;
    next = now + PollSeconds;
    active = !dist::progressExchanges();
  }

private:
  static bool enabled() {
    static const bool on = envSwitch("OPD_HALO_POLL", true);
    return on;
  }
  static constexpr double PollSeconds = 20e-6;
  const std::thread::id caller;
  bool active;
  double next = 0;
};

// The super-block schedule of `p` (exec/Plan.h): each super-block's own
// elements in order on one thread, then the cross elements colour by
// colour; chunk index = `chunk0` + block, as in the colouring. Tasks run
// on the pool (core/Pool.h) when `parallel`: super-blocks reach disjoint
// targets in phase 1, so any thread may take any of them.
void runSuper(const Plan &p, int64_t chunk0, opd_body body, void *ctx,
              bool parallel, CorePoll *poll) {
  const SuperPlan &s = p.super;
  const int64_t *first = s.superFirst.data();
  const ElementRun *own = s.ownRuns.data(), *cross = s.crossRuns.data();
  const int64_t *ownOff = s.ownOffsets.data(),
                *crossOff = s.crossOffsets.data();
  const int64_t *colourOff = s.crossColourOffsets.data();
  const int64_t *crossBlocks = s.crossBlocks.data();
  const int32_t nsuper = s.nsuper, ncolours = p.ncolours;
  runTasks(nsuper, parallel, [&](int64_t k) {
    for (int64_t b = first[k]; b < first[k + 1]; ++b) {
      for (int64_t r = ownOff[b]; r < ownOff[b + 1]; ++r)
        body(ctx, own[r].begin, own[r].end, chunk0 + b);
      if (poll)
        (*poll)();
    }
  });
  for (int32_t c = 0; c < ncolours; ++c)
    runTasks(colourOff[c + 1] - colourOff[c], parallel, [&](int64_t j) {
      const int64_t b = crossBlocks[colourOff[c] + j];
      for (int64_t r = crossOff[b]; r < crossOff[b + 1]; ++r)
        body(ctx, cross[r].begin, cross[r].end, chunk0 + b);
      if (poll)
        (*poll)();
    });
}

// Runs the blocks of `p` colour by colour (or by its super-block
// schedule); chunk index = `chunk0` + block.
void runPlan(const Plan &p, int64_t chunk0, opd_body body, void *ctx,
             bool parallel, CorePoll *poll = nullptr) {
  if (p.super.nsuper > 0) {
    runSuper(p, chunk0, body, ctx, parallel, poll);
    return;
  }
  const int64_t *offsets = p.colourOffsets.data();
  const int64_t *blocks = p.blocks.data();
  const int64_t first = p.first, n = p.setSize, bs = p.blockSize;
  for (int32_t c = 0; c < p.ncolours; ++c)
    runTasks(offsets[c + 1] - offsets[c], parallel, [&](int64_t j) {
      const int64_t b = blocks[offsets[c] + j];
      const int64_t begin = first + b * bs;
      body(ctx, begin, std::min(begin + bs, n), chunk0 + b);
      if (poll)
        (*poll)();
    });
}

// The chunks of segment `k` of a loop without a plan.
void runSegment(const opd_loop *loop, int k, opd_body body, void *ctx,
                bool parallel, CorePoll *poll = nullptr) {
  const opd_loop::Segment s = loop->segments[k];
  const int64_t cs = loop->chunkSize;
  const int64_t n = (s.end - s.begin + cs - 1) / cs;
  runTasks(n, parallel, [&](int64_t c) {
    const int64_t begin = s.begin + c * cs;
    body(ctx, begin, std::min(begin + cs, s.end), s.chunk0 + c);
    if (poll)
      (*poll)();
  });
}
} // namespace

namespace {
bool beginLoop(opd_loop *loop) {
  if (activeLoop)
    failf("internal error: loop '%s' begins while loop '%s' is running",
          loop->name.c_str(), activeLoop->name.c_str());
  activeLoop = loop;
  loop->running = true;
  loop->startTime = opd_rt_wtime();
  // Halo exchanges the loop needs are posted first; the core (elements
  // that reach no halo element) runs while they are in flight.
  loop->inFlight = dist::startExchanges(loop);
  return loop->inFlight;
}

void waitHalos(opd_loop *loop) {
  if (!loop->running)
    failf("internal error: loop '%s' waits for halos before it began",
          loop->name.c_str());
  if (loop->inFlight) {
    loop->inFlight = false;
    dist::finishExchanges(loop);
  }
}

void endLoop(opd_loop *loop) {
  waitHalos(loop);
  applyGathers(loop); // -frepro-sum increments (Gather.cpp)
  dist::afterLoop(loop);
  loop->running = false;
  activeLoop = nullptr;
  lastEnded = loop;
  const double seconds = opd_rt_wtime() - loop->startTime;
  loop->seconds += seconds;
  ++loop->calls;
  if (loop->choiceSeconds >= 0) {
    // A skewed sweep's loop: its body calls' seconds, no exchange in them.
    loop->stream.record(loop->choiceSeconds, loop->stream.exchange0, 1,
                        StreamTrials);
    loop->scalar.record(loop->choiceSeconds, loop->scalar.exchange0, 0,
                        ScalarTrials);
    loop->choiceSeconds = -1;
  } else {
    loop->stream.record(seconds, loop->exchangeSeconds, 1, StreamTrials);
    loop->scalar.record(seconds, loop->exchangeSeconds, 0, ScalarTrials);
  }
  chainLoopEnded(loop);
  // After the timer: the scan is not the loop's time.
  if (fpCheckEnabled())
    checkLoopFP(loop);
}

const Plan &planPart(const PlanEntry &e, int32_t part) {
  return part == OPD_PART_CORE        ? e.plan
         : part == OPD_PART_REST      ? e.rest
         : part == OPD_PART_EXEC_HALO ? e.halo
                                      : e.deep;
}
} // namespace

void opd_loop_run(opd_loop *loop, opd_body body, void *ctx) {
  beginLoop(loop);
  // Small loops run on this thread (core/Pool.h, parallelBytes).
  const bool parallel = loop->bytesPerCall >= parallelBytes();
  CorePoll poll(loop->inFlight);
  if (loop->plan) {
    const PlanEntry &e = *loop->plan;
    runPlan(e.plan, 0, body, ctx, parallel, &poll);
    waitHalos(loop);
    runPlan(e.rest, e.plan.nblocks, body, ctx, parallel);
    if (e.halo.nblocks + e.deep.nblocks > 0) {
      // The exec halo belongs to other ranks: its increments are needed
      // here, its reduction partials are not (the owner counts them). The
      // partials of every other chunk are final now, so the scratch is
      // restored after the halo's chunks have written theirs.
      std::size_t bytes = 0;
      void *partials = hasReduction(*loop) ? scratchInUse(bytes) : nullptr;
      static std::vector<char> saved;
      if (partials)
        saved.assign(static_cast<char *>(partials),
                     static_cast<char *>(partials) + bytes);
      runPlan(e.halo, e.plan.nblocks + e.rest.nblocks, body, ctx, parallel);
      runPlan(e.deep, e.plan.nblocks + e.rest.nblocks + e.halo.nblocks, body,
              ctx, parallel);
      if (partials && bytes)
        std::memcpy(partials, saved.data(), bytes);
    }
  } else {
    if (loop->nsegments > 0)
      runSegment(loop, 0, body, ctx, parallel, &poll);
    waitHalos(loop);
    for (int k = 1; k < loop->nsegments; ++k)
      runSegment(loop, k, body, ctx, parallel);
  }
  endLoop(loop);
}

int opd_loop_begin(opd_loop *loop) { return beginLoop(loop) ? 1 : 0; }

void opd_loop_wait_halos(opd_loop *loop) { waitHalos(loop); }

void opd_loop_end(opd_loop *loop) {
  if (!loop->running)
    failf("internal error: loop '%s' ends before it began", loop->name.c_str());
  endLoop(loop);
}

int32_t opd_loop_segment_count(const opd_loop *loop) {
  return loop->plan ? 0 : loop->nsegments;
}

void opd_loop_segment_get(const opd_loop *loop, int32_t k,
                          opd_loop_segment *out) {
  if (k < 0 || k >= opd_loop_segment_count(loop))
    failf("internal error: loop '%s' has no segment %d", loop->name.c_str(),
          int(k));
  const opd_loop::Segment &s = loop->segments[k];
  *out = opd_loop_segment{s.begin, s.end, loop->chunkSize, s.chunk0,
                          k == 0 ? 1 : 0};
}

int32_t opd_loop_part_count(const opd_loop *loop) {
  return !loop->plan ? 0 : loop->plan->deep.nblocks > 0 ? 4 : 3;
}

void opd_loop_part_get(const opd_loop *loop, int32_t part, opd_loop_part *out) {
  if (part < 0 || part >= opd_loop_part_count(loop))
    failf("internal error: loop '%s' has no plan part %d", loop->name.c_str(),
          int(part));
  const PlanEntry &e = *loop->plan;
  // A backend running the parts itself runs a loop with indirect out/inout
  // on one thread in stored order (the CUDA backend's sequential loops):
  // the global order only while elements are stored in it.
  if (e.ordered && !loop->set->globalIds.empty())
    failf("loop '%s' writes through a map with 'out' or 'inout' and two of "
          "its elements reach one target: this backend applies such writes "
          "in stored element order, which differs from the global order on "
          "several ranks or with --renumber; run on one rank without "
          "--renumber, or make the map injective",
          loop->name.c_str());
  loop->partsUsed = true;
  const Plan &p = planPart(e, part);
  // An empty part has no offsets; colour_offsets[0] is still readable.
  static const int64_t noColours = 0;
  int64_t chunk0 = 0;
  for (int32_t q = 0; q < part; ++q)
    chunk0 += planPart(e, q).nblocks;
  *out = opd_loop_part{p.first,
                       std::max<int64_t>(0, p.setSize - p.first),
                       p.blockSize,
                       p.nblocks,
                       chunk0,
                       p.colourOffsets.empty() ? &noColours
                                               : p.colourOffsets.data(),
                       p.blocks.data(),
                       e.generation,
                       p.ncolours,
                       part == OPD_PART_CORE ? 1 : 0,
                       part >= OPD_PART_EXEC_HALO ? 0 : 1};
}

namespace {
void checkReduction(opd_scalar type, opd_access op, int dim) {
  if (type < OPD_BOOL || type > OPD_F64 || dim < 1 ||
      (op != OPD_SUM && op != OPD_MIN && op != OPD_MAX))
    failf("internal error: reduction of %d %s with operation %d", dim,
          scalarName(type), int(op));
}
} // namespace

void opd_reduce_local(void *v, opd_scalar type, opd_access op, int dim) {
  checkReduction(type, op, dim);
  if (fpCheckEnabled())
    noteReductionStart(v, type, dim);
  if (op == OPD_SUM && dist::rank() != 0)
    std::memset(v, 0, std::size_t(scalarBytes(type)) * std::size_t(dim));
}

void opd_reduce_global(void *v, opd_scalar type, opd_access op, int dim) {
  checkReduction(type, op, dim);
  // On several ranks the combination waits for the slowest rank's loop:
  // counted as the loop's time and exchange time in the profile (as a
  // halo wait is), so that the loops add up to the run and the wait for
  // an unbalanced or descheduled rank shows where it is paid.
  const bool timed = dist::ranks() > 1 && lastEnded;
  const double t0 = timed ? opd_rt_wtime() : 0;
  dist::allreduce(v, type, op, dim);
  if (timed) {
    const double dt = opd_rt_wtime() - t0;
    lastEnded->seconds += dt;
    lastEnded->exchangeSeconds += dt;
  }
  if (fpCheckEnabled())
    checkReductionFP(v, type, op, dim);
}

} // extern "C"
