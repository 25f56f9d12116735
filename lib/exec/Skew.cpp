// Skew.cpp - opd_skew_run: the loops of a skewed sweep, row-interleaved.
// SPDX-License-Identifier: Apache-2.0
//
// The fuse pass (compiler/passes/loops/Fuse.cpp) groups loops over one block
// that cannot share a point of the sweep, because one reads at stencil
// offsets what another writes (Jacobi reading u at (0, +-1), then a copy
// writing u), into a skewed sweep: loop k runs row r - lag_k of the
// outermost dimension while the first runs row r, so each row a later loop
// needs is still in cache, and the pass chose the lags so that every row
// of an earlier loop that a row of a later loop conflicts with ran first.
//
// Threads. The first loop's chunks (exec/Loop.cpp: rows on the grid
// begin + c * chunkSize, numbered by position) are split into one
// contiguous part per thread; the part boundaries are cuts. Phase 1: each
// thread sweeps its part, steps of R rows (about SkewStepPoints points),
// loop by loop within a step; loop k leaves out its rows within lead_k
// after and trail_k before a cut (a conflicting row of an earlier loop
// may lie in the other thread's part, not run yet). Phase 2, after every
// part: per cut, the left-out rows, loop by loop. Parts are made long
// enough that two cuts' left-out rows and what they reach never meet.
// Every row of every loop runs once; the first loop has lead = trail = 0,
// so its chunks run whole, in order, on one thread each: its reduction
// partials are those of opd_loop_run, bitwise.
//
// A later loop that reduces runs whole chunks too (one body call per chunk
// of its own grid, as opd_loop_run makes them, so its partial sums are
// bitwise the same), unless its partials are per plane (3D blocks,
// opd_loop::partialsPerPlane: a plane's sum is the same whatever the
// calls, so it runs as any other loop, lag_k rows behind; a plane is never
// split between calls, and each plane's slot is written by the one thread
// that runs it): in phase 1 a chunk runs once the sweep has passed its
// last row, so the loop may run up to a chunk more than lag_k behind, and
// its rows left out around a cut are widened to whole chunks (up to a
// chunk more lead and trail). The loops after it move back as far (lag,
// lead and trail plus its chunk): every row they conflict with still runs
// first, since each constraint only asks a later loop to stay far enough
// behind an earlier one.
//
// Tiles of dimension 1 (3D blocks). A 3D sweep's rows are planes: for
// heat3d 256^3 one plane of one dat is 512 KiB, so the planes four steps
// keep alive (a few of each dat) live in L3, not L2, and every loop but the
// first reads them from there. When every loop's context gives its range
// (schedule: ctx_bytes, range_offset) and a plane holds more than two
// tiles of SkewTilePoints points, phase 1 runs the sweep tile by tile: for
// each tile [J, J + T) of dimension 1 (T rows), the whole sweep along the
// outermost dimension as above, loop k over rows [J - shift_k, J + T -
// shift_k) of dimension 1 (its body gets a copy of its context with that
// range: the thread's own copy). shift_k is the dimension-1 twin of lag_k,
// from the arguments' reach (opd_arg lo/hi, a box around the stencil's
// points): loop m's point x conflicts with loop k's point x + D, D <=
// hi_m - lo_k over the pairs of arguments on one dat where one writes, and
// shift_m >= shift_k + max D puts that point of k in an earlier tile or in
// the same one (where the lags order them as before). Every row of every
// loop still runs once, after what it conflicts with; a plane's rows run
// in increasing order (tiles in order), so per-plane sums are unchanged.
// Phase 2 runs its rows tile by tile too, loop by loop in each tile (a
// conflicting point of an earlier loop lies in an earlier tile or runs
// first in the same one). OPD_SKEW_TILES=0 in the environment turns tiles
// off.
//
// The halos of every loop are exchanged (and waited for) before the sweep:
// no overlap of messages with the core, which the pass accepts in return
// for one sweep over memory. Under MPI a later loop may read beyond the
// rank's points what an earlier loop writes only where the earlier loop
// runs there too (a communication-avoiding chain's extensions,
// passes/loops/CommAvoid.cpp); where it does not (a chain run plain), the loops
// run one after the other (computedHere). Time and bytes go to the first
// loop's profile entry (the others count their calls and name the sweep);
// each loop's choices of body (streaming stores, the scalar body: Loop.cpp)
// are made on the seconds its own body calls took.
#include "exec/Loop.h"

