// CommAvoid.cpp - Communication-avoiding loop chains at run time: halo
// sizes, loop extensions, the grouped exchange and OP2-CA's cost model.
// SPDX-License-Identifier: Apache-2.0
//
// The comm-avoid pass (compiler/passes/loops/CommAvoid.cpp) rewrites a loop
// chain so that its first loop is preceded by opd_halo_group (the halos the
// chain reads, each as deep as its readers reach) and each loop that produces
// data a later loop reads beyond the rank's points by
// opd_loop_extend_next (how far beyond them it runs, redundantly). Here:
//
//  * the decision, per execution of the chain: the compiled mode (on, or
//    auto), OPD_COMM_AVOID overriding it, and in auto the cost model below;
//  * when the chain runs communication-avoiding, the grouped exchange
//    (dist::groupExchange: one message per neighbour, the dats already
//    valid that deep left out) and the extensions, which the next prepare
//    takes (takeExtension); when it does not, both are dropped and the
//    loops exchange what they need themselves, as plain loops;
//  * per chain, the model's predictions and the measured chain times for
//    the profile (--profile).
//
// The model is OP2-CA's (Ekanayake, Reguly, Luporini, Mudalige, ICPP 2023)
// as it applies to what this runtime does, corrected where bench/ca
// measured otherwise. With L the network latency, B its bandwidth, M the
// memory bandwidth, R the rounds of an exchange (the split dimensions of a
// block: neighbours along one dimension are sent to at once), V the points
// a rank owns, S(k) the points of its halo k deep (over its neighbours), A
// those of one neighbour's halo one deep, and per loop l: c_l its compute
// time per run, x_l dats and r_l depth it exchanges as a plain loop, e_l
// its extension, g_l = c_l / V:
//   plain: sum_l [ x_l > 0 ? max(g_l (V - S(r_l)), R (L + x_l m(r_l)/B))
//                             + g_l S(r_l)                 (overlapped)
//                         : c_l ],      m(k) = A k bytes-per-point;
//          without overlap (a block split in more than its outer
//          dimension) the max becomes a sum;
//   CA:    sum_l g_l (V + S(e_l)) (b_l - k_l) / b_l
//            + max(0, R (L + m_r/B) - core_1) + 2 m_r p / M,
//          m_r the grouped message's bytes per neighbour, the pack and
//          unpack at memory bandwidth; core_1 the first loop's core time
//          when the exchange flies during it (one round), else 0; b_l the
//          loop's bytes per point and k_l those of them an earlier loop of
//          its skewed sweep brought into cache, for a sweep that runs as
//          one only in the avoiding chain (opd_chain_loop::cached; the
//          plain run measured its loops one by one).
// c_l is measured: `auto` runs the chain plain once first (which also
// counts the messages the loops really send; none: nothing to avoid), then
// decides, once (two allreduces per run would cost more latency than the
// chain saves). Not a chain holding a skewed sweep that runs as one only
// when the chain avoids (a loop with `cached` bytes): its plain run splits
// the sweep into separate loops, each a pass over memory, which measures
// the slowest way to run it at the price of that slowness (OPS's Poisson
// on 2 ranks: the first of twelve eight-step sweeps, and a four-step
// remainder chain that runs once, were plain); such a chain decides at its
// first run as `on` does, on the model with bytes at M, whose in-cache
// share of the sweep already favours it.
// `on` decides at once with c_l the loop's bytes at M (which in-cache loops
// beat several-fold); the profile evaluates the model again with the loops'
// times measured over the run, next to the measured chain times (bench/ca
// compares them).
// OP2-CA's 2 x_l p (L + m/B) counted every message twice and the
// neighbours one after another; measured, a plain loop waits one latency
// per round.
// CA wins when latency dominates: fewer messages, more (redundant) work.
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/CommAvoid.h"
#include "exec/Loop.h"

#include "opd_rt.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace opdc::rt {
namespace {

bool pending = false;
int64_t pendingLo[3], pendingHi[3];

struct Model {
  double latency = 1e-6;   ///< seconds per message
  double network = 10e9;   ///< bytes per second
  double memory = 10e9;    ///< bytes per second, one rank
};

double envNumber(const char *name, double fallback, double scale) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return fallback * scale;
  char *end = nullptr;
  double v = std::strtod(env, &end);
  if (*end != '\0' || !(v > 0))
    failf("invalid value '%s' for environment variable %s: expected a "
          "positive number",
          env, name);
  return v * scale;
}

Model profileModel; // opd_rt_cost_model's figures over the defaults

