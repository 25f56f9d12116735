// ReproSum.cpp - Reproducible float sums (-frepro-sum): an exact long
// accumulator per reduction component, rounded once.
// SPDX-License-Identifier: Apache-2.0
//
// A float `sum` reduction's result normally depends on the order in which
// the per-element contributions are added: on one process the order is
// fixed (chunks combined in chunk order), but on several ranks every rank
// adds its own elements in its local numbering, and MPI_Allreduce adds the
// ranks' partials, so the last bits change with the rank count. With
// -frepro-sum the generated body runs each element's kernel with the
// reduction variable at -0.0 (the identity of float addition), so the
// element's contribution c_e is computed exactly as in any other run, and
// adds c_e *exactly* into a long fixed-point accumulator. Integer addition
// is associative, so chunk accumulators, the variable's earlier value and
// the ranks' accumulators (one MPI_Allreduce of 64-bit integers) give the
// same integers in any order, and the one rounding at the end yields the
// correctly rounded value of v0 + sum(c_e): the same bits for any number of
// threads, ranks or partition.
//
// The method is Kulisch's long accumulator (U. Kulisch, "Computer
// Arithmetic and Validity", de Gruyter 2013) in the carry-save form of
// R. M. Neal's "small superaccumulator" ("Fast exact summation using small
// and large superaccumulators", arXiv:1505.05571, 2015): the accumulator is
// XsumDigits signed 64-bit words, word i weighing 2^(32 i - 1075); a double
// m * 2^(q - 1075) (m < 2^53, q the biased exponent, 1 for subnormals) adds
// (m << (q mod 32)) < 2^85 split into three 32-bit digits to words q/32,
// q/32 + 1, q/32 + 2. Each add changes a word by less than 2^32, so a word
// takes 2^31 adds before it could overflow; chunks (at most 2^20 elements)
// stay far below, and combining normalises (carries digits into [0, 2^32))
// after each chunk. Three more words count NaNs, +inf and -inf.
//
// Cost: ~20 integer instructions per element and component, inline in the
// generated body (LoopBody.cpp, emitExactAdd; this file's
// opd_xsum_add_* for zeros, subnormals, inf and NaN), instead of one float
// add (measured in bench/repro/README.md; the decision to keep it
// off by default is docs/decisions/0053-*). Differences from the plain
// sum: the result is the correctly rounded exact sum (the plain sum's
// rounding errors are gone), an all -0.0 sum gives +0.0, and an overflow
// happens only if the exact sum overflows. f32 sums accumulate the exact
// f64 value of each f32 contribution and round once to f32.
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/FPCheck.h"

