// AdjointTestUtil.h - What the adjoint runtime's tests share: the fixture
// that finalises the runtime after each test, a loop argument that writes a
// dat, and the drivers that follow a checkpoint plan's sweeps on a model
// state (a step number in a dat and a host value).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "TestUtil.h"
#include "core/Objects.h"
#include "core/Profile.h"
#include "exec/Adjoint.h"
#include "exec/Loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace opdc::rt::test {

class AdjointRuntimeTest : public ::testing::Test {
protected:
  void TearDown() override { opd_rt_finalize(); }
};

/// An `out` argument of a loop: \p d at the centre, \p bytes a point.
inline opd_arg writes(opd_dat *d, opd_arg_kind kind, int bytes) {
  opd_arg w{};
  w.dat = d;
  w.kind = kind;
  w.mode = OPD_WRITE;
  w.bytes = bytes;
  return w;
}

/// The reverse sweep of the open checkpoint plan, then its end: ADVANCE
/// calls \p run, SAVE \p save and RESTORE \p restore with the slot,
/// REVERSE and REVERSE_TAPED \p reversed with the step (and whether it was
/// taped). Returns the steps reversed, in order.
inline std::vector<int64_t>
followPlan(const std::function<void(int64_t)> &run,
           const std::function<void(int32_t)> &save,
           const std::function<void(int32_t)> &restore,
           const std::function<void(int64_t, bool)> &reversed) {
  std::vector<int64_t> order;
  int64_t step = 0;
  int32_t slot = 0, act;
  while ((act = opd_ckpt_next(&step, &slot)) != OPD_CKPT_DONE) {
    switch (act) {
    case OPD_CKPT_ADVANCE:
      run(step);
      break;
    case OPD_CKPT_SAVE:
      save(slot);
      break;
    case OPD_CKPT_RESTORE:
      restore(slot);
      break;
    case OPD_CKPT_REVERSE:
    case OPD_CKPT_REVERSE_TAPED:
      order.push_back(step);
      reversed(step, act == OPD_CKPT_REVERSE_TAPED);
      break;
    }
  }
  opd_ckpt_end();
  return order;
}

/// The state after step k of the plan tests: u = k + 1 at its 100 cells,
/// one host value k + 1 (\p value = k + 1).
inline void setState(double *u, int64_t value, uint64_t &v) {
  for (int i = 0; i < 100; ++i)
    u[i] = double(value);
  v = uint64_t(value);
}

/// The forward sweep of the open plan over steps [first, first + n): saves
/// with opd_ckpt_save_overwritten(\p flags) where the plan asks, then runs
/// the step. Returns the saves.
inline int forwardSaving(int64_t first, int64_t n,
                         const std::function<void(int64_t, uint64_t &)> &run,
                         const uint8_t *flags, uint64_t &vals) {
  int saves = 0;
  for (int64_t k = first; k < first + n; ++k) {
    int32_t slot = opd_ckpt_forward(k);
    if (slot >= 0) {
      opd_ckpt_save_overwritten(slot, &vals, flags);
      ++saves;
    }
    run(k, vals);
  }
  return saves;
}

/// followPlan with opd_ckpt_save_overwritten(\p flags) and opd_ckpt_restore.
inline std::vector<int64_t>
followPlanSaving(const std::function<void(int64_t, uint64_t &)> &run,
                 const uint8_t *flags, uint64_t &vals,
                 const std::function<void(int64_t, bool)> &reversed) {
  return followPlan(
      [&](int64_t k) { run(k, vals); },
      [&](int32_t slot) { opd_ckpt_save_overwritten(slot, &vals, flags); },
      [&](int32_t slot) { opd_ckpt_restore(slot, &vals); }, reversed);
}

/// first + n - 1 down to first.
inline std::vector<int64_t> lastToFirst(int64_t first, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t k = first + n - 1; k >= first; --k)
    v.push_back(k);
  return v;
}

/// A plan's two sweeps over [first, first + n) whose taped steps push u
/// three times (a step's tape of 3 copies of u): the forward sweep (taped
/// steps only before the schedule's first save) and the reverse, each step
/// reversed from the state before it, from the tape exactly for the first
/// `taped` steps. Returns the steps taped; \p rerun counts re-runs.
inline int taperThrice(int64_t first, int64_t n, opd_dat *u, uint64_t &v,
                       int64_t *rerun = nullptr,
                       const std::function<void(int64_t)> &beforeStep = {}) {
  auto *pu = static_cast<double *>(opd_dat_data(u));
  auto run = [&](int64_t k) { setState(pu, k + 1, v); };
  setState(pu, first, v);
  int taped = 0, saves = 0;
  for (int64_t k = first; k < first + n; ++k) {
    if (beforeStep)
      beforeStep(k);
    const int32_t slot = opd_ckpt_forward(k);
    if (slot >= 0) {
      opd_ckpt_save(slot, &v);
      ++saves;
    }
    if (slot == OPD_CKPT_TAPE) {
      EXPECT_EQ(saves, 0) << "a taped step after the schedule's first save";
      ++taped;
      for (int j = 0; j < 3; ++j)
        opd_tape_push_dat(u);
    }
    run(k);
  }
  const std::vector<int64_t> order = followPlan(
      [&](int64_t k) {
        run(k);
        if (rerun)
          ++*rerun;
      },
      [&](int32_t slot) { opd_ckpt_save(slot, &v); },
      [&](int32_t slot) {
        opd_ckpt_restore(slot, &v);
        pu = static_cast<double *>(opd_dat_data(u));
      },
      [&](int64_t k, bool fromTape) {
        EXPECT_EQ(fromTape, k < first + taped) << "step " << k;
        if (fromTape) {
          for (int j = 0; j < 3; ++j)
            opd_tape_pop_dat(u);
          pu = static_cast<double *>(opd_dat_data(u));
        }
        EXPECT_EQ(pu[57], double(k)); // the state before the step
      });
  EXPECT_EQ(order, lastToFirst(first, n));
  return taped;
}

} // namespace opdc::rt::test