Model &model() {
  static Model m;
  static bool read = false;
  if (!read) {
    m = profileModel;
    read = true;
    m.latency = envNumber("OPD_NET_LATENCY_US", m.latency * 1e6, 1e-6);
    m.network = envNumber("OPD_NET_BANDWIDTH_GBS", m.network * 1e-9, 1e9);
    m.memory = envNumber("OPD_MEM_BANDWIDTH_GBS", m.memory * 1e-9, 1e9);
  }
  return m;
}

// -1: as compiled; 0 off; 1 on; 2 auto.
int forcedMode() {
  static const int mode = [] {
    const char *env = std::getenv("OPD_COMM_AVOID");
    if (!env || !*env)
      return -1;
    if (!std::strcmp(env, "off"))
      return 0;
    if (!std::strcmp(env, "on"))
      return 1;
    if (!std::strcmp(env, "auto"))
      return 2;
    failf("invalid value '%s' for environment variable OPD_COMM_AVOID: "
          "expected on, off or auto",
          env);
  }();
  return mode;
}

/// One chain (one opd_halo_group call site) for the profile.
struct ChainRecord {
  std::string name;
  int64_t runs = 0, avoided = 0;
  bool infeasible = false; ///< a rank's part is thinner than the halos
  /// Auto: the messages a plain run sent (this rank; -1 before the first
  /// plain run, which auto mode makes first to measure it), and per loop
  /// its compute time in that run (seconds outside exchanges).
  int64_t plainMessages = -1;
  std::vector<double> compute;
  /// The decision, made once (opd_halo_group).
  bool decided = false, decision = false;
  /// Per loop seen: its seconds outside exchanges so far.
  std::vector<std::pair<const opd_loop *, double>> seen;
  /// Per loop of the chain, its compute summed over the avoiding runs
  /// (extension included), for the profile's re-evaluated model.
  std::vector<double> computeAvoiding;
  double predictedPlain = 0, predictedAvoiding = 0; ///< at the decision
  double secondsPlain = 0, secondsAvoiding = 0;     ///< measured, summed
  /// The model's inputs at the decision (this rank's).
  dist::ChainGeometry geo;
  std::vector<opd_chain_loop> loops;
  int32_t loopIndex = 0; ///< the next loop of the running chain
};
std::vector<std::unique_ptr<ChainRecord>> &records() {
  static std::vector<std::unique_ptr<ChainRecord>> all;
  return all;
}
std::vector<ChainRecord *> byEntry; // parallel to entries below
std::vector<opd_loop *> entries;

// The chain running now: its loops left, whether avoiding, when it began,
// and the messages sent before it.
ChainRecord *current = nullptr;
int32_t loopsLeft = 0;
bool avoiding = false;
double chainStart = 0;
int64_t messagesBefore = 0;

ChainRecord *recordOf(opd_loop *entry, const char *name) {
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (entries[i] == entry)
      return byEntry[i];
  records().push_back(std::make_unique<ChainRecord>());
  ChainRecord *r = records().back().get();
  r->name = name;
  entries.push_back(entry);
  byEntry.push_back(r);
  return r;
}

// OP2-CA's model as above: the plain and the avoiding chain's time per run
// on this rank, with `compute` the loops' measured compute times over the
// rank's points (empty: their bytes at memory bandwidth). A loop of a
// skewed sweep that runs as one only when the chain avoids (the others
// then run as separate loops, lib/exec/Skew.cpp) finds its `cached` bytes
// in cache there: its avoiding time is scaled by the share of its bytes
// it still moves (memory-bound loops), unless `compute` was measured in
// avoiding runs (\p sweptCompute), which include that already.
void evaluate(const Model &m, const dist::ChainGeometry &geo,
              const std::vector<opd_chain_loop> &loops,
              const std::vector<double> &compute, double &plain,
              double &avoid, bool sweptCompute = false) {
  plain = avoid = 0;
  if (geo.neighbours <= 0 || geo.ownedPoints <= 0)
    return;
  const std::size_t n = loops.size();
  const double rounds = std::max(1, geo.rounds);
  auto S = [&](double k) { return geo.haloPointsPerDepth * k; };
  const double A = geo.haloPointsPerDepth / geo.neighbours;
  const bool measured = compute.size() == n && n > 0;
  auto whole = [&](std::size_t l) {
    return measured ? compute[l]
                    : double(loops[l].bytes) * geo.ownedPoints / m.memory;
  };
  for (std::size_t l = 0; l < n; ++l) {
    const opd_chain_loop &c = loops[l];
    const double g = whole(l) / geo.ownedPoints;
    if (c.exchanges > 0) {
      const double msg =
          rounds * (m.latency +
                    c.exchanges * A * c.depth * geo.bytesPerPoint / m.network);
      const double core = g * std::max(0.0, geo.ownedPoints - S(c.depth));
      plain += (geo.overlaps ? std::max(core, msg) : core + msg) +
               g * S(c.depth);
    } else {
      plain += whole(l);
    }
    const double moved =
        sweptCompute || c.bytes <= 0 || c.cached <= 0
            ? 1.0
            : std::max(0.0, double(c.bytes - c.cached) / double(c.bytes));
    avoid += g * (geo.ownedPoints + S(double(c.extension))) * moved;
  }
  const double msg =
      rounds * (m.latency + geo.groupBytes / geo.neighbours / m.network);
  // Overlapped with the first loop's core when the exchange is one round
  // (a block split along its outermost dimension only; sets).
  double hidden = 0;
  if (geo.overlaps && n > 0)
    hidden = whole(0) / geo.ownedPoints *
             std::max(0.0, geo.ownedPoints - S(double(loops[0].extension + 1)));
  avoid += std::max(0.0, msg - hidden) + 2.0 * geo.groupBytes / m.memory;
}

} // namespace

