/* libmvec_accuracy.c - glibc's vector math (libmvec) against its scalar libm.
 * SPDX-License-Identifier: Apache-2.0
 *
 * For each function opdc could hand to libmvec (LLVM's -vector-library=
 * LIBMVEC-X86 mapping: the AVX2 variants, 4 doubles or 8 floats a call),
 * evaluates N arguments drawn from the function's useful domain both ways
 * and prints: the largest difference in ulps (distance between the two
 * results as ordered bit patterns), the share of arguments whose results
 * differ at all, and the time per element of each. This is the measurement
 * behind opdc's choice of scalar libm by default (docs/language.md, "Math
 * library"): libmvec differs from libm in the last bits, so a vectorised
 * loop would print other digits than the same loop at -O0.
 *
 *   cc -O2 -mavx2 -mfma libmvec_accuracy.c -lmvec -lm -o libmvec_accuracy
 *   ./libmvec_accuracy [N]        (default N = 4194304)
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VD(name) __m256d _ZGVdN4v_##name(__m256d);
#define VF(name) __m256 _ZGVdN8v_##name##f(__m256);
#define BOTH(name) VD(name) VF(name)
BOTH(asin) BOTH(acos) BOTH(sinh) BOTH(cosh) BOTH(tanh) BOTH(asinh)
BOTH(acosh) BOTH(atanh) BOTH(cbrt) BOTH(log2) BOTH(log10) BOTH(log1p)
BOTH(exp2) BOTH(expm1) BOTH(erf) BOTH(erfc) BOTH(sin) BOTH(cos) BOTH(tan)
BOTH(atan) BOTH(exp) BOTH(log)

struct fn {
  const char *name;
  double lo, hi; /* argument range */
  double (*sd)(double);
  float (*sf)(float);
  __m256d (*vd)(__m256d);
  __m256 (*vf)(__m256);
};

#define FN(n, lo, hi) {#n, lo, hi, n, n##f, _ZGVdN4v_##n, _ZGVdN8v_##n##f}
static const struct fn fns[] = {
    FN(asin, -1, 1),     FN(acos, -1, 1),    FN(sinh, -20, 20),
    FN(cosh, -20, 20),   FN(tanh, -10, 10),  FN(asinh, -1e3, 1e3),
    FN(acosh, 1, 1e3),   FN(atanh, -1, 1),   FN(cbrt, -1e3, 1e3),
    FN(log2, 0, 1e3),    FN(log10, 0, 1e3),  FN(log1p, -1, 1e3),
    FN(exp2, -100, 100), FN(expm1, -20, 20), FN(erf, -5, 5),
    FN(erfc, -5, 20),    FN(sin, -100, 100), FN(cos, -100, 100),
    FN(tan, -100, 100),  FN(atan, -1e3, 1e3), FN(exp, -100, 100),
    FN(log, 0, 1e3),
};

static uint64_t state = 0x9e3779b97f4a7c15u;
static double uniform(void) { /* xorshift64*, [0, 1) */
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (double)((state * 0x2545f4914f6cdd1du) >> 11) * 0x1p-53;
}

/* Ordered-integer distance of two doubles (NaNs equal to each other). */
static uint64_t ulpsd(double a, double b) {
  if (isnan(a) && isnan(b))
    return 0;
  int64_t x, y;
  memcpy(&x, &a, 8);
  memcpy(&y, &b, 8);
  if (x < 0)
    x = INT64_MIN - x;
  if (y < 0)
    y = INT64_MIN - y;
  return x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
}

static uint32_t ulpsf(float a, float b) {
  if (isnan(a) && isnan(b))
    return 0;
  int32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  if (x < 0)
    x = INT32_MIN - x;
  if (y < 0)
    y = INT32_MIN - y;
  return x > y ? (uint32_t)x - (uint32_t)y : (uint32_t)y - (uint32_t)x;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 4194304;
  n &= ~(size_t)7;
  double *x = aligned_alloc(32, n * 8), *s = aligned_alloc(32, n * 8),
         *v = aligned_alloc(32, n * 8);
  float *xf = aligned_alloc(32, n * 4), *sf = aligned_alloc(32, n * 4),
        *vf = aligned_alloc(32, n * 4);
  printf("%-6s %10s %9s %8s %8s %7s | %10s %9s %8s %8s %7s\n", "fn",
         "f64 maxulp", "differ", "libm ns", "mvec ns", "speedup",
         "f32 maxulp", "differ", "libm ns", "mvec ns", "speedup");
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; ++k) {
    const struct fn *f = &fns[k];
    for (size_t i = 0; i < n; ++i) {
      x[i] = f->lo + (f->hi - f->lo) * uniform();
      xf[i] = (float)x[i];
    }
    double t0 = now();
    for (size_t i = 0; i < n; ++i)
      s[i] = f->sd(x[i]);
    double t1 = now();
    for (size_t i = 0; i < n; i += 4)
      _mm256_store_pd(v + i, f->vd(_mm256_load_pd(x + i)));
    double t2 = now();
    for (size_t i = 0; i < n; ++i)
      sf[i] = f->sf(xf[i]);
    double t3 = now();
    for (size_t i = 0; i < n; i += 8)
      _mm256_store_ps(vf + i, f->vf(_mm256_load_ps(xf + i)));
    double t4 = now();
    uint64_t maxd = 0, difd = 0;
    uint32_t maxf = 0, diff = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t d = ulpsd(s[i], v[i]);
      uint32_t e = ulpsf(sf[i], vf[i]);
      maxd = d > maxd ? d : maxd;
      maxf = e > maxf ? e : maxf;
      difd += d != 0;
      diff += e != 0;
    }
    printf("%-6s %10llu %8.3f%% %8.2f %8.2f %6.1fx | %10u %8.3f%% %8.2f "
           "%8.2f %6.1fx\n",
           f->name, (unsigned long long)maxd, 100.0 * difd / n,
           1e9 * (t1 - t0) / n, 1e9 * (t2 - t1) / n, (t1 - t0) / (t2 - t1),
           maxf, 100.0 * diff / n, 1e9 * (t3 - t2) / n, 1e9 * (t4 - t3) / n,
           (t3 - t2) / (t4 - t3));
  }
  return 0;
}