#include <opd_rt.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace opdc::rt {
namespace {
constexpr int XsumDigits = 69; // 2^(32*69 - 1075) > 2^1024 * 2^63
constexpr int XsumNaN = 69, XsumPosInf = 70, XsumNegInf = 71;
static_assert(OPD_XSUM_WORDS == 72, "accumulator layout");

inline void addDouble(int64_t *w, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  unsigned q = unsigned(bits >> 52) & 0x7FF;
  uint64_t m = bits & ((uint64_t(1) << 52) - 1);
  if (q == 0x7FF) {
    ++w[m ? XsumNaN : (bits >> 63) ? XsumNegInf : XsumPosInf];
    return;
  }
  if (q == 0) {
    if (m == 0)
      return; // +-0 adds nothing
    q = 1;
  } else {
    m |= uint64_t(1) << 52;
  }
  unsigned __int128 x = static_cast<unsigned __int128>(m) << (q & 31);
  const int64_t d0 = int64_t(uint64_t(x) & 0xFFFFFFFFu);
  const int64_t d1 = int64_t(uint64_t(x >> 32) & 0xFFFFFFFFu);
  const int64_t d2 = int64_t(uint64_t(x >> 64));
  int64_t *p = w + (q >> 5);
  if (bits >> 63) {
    p[0] -= d0;
    p[1] -= d1;
    p[2] -= d2;
  } else {
    p[0] += d0;
    p[1] += d1;
    p[2] += d2;
  }
}

/// Carries every digit into [0, 2^32) but the top one, which keeps the sign.
void normalise(int64_t *w) {
  for (int i = 0; i + 1 < XsumDigits; ++i) {
    int64_t c = w[i] >> 32; // floor(w / 2^32)
    w[i] -= int64_t(uint64_t(c) << 32);
    w[i + 1] += c;
  }
}

/// The exact value of the normalised accumulator \p w rounded to nearest
/// (ties to even) with \p precision bits and the smallest ulp 2^minUlpExp
/// (53, -1074 for double; 24, -149 for float), as a double (exact in the
/// narrower type).
double roundExact(const int64_t *acc, int precision, int minUlpExp) {
  if (acc[XsumNaN] > 0 || (acc[XsumPosInf] > 0 && acc[XsumNegInf] > 0))
    return std::numeric_limits<double>::quiet_NaN();
  if (acc[XsumPosInf] > 0)
    return std::numeric_limits<double>::infinity();
  if (acc[XsumNegInf] > 0)
    return -std::numeric_limits<double>::infinity();
  int64_t w[XsumDigits];
  std::memcpy(w, acc, sizeof w);
  normalise(w);
  const bool negative = w[XsumDigits - 1] < 0;
  if (negative) {
    for (int i = 0; i < XsumDigits; ++i)
      w[i] = -w[i];
    normalise(w);
  }
  int top = XsumDigits - 1;
  while (top >= 0 && w[top] == 0)
    --top;
  if (top < 0)
    return 0.0;
  // Bit k of the magnitude M (value = M * 2^-1075).
  auto bit = [&](int k) {
    return k < 0 ? 0 : int((uint64_t(w[k >> 5]) >> (k & 31)) & 1);
  };
  const int length = 32 * top + (64 - __builtin_clzll(uint64_t(w[top])));
  int ulpExp = length - precision - 1075;
  if (ulpExp < minUlpExp)
    ulpExp = minUlpExp;
  const int drop = ulpExp + 1075; // low bits of M below the ulp
  uint64_t keep = 0;
  for (int k = length - 1; k >= drop && k >= 0; --k)
    keep = (keep << 1) | uint64_t(bit(k));
  if (drop > 0) {
    const int half = bit(drop - 1);
    bool sticky = false;
    for (int k = 0; k < drop - 1 && !sticky; ++k)
      sticky = bit(k) != 0;
    if (half && (sticky || (keep & 1)))
      ++keep;
  }
  double r = std::ldexp(double(keep), drop > 0 ? ulpExp : -1075);
  return negative ? -r : r;
}

void addAll(int64_t *total, const int64_t *part) {
  for (int i = 0; i < OPD_XSUM_WORDS; ++i)
    total[i] += part[i];
  normalise(total);
}
} // namespace
} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

void opd_xsum_add_f64(int64_t *acc, const double *v, int32_t dim) {
  for (int32_t k = 0; k < dim; ++k)
    addDouble(acc + int64_t(k) * OPD_XSUM_WORDS, v[k]);
}

void opd_xsum_add_f32(int64_t *acc, const float *v, int32_t dim) {
  for (int32_t k = 0; k < dim; ++k)
    addDouble(acc + int64_t(k) * OPD_XSUM_WORDS, double(v[k]));
}

void opd_reduce_sum_exact(void *v, opd_scalar type, int32_t dim,
                          const int64_t *partials, int64_t chunks) {
  if ((type != OPD_F32 && type != OPD_F64) || dim < 1 || chunks < 0)
    failf("internal error: exact sum of %d %s over %lld chunks", int(dim),
          scalarName(type), (long long)chunks);
  if (fpCheckEnabled())
    noteReductionStart(v, type, dim);
  std::vector<int64_t> total(std::size_t(dim) * OPD_XSUM_WORDS, 0);
  for (int32_t k = 0; k < dim; ++k) {
    int64_t *t = total.data() + std::size_t(k) * OPD_XSUM_WORDS;
    // The variable's earlier value counts once: on rank 0.
    if (dist::rank() == 0)
      addDouble(t, type == OPD_F64 ? static_cast<double *>(v)[k]
                                   : double(static_cast<float *>(v)[k]));
    for (int64_t c = 0; c < chunks; ++c)
      addAll(t, partials + (c * dim + k) * OPD_XSUM_WORDS);
  }
  // Integer sums across ranks: the same in any order.
  dist::allreduce(total.data(), OPD_I64, OPD_SUM, int(total.size()));
  for (int32_t k = 0; k < dim; ++k) {
    const int64_t *t = total.data() + std::size_t(k) * OPD_XSUM_WORDS;
    if (type == OPD_F64)
      static_cast<double *>(v)[k] = roundExact(t, 53, -1074);
    else
      static_cast<float *>(v)[k] = float(roundExact(t, 24, -149));
  }
  if (fpCheckEnabled())
    checkReductionFP(v, type, OPD_SUM, dim);
}

} // extern "C"