bool takeExtension(int64_t *lo, int64_t *hi) {
  if (!pending) {
    std::fill(lo, lo + 3, 0);
    std::fill(hi, hi + 3, 0);
    return false;
  }
  pending = false;
  std::copy(pendingLo, pendingLo + 3, lo);
  std::copy(pendingHi, pendingHi + 3, hi);
  return true;
}

void chainLoopEnded(const opd_loop *loop) {
  if (!current || loopsLeft <= 0)
    return;
  {
    // Each loop's time outside exchanges, this call: the measuring plain
    // run's for the model, the avoiding runs' for the profile.
    double now = loop->seconds - loop->exchangeSeconds, before = 0;
    auto it = std::find_if(current->seen.begin(), current->seen.end(),
                           [&](const auto &e) { return e.first == loop; });
    if (it == current->seen.end())
      current->seen.emplace_back(loop, now);
    else {
      before = it->second;
      it->second = now;
    }
    const std::size_t l = std::size_t(current->loopIndex++);
    if (!avoiding && current->plainMessages < 0)
      current->compute.push_back(now - before);
    if (avoiding) {
      if (current->computeAvoiding.size() <= l)
        current->computeAvoiding.resize(l + 1, 0.0);
      current->computeAvoiding[l] += now - before;
    }
  }
  if (--loopsLeft == 0) {
    const double t = opd_rt_wtime() - chainStart;
    (avoiding ? current->secondsAvoiding : current->secondsPlain) += t;
    if (!avoiding)
      current->plainMessages = messagesSent() - messagesBefore;
    current = nullptr;
  }
}

std::string chainProfile() {
  std::string out;
  if (records().empty() || dist::ranks() == 1)
    return out;
  const Model &m = model();
  char line[512];
  std::snprintf(line, sizeof line,
                "communication avoidance (model: latency %.3g us, network "
                "%.3g GB/s, memory %.3g GB/s per rank; times per run, max "
                "over ranks)\n",
                m.latency * 1e6, m.network * 1e-9, m.memory * 1e-9);
  out += line;
  for (const auto &r : records()) {
    // The model again with the loops' compute measured over the whole run
    // (the avoiding runs' without their extension's share, when the chain
    // avoided), next to the measured chain times.
    std::vector<double> c = r->compute;
    const bool swept =
        r->avoided > 0 && r->computeAvoiding.size() == r->loops.size();
    if (swept) {
      c.clear();
      const double V = std::max(1.0, r->geo.ownedPoints);
      for (std::size_t l = 0; l < r->loops.size(); ++l)
        c.push_back(r->computeAvoiding[l] / double(r->avoided) /
                    (1.0 + r->geo.haloPointsPerDepth *
                               double(r->loops[l].extension) / V));
    }
    double plain = 0, avoid = 0;
    evaluate(m, r->geo, r->loops, c, plain, avoid, swept);
    double v[6] = {r->predictedPlain,
                   r->predictedAvoiding,
                   r->runs > r->avoided
                       ? r->secondsPlain / double(r->runs - r->avoided)
                       : 0.0,
                   r->avoided ? r->secondsAvoiding / double(r->avoided) : 0.0,
                   plain,
                   avoid};
    double mx[6], sum[6];
    dist::maxAndSum(v, mx, sum, 6);
    std::snprintf(line, sizeof line,
                  "  %s: avoided %lld of %lld runs%s; predicted plain %.1f "
                  "us, avoiding %.1f us; measured plain %.1f us, avoiding "
                  "%.1f us; model with the measured loop times: plain %.1f "
                  "us, avoiding %.1f us\n",
                  r->name.c_str(), (long long)r->avoided, (long long)r->runs,
                  r->infeasible ? " (rank parts too thin for the halos)" : "",
                  mx[0] * 1e6, mx[1] * 1e6, mx[2] * 1e6, mx[3] * 1e6,
                  mx[4] * 1e6, mx[5] * 1e6);
    out += line;
  }
  return out;
}

} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