#include "core/Dist.h"
#include "core/Pool.h"
#include "core/Runtime.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace opdc::rt {
namespace {

/// Points of the first loop per step of the sweep (R rows): the rows a
/// later loop reads back are lag_k steps old at most, a few hundred KiB
/// for Poisson's three dats, within the L2 of current cores.
constexpr int64_t SkewStepPoints = 16384;
/// Points of a plane per tile of dimension 1 (3D sweeps): 32 rows of
/// heat3d 256^3's 254 points, 64 KiB of a plane of doubles, so that the
/// planes a sweep of four or eight steps keeps alive stay in a 1 MiB L2
/// rather than L3. 8192 was the fastest of the sizes tried on heat3d's
/// sweeps of eight steps (docs/performance.md, "Figures from code
/// comments").
constexpr int64_t SkewTilePoints = 8192;
/// The fewest points a body call of a loop that spans several tiles may
/// get (tileRows).
constexpr int64_t MinTileCallPoints = 1024;

struct Member {
  opd_loop *loop;
  opd_body body;
  void *ctx;
  int64_t lag, lead, trail;
  int64_t begin, end, chunkSize; ///< rows [begin, end), chunk grid
  /// Its context's size and where in it the range lies (int64_t lo[ndims]
  /// then hi[ndims]); 0 bytes: it cannot run in tiles.
  int64_t ctxBytes = 0, rangeOffset = 0;
  int64_t shift = 0;  ///< tiles of dimension 1: the dimension-1 lag
  bool whole = false; ///< a later loop that reduces: whole chunks only
  /// Row \p x rounded down / up to the chunk grid, within [begin, end].
  int64_t down(int64_t x) const {
    x = std::clamp(x, begin, end);
    return x == end ? end : begin + (x - begin) / chunkSize * chunkSize;
  }
  int64_t up(int64_t x) const {
    x = std::clamp(x, begin, end);
    return std::min(end, begin + (x - begin + chunkSize - 1) / chunkSize *
                                     chunkSize);
  }
};

/// Rows [a, b) of member m, split on its chunk grid; adds the seconds the
/// body calls took to \p spent (the member's time for the choices of its
/// bodies, opd_loop::choiceSeconds).
void runRows(const Member &m, int64_t a, int64_t b, double &spent,
             void *ctx = nullptr) {
  a = std::max(a, m.begin);
  b = std::min(b, m.end);
  if (a >= b)
    return;
  const double t0 = opd_rt_wtime();
  while (a < b) {
    const int64_t c = (a - m.begin) / m.chunkSize;
    const int64_t e = std::min(b, m.begin + (c + 1) * m.chunkSize);
    m.body(ctx ? ctx : m.ctx, a, e, c);
    a = e;
  }
  spent += opd_rt_wtime() - t0;
}

/// A thread's copy of a member's context whose dimension-1 range it sets
/// tile by tile.
class TileContext {
public:
  explicit TileContext(const Member &m) : bytes(size_t(m.ctxBytes) + 64), m(m) {
    // (ctx points into bytes: never copied, and a move keeps the buffer.)
    auto at = reinterpret_cast<uintptr_t>(bytes.data());
    ctx = bytes.data() + ((64 - at % 64) % 64); // as aligned as any field
    std::memcpy(ctx, m.ctx, size_t(m.ctxBytes));
    range = reinterpret_cast<int64_t *>(ctx + m.rangeOffset);
  }
  /// Rows [a, b) of dimension 1, within the loop's own; false when none.
  bool rows(int64_t a, int64_t b) {
    const int nd = m.loop->ndims;
    range[1] = std::max(a, m.loop->lo[1]);
    range[nd + 1] = std::min(b, m.loop->hi[1]);
    return range[1] < range[nd + 1];
  }
  void *get() { return ctx; }
  TileContext(const TileContext &) = delete;
  TileContext &operator=(const TileContext &) = delete;
  TileContext(TileContext &&) = default;

private:
  std::vector<unsigned char> bytes;
  const Member &m;
  unsigned char *ctx = nullptr;
  int64_t *range = nullptr;
};

/// Rows of dimension 1 per tile when the sweep runs in tiles (0: whole
/// planes): 3D, every loop's context copyable, none in whole chunks, and
/// a plane of more than two tiles; OPD_SKEW_TILES=0 turns it off.
int64_t tileRows(const std::vector<Member> &ms) {
  static const bool off = [] {
    const char *e = std::getenv("OPD_SKEW_TILES");
    if (!e || !*e || !std::strcmp(e, "1"))
      return false;
    if (!std::strcmp(e, "0"))
      return true;
    failf("invalid value '%s' for environment variable OPD_SKEW_TILES: "
          "expected 1 (3D skewed sweeps in tiles of dimension 1, the "
          "default) or 0",
          e);
  }();
  const opd_loop &f = *ms[0].loop;
  if (off || f.ndims != 3 || ms.size() < 2)
    return 0;
  for (const Member &m : ms)
    if (!m.ctxBytes || m.whole || m.loop->ndims != 3)
      return 0;
  const int64_t row = std::max<int64_t>(1, f.hi[0] - f.lo[0]);
  const int64_t tile = std::max<int64_t>(1, SkewTilePoints / row);
  if (f.hi[1] - f.lo[1] <= 2 * tile)
    return 0;
  // A loop over a thin slab of dimension 0 across the tiles (an adjoint's
  // frame loops next to its transposed stencil) would be called once a
  // tile and plane for a few points each: heat3d's reverse sweep of 50
  // loops, 20 of them such slabs, ran 3-5 % slower in tiles; with the
  // frame in layers (decision 0470) its gather gained nothing in tiles
  // either (decision 0480).
  for (const Member &m : ms)
    if (m.loop->hi[1] - m.loop->lo[1] > tile &&
        (m.loop->hi[0] - m.loop->lo[0]) * tile < MinTileCallPoints)
      return 0;
  return tile;
}

/// Each loop's shift (the header): at least shift_k + hi_m - lo_k along
/// dimension 1 over every pair of its arguments and an earlier loop k's on
/// one dat where one writes.
void tileShifts(std::vector<Member> &ms) {
  auto writes = [](const opd_arg &a) {
    return a.mode == OPD_WRITE || a.mode == OPD_RW || a.mode == OPD_INC;
  };
  for (size_t m = 1; m < ms.size(); ++m) {
    int64_t shift = 0;
    for (size_t k = 0; k < m; ++k)
      for (const opd_arg &a : ms[m].loop->args)
        for (const opd_arg &b : ms[k].loop->args)
          if (a.dat && a.dat == b.dat && (writes(a) || writes(b)))
            shift = std::max<int64_t>(shift, ms[k].shift + a.hi[1] - b.lo[1]);
    ms[m].shift = shift;
  }
}

/// The first loop's profile note while its sweep ran only as separate
/// loops (a run as one sweep replaces it).
const std::string SeparateNote = "skewed sweep run as separate loops: ";

/// Whether every point of a dat that a later loop reads (at its stencil's
/// offsets) and an earlier loop writes is written on this rank, so that the
/// sweep needs no message in between. Within the rank's points it always
/// is; beyond them (another rank's points, which a plain loop would receive
/// in a halo exchange after the writer ran) only where the writer runs
/// there too, redundantly: a communication-avoiding chain extends it
/// (passes/loops/CommAvoid.cpp). Per pair, with A the writer's range as asked
/// (global), L the part it runs here and R the reader's points, every point
/// of R in A must be in L: boxes, so dimension by dimension. On one
/// process L = A. Sets \p why when not.
bool computedHere(const std::vector<Member> &ms, std::string &why) {
  for (size_t k = 1; k < ms.size(); ++k) {
    const opd_loop &r = *ms[k].loop;
    if (r.count == 0)
      continue;
    // Every dat argument (a direct one reaches its centre only: lo = hi = 0).
    for (const opd_arg &a : r.args) {
      if (!a.dat || a.mode == OPD_WRITE)
        continue;
      for (size_t j = 0; j < k; ++j) {
        const opd_loop &w = *ms[j].loop;
        for (const opd_arg &b : w.args) {
          if (b.dat != a.dat ||
              (b.mode != OPD_WRITE && b.mode != OPD_RW && b.mode != OPD_INC))
            continue;
          bool centre = true, meets = true, inside = true;
          for (int d = 0; d < r.ndims; ++d) {
            centre = centre && b.lo[d] == 0 && b.hi[d] == 0;
            const int64_t lo = std::max(r.lo[d] + a.lo[d], w.askedLo[d]);
            const int64_t hi = std::min(r.hi[d] + a.hi[d], w.askedHi[d]);
            meets = meets && lo < hi;
            inside = inside && lo >= w.lo[d] && hi <= w.hi[d];
          }
          if (meets && (!centre || !inside)) {
            why = "'" + r.name + "' reads '" + a.dat->name +
                  "' beyond this rank's points, which '" + w.name +
                  "' writes there on another rank";
            return false;
          }
        }
      }
    }
  }
  return true;
}

/// computedHere, decided alike on every rank: a rank that sweeps would
/// send its neighbours rows an earlier loop has not written yet, which a
/// rank running the loops one by one would use. The decision depends on
/// the rank's part and on what every rank knows alike (the ranges asked
/// for and the extensions), so it is made once per value of the latter
/// (one allreduce; a chain that starts communication-avoiding after its
/// measuring plain run makes two) and kept on the sweep's first loop.
bool sweepsHere(const std::vector<Member> &ms, std::string &why) {
  std::vector<int64_t> key;
  for (const Member &m : ms)
    for (int d = 0; d < 3; ++d)
      key.insert(key.end(), {m.loop->askedLo[d], m.loop->askedHi[d],
                             m.loop->extLo[d], m.loop->extHi[d]});
  opd_loop &first = *ms[0].loop;
  if (first.sweepKey != key) {
    first.sweepKey = std::move(key);
    first.sweepWhy.clear();
    first.sweeps = computedHere(ms, first.sweepWhy);
    if (dist::ranks() > 1) {
      const double v = first.sweeps ? 0.0 : 1.0;
      double mx = 0, sum = 0;
      dist::maxAndSum(&v, &mx, &sum, 1);
      if (mx > 0 && first.sweeps) {
        first.sweeps = false;
        first.sweepWhy = "on another rank, a loop reads beyond its points "
                         "what an earlier loop writes";
      }
    }
  }
  why = first.sweepWhy;
  return first.sweeps;
}

/// How far (rows) the loops' stencils reach along the outermost dimension.
int64_t outerReach(const opd_loop &loop) {
  const int outer = loop.ndims - 1;
  int64_t r = 0;
  for (const opd_arg &a : loop.args)
    if (a.kind == OPD_ARG_STENCIL)
      r = std::max<int64_t>({r, -a.lo[outer], a.hi[outer]});
  return r;
}

/// opd_skew_run's loops, checked, with their schedules; the loops after
/// one that reduces in whole chunks move back by its chunk (the header).
std::vector<Member> skewMembers(int n, opd_loop *const *loops,
                                const opd_body *bodies, void *const *ctxs,
                                const int64_t *schedule) {
  std::vector<Member> ms;
  for (int k = 0; k < n; ++k) {
    opd_loop *l = loops[k];
    if (!l || !l->block || l->ndims != loops[0]->ndims)
      failf("internal error: skewed sweep of '%s': loop %d is not a loop "
            "over the same block",
            loops[0]->name.c_str(), k);
    const int64_t *sk = schedule + 5 * k;
    if (sk[3] > 0 && (sk[4] < 0 || sk[4] + 16 * int64_t(l->ndims) > sk[3]))
      failf("internal error: skewed sweep of '%s': loop %d's range lies "
            "outside its context",
            loops[0]->name.c_str(), k);
    ms.push_back({l, bodies[k], ctxs[k], sk[0], sk[1], sk[2], l->begin,
                  l->begin + l->count, std::max<int64_t>(1, l->chunkSize),
                  std::max<int64_t>(0, sk[3]), sk[4]});
  }
  // Later loops that reduce run whole chunks; the loops after each move
  // back by its chunk (the header).
  int64_t back = 0;
  for (size_t k = 1; k < ms.size(); ++k) {
    Member &m = ms[k];
    m.lag += back;
    m.lead += back;
    m.trail += back;
    for (const opd_arg &a : m.loop->args)
      m.whole = m.whole ||
                (a.kind == OPD_ARG_REDUCTION && !m.loop->partialsPerPlane());
    if (m.whole)
      back += m.chunkSize;
  }
  return ms;
}

/// The threads' parts of a sweep: contiguous runs of the first loop's
/// chunks, as few as keep each part's rows apart from the next cut's; the
/// cuts between them (first and last: unbounded).
std::vector<int64_t> partCuts(const std::vector<Member> &ms) {
  const Member &first = ms[0];
  const int64_t chunks =
      first.end > first.begin
          ? (first.end - first.begin + first.chunkSize - 1) / first.chunkSize
          : 0;
  int64_t maxLag = 0, maxLead = 0, maxTrail = 0, reach = 0;
  for (const Member &m : ms) {
    const int64_t more = m.whole ? m.chunkSize : 0;
    maxLag = std::max(maxLag, m.lag + more);
    maxLead = std::max(maxLead, m.lead + more);
    maxTrail = std::max(maxTrail, m.trail + more);
    reach = std::max(reach, outerReach(*m.loop));
  }
  // A part holds its cuts' left-out rows and what they reach apart from
  // the next cut's.
  const int64_t minRows = 2 * (maxLead + maxTrail + maxLag + 2 * reach) + 1;
  int64_t parts = std::min<int64_t>(omp_get_max_threads(), chunks);
  while (parts > 1 && (chunks / parts) * first.chunkSize < minRows)
    --parts;
  parts = std::max<int64_t>(parts, 1);
  std::vector<int64_t> cut(size_t(parts) + 1);
  cut[0] = LLONG_MIN / 4;
  cut[size_t(parts)] = LLONG_MAX / 4;
  for (int64_t t = 1; t < parts; ++t)
    cut[size_t(t)] = first.begin + (t * chunks / parts) * first.chunkSize;
  return cut;
}

/// Begins every loop of a sweep and waits for their halos; returns each
/// loop's exchange seconds before it began (opd_skew_run says why all
/// before any row runs).
std::vector<double> beginSweep(std::vector<Member> &ms) {
  std::vector<double> exchanged(ms.size());
  for (size_t k = 0; k < ms.size(); ++k) {
    exchanged[k] = ms[k].loop->exchangeSeconds;
    opd_loop_begin(ms[k].loop);
    setActiveLoop(nullptr);
    if (k + 1 < ms.size())
      dist::afterLoop(ms[k].loop);
  }
  for (Member &m : ms)
    opd_loop_wait_halos(m.loop);
  return exchanged;
}

/// After a sweep: its time and bytes on the first loop (the later loops'
/// exchange time moved there too), each loop's notes and body seconds
/// (\p spent: per part, per loop), and each loop ended.
void profileSweep(std::vector<Member> &ms, const std::vector<double> &exchanged,
                  const std::vector<double> &spent, int64_t parts,
                  int64_t tile) {
  // The profile: the sweep's time and bytes on the first loop, and so the
  // time the later loops' exchanges took before it (a loop's time outside
  // exchanges stays >= 0: the chains' cost model measures it).
  for (size_t k = 1; k < ms.size(); ++k) {
    const double t = ms[k].loop->exchangeSeconds - exchanged[k];
    ms[k].loop->exchangeSeconds -= t;
    ms[0].loop->exchangeSeconds += t;
  }
  for (size_t k = 0; k < ms.size(); ++k) {
    opd_loop *l = ms[k].loop;
    l->choiceSeconds = 0;
    for (int64_t t = 0; t < parts; ++t)
      l->choiceSeconds += spent[ms.size() * size_t(t) + k];
    l->sweepSeconds += l->choiceSeconds;
    ++l->sweepCalls;
    if (k > 0) {
      l->startTime = opd_rt_wtime(); // its time is the first loop's
      ms[0].loop->bytesAdjust += l->bytesPerCall;
      l->bytesAdjust -= l->bytesPerCall;
      if (l->note.empty())
        l->note = "in the skewed sweep of '" + ms[0].loop->name +
                  "' (its time and bytes counted there)";
    } else if (l->note.empty() || l->note.rfind(SeparateNote, 0) == 0) {
      // Runs of the same loop at the same lag once, with their count.
      l->note = "skewed sweep with";
      for (size_t j = 1, runs = 0; j < ms.size(); j += runs) {
        runs = 1;
        while (j + runs < ms.size() &&
               ms[j + runs].loop->name == ms[j].loop->name &&
               ms[j + runs].lag == ms[j].lag)
          ++runs;
        l->note += std::string(j > 1 ? "," : "") + " '" + ms[j].loop->name +
                   "'" + (runs > 1 ? " x" + std::to_string(runs) : "") + " (" +
                   std::to_string(ms[j].lag) + " row" +
                   (ms[j].lag == 1 ? "" : "s") + " behind)";
      }
      l->note += ": the time and bytes of all of them";
      if (tile)
        l->note +=
            " (in tiles of " + std::to_string(tile) + " rows of dimension 1)";
    }
    setActiveLoop(l);
    opd_loop_end(l);
  }
}

} // namespace
} // namespace opdc::rt

