/* opd_cuda_colour.cuh - Indirect increments on the device: the thread colours
 * inside a plan block, and increments staged in shared memory.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Part of the CUDA runtime header (lib/cuda/opd_cuda.cuh, which includes it
 * after the device copies it uploads into; generated code includes only
 * opd_cuda.cuh). Apart from the rest because it serves only loops with
 * indirect increments (--cuda-indirect=colour).
 */
#ifndef OPD_CUDA_COLOUR_CUH
#define OPD_CUDA_COLOUR_CUH

#ifndef OPD_CUDA_CUH
#error "opd_cuda_colour.cuh is part of opd_cuda.cuh: include that instead"
#endif

namespace opd {

/*===-- Two-level colouring -----------------------------------------------===*/

/** One written indirect access of a loop (as the plan sees it). */
struct Written {
  const int32_t *map; /* host opd_map_data */
  int32_t arity, idx;
  int32_t group;  /* accesses to the same dat share a group */
  int64_t target; /* size of the target set */
};

/** Thread colours of one part of a plan, on the device. */
struct ThreadColours {
  uint64_t generation = ~uint64_t(0);
  uint8_t *colour = nullptr;   /* per element of the part */
  int32_t *ncolours = nullptr; /* per plan block */
  int64_t *blocks = nullptr;   /* the part's block list */
  DeviceBuffer colourBuf, ncoloursBuf, blocksBuf;
};

/** Copies `n` values to `buf` (grown to fit exactly, never shrunk) and
 *  returns them on the device (null when there are none). */
template <class T>
inline T *upload(DeviceBuffer &buf, const T *values, size_t n,
                 const char *what) {
  if (n == 0)
    return static_cast<T *>(buf.p);
  T *p = static_cast<T *>(buf.reserve(n * sizeof(T), what, true));
  check(cudaMemcpy(p, values, n * sizeof(T), cudaMemcpyHostToDevice), what);
  return p;
}

/** Builds (when the plan changed) the thread colours of `part`: inside each
 *  plan block, element i gets the first colour no earlier element of the
 *  block with a common written target has. */
inline void colour_threads(ThreadColours &tc, const opd_loop_part &part,
                           const Written *w, int nw) {
  if (tc.generation == part.generation)
    return;
  std::vector<uint8_t> colour(size_t(part.count));
  std::vector<int32_t> ncol(size_t(part.nblocks));
  int ngroups = 0;
  for (int a = 0; a < nw; ++a)
    ngroups = w[a].group + 1 > ngroups ? w[a].group + 1 : ngroups;
  std::vector<std::vector<uint64_t>> masks(static_cast<size_t>(ngroups));
  for (int a = 0; a < nw; ++a)
    masks[size_t(w[a].group)].assign(size_t(w[a].target), 0);
  for (int64_t b = 0; b < part.nblocks; ++b) {
    int64_t s = part.first + b * part.block_size;
    int64_t e = s + part.block_size;
    if (e > part.first + part.count)
      e = part.first + part.count;
    int32_t nc = 0;
    for (int64_t i = s; i < e; ++i) {
      uint64_t used = 0;
      for (int a = 0; a < nw; ++a)
        used |= masks[size_t(w[a].group)]
                     [size_t(w[a].map[i * w[a].arity + w[a].idx])];
      if (used == ~uint64_t(0))
        opd_rt_fail("CUDA: more than 64 thread colours in a plan block");
      int c = 0;
      while (used & (uint64_t(1) << c))
        ++c;
      for (int a = 0; a < nw; ++a)
        masks[size_t(w[a].group)]
             [size_t(w[a].map[i * w[a].arity + w[a].idx])] |= uint64_t(1) << c;
      colour[size_t(i - part.first)] = uint8_t(c);
      nc = c + 1 > nc ? c + 1 : nc;
    }
    for (int64_t i = s; i < e; ++i)
      for (int a = 0; a < nw; ++a)
        masks[size_t(w[a].group)][size_t(w[a].map[i * w[a].arity + w[a].idx])] =
            0;
    ncol[size_t(b)] = nc;
  }
  tc.colour = upload(tc.colourBuf, colour.data(), colour.size(),
                     "uploading thread colours");
  tc.ncolours = upload(tc.ncoloursBuf, ncol.data(), ncol.size(),
                       "uploading thread colours");
  tc.blocks = upload(tc.blocksBuf, part.blocks, size_t(part.nblocks),
                     "uploading a plan");
  tc.generation = part.generation;
}

/*===-- Increments staged in shared memory -------------------------------===*/

/* Colouring: a CUDA block's increments through maps are summed in shared
 * memory first, the thread colours ordering the additions, and reach
 * device memory once per distinct target of the block; the block colours
 * keep the blocks that run together apart, so a block adds its sums
 * without atomics, in a fixed order (the same bits every run). OP2's
 * hierarchical colouring does the same. Atomics stay unstaged: on an H100
 * the shared-memory sums and one atomic per target were 1.3x slower than
 * one device-memory atomic per increment (docs/gpu.md).
 *
 * The plan: the loop's range is cut into blocks of `bsize` elements; per
 * group (one incremented dat) and block, the block's distinct targets in
 * ascending order (consecutive threads then write nearby words back), and
 * per element and written access the target's position among them (its
 * local index, 16 bits). Built on the host from the maps, once per range
 * (or plan generation), like the thread colours. */
struct StagePlan {
  uint64_t generation = ~uint64_t(0);
  bool staged = false;        /* every block's targets fit the kernel's array */
  int32_t *offsets = nullptr; /* device: [group][nblocks + 1] into targets */
  int32_t *targets = nullptr; /* device: target indices, block by block */
  uint16_t *local = nullptr;  /* device: [element][written access] */
  DeviceBuffer offsetsBuf, targetsBuf, localBuf;
};

/** Whether staging is switched on (OPD_CUDA_STAGE, default on). */
inline bool staging() {
  static const bool on = opd_rt_device_stage() != 0;
  return on;
}

/** Builds (when the plan changed) the staging plan of `part` for the
 *  written accesses `w` (their `group`s numbered from 0), and says whether
 *  the part may run staged: staging is on and no plan block reaches more
 *  than `capacity` targets of one group (the kernel's shared array, at
 *  most 65535: the local indices are 16-bit). Otherwise the caller runs
 *  the unstaged kernel, and a warning names the loop (`name`) once per
 *  plan. */
inline bool stage_targets(StagePlan &sp, const char *name,
                          const opd_loop_part &part, const Written *w, int nw,
                          int32_t capacity) {
  if (!staging() || nw == 0 || part.count <= 0)
    return false;
  if (sp.generation == part.generation)
    return sp.staged;
  sp.generation = part.generation;
  sp.staged = false;
  int ngroups = 0;
  for (int a = 0; a < nw; ++a)
    ngroups = w[a].group + 1 > ngroups ? w[a].group + 1 : ngroups;
  const size_t stride = size_t(part.nblocks) + 1;
  std::vector<int32_t> offsets(size_t(ngroups) * stride);
  std::vector<int32_t> targets;
  std::vector<uint16_t> local(size_t(part.count) * size_t(nw));
  targets.reserve(size_t(part.count) * size_t(nw)); /* at most */
  // pos[g][t]: target t's local index in the current block (group g).
  std::vector<std::vector<int32_t>> pos(static_cast<size_t>(ngroups));
  for (int a = 0; a < nw; ++a)
    pos[size_t(w[a].group)].assign(size_t(w[a].target), -1);
  std::vector<int32_t> list;
  size_t most = 0; /* the most targets of one group in one block */
  for (int g = 0; g < ngroups; ++g) {
    std::vector<int32_t> &p = pos[size_t(g)];
    for (int64_t b = 0; b < part.nblocks; ++b) {
      const int64_t s = part.first + b * part.block_size;
      const int64_t e = std::min(s + part.block_size, part.first + part.count);
      list.clear();
      for (int64_t i = s; i < e; ++i)
        for (int a = 0; a < nw; ++a)
          if (w[a].group == g) {
            const int32_t t = w[a].map[i * w[a].arity + w[a].idx];
            if (p[size_t(t)] < 0) { /* the runtime's plan checked t */
              p[size_t(t)] = 0;
              list.push_back(t);
            }
          }
      std::sort(list.begin(), list.end());
      if (targets.size() + list.size() > size_t(INT32_MAX))
        return false; /* offsets are 32-bit: no staging */
      offsets[size_t(g) * stride + size_t(b)] = int32_t(targets.size());
      for (size_t l = 0; l < list.size(); ++l) {
        p[size_t(list[l])] = int32_t(l);
        targets.push_back(list[l]);
      }
      for (int64_t i = s; i < e; ++i)
        for (int a = 0; a < nw; ++a)
          if (w[a].group == g)
            local[size_t(i - part.first) * size_t(nw) + size_t(a)] =
                uint16_t(p[size_t(w[a].map[i * w[a].arity + w[a].idx])]);
      for (int32_t t : list)
        p[size_t(t)] = -1;
      most = std::max(most, list.size());
    }
    offsets[size_t(g) * stride + size_t(part.nblocks)] =
        int32_t(targets.size());
  }
  if (most > size_t(capacity)) {
    opd_rt_warnf("%s: a block of %lld elements reaches %zu targets of one "
                 "dat, more than the %d its shared memory holds: its "
                 "increments go to device memory unstaged (a mesh numbered "
                 "for locality keeps blocks' targets few)",
                 name, static_cast<long long>(part.block_size), most,
                 int(capacity));
    return false;
  }
  sp.offsets = upload(sp.offsetsBuf, offsets.data(), offsets.size(),
                      "uploading a staging plan");
  sp.targets = upload(sp.targetsBuf, targets.data(), targets.size(),
                      "uploading a staging plan");
  sp.local = upload(sp.localBuf, local.data(), local.size(),
                    "uploading a staging plan");
  sp.staged = true;
  return true;
}

} // namespace opd
#endif
