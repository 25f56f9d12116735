// CommAvoid.cpp - Communication-avoiding loop chains at run time: halo
// sizes, loop extensions, the grouped exchange and OP2-CA's cost model.
// SPDX-License-Identifier: Apache-2.0
//
// The comm-avoid pass (compiler/passes/CommAvoid.cpp) rewrites a loop chain
// so that its first loop is preceded by opd_halo_group (the halos the chain
// reads, each as deep as its readers reach) and each loop that produces
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
// as it applies to what this runtime does. With L the network latency, B
// its bandwidth, M the memory bandwidth, p the neighbours, V the points a
// rank owns, S(k) the points of its halo k deep (summed over the
// neighbours), A the points of one neighbour's halo one deep, and per loop
// l: g_l = bytes per iteration / M, x_l dats and r_l depth exchanged as a
// plain loop, e_l its extension:
//   plain: sum_l [ x_l > 0 ? max(g_l (V - S(r_l)), 2 x_l p (L + m(r_l)/B))
//                             + g_l S(r_l)                 (overlapped)
//                         : g_l V ]
//          m(k) = A k bytes-per-point; without overlap (a block split in
//          more than its outer dimension) the max becomes a sum;
//   CA:    max(0, 2 p (L + m_r/B) - core_1) + 2 m_r p / M
//            + sum_l g_l (V + S(e_l)),
//          m_r the grouped message's bytes (every dat the group sends),
//          the pack and unpack at memory bandwidth; core_1 the first
//          loop's core time g_1 (V - S(e_1 + 1)) when the exchange flies
//          during it (a block split along its outermost dimension only:
//          one round), else 0.
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

int64_t wantLayers = 1, wantDepth = 2;
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
  int64_t infeasible = 0; ///< runs with a rank's part thinner than the halos
  /// Auto: the messages a plain run sent (this rank; -1 before the first
  /// plain run, which auto mode makes first to measure it).
  int64_t plainMessages = -1;
  double predictedPlain = 0, predictedAvoiding = 0; ///< per run, last
  double secondsPlain = 0, secondsAvoiding = 0;     ///< measured, summed
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

} // namespace

int64_t haloLayersWanted() { return wantLayers; }
int64_t blockHaloDepthWanted() { return wantDepth; }

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

void chainLoopEnded() {
  if (!current || loopsLeft <= 0)
    return;
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
    double v[4] = {r->predictedPlain, r->predictedAvoiding,
                   r->runs > r->avoided
                       ? r->secondsPlain / double(r->runs - r->avoided)
                       : 0.0,
                   r->avoided ? r->secondsAvoiding / double(r->avoided) : 0.0};
    double mx[4], sum[4];
    dist::maxAndSum(v, mx, sum, 4);
    std::snprintf(line, sizeof line,
                  "  %s: avoided %lld of %lld runs%s; predicted plain %.1f "
                  "us, avoiding %.1f us; measured plain %.1f us, avoiding "
                  "%.1f us\n",
                  r->name.c_str(), (long long)r->avoided, (long long)r->runs,
                  r->infeasible ? " (rank parts too thin for the halos)" : "",
                  mx[0] * 1e6, mx[1] * 1e6, mx[2] * 1e6, mx[3] * 1e6);
    out += line;
  }
  return out;
}

} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

void opd_rt_halo_depth(int64_t set_layers, int64_t block_depth) {
  if (set_layers < 1 || block_depth < 0)
    failf("internal error: halo of %lld layers, block depth %lld",
          (long long)set_layers, (long long)block_depth);
  wantLayers = set_layers;
  wantDepth = std::max<int64_t>(2, block_depth);
}

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
  // The decision: forced by the environment, else as compiled (auto: the
  // model, evaluated with this rank's geometry; every rank must agree, so
  // the predictions are combined first).
  int decide = forcedMode() >= 0 ? forcedMode() : (mode == 1 ? 1 : 2);
  if (decide == 2 || decide == 1) {
    const Model &m = model();
    dist::ChainGeometry geo = dist::chainGeometry(group);
    double plain = 0, avoid = 0;
    if (geo.neighbours > 0) {
      const double p = geo.neighbours;
      auto S = [&](double k) { return geo.haloPointsPerDepth * k; };
      const double A = geo.haloPointsPerDepth / p;
      for (int32_t l = 0; l < nloops; ++l) {
        const opd_chain_loop &c = loops[l];
        const double g = double(c.bytes) / m.memory;
        if (c.exchanges > 0) {
          const double msg = 2.0 * c.exchanges * p *
                             (m.latency + A * c.depth * geo.bytesPerPoint /
                                              m.network);
          const double core = g * std::max(0.0, geo.ownedPoints - S(c.depth));
          plain += (geo.overlaps ? std::max(core, msg) : core + msg) +
                   g * S(c.depth);
        } else {
          plain += g * geo.ownedPoints;
        }
        avoid += g * (geo.ownedPoints + S(double(c.extension)));
      }
      const double mr = geo.groupBytes / p;
      const double msg = 2.0 * p * (m.latency + mr / m.network);
      // Overlapped with the first loop's core when the exchange is one
      // round (a block split along its outermost dimension only).
      double hidden = 0;
      if (geo.overlaps && nloops > 0)
        hidden = double(loops[0].bytes) / m.memory *
                 std::max(0.0, geo.ownedPoints -
                                   S(double(loops[0].extension + 1)));
      avoid += std::max(0.0, msg - hidden) + 2.0 * geo.groupBytes / m.memory;
    }
    // Auto measures first: one plain run counts the messages the chain's
    // loops really send (range-aware exchanges may send none, e.g. loops
    // along a wall); a chain that sent none has nothing to avoid.
    double v[4] = {plain, avoid, geo.feasible ? 0.0 : 1.0,
                   double(r->plainMessages)},
           mx[4], sum[4];
    dist::maxAndSum(v, mx, sum, 4);
    r->predictedPlain = mx[0];
    r->predictedAvoiding = mx[1];
    const bool nothingToAvoid = mx[3] <= 0; // unmeasured (-1) or none
    // Every rank decides alike (the maxima over ranks); a rank without
    // neighbours still takes part in the collective decision. A rank part
    // thinner than the halos makes every rank run the chain plain.
    if (mx[2] > 0)
      ++r->infeasible;
    avoiding = mx[2] == 0 &&
               (decide == 1 || (!nothingToAvoid && mx[1] < mx[0]));
  }
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
