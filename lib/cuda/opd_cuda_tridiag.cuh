/* opd_cuda_tridiag.cuh - `solve tridiagonal` on the device copies.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The CUDA backend's solve (the host-program form's opd_cuda_solve_
 * tridiagonal, HostTraits::deviceSolves) works on the dats' device copies;
 * only a split solve's reduced rows cross PCIe. The host runtime still
 * checks the dats and clips the range (opd_solve_tridiagonal_box: the
 * CPU's messages) and solves a split dimension's reduced system over MPI
 * (opd_solve_tridiagonal_reduced). Three kernels' algorithms, the CPU's
 * arithmetic in the CPU's order (lib/solvers/Tridiagonal.cpp,
 * TridiagonalSplit.cpp, TridiagonalRows.h):
 *
 *   - many systems: Thomas, one system a thread (tri_thomas_*). c' and d'
 *     go to scratch rows of `lanes` values (row r of lane u at r * lanes +
 *     u), so that consecutive threads touch consecutive words there.
 *   - few long systems (fewer than an eighth of the threads the device
 *     holds at once): each line cut into P segments (a power of two, at
 *     most 512, of at least MinSegmentRows rows; as many as fill half the
 *     device), the modified Thomas algorithm on each segment, one a thread
 *     (tri_segments_*: every row in terms of the segment's first and last
 *     unknowns), the reduced system of 2P rows a line by parallel cyclic
 *     reduction in one block (tri_pcr), then every row substituted
 *     (tri_substitute_*). Tridsolver's hybrid; the CPU's split solve does
 *     the same across ranks.
 *   - a dimension the ranks split: tri_segments_* on this rank's segment
 *     of each line, its (up to) two reduced rows a line to the host, the
 *     host runtime's step 2 over MPI, the segment ends back, then
 *     tri_substitute_*.
 *
 * Coalescing. A lane is one system (or segment). Along dimension 1 or 2
 * consecutive lanes are consecutive points along dimension 0, so each row
 * of a, b, c, d is read by a warp as consecutive words (the *_rows
 * kernels read and write device memory directly). Along dimension 0 a
 * lane's rows are the consecutive words; the *_tiles kernels move
 * TileRows rows of every lane of a block through shared memory: the
 * block's threads load element e = row + TileRows x lane (TileRows
 * consecutive words of one line per TileRows threads, whole 32-byte
 * sectors for f64), then each thread runs its own lane's rows from the
 * tile; x goes back the same way. Scratch rows are lane-contiguous either
 * way. The tile costs no extra pass over memory, where a transpose of the
 * dats into a scratch layout would read and write them once more.
 *
 * Results: the same operations as the CPU's in the same order. Built
 * with --fmad=false (opdc build's default: no contraction into FMAs),
 * Thomas and a split solve's segments give the CPU's bits; the hybrid's
 * elimination order differs from a whole-line Thomas as the CPU's split
 * solve's does, so it agrees to round-off (the tests ask 1e-12
 * relative). The choice of algorithm depends on the range and the
 * device's thread count only: the same GPU gives the same bits every
 * run. OPD_CUDA_TRIDIAG=thomas or =hybrid forces one (tests, benchmarks).
 *
 * A bad pivot: the lowest failing lane is recorded (atomicMin); a failed
 * hybrid has left d untouched and is redone by Thomas; a failed Thomas or
 * split segment brings a, b, c to the host, whose checks stop the program
 * with the CPU's message (opd_solve_tridiagonal_check).
 */
#ifndef OPD_CUDA_TRIDIAG_CUH
#define OPD_CUDA_TRIDIAG_CUH

#include <cstdlib>

