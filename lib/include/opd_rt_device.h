/* opd_rt_device.h - The runtime's side of a GPU backend's runtime.
 * SPDX-License-Identifier: Apache-2.0
 *
 * What a backend that keeps dats in device memory (the CUDA backend's
 * header-only runtime, lib/cuda) uses of the runtime besides the calls of
 * generated code: the hooks that move halo bytes between device copies
 * and message buffers, the adjoint's store for tape entries and
 * snapshots, the device's share of a tridiagonal solve, and the settings
 * a device runtime asks for. The CPU backend's programs use none of it.
 * opd_rt.h includes this file at its end (its types are opd_rt.h's);
 * include opd_rt.h, not this file. (A seam of opd_rt.h, which grew past
 * the shape check's 800 lines.)
 */
#ifndef OPD_RT_DEVICE_H
#define OPD_RT_DEVICE_H

#ifndef OPD_RT_H
#error "include opd_rt.h, which includes opd_rt_device.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Tridiagonal solves on device copies -------------------------------===*/

/** What a device solve (lib/cuda/opd_cuda_tridiag.cuh) needs of
 *  opd_solve_tridiagonal's checks and clipping: this rank's box and where
 *  each dat's points are in its storage. */
typedef struct opd_tridiag_box {
  int32_t along;
  /** The ranks split dimension `along`: solve this rank's segment of each
   *  line and the reduced system through opd_solve_tridiagonal_reduced. */
  int32_t split;
  int32_t f64; /**< 1: the dats hold f64; 0: f32 */
  int32_t pad;
  /** This rank's part of the range (global indices, hi exclusive; 0 .. 1
   *  past the block's dimensions); hi[along] - lo[along] may be 0 when
   *  `split`. */
  int64_t lo[3], hi[3];
  /** Per dat (a, b, c, d): the element offset of point lo from
   *  opd_dat_data and the strides of opd_dat_origin (0 past the block's
   *  dimensions). */
  int64_t first[4];
  int64_t stride[4][3];
} opd_tridiag_box;
/** opd_solve_tridiagonal's checks (the same messages) and clipping for a
 *  solve on device copies: fills `box` and returns 1 when this rank has
 *  rows to solve or takes part in a split solve, else 0. Marks d's halo
 *  copies stale (the caller then overwrites d's points of the box). */
int32_t opd_solve_tridiagonal_box(opd_dat *a, opd_dat *b, opd_dat *c,
                                  opd_dat *d, int along, const int64_t *lo,
                                  const int64_t *hi, opd_tridiag_box *box);
/** Step 2 of a split solve (lib/solvers/TridiagonalSplit.cpp) for a caller
 *  that ran steps 1 and 3 itself (the arguments of its
 *  opd_solve_tridiagonal_box): `reduced` holds this rank's reduced rows,
 *  per line (q = the index along the first other dimension + its extent x
 *  the index along the second, from the box's corner) min(m, 2) rows of
 *  (a', c', d') of the element type; `ends` receives x of the segment's
 *  first row of each line (lines values), then of its last. Collective over
 *  the ranks of each line; every rank of a split solve calls it, also one
 *  with no rows. */
void opd_solve_tridiagonal_reduced(opd_dat *a, opd_dat *b, opd_dat *c,
                                   opd_dat *d, int along, const int64_t *lo,
                                   const int64_t *hi, const void *reduced,
                                   void *ends);
/** After a device solve met a bad pivot: the pivot checks of
 *  opd_solve_tridiagonal on the host copies of a, b and c (whole lines, or
 *  this rank's segments along a split dimension), stopping the program
 *  with the CPU's message; returns when no pivot is bad. */
void opd_solve_tridiagonal_check(opd_dat *a, opd_dat *b, opd_dat *c, opd_dat *d,
                                 int along, const int64_t *lo,
                                 const int64_t *hi);

/*===-- Device copies (a GPU backend's runtime) ---------------------------===*/

/* A backend that keeps dats resident in device memory (the CUDA backend's
 * lib/cuda/opd_cuda.cuh) registers these hooks once, after opd_rt_init.
 * The runtime still decides every exchange (who sends which elements, dirty
 * bits, message order, MPI calls); the hooks only move bytes between the
 * device copies and the runtime's message buffers, so halos are packed and
 * unpacked on the device and whole dats never cross to the host for an
 * exchange. Buffers are host memory (host staging); a CUDA-aware MPI could
 * be handed device buffers instead without changing the hooks' callers'
 * logic. Programs that register nothing (CPU programs) are unaffected. */

/** A box of a block dat's local storage: `count[d]` points along dimension
 *  d, point (i, j, k) at element offset + i*stride[0] + j*stride[1] +
 *  k*stride[2] of opd_dat_data (stride[0] is 1); buffers hold the points
 *  with dimension 0 fastest, each `dim` components, element-contiguous. */
typedef struct opd_box {
  int64_t offset;
  int64_t count[3];
  int64_t stride[3];
} opd_box;