void opd_rt_cost_model(double latency_us, double network_gbs,
                       double memory_gbs) {
  if (latency_us > 0)
    profileModel.latency = latency_us * 1e-6;
  if (network_gbs > 0)
    profileModel.network = network_gbs * 1e9;
  if (memory_gbs > 0)
    profileModel.memory = memory_gbs * 1e9;
}

void opd_loop_extend_next(const int64_t *lo, const int64_t *hi) {
  // Only inside a chain that runs communication-avoiding.
  if (!avoiding || !current || !lo || !hi)
    return;
  pending = true;
  std::copy(lo, lo + 3, pendingLo);
  std::copy(hi, hi + 3, pendingHi);
}

void opd_halo_group(opd_loop **cache, const char *name, int32_t mode,
                    int32_t n, opd_dat *const *dats, const int64_t *depth,
                    int32_t nloops, const opd_chain_loop *loops) {
  if (!name)
    name = "<chain>";
  opd_loop *entry = groupEntry(cache, name);
  ChainRecord *r = recordOf(entry, name);
  pending = false;
  current = r;
  loopsLeft = nloops;
  chainStart = opd_rt_wtime();
  messagesBefore = messagesSent();
  r->loopIndex = 0;
  ++r->runs;
  avoiding = false;
  if (dist::ranks() == 1)
    return;
  std::vector<dist::GroupEntry> group;
  for (int32_t i = 0; i < n; ++i) {
    if (!dats[i])
      failf("internal error: chain '%s' groups a null dat", name);
    dist::GroupEntry g;
    g.dat = dats[i];
    std::copy(depth + 3 * i, depth + 3 * i + 3, g.depth);
    group.push_back(g);
  }
  // The decision: forced by the environment, else as compiled. It is
  // made once per chain (a collective costs latencies of its own, on every
  // run it would eat what the chain saves): `on` at the first run, `auto`
  // at the second, after one plain run measured the messages the chain's
  // loops really send and their compute times (the model's c_l).
  const int decide = forcedMode() >= 0 ? forcedMode() : (mode == 1 ? 1 : 2);
  if (decide == 0)
    return;
  if (!r->decided) {
    // A chain whose sweep runs as one only when avoiding is not measured
    // plain (above).
    const bool sweep =
        std::any_of(loops, loops + nloops,
                    [](const opd_chain_loop &l) { return l.cached > 0; });
    if (decide == 2 && r->plainMessages < 0 && !sweep)
      return; // the measuring run
    const Model &m = model();
    r->geo = dist::chainGeometry(group);
    r->loops.assign(loops, loops + nloops);
    double plain = 0, avoid = 0;
    evaluate(m, r->geo, r->loops, r->compute, plain, avoid);
    double v[4] = {plain, avoid, r->geo.feasible ? 0.0 : 1.0,
                   double(r->plainMessages)},
           mx[4], sum[4];
    dist::maxAndSum(v, mx, sum, 4);
    r->predictedPlain = mx[0];
    r->predictedAvoiding = mx[1];
    // Every rank decides alike (the maxima over ranks); a rank without
    // neighbours still takes part. A rank part thinner than the halos
    // makes every rank run the chain plain; a chain whose plain run sent
    // no message has nothing to avoid.
    r->infeasible = mx[2] > 0;
    r->decided = true;
    r->decision = !r->infeasible &&
                  (decide == 1 || ((mx[3] > 0 || sweep) && mx[1] < mx[0]));
  }
  avoiding = r->decision;
  if (!avoiding)
    return;
  ++r->avoided;
  entry->startTime = opd_rt_wtime();
  dist::groupExchange(group, entry);
  ++entry->calls;
  const double t = opd_rt_wtime() - entry->startTime;
  entry->seconds += t;
  entry->exchangeSeconds += t;
}

} // extern "C"