namespace opd {
namespace tridiag {

/** Lanes (threads) of a block of the row kernels. */
constexpr int Threads = 64;
/** Rows of a lane that a *_tiles kernel holds in shared memory at once. */
constexpr int TileRows = 8;
/** Rows of a hybrid's segment at least; segments a line at most (the
 *  reduced system's 2P rows are one block's threads). */
constexpr int64_t MinSegmentRows = 4, MaxSegments = 512;
/** No failure recorded. */
constexpr unsigned long long NoFail = ~0ull;

/** The lanes of a solve: lane u is segment u / lines of line u % lines;
 *  line q starts at the box's corner + (q % n1) along the first other
 *  dimension and q / n1 along the second. */
template <class T> struct Lanes {
  T *dat[4]; /* device copies of a, b, c, d (their storage's start) */
  int64_t first[4], s1[4], s2[4], sk[4];
  int64_t n1, lines, n, parts, lanes, mMax;
  __host__ __device__ int64_t segStart(int64_t j) const {
    const int64_t base = n / parts, extra = n % parts;
    return j * base + (j < extra ? j : extra);
  }
  __host__ __device__ int64_t segRows(int64_t j) const {
    return n / parts + (j < n % parts ? 1 : 0);
  }
  __host__ __device__ int64_t offset(int i, int64_t u) const {
    const int64_t q = u % lines, j = u / lines;
    return first[i] + (q % n1) * s1[i] + (q / n1) * s2[i] + segStart(j) * sk[i];
  }
};

/** The pivot test of lib/solvers/Tridiagonal.h: 0 for a usable pivot,
 *  NaN otherwise. */
template <class T> __device__ inline T probe(T m, T inv) {
  return (m + inv) * T(0);
}

/** A lane's rows read and written in device memory (along 1 or 2). */
template <class T> struct DirectRows {
  const Lanes<T> &L;
  int64_t off[4] = {0, 0, 0, 0};
  __device__ DirectRows(const Lanes<T> &l, int64_t u, bool live) : L(l) {
    if (live)
      for (int i = 0; i < 4; ++i)
        off[i] = L.offset(i, u);
  }
  __device__ void load(int64_t, int) {}
  __device__ T get(int i, int64_t r) const {
    return L.dat[i][off[i] + r * L.sk[i]];
  }
  __device__ void put(int64_t r, T x) { L.dat[3][off[3] + r * L.sk[3]] = x; }
  __device__ void store(int64_t) {}
  __device__ void begin(int64_t) {}
};

/** A block's lanes through shared memory, TileRows rows at a time (along
 *  0: every sk is 1). Every thread of the block makes the same calls. */
template <class T> struct TileMemory {
  T v[4][TileRows][Threads + 1];
  int64_t off[4][Threads];
  int64_t rows[Threads];
};
template <class T> struct TiledRows {
  const Lanes<T> &L;
  TileMemory<T> &t;
  int64_t r0 = 0;
  __device__ TiledRows(const Lanes<T> &l, TileMemory<T> &tm, int64_t u,
                       bool live)
      : L(l), t(tm) {
    const int j = int(threadIdx.x);
    for (int i = 0; i < 4; ++i)
      t.off[i][j] = live ? L.offset(i, u) : 0;
    t.rows[j] = live ? L.segRows(u / L.lines) : 0;
    __syncthreads();
  }
  /** Rows [from, from + TileRows) of the block's lanes, of dats 0 .. ndat-1
   *  (rows past a lane's end: a = c = d = 0, b = 1). */
  __device__ void load(int64_t from, int ndat) {
    r0 = from;
    __syncthreads();
    for (int e = int(threadIdx.x); e < TileRows * Threads; e += Threads) {
      const int j = e / TileRows, rr = e % TileRows;
      const int64_t r = r0 + rr;
      const bool in = r < t.rows[j];
      for (int i = 0; i < ndat; ++i)
        t.v[i][rr][j] = in ? L.dat[i][t.off[i][j] + r] : T(i == 1 ? 1 : 0);
    }
    __syncthreads();
  }
  __device__ T get(int i, int64_t r) const {
    return t.v[i][r - r0][threadIdx.x];
  }
  __device__ void put(int64_t r, T x) { t.v[3][r - r0][threadIdx.x] = x; }
  /** Row r0 .. r0 + TileRows of d from the tile to the lanes. */
  __device__ void store(int64_t from) {
    r0 = from;
    __syncthreads();
    for (int e = int(threadIdx.x); e < TileRows * Threads; e += Threads) {
      const int j = e / TileRows, rr = e % TileRows;
      const int64_t r = r0 + rr;
      if (r < t.rows[j])
        L.dat[3][t.off[3][j] + r] = t.v[3][rr][j];
    }
    __syncthreads();
  }
  __device__ void begin(int64_t from) { r0 = from; }
};

/** Thomas on lane u (a whole line): forward into c' (cp) and d' (dp)
 *  scratch rows, then x into d. Lanes past the last run along in the
 *  tiled case (the block's barriers) and write nothing. */
template <class T, class Rows>
__device__ void thomas(const Lanes<T> &L, Rows &rows, int64_t u, bool live,
                       T *cp, T *dp, unsigned long long *fail) {
  const int64_t n = L.n, W = L.lanes;
  T cPrev = 0, dPrev = 0, bad = 0;
  for (int64_t r0 = 0; r0 < n; r0 += TileRows) {
    rows.load(r0, 4);
    const int64_t end = r0 + TileRows < n ? r0 + TileRows : n;
    if (!live)
      continue;
    for (int64_t r = r0; r < end; ++r) {
      const T a = rows.get(0, r), b = rows.get(1, r), c = rows.get(2, r),
              d = rows.get(3, r);
      T m, dn;
      if (r == 0) {
        m = b;
        const T inv = T(1) / m;
        bad = probe(m, inv);
        cPrev = c * inv;
        dn = d * inv;
      } else {
        m = b - a * cPrev;
        const T inv = T(1) / m;
        bad += probe(m, inv);
        cPrev = c * inv;
        dn = (d - a * dPrev) * inv;
      }
      dPrev = dn;
      cp[r * W + u] = cPrev;
      dp[r * W + u] = dn;
    }
  }
  if (live && !(bad == T(0)))
    atomicMin(fail, (unsigned long long)u);
  T x = 0;
  for (int64_t r0 = (n - 1) / TileRows * TileRows; r0 >= 0; r0 -= TileRows) {
    const int64_t end = r0 + TileRows < n ? r0 + TileRows : n;
    if (live) {
      rows.begin(r0);
      for (int64_t r = end - 1; r >= r0; --r) {
        x = r == n - 1 ? dp[r * W + u] : dp[r * W + u] - cp[r * W + u] * x;
        rows.put(r, x);
      }
    }
    rows.store(r0);
  }
}

/** Step 1 of the split algorithm on lane u (a segment of m rows): the
 *  modified Thomas algorithm (TridiagonalRows.h, forwardRows and
 *  backwardRows), a' and c' into scratch rows aa, cc, d' into dp; the
 *  lane's `kept` reduced rows (a', c', d') to red. */
template <class T, class Rows>
__device__ void segment(const Lanes<T> &L, Rows &rows, int64_t u, bool live,
                        T *aa, T *cc, T *dp, T *red, int kept,
                        unsigned long long *fail) {
  const int64_t W = L.lanes;
  const int64_t m = live ? L.segRows(u / L.lines) : 0;
  T aPrev = 0, cPrev = 0, dPrev = 0, bad = 0;
  for (int64_t r0 = 0; r0 < L.mMax; r0 += TileRows) {
    rows.load(r0, 4);
    const int64_t end = r0 + TileRows < m ? r0 + TileRows : m;
    for (int64_t r = r0; r < end; ++r) {
      const T a = rows.get(0, r), b = rows.get(1, r), c = rows.get(2, r),
              d = rows.get(3, r);
      if (r < 2) {
        const T inv = T(1) / b;
        bad += probe(b, inv);
        aPrev = a * inv;
        cPrev = c * inv;
        dPrev = d * inv;
      } else {
        const T piv = b - a * cPrev;
        const T inv = T(1) / piv;
        bad += probe(piv, inv);
        dPrev = (d - a * dPrev) * inv;
        aPrev = -a * aPrev * inv;
        cPrev = c * inv;
      }
      aa[r * W + u] = aPrev;
      cc[r * W + u] = cPrev;
      dp[r * W + u] = dPrev;
    }
  }
  if (!live)
    return;
  // Backward: rows m-3 .. 1 in terms of x_0 and x_{m-1}, then row 0.
  if (m >= 3) {
    T dN = dp[(m - 2) * W + u], aN = aa[(m - 2) * W + u],
      cN = cc[(m - 2) * W + u];
    for (int64_t r = m - 3; r >= 1; --r) {
      T d = dp[r * W + u], a = aa[r * W + u], c = cc[r * W + u];
      d -= c * dN;
      a -= c * aN;
      c = -c * cN;
      dp[r * W + u] = dN = d;
      aa[r * W + u] = aN = a;
      cc[r * W + u] = cN = c;
    }
    T d = dp[u], a = aa[u], c = cc[u];
    const T piv = T(1) - c * aN;
    const T inv = T(1) / piv;
    bad += probe(piv, inv);
    d = (d - c * dN) * inv;
    a *= inv;
    c = -c * cN * inv;
    dp[u] = d;
    aa[u] = a;
    cc[u] = c;
  }
  if (!(bad == T(0)))
    atomicMin(fail, (unsigned long long)u);
  T *out = red + u * kept * 3;
  out[0] = aa[u];
  out[1] = cc[u];
  out[2] = dp[u];
  if (kept == 2) {
    out[3] = aa[(m - 1) * W + u];
    out[4] = cc[(m - 1) * W + u];
    out[5] = dp[(m - 1) * W + u];
  }
}

/** Step 3 on lane u: x_r = d'_r - (a'_r x_0 + c'_r x_{m-1}), rows 0 and
 *  m-1 the segment's ends (ends[u], ends[lanes + u]). */
template <class T, class Rows>
__device__ void substitute(const Lanes<T> &L, Rows &rows, int64_t u, bool live,
                           const T *aa, const T *cc, const T *dp,
                           const T *ends) {
  const int64_t W = L.lanes;
  const int64_t m = live ? L.segRows(u / L.lines) : 0;
  const T x0 = live ? ends[u] : T(0), xl = live ? ends[W + u] : T(0);
  for (int64_t r0 = 0; r0 < L.mMax; r0 += TileRows) {
    rows.begin(r0);
    const int64_t end = r0 + TileRows < m ? r0 + TileRows : m;
    for (int64_t r = r0; r < end; ++r)
      rows.put(r, r == m - 1 ? xl
                  : r == 0   ? x0
                             : dp[r * W + u] -
                                 (aa[r * W + u] * x0 + cc[r * W + u] * xl));
    rows.store(r0);
  }
}

/** The arguments every row kernel takes. */
template <class T> struct Work {
  Lanes<T> L;
  T *s0, *s1, *s2; /* scratch rows: c' or a', then c' of a segment, d' */
  T *red, *ends;
  int kept;
  unsigned long long *fail;
};

template <class T> __global__ void tri_thomas_rows(Work<T> w) {
  const int64_t u = int64_t(blockIdx.x) * Threads + threadIdx.x;
  const bool live = u < w.L.lanes;
  if (!live)
    return;
  DirectRows<T> rows(w.L, u, live);
  thomas(w.L, rows, u, live, w.s0, w.s2, w.fail);
}
template <class T> __global__ void tri_thomas_tiles(Work<T> w) {
  __shared__ TileMemory<T> tm;
  const int64_t u = int64_t(blockIdx.x) * Threads + threadIdx.x;
  const bool live = u < w.L.lanes;
  TiledRows<T> rows(w.L, tm, u, live);
  thomas(w.L, rows, u, live, w.s0, w.s2, w.fail);
}
template <class T> __global__ void tri_segments_rows(Work<T> w) {
  const int64_t u = int64_t(blockIdx.x) * Threads + threadIdx.x;
  const bool live = u < w.L.lanes;
  if (!live)
    return;
  DirectRows<T> rows(w.L, u, live);
  segment(w.L, rows, u, live, w.s0, w.s1, w.s2, w.red, w.kept, w.fail);
}
template <class T> __global__ void tri_segments_tiles(Work<T> w) {
  __shared__ TileMemory<T> tm;
  const int64_t u = int64_t(blockIdx.x) * Threads + threadIdx.x;
  const bool live = u < w.L.lanes;
  TiledRows<T> rows(w.L, tm, u, live);
  segment(w.L, rows, u, live, w.s0, w.s1, w.s2, w.red, w.kept, w.fail);
}
/* Step 3 runs only when step 1 met no bad pivot (the flag is the same
 * for every thread, so a block returns as a whole). */
template <class T> __global__ void tri_substitute_rows(Work<T> w) {
  if (*w.fail != NoFail)
    return;
  const int64_t u = int64_t(blockIdx.x) * Threads + threadIdx.x;
  const bool live = u < w.L.lanes;
  if (!live)
    return;
  DirectRows<T> rows(w.L, u, live);
  substitute(w.L, rows, u, live, w.s0, w.s1, w.s2, w.ends);
}
template <class T> __global__ void tri_substitute_tiles(Work<T> w) {
  if (*w.fail != NoFail)
    return;
  __shared__ TileMemory<T> tm;
  const int64_t u = int64_t(blockIdx.x) * Threads + threadIdx.x;
  const bool live = u < w.L.lanes;
  TiledRows<T> rows(w.L, tm, u, live);
  substitute(w.L, rows, u, live, w.s0, w.s1, w.s2, w.ends);
}

/** The reduced systems of the hybrid, one block a line (2P threads, one a
 *  row): parallel cyclic reduction as TridiagonalSplit.cpp's reducedByPCR
 *  (identity rows outside, the same formulas in the same order), then
 *  x = d / b of each row into the segments' ends. */
template <class T> __global__ void tri_pcr(Work<T> w) {
  if (*w.fail != NoFail)
    return;
  __shared__ T ra[2 * MaxSegments], rb[2 * MaxSegments], rc[2 * MaxSegments],
      rd[2 * MaxSegments];
  const int64_t q = blockIdx.x;
  const int N = int(blockDim.x), i = int(threadIdx.x);
  const int64_t u = (i / 2) * w.L.lines + q;
  const T *in = w.red + (u * 2 + (i & 1)) * 3;
  T a = i == 0 ? T(0) : in[0], b = 1, c = i == N - 1 ? T(0) : in[1], d = in[2];
  for (int s = 1; s < N; s *= 2) {
    ra[i] = a;
    rb[i] = b;
    rc[i] = c;
    rd[i] = d;
    __syncthreads();
    T ba = 0, bb = 1, bc = 0, bd = 0, aa = 0, ab = 1, ac = 0, ad = 0;
    if (i - s >= 0) {
      ba = ra[i - s];
      bb = rb[i - s];
      bc = rc[i - s];
      bd = rd[i - s];
    }
    if (i + s < N) {
      aa = ra[i + s];
      ab = rb[i + s];
      ac = rc[i + s];
      ad = rd[i + s];
    }
    const T k1 = a / bb, k2 = c / ab;
    const T na = -k1 * ba, nb = b - k1 * bc - k2 * aa, nc = -k2 * ac,
            nd = d - k1 * bd - k2 * ad;
    a = na;
    b = nb;
    c = nc;
    d = nd;
    __syncthreads();
  }
  w.ends[(i & 1) ? w.L.lanes + u : u] = d / b;
}

/** The device's resident threads (SMs x threads per SM), asked once. */
inline int64_t device_threads() {
  static int64_t threads = 0;
  if (!threads) {
    int dev = 0, sms = 0, per = 0;
    check(cudaGetDevice(&dev), "asking for the GPU");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
          "asking for the GPU's multiprocessors");
    check(cudaDeviceGetAttribute(&per, cudaDevAttrMaxThreadsPerMultiProcessor,
                                 dev),
          "asking for the GPU's threads");
    threads = int64_t(sms) * per;
    if (threads < 1)
      threads = 1;
  }
  return threads;
}

/** Segments a line for the hybrid (1: Thomas), from the lines, their rows
 *  and the device's threads; OPD_CUDA_TRIDIAG=thomas|hybrid forces. */
inline int64_t segments(int64_t lines, int64_t n) {
  static const char *force = std::getenv("OPD_CUDA_TRIDIAG");
  const bool thomas = force && std::strcmp(force, "thomas") == 0,
             hybrid = force && std::strcmp(force, "hybrid") == 0;
  if (thomas)
    return 1;
  const int64_t threads = device_threads();
  if (!hybrid && lines >= threads / 8)
    return 1;
  int64_t p = 1;
  while (p * 2 <= MaxSegments && n / (p * 2) >= MinSegmentRows &&
         (hybrid || lines * p * 2 <= threads / 2))
    p *= 2;
  return p;
}

/** Device scratch for the solves, reused (never shrunk). */
inline void *scratch(int slot, size_t bytes) {
  static DeviceBuffer buffers[4];
  return buffers[slot].reserve(bytes, "tridiagonal solve scratch");
}

inline unsigned blocks(int64_t lanes) {
  return unsigned((lanes + Threads - 1) / Threads);
}

template <class T>
void solve(opd_dat *const dats[4], const opd_tridiag_box &box, int along,
           const int64_t *lo, const int64_t *hi) {
  Work<T> w{};
  Lanes<T> &L = w.L;
  int others[2] = {0, 0}, no = 0;
  for (int e = 0; e < 3; ++e)
    if (e != along)
      others[no++] = e;
  for (int i = 0; i < 4; ++i) {
    opd_dat *x = dats[i];
    L.dat[i] =
        static_cast<T *>(device(opd_dat_data(x), opd_dat_stored_points(x), 1,
                                int32_t(sizeof(T)), false, i == 3));
    L.first[i] = box.first[i];
    L.s1[i] = box.stride[i][others[0]];
    L.s2[i] = box.stride[i][others[1]];
    L.sk[i] = box.stride[i][along];
  }
  L.n1 = box.hi[others[0]] - box.lo[others[0]];
  L.lines = L.n1 * (box.hi[others[1]] - box.lo[others[1]]);
  L.n = box.hi[along] - box.lo[along];
  const bool tiles = along == 0;
  unsigned long long *fail = nullptr; // at the start of scratch slot 3
  const unsigned long long none = NoFail;
  auto clearFail = [&] {
    check(cudaMemcpy(fail, &none, sizeof none, cudaMemcpyHostToDevice),
          "starting a tridiagonal solve");
  };
  auto failed = [&] {
    unsigned long long f = 0;
    check(cudaMemcpy(&f, fail, sizeof f, cudaMemcpyDeviceToHost),
          "finishing a tridiagonal solve");
    return f != NoFail;
  };
  // Scratch rows: three arrays of lanes x mMax values.
  auto reserve = [&] {
    L.lanes = L.parts * L.lines;
    L.mMax = L.segRows(0);
    const size_t rows = size_t(L.lanes) * size_t(L.mMax > 0 ? L.mMax : 1);
    w.s0 = static_cast<T *>(scratch(0, rows * sizeof(T)));
    w.s1 = static_cast<T *>(scratch(1, rows * sizeof(T)));
    w.s2 = static_cast<T *>(scratch(2, rows * sizeof(T)));
  };
  // Pivot failures stop the program with the host's message.
  auto hostCheck = [&] {
    for (int i = 0; i < 3; ++i)
      to_host(opd_dat_data(dats[i]));
    opd_solve_tridiagonal_check(dats[0], dats[1], dats[2], dats[3], along, lo,
                                hi);
    opd_rt_fail("internal error: a tridiagonal solve on the GPU met a bad "
                "pivot that the host's checks did not");
  };
  auto rowKernels = [&](bool segmentsStep) {
    const unsigned g = blocks(L.lanes);
    if (segmentsStep) {
      if (tiles)
        tri_segments_tiles<T><<<g, Threads>>>(w);
      else
        tri_segments_rows<T><<<g, Threads>>>(w);
    } else {
      if (tiles)
        tri_substitute_tiles<T><<<g, Threads>>>(w);
      else
        tri_substitute_rows<T><<<g, Threads>>>(w);
    }
    check(cudaGetLastError(), "launching a tridiagonal solve");
  };

  if (box.split) {
    // This rank's segment of each line; step 2 on the host over MPI.
    L.parts = 1;
    reserve();
    w.kept = int(L.n < 2 ? L.n : 2);
    const size_t redBytes = size_t(L.lines) * size_t(w.kept) * 3 * sizeof(T);
    std::vector<T> red(size_t(L.lines) * size_t(w.kept) * 3),
        ends(size_t(2 * L.lines));
    T *base =
        static_cast<T *>(scratch(3, 64 + redBytes + ends.size() * sizeof(T)));
    w.fail = fail = reinterpret_cast<unsigned long long *>(base);
    w.red = base + 64 / sizeof(T);
    w.ends = w.red + red.size();
    clearFail();
    if (L.n > 0 && L.lines > 0) {
      rowKernels(true);
      if (failed())
        hostCheck();
      check(cudaMemcpy(red.data(), w.red, redBytes, cudaMemcpyDeviceToHost),
            "reading a solve's reduced rows");
    }
    opd_solve_tridiagonal_reduced(dats[0], dats[1], dats[2], dats[3], along, lo,
                                  hi, red.data(), ends.data());
    if (L.n > 0 && L.lines > 0) {
      check(cudaMemcpy(w.ends, ends.data(), ends.size() * sizeof(T),
                       cudaMemcpyHostToDevice),
            "writing a solve's segment ends");
      rowKernels(false);
    }
    return;
  }

  L.parts = segments(L.lines, L.n);
  if (L.parts > 1) {
    reserve();
    w.kept = 2;
    const size_t redValues = size_t(L.lanes) * 6,
                 endValues = size_t(L.lanes) * 2;
    T *base =
        static_cast<T *>(scratch(3, 64 + (redValues + endValues) * sizeof(T)));
    w.fail = fail = reinterpret_cast<unsigned long long *>(base);
    w.red = base + 64 / sizeof(T);
    w.ends = w.red + redValues;
    clearFail();
    rowKernels(true);
    tri_pcr<T><<<unsigned(L.lines), unsigned(2 * L.parts)>>>(w);
    check(cudaGetLastError(), "launching a tridiagonal solve");
    rowKernels(false);
    if (!failed())
      return;
    // A segment's pivot failed (d is untouched): Thomas on whole lines.
  }
  L.parts = 1;
  reserve();
  T *base = static_cast<T *>(scratch(3, 64));
  w.fail = fail = reinterpret_cast<unsigned long long *>(base);
  clearFail();
  if (tiles)
    tri_thomas_tiles<T><<<blocks(L.lanes), Threads>>>(w);
  else
    tri_thomas_rows<T><<<blocks(L.lanes), Threads>>>(w);
  check(cudaGetLastError(), "launching a tridiagonal solve");
  if (failed())
    hostCheck();
}

} // namespace tridiag

/** `solve tridiagonal(a, b, c, d) along k over block[lo .. hi]` on the
 *  device copies (opd_solve_tridiagonal's contract). */
inline void solve_tridiagonal(opd_dat *a, opd_dat *b, opd_dat *c, opd_dat *d,
                              int along, const int64_t *lo, const int64_t *hi) {
  opd_tridiag_box box;
  if (!opd_solve_tridiagonal_box(a, b, c, d, along, lo, hi, &box))
    return;
  opd_dat *const dats[4] = {a, b, c, d};
  if (box.f64)
    tridiag::solve<double>(dats, box, along, lo, hi);
  else
    tridiag::solve<float>(dats, box, along, lo, hi);
}

} // namespace opd

#endif
