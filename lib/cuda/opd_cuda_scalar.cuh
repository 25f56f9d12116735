/* opd_cuda_scalar.cuh - The scalar semantics of the CPU backend on the device:
 * wrapping and checked integer arithmetic, conversions, minimum/maximum,
 * Philox random numbers.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Part of the CUDA runtime header (lib/cuda/opd_cuda.cuh, which includes it
 * after its values and errors; generated code includes only opd_cuda.cuh).
 * Apart from the device copies and launches because it is the language's
 * arithmetic alone, __host__ __device__ and without state, which
 * tests/cuda/helpers_test.cu checks on the host.
 */
#ifndef OPD_CUDA_SCALAR_CUH
#define OPD_CUDA_SCALAR_CUH

#ifndef OPD_CUDA_CUH
#error "opd_cuda_scalar.cuh is part of opd_cuda.cuh: include that instead"
#endif

namespace opd {

/*===-- Scalar semantics --------------------------------------------------===*/

template <class T> using unsigned_of = typename std::make_unsigned<T>::type;

/** Integer +, -, *, unary - wrap around (two's complement), as the CPU
 *  backend's LLVM arithmetic does. */
template <class T> __host__ __device__ inline T add(T a, T b) {
  return T(unsigned_of<T>(a) + unsigned_of<T>(b));
}
template <class T> __host__ __device__ inline T sub(T a, T b) {
  return T(unsigned_of<T>(a) - unsigned_of<T>(b));
}
template <class T> __host__ __device__ inline T mul(T a, T b) {
  return T(unsigned_of<T>(a) * unsigned_of<T>(b));
}
template <class T> __host__ __device__ inline T neg(T a) {
  return T(unsigned_of<T>(0) - unsigned_of<T>(a));
}
template <class T> __host__ __device__ inline T iabs(T a) {
  return a < 0 ? neg(a) : a;
}
/** C's truncating division; a zero divisor stops the program; x / -1 is -x
 *  (wrapping) and x % -1 is 0. */
template <class T>
__host__ __device__ inline T div(T a, T b, const char *where) {
  if (b == 0)
    fail(where);
  return b == T(-1) ? neg(a) : T(a / b);
}
template <class T>
__host__ __device__ inline T rem(T a, T b, const char *where) {
  if (b == 0)
    fail(where);
  return b == T(-1) ? T(0) : T(a % b);
}
template <class T, class C>
__host__ __device__ inline T shl(T a, C n, const char *where) {
  if (n < 0 || n >= C(sizeof(T) * 8))
    fail(where);
  return T(unsigned_of<T>(a) << n);
}
template <class T, class C>
__host__ __device__ inline T shr(T a, C n, const char *where) {
  if (n < 0 || n >= C(sizeof(T) * 8))
    fail(where);
  return T(a >> n); /* arithmetic on every CUDA host and device */
}
/** An array index checked against the length. */
template <class I>
__host__ __device__ inline int64_t at(I i, int64_t n, const char *where) {
  if (uint64_t(int64_t(i)) >= uint64_t(n))
    fail(where);
  return int64_t(i);
}

/** Float to integer, saturating; NaN gives 0 (llvm.fptosi.sat). */
template <class To, class From> __host__ __device__ inline To f2i(From x) {
  const From top = From(uint64_t(1) << (sizeof(To) * 8 - 1));
  if (!(x == x))
    return To(0);
  if (x >= top)
    return To(unsigned_of<To>(top) - 1u);
  if (x <= -top)
    return To(-top);
  return To(x);
}

/** IEEE 754-2019 minimum and maximum: NaN if either is NaN, -0 below +0
 *  (llvm.minimum / llvm.maximum); integers compare. */
template <class T> __host__ __device__ inline T vmin(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (a != a)
      return a;
    if (b != b)
      return b;
    if (a == b)
      return std::signbit(a) ? a : b;
  }
  return a < b ? a : b;
}
template <class T> __host__ __device__ inline T vmax(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (a != a)
      return a;
    if (b != b)
      return b;
    if (a == b)
      return std::signbit(a) ? b : a;
  }
  return a > b ? a : b;
}
template <class T> __host__ __device__ inline bool is_nan(T x) {
  return x != x;
}
template <class T> __host__ __device__ inline bool is_finite(T x) {
  return (x - x) == (x - x); /* inf - inf and NaN - NaN are NaN */
}
__host__ __device__ inline double f64_bits(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}
__host__ __device__ inline float f32_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/*===-- Random numbers (docs/language.md; codegen/llvm/RandomCodeGen.cpp) -===*/

__host__ __device__ inline void philox(uint32_t c[4], uint32_t k0,
                                       uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
  }
}
/** rng_uniform (normal false) or rng_normal for an element of `ncoords`
 *  coordinates (1: a set element or 1-D point, as 64 bits). */
__host__ __device__ inline double rng(bool normal, int64_t seed, int64_t n,
                                      int ncoords, int64_t c0, int64_t c1,
                                      int64_t c2) {
  uint32_t c[4];
  c[0] = uint32_t(uint64_t(n));
  c[1] = uint32_t(uint64_t(n) >> 32);
  if (ncoords == 1) {
    c[2] = uint32_t(uint64_t(c0));
    c[3] = uint32_t(uint64_t(c0) >> 32);
  } else {
    c[2] = uint32_t(c0);
    c[3] = uint32_t(c1);
    if (ncoords == 3)
      c[1] = uint32_t(c2);
  }
  philox(c, uint32_t(uint64_t(seed)), uint32_t(uint64_t(seed) >> 32));
  uint64_t x = ((uint64_t(c[1]) << 32) | c[0]) >> 11;
  if (!normal)
    return double(int64_t(x)) * 0x1p-53;
  double u1 = double(int64_t(x + 1)) * 0x1p-53;
  double u2 = double(int64_t(((uint64_t(c[3]) << 32) | c[2]) >> 11)) * 0x1p-53;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

} // namespace opd
#endif