using namespace opdc::rt;

void opd_skew_run(int n, opd_loop *const *loops, const opd_body *bodies,
                  void *const *ctxs, const int64_t *schedule) {
  if (n < 1 || !loops || !bodies || !ctxs || !schedule)
    failf("internal error: a skewed sweep without loops");
  std::vector<Member> ms = skewMembers(n, loops, bodies, ctxs, schedule);
  // Under MPI without the extensions of a communication-avoiding chain
  // (or in its measuring plain run), a later loop may read beyond the
  // rank's points what an earlier one writes: that needs the earlier
  // loop's halo exchange in between, so the loops run one after the other,
  // each as opd_loop_run runs it, on every rank (sweepsHere).
  std::string why;
  if (!sweepsHere(ms, why)) {
    if (ms[0].loop->note.empty())
      ms[0].loop->note = SeparateNote + why;
    for (Member &m : ms)
      opd_loop_run(m.loop, m.body, m.ctx);
    return;
  }
  // Every loop's halos before any row runs: a later loop's rows overwrite
  // what an earlier one reads, so nothing may be in flight meanwhile. The
  // dats an earlier loop writes are valid beyond the rank's points as far
  // as it runs there before a later loop begins (dist::afterLoop, as its
  // end will mark them): the later loop exchanges exactly the halos it
  // would after the earlier one ran alone, and none that the sweep
  // computes here (computedHere: a halo it still exchanges lies outside
  // what the earlier loop writes, or is overwritten by it).
  const std::vector<double> exchanged = beginSweep(ms);

  // The threads' parts: contiguous runs of the first loop's chunks.
  const Member &first = ms[0];
  const std::vector<int64_t> cut = partCuts(ms);
  const int64_t parts = int64_t(cut.size()) - 1;

  // Tiles of dimension 1 (the header), and the sweep's step in rows of
  // the outermost dimension: about SkewStepPoints points of the first
  // loop (of a tile).
  const int64_t tile = tileRows(ms);
  if (tile)
    tileShifts(ms);
  int64_t inner = 1;
  for (int d = 0; d + 1 < first.loop->ndims; ++d)
    inner *= std::max<int64_t>(1, first.loop->hi[d] - first.loop->lo[d]);
  if (tile)
    inner = tile * std::max<int64_t>(1, first.loop->hi[0] - first.loop->lo[0]);
  const int64_t step = std::max<int64_t>(1, SkewStepPoints / inner);
  // The tiles' grid along dimension 1: loop k's rows [J - shift_k, J +
  // tile - shift_k) for J from tileLo in steps of tile, up to tileHi.
  int64_t tileLo = LLONG_MAX, tileHi = LLONG_MIN;
  for (const Member &m : ms)
    if (tile && m.loop->lo[1] < m.loop->hi[1]) {
      tileLo = std::min(tileLo, m.loop->lo[1] + m.shift);
      tileHi = std::max(tileHi, m.loop->hi[1] + m.shift);
    }

  // Each loop's body seconds, summed over the threads (the choices of its
  // bodies: streaming, scalar; opd_loop::choiceSeconds).
  std::vector<double> spent(ms.size() * size_t(parts), 0.0);

  // Phase 1: each part swept, loop k lag_k rows behind the first.
  // Parts are tasks of the runtime's pool (core/Pool.h): any thread may
  // run any part; small sweeps run on this thread.
  double sweepBytes = 0;
  for (const Member &m : ms)
    sweepBytes += m.loop->bytesPerCall;
  const bool parallel = sweepBytes >= parallelBytes();
  runTasks(parts, parallel && parts > 1, [&](int64_t t) {
    double *mine = &spent[ms.size() * size_t(t)];
    std::vector<int64_t> lo(ms.size()), hi(ms.size()), next(ms.size());
    int64_t from = LLONG_MAX, to = LLONG_MIN;
    for (size_t k = 0; k < ms.size(); ++k) {
      const Member &m = ms[k];
      lo[k] = std::max(m.begin, cut[size_t(t)] + (t > 0 ? m.lead : 0));
      hi[k] =
          std::min(m.end, cut[size_t(t) + 1] - (t + 1 < parts ? m.trail : 0));
      if (m.whole) {
        lo[k] = m.up(lo[k]);
        hi[k] = m.down(hi[k]);
      }
      next[k] = lo[k];
      if (lo[k] < hi[k]) {
        from = std::min(from, lo[k] + m.lag);
        to = std::max(to, hi[k] + m.lag);
      }
    }
    if (tile) {
      // Tile by tile, the sweep in each (no loop runs whole chunks).
      std::vector<TileContext> copies(ms.begin(), ms.end());
      std::vector<char> some(ms.size());
      for (int64_t j = tileLo; j < tileHi; j += tile) {
        for (size_t k = 0; k < ms.size(); ++k)
          some[k] = copies[k].rows(j - ms[k].shift, j + tile - ms[k].shift);
        for (int64_t i = from; i < to; i += step)
          for (size_t k = 0; k < ms.size(); ++k)
            if (some[k])
              runRows(ms[k], std::max(lo[k], i - ms[k].lag),
                      std::min(hi[k], i - ms[k].lag + step), mine[k],
                      copies[k].get());
      }
      return;
    }
    for (int64_t i = from; i < to; i += step)
      for (size_t k = 0; k < ms.size(); ++k) {
        const Member &m = ms[k];
        const int64_t until = std::min(hi[k], i - m.lag + step);
        if (!m.whole) {
          runRows(m, std::max(lo[k], i - m.lag), until, mine[k]);
          continue;
        }
        // Whole chunks whose last row the sweep has passed.
        const int64_t e = until == hi[k] ? hi[k] : m.down(until);
        if (e > next[k]) {
          runRows(m, next[k], e, mine[k]);
          next[k] = e;
        }
      }
  });
  // Phase 2: around each cut, the rows left out, loop by loop (in tiles:
  // tile by tile, loop by loop in each, as phase 1 orders them).
  runTasks(parts - 1, parallel && parts > 2, [&](int64_t t0) {
    const int64_t t = t0 + 1;
    double *mine = &spent[ms.size() * size_t(t)];
    if (tile) {
      std::vector<TileContext> copies(ms.begin(), ms.end());
      for (int64_t j = tileLo; j < tileHi; j += tile)
        for (size_t k = 1; k < ms.size(); ++k)
          if (copies[k].rows(j - ms[k].shift, j + tile - ms[k].shift))
            runRows(ms[k], cut[size_t(t)] - ms[k].trail,
                    cut[size_t(t)] + ms[k].lead, mine[k], copies[k].get());
      return;
    }
    for (size_t k = 1; k < ms.size(); ++k) {
      const Member &m = ms[k];
      int64_t a = cut[size_t(t)] - m.trail, z = cut[size_t(t)] + m.lead;
      if (m.whole) {
        a = m.down(a);
        z = m.up(z);
      }
      runRows(m, a, z, mine[k]);
    }
  });

  profileSweep(ms, exchanged, spent, parts, tile);
}
