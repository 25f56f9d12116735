// Runtime.h - Process-wide state and error reporting of the opd runtime.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_CORE_RUNTIME_H
#define OPDC_LIB_CORE_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace opdc::rt {

/// Direct set loops run in chunks of this many elements; a constant, so the
/// chunks (and the order reduction partials are combined in) do not depend
/// on the thread count. With 4096, a streaming loop over Airfoil's 720k
/// cells (176 chunks) ran as fast as one plain `omp parallel for`
/// (tests/runtime/PlanBench.cpp; docs/performance.md).
constexpr int64_t DirectChunkSize = 4096;

/// Block loops aim at this many grid points per chunk: a chunk is
/// max(1, DirectChunkSize / points per outer index) outer indices.
constexpr int64_t BlockChunkPoints = DirectChunkSize;

/// 3D block loops take more planes per chunk, because the generated body
/// cache-blocks a chunk (tiles of dimension 1 outermost, planes inside, see
/// compiler/codegen/llvm/LoopCodeGen.cpp) and reuses a plane only within
/// its chunk: up to Block3DChunkPoints points, but at most 1/16 of the
/// planes, so that even small grids give every thread work. Both depend on
/// the grid alone, never on the thread count.
constexpr int64_t Block3DChunkPoints = int64_t(1) << 20;
constexpr int64_t Block3DMinChunks = 16;

/// The program name used in messages ("<program>: error: ...").
const char *programName();
void setProgramName(const std::string &name);
/// opd_rt_init, first thing: when ranks x threads exceed the node's cores
/// and no OpenMP wait policy was chosen, re-executes the program with
/// OMP_WAIT_POLICY=passive (core/Oversubscribe.cpp).
void avoidSpinningWhenOversubscribed(int argc, char **argv);

/// opd_rt_init: stdout line-buffered when it is a file or a pipe (unless
/// OPD_LINE_BUFFER=0), so a program's lines appear as it prints them
/// (core/Print.cpp).
void lineBufferOutput();

/// Prints "<program>: error: <message>" to stderr (after flushing stdout)
/// and exits with status 1.
[[noreturn]] void fail(const std::string &message);
/// printf-style fail().
[[noreturn]] void failf(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
/// While one is alive, fail() throws a Failure instead of printing and
/// ending the job: mesh input on many ranks collects each rank's error and
/// agrees on one before the next collective (dist::agreeOnFailure).
struct Failure {
  std::string message;
};
class CaptureFailures {
public:
  CaptureFailures();
  ~CaptureFailures();
  CaptureFailures(const CaptureFailures &) = delete;
  CaptureFailures &operator=(const CaptureFailures &) = delete;
};
/// Whether a CaptureFailures is alive (fail() throws): core/Pool.cpp then
/// runs tasks on the calling thread, where the exception can be caught.
bool capturingFailures();
/// Prints "<program>: error: <prefix><message>" (no exit).
void printError(const std::string &message);

/// "i32", "f64", ...
const char *scalarName(int type);
/// Bytes of one component of `type` (bool: 1); fails for OPD_STR.
int scalarBytes(int type);

/// An on/off switch from the environment variable `name`: unset or empty
/// gives `fallback`, "1" on, "0" off, anything else fails naming it.
bool envSwitch(const char *name, bool fallback);
/// A whole number in [lo, hi] from the environment variable `name`, or
/// `fallback` when it is unset or empty; anything else fails with
/// "invalid value ... expected <expected>".
int64_t envInteger(const char *name, int64_t fallback, int64_t lo, int64_t hi,
                   const char *expected);

/// The widest SIMD instructions the runtime's hand-dispatched kernels may
/// use (the tridiagonal solver's panels): OPD_SIMD=sse2|avx2|avx512, default
/// avx512; each kernel still takes only what the CPU has. Every level
/// computes the same bits.
enum class SimdLevel { SSE2, AVX2, AVX512 };
SimdLevel simdLimit();

/// Frees what the solvers keep between calls (the split tridiagonal
/// solve's a'/c' scratch); opd_rt_finalize calls it.
namespace tridiag {
void releaseSolverScratch();
} // namespace tridiag

/// Whether --profile was given.
bool profileRequested();
void setProfileRequested(bool on);

/// How unstructured meshes are partitioned over ranks (--partition=).
/// How a tridiagonal solve split over ranks solves its reduced system
/// (--tridiag-reduced=pcr|jacobi; solvers/Tridiagonal.cpp).
enum class ReducedSolver { PCR, Jacobi };
ReducedSolver reducedSolver();
void setReducedSolver(ReducedSolver s);
enum class PartitionMethod { Metis, Block, PTScotch };
PartitionMethod partitionMethod();
void setPartitionMethod(PartitionMethod m);

/// opd_rt_halo_depth's sizes (core/Mesh.cpp), which the program's
/// communication-avoiding chains need (exec/CommAvoid.cpp): exec-halo
/// layers of sets, the minimum halo depth of block dats between ranks.
int64_t haloLayersWanted();
int64_t blockHaloDepthWanted();

/// Silences HDF5's own error stack printing (idempotent).
void silenceHDF5();

/// The reduction scratch and the bytes of its last request (the partials
/// of the loop about to run).
void *scratchInUse(std::size_t &bytes);

/// Frees every object (sets, maps, dats, blocks, loops, plans, scratch);
/// used by opd_rt_finalize.
void releaseObjects();
void releaseLoops();

} // namespace opdc::rt
#endif
