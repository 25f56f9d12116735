// CUDALoopWriter.h - One parallel loop's CUDA code, shared by the kernel
// half (CUDALoops.cpp) and the host half (CUDALoopHost.cpp).
// SPDX-License-Identifier: Apache-2.0
//
// Internal to the CUDA backend: the loop's analysis and the names both
// halves use. CUDALoops.cpp describes the code a loop becomes.
#ifndef OPDC_CODEGEN_CUDA_CUDALOOPWRITER_H
#define OPDC_CODEGEN_CUDA_CUDALOOPWRITER_H

#include "codegen/cuda/CUDAEmitter.h"

#include "codegen/common/HostProgram.h"
#include "codegen/common/Identities.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace opdc::cuda_loop {

using namespace ir;

/// Global-read values with more components are staged in device memory
/// instead of being passed in the kernel's parameters.
constexpr unsigned MaxInlineGlobal = 64;
/// Grid caps of loops with reductions (blocks per dimension): the partials
/// the host combines stay few, and the grid never depends on the device.
constexpr unsigned ReduceCap1D = 1024, ReduceCap2D = 32, ReduceCap3D = 16;
/// An upper bound of the partial slots of one loop beyond its plan blocks:
/// three segments of at most 16^3 blocks.
constexpr unsigned PartialSlots = 3 * 4096;
/// Rows each thread of a 2-D block loop walks, planes each CUDA block of a
/// 3-D block loop walks: a point's neighbours in the next row (plane) were
/// loaded for this one and come from L1 (bench/cuda/stencil_shapes.cu).
constexpr unsigned RowsPerThread = 8, PlanesPerBlock = 2;
/// Shared memory a CUDA block may use to stage its increments through
/// maps (opd::StagePlan): 24 KiB leaves room for 8 blocks of 256 threads on
/// an H100 (228 KiB a multiprocessor), 6 on an A100. Loops whose staged
/// dats hold fewer than MinStageTargets targets in it are not staged.
constexpr unsigned StageBytes = 24 * 1024, MinStageTargets = 64;

/// \p v as a CUDA literal of scalar type \p k.
std::string identityLiteral(IdentityValue v, ScalarKind k);
/// The opd:: reduction functor of a reduction mode.
const char *reduceOp(AccessMode m);

class LoopWriter {
public:
  LoopWriter(CUDAFunctionWriter &host, const ParLoopStmt &loop)
      : host(host), m(host.m), loop(loop), access(analyzeLoopAccess(loop)),
        id(m.nextLoop++), dims(loop.block ? loop.block->dims : 1),
        bs(m.options.blockSize),
        // -frepro-sum's ordered increments need no colours: each element
        // writes its own row (gatherMode).
        colouring(access.race == RaceClass::IncStrips &&
                  m.options.indirect == CUDAIndirect::Colouring &&
                  !(m.options.reproSum && !loop.block)),
        sequential(access.race == RaceClass::Sequential),
        name(cudaIdent(loop.kernel->name) + "_" + std::to_string(id)) {
    for (const AccessDescriptor &a : loop.args) {
      hasReduction = hasReduction || a.kind == ArgKind::Reduction;
      if (modeWrites(a.mode) && a.usesDat())
        writtenDats.insert(a.dat);
      if (modeWrites(a.mode) && a.kind == ArgKind::MapDirect &&
          std::find(writtenMaps.begin(), writtenMaps.end(), a.map) ==
              writtenMaps.end())
        writtenMaps.push_back(a.map);
    }
    planStaging();
  }

  void emit(int indent) {
    std::string &d = m.loops;
    d += "\n// " + m.location(loop.range) + ": loop " + loop.kernel->name +
         " over " + (loop.block ? loop.block->name : loop.set->name) + " (" +
         strategy() + ")\n";
    emitContext(d);
    emitKernel(d);
    if (loop.block)
      emitBlockGlobal(d);
    else
      emitRangeGlobal(d);
    if (colouring)
      emitColourGlobal(d, false);
    if (staged)
      emitColourGlobal(d, true);
    emitHost(indent);
  }

  /// The host side in two halves, so that another loop's host side can
  /// run between (a stencil chain's pair, CUDATileChain.cpp): up to and
  /// including opd_loop_begin (the context `c` filled, `opd_i32` set),
  /// then from the wait for halos to the block's end.
  void hostOpen(int indent);
  void hostClose(int indent, bool brace = true);

private:
  friend class TileChainWriter;
  std::string strategy() const {
    if (sequential)
      return "sequential";
    if (access.race == RaceClass::IncStrips)
      return cudaIndirectName(m.options.indirect);
    return "parallel";
  }
  bool blockStrides(unsigned n) const {
    return loop.block && dims > 1 && loop.args[n].usesDat();
  }
  bool incBuffer(unsigned n) const {
    return access.race == RaceClass::IncStrips && access.args[n].indirectInc;
  }
  /// -frepro-sum, as the CPU backend (LoopBody.cpp): float sums exact
  /// (opd::xsum_add into per-block accumulators, rounded once by
  /// opd_reduce_sum_exact), and set loops with increments through maps
  /// write each element's increments into its row for the runtime's
  /// ordered apply (opd_loop_gather, opd::gather_to_host).
  bool exactSum(unsigned n) const {
    return host::exactSum(loop.args[n], m.options.reproSum);
  }
  bool gatherMode() const {
    return host::gatherIncrements(loop, access, m.options.reproSum);
  }
  bool gathered(unsigned n) const { return gatherMode() && incBuffer(n); }
  /// Accumulator words of exact argument n per block.
  std::string xsumWords(unsigned n) const {
    return std::to_string(loop.args[n].dim) + " * OPD_XSUM_WORDS";
  }
  /// Set loops calling idx() or random numbers read global indices.
  bool globalIds() const { return !loop.block && access.usesIdx; }
  bool writesMap(const Map *mp) const {
    return std::find(writtenMaps.begin(), writtenMaps.end(), mp) !=
           writtenMaps.end();
  }
  bool largeGlobal(unsigned n) const {
    return loop.kernel->kernelParams[n].type.dim() > MaxInlineGlobal;
  }
  std::string elemType(unsigned n) const {
    return cudaScalarType(loop.kernel->kernelParams[n].type.scalar);
  }
  std::string datType(int field) const {
    return cudaScalarType(access.dats[unsigned(field)]->scalar());
  }
  /// Elements of a set dat between consecutive elements' first components.
  std::string step(const AccessDescriptor &a) const {
    return m.options.soa ? "" : " * " + std::to_string(a.dim);
  }

  void emitContext(std::string &d);

  void emitKernel(std::string &d);

  /// Declarations at the top of a __global__ function: accumulators and
  /// the threads' copies of global values.
  void emitThreadState(std::string &d);

  /// The kernel call for element `i` (set loops) or coordinates c0.. (block
  /// loops), with increment buffers set up before and applied after.
  void emitElement(std::string &d, const std::string &pad, bool atomics);

  /// Adds element i's increment buffers to their targets.
  void emitApply(std::string &d, const std::string &pad, bool atomics);

  void emitReduce(std::string &d);

  std::string globalHead(const std::string &suffix, const std::string &params) {
    return "template <class I>\n__global__ void __launch_bounds__(" +
           std::to_string(bs) + ") loop_" + name + suffix + "(const ctx_" +
           name + " c, " + params + ") {\n";
  }

  void emitRangeGlobal(std::string &d) {
    d += globalHead("", "const int64_t begin, const int64_t end, "
                        "const int64_t poff");
    emitThreadState(d);
    d += "  for (I i = I(begin) + I(blockIdx.x) * I(blockDim.x) + "
         "I(threadIdx.x); i < I(end);\n       i += I(gridDim.x) * "
         "I(blockDim.x)) {\n";
    emitElement(d, "    ", access.race == RaceClass::IncStrips && !colouring);
    d += "  }\n";
    emitReduce(d);
    d += "}\n";
  }

  //===--------------------------------------------------------------------===//
  // Increments staged in shared memory (opd::StagePlan, docs/gpu.md)
  //===--------------------------------------------------------------------===//

  /// The written accesses of a colouring loop's increments (incArgs, the
  /// host's opd::Written list), grouped by dat in argument order (groups:
  /// one thread-colour mask and one shared array each), and whether they
  /// are staged: set loops, no other access to an incremented dat, room
  /// for MinStageTargets targets.
  ///
  /// Atomics are not staged: on an H100, summing a block's increments with
  /// shared-memory atomics first and sending one atomic per target made
  /// Airfoil's res_calc slower than an atomic per increment (docs/gpu.md).
  /// Colouring gains: its increments' read-modify-writes of
  /// device memory, one thread colour after the other, were what it waited
  /// for.
  void planStaging();

  /// The block's shared arrays and their extents: group g's sums in
  /// shg[k * sng + l] (component k, local target l), its targets
  /// stgt[sog .. sog + sng); zeroed (the increments' identity) before the
  /// first barrier.
  void emitStageSetup(std::string &d);

  /// Element i's increment buffers into the shared sums (plain additions:
  /// the thread colours keep two threads off one target).
  void emitStageApply(std::string &d, const std::string &pad);

  /// The block's sums into device memory, once per target and component:
  /// consecutive threads, consecutive (ascending) targets; no atomics, as
  /// no block of the same block colour reaches these targets.
  void emitStageFlush(std::string &d);

  /// Colouring: one CUDA block per plan block (of this block colour),
  /// the block's elements blockDim.x at a time, increments applied thread
  /// colour by thread colour between barriers. Unstaged (_col) to device
  /// memory; staged (_colstg) into the block's shared sums, which go to
  /// device memory at the end without atomics (no block of the same block
  /// colour reaches the same targets).
  void emitColourGlobal(std::string &d, bool stage);

  void emitBlockGlobal(std::string &d);

  //===--------------------------------------------------------------------===//
  // Host side
  //===--------------------------------------------------------------------===//

  void line(int indent, const std::string &text) {
    host.out.append(size_t(indent) * 2, ' ');
    host.out += text;
    host.out += '\n';
  }

  /// A launch of the __global__ template `fn` with the index type the
  /// host chose (opd_i32, emitIndexCheck). One launch a line: the
  /// emulated runtime of the tests rewrites `f<<<g, b>>>(args);` lines.
  void launch(int in, const std::string &fn, const std::string &config,
              const std::string &args) {
    line(in, "if (opd_i32)");
    line(in + 1, fn + "<int32_t><<<" + config + ">>>(" + args + ");");
    line(in, "else");
    line(in + 1, fn + "<int64_t><<<" + config + ">>>(" + args + ");");
  }

  /// opd_i32: whether 32-bit indices reach every entry the loop may touch
  /// (each dat's stored entries, each map's, the loop's range).
  void emitIndexCheck(int in);

  void emitContextFill(int in);

  void emitSetLaunches(int in);

  /// The written (map, idx) pairs of the increments with their groups,
  /// for the thread colours and the staging plan.
  std::string writtenList() const {
    std::string w;
    for (const IncArg &ia : incArgs) {
      const AccessDescriptor &a = loop.args[ia.arg];
      w += std::string(w.empty() ? "" : ", ") + "{opd_map_data(" +
           CUDAModule::handle(a.map) + "), " + std::to_string(a.map->arity) +
           ", " + std::to_string(a.mapIndex) + ", " + std::to_string(ia.group) +
           ", opd_set_local_size(" + CUDAModule::handle(a.map->to) + ")}";
    }
    return w;
  }

  void emitBlockLaunches(int in);

  void emitPartialsToHost(int in,
                          const CUDAFunctionWriter::ProgramPrinter &printer,
                          const host::LoopProgram &lp);

  void emitHost(int in);

  /// A stencil chain's kernel (CUDATileChain.cpp) passes some block
  /// arguments elsewhere: shared memory or a thread's scratch (pointer and
  /// strides, dimension 1 up), and reads dats the chain's first loop
  /// writes in the same kernel, never through the read-only cache.
  struct ArgOverride {
    std::string pointer;
    std::vector<std::string> strides;
  };
  std::map<unsigned, ArgOverride> overrides;
  std::set<const Dat *> writtenInKernel;
  /// Whether the host side counts the blocks it launches (opd_used): not
  /// for a stencil chain's first loop, which launches nothing itself.
  bool countsBlocks = true;
  /// hostOpen's program, kept for hostClose.
  std::unique_ptr<host::Program> hostProgram;
  host::LoopProgram hostLoop;
  std::unique_ptr<CUDAFunctionWriter::ProgramPrinter> printer;

  CUDAFunctionWriter &host;
  CUDAModule &m;
  const ParLoopStmt &loop;
  const LoopAccess access;
  const unsigned id, dims, bs;
  const bool colouring, sequential;
  const std::string name;
  bool hasReduction = false;
  /// Colouring's written accesses and their groups (planStaging).
  struct StageGroup {
    int field;
    unsigned dim, scalarBytes;
    std::string type;
    unsigned offsetWords;
    ScalarKind scalar;
  };
  struct IncArg {
    unsigned arg, group;
  };
  bool staged = false;
  unsigned stageCapacity = 0, stageWords = 0;
  std::vector<StageGroup> groups;
  std::vector<IncArg> incArgs;
  std::set<const Dat *> writtenDats;
  std::vector<const Map *> writtenMaps; ///< in argument order
  /// The loops whose written float dats hostClose checks (--check-fp):
  /// this one, none, or a stencil chain's two after its one launch.
  std::vector<const ParLoopStmt *> fpLoops{&loop};
};

} // namespace opdc::cuda_loop

#endif // OPDC_CODEGEN_CUDA_CUDALOOPWRITER_H