typedef struct opd_device_hooks {
  /** Before the runtime moves or renumbers the storage of sets, maps and
   *  dats (the partition over ranks, --renumber): copy every newer device
   *  copy back to host memory and drop all device copies. */
  void (*release)(void);
  /** Gather elements elems[0 .. n) of a set dat into `buf` (n * dim
   *  components, element-contiguous) when the device copy is newer than
   *  host memory, returning 1; 0: host memory is current and the runtime
   *  packs from it. */
  int (*pack)(opd_dat *dat, const int32_t *elems, int64_t n, void *buf);
  /** The runtime has written `buf` into elements elems[0 .. n) of host
   *  memory (received halo values): write them into the device copy too,
   *  unless it is about to be replaced from host memory anyway. */
  void (*unpack)(opd_dat *dat, const int32_t *elems, int64_t n,
                 const void *buf);
  /** The same for a box of a block dat. */
  int (*pack_box)(opd_dat *dat, const opd_box *box, void *buf);
  void (*unpack_box)(opd_dat *dat, const opd_box *box, const void *buf);
} opd_device_hooks;

/** Registers the hooks (copied; NULL unregisters). */
void opd_rt_device_hooks(const opd_device_hooks *hooks);

/** Where the adjoint keeps the dats it saves (tape entries and snapshots)
 *  when a backend keeps dats resident in device memory: registered once
 *  after opd_rt_init by that backend's runtime (the CUDA backend's
 *  lib/cuda/opd_cuda_tape.cuh keeps them in device memory and spills them
 *  to pinned host memory beyond its budget). The runtime still decides
 *  everything else (the tape's order, the checkpoint plans, the halo
 *  state); the store only holds values. With a store registered, pushes
 *  and snapshots save by copy (no pending takes: the *_overwritten calls
 *  copy), the handing-over pops and restores (opd_tape_pop_dat,
 *  opd_ckpt_restore) hand the store's device buffer to the dat's device
 *  copy and leave opd_dat_data as it is, and snapshots never go to disk
 *  (the store's spill is their second tier). Programs that register
 *  nothing (CPU programs) are unaffected. */
typedef struct opd_adjoint_store {
  /** Saves the current values of `dat`'s local storage (`storage`,
   *  opd_dat_data, of `bytes` bytes in host memory, or its device copy)
   *  into `entry` (NULL: a new one) and returns the entry. */
  void *(*save)(opd_dat *dat, void *storage, int64_t bytes, void *entry);
  /** Writes `entry`'s values into `dat`; with `last` the entry is not
   *  restored again and is freed (its buffer may become the dat's). */
  void (*restore)(opd_dat *dat, void *entry, int32_t last);
  /** Frees `entry` unrestored. */
  void (*release)(void *entry);
  /** `entry` is restored soon (after the ones asked for before it): the
   *  store may start bringing it back. */
  void (*prefetch)(void *entry);
  /** What the store holds, for --profile: up to `n` values, OPD_STORE_*. */
  void (*usage)(int64_t *values, int32_t n);
} opd_adjoint_store;
/** The values opd_adjoint_store.usage writes, in this order. */
enum {
  OPD_STORE_DEVICE_PEAK = 0, /**< bytes held in device memory at most */
  OPD_STORE_HOST_PEAK,       /**< bytes held in (pinned) host memory at most */
  OPD_STORE_BUDGET,          /**< the device budget in bytes */
  OPD_STORE_SPILLED,         /**< bytes copied to host memory in all */
  OPD_STORE_FETCHED,         /**< of those, bytes brought back ahead of use */
  OPD_STORE_VALUES
};
/** Registers the store (copied; NULL unregisters). */
void opd_rt_adjoint_store(const opd_adjoint_store *store);
/** The device memory a store may hold, in bytes: `--device-tape-memory=N`
 *  on the command line, else OPD_DEVICE_TAPE_MEMORY=N in the environment
 *  (N MiB; with a suffix K or G, KiB or GiB); -1 when neither is set (the
 *  store's default). */
int64_t opd_rt_device_tape_memory(void);
/** This process's rank among the ranks on its node (0 on one process): a
 *  rank's GPU is this modulo the node's devices. */
int opd_rt_node_rank(void);
/** Elements of the set stored on this rank, halos included (the global
 *  size on one process): the length of its dats' and maps' local storage. */
int64_t opd_set_local_size(const opd_set *set);
/** 1 when a device backend should wait for each loop's kernels before
 *  opd_loop_end: `--profile` (the table times kernels, not launches) or
 *  OPD_DEVICE_SYNC=1 in the environment (a failing kernel is then reported
 *  under its own loop's name). 0 otherwise: kernels queue up behind each
 *  other, and the host waits only where it needs a result. */
int opd_rt_device_sync(void);
/** 1 unless OPD_CUDA_STAGE=0 in the environment: the CUDA backend's
 *  colouring sums a block's increments through maps in shared memory
 *  (docs/gpu.md); 0 sends every increment to device memory, as a
 *  comparison. */
int opd_rt_device_stage(void);
/** 1 when `--check-fp` (or OPD_CHECK_FP=1) is on: a device backend copies
 *  the f32/f64 dats a loop wrote back to host memory before opd_loop_end,
 *  which then scans them as it does for the CPU build. */
int opd_rt_check_fp(void);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif
