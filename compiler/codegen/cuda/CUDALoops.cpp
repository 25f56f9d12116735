// CUDALoops.cpp - Parallel loops: device kernel, __global__ functions, host.
// SPDX-License-Identifier: Apache-2.0
//
// A loop `loop K over S (args)` (number N) becomes
//
//   struct ctx_K_N          device pointers (one per dat and map of the
//                           loop's field plan, analysis/LoopAccess.h), the
//                           component stride of set dats (n for SoA, 1 for
//                           AoS), block strides, global values (by value up
//                           to 64 components, else staged in device memory),
//                           reduction partials, the block range
//   kernel_K_N<I>           the user kernel as a __device__ function: one
//                           pointer and one component stride per argument
//                           (component k of argument a at a[k * s]), block
//                           strides, coordinates
//   loop_K_N<I>             __global__: a grid-stride loop over a range of
//                           elements (set loops, 1-D blocks) or 2-D/3-D
//                           thread blocks over a block range (32 x B/32
//                           threads; each thread walks RowsPerThread rows
//                           of a 2-D block, each CUDA block PlanesPerBlock
//                           planes of a 3-D block, the planes over the
//                           grid's z)
//   loop_K_N_col            __global__, colouring only: one CUDA block per
//                           plan block, increments applied thread colour by
//                           thread colour (lib/cuda/opd_cuda.cuh)
//   loop_K_N_colstg         the same with the increments summed in shared
//                           memory per distinct target of the block, then
//                           added to device memory once (opd::StagePlan);
//                           the host runs it unless a block's targets
//                           overflow its shared array or OPD_CUDA_STAGE=0
//
// and in the host, the runtime's loop phases (opd_rt.h): prepare, begin,
// one launch per segment, or per part (and per block colour when
// colouring), finish (synchronise, report a failed kernel), end, then the
// reductions: the blocks' partials copied back and combined in block order
// between opd_reduce_local and opd_reduce_global, as the CPU backend
// combines its chunks' partials.
//
// What the element loop may do comes from the race class of
// analyzeLoopAccess(): Parallel loops run one thread per element;
// IncStrips loops compute each element's increments into a private buffer
// starting from -0.0 (codegen/common/Identities.h; the CPU backend's strips
// do the same) and add it to the targets with atomics or, colouring, with
// plain additions ordered by the colours; Sequential loops run on one
// thread in element order.
//
// Index type I: element, coordinate and stride arithmetic is 32-bit when
// every dat, map and range of the loop has fewer than 2^30 entries (the
// host checks, opd::index_fits), else 64-bit; both are instantiated. On an
// H100, 32-bit indices and the row/plane walk took heat3d's 7-point step
// from 55 % to 85 % of the device copy and Poisson's 5-point sweep from
// 64 % to 93 % (bench/cuda/stencil_shapes.cu, docs/gpu.md).
#include "codegen/cuda/CUDAEmitter.h"

#include "codegen/common/Identities.h"
#include "codegen/common/RuntimeMapping.h"
#include "ir/LoopNames.h"

#include "support/Assert.h"

#include <algorithm>
#include <set>

namespace opdc {

using namespace ir;

namespace {

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

std::string identityLiteral(IdentityValue v, ScalarKind k) {
  std::string t = cudaScalarType(k);
  switch (v) {
  case IdentityValue::Zero:
    return t + "(0)";
  case IdentityValue::NegativeZero:
    return k == ScalarKind::F32 ? "-0.0f" : "-0.0";
  case IdentityValue::PlusInf:
    return t + "(INFINITY)";
  case IdentityValue::MinusInf:
    return "-" + t + "(INFINITY)";
  case IdentityValue::IntMax:
    return k == ScalarKind::I64 ? "INT64_MAX" : "INT32_MAX";
  case IdentityValue::IntMin:
    return k == ScalarKind::I64 ? "INT64_MIN" : "INT32_MIN";
  }
  OPDC_UNREACHABLE("unknown identity value");
}

const char *reduceOp(AccessMode m) {
  switch (m) {
  case AccessMode::Min:
    return "opd::Min";
  case AccessMode::Max:
    return "opd::Max";
  default:
    return "opd::Sum";
  }
}

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

private:
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
    const AccessDescriptor &a = loop.args[n];
    return m.options.reproSum && a.kind == ArgKind::Reduction &&
           a.mode == AccessMode::Sum &&
           (a.scalar == ScalarKind::F64 || a.scalar == ScalarKind::F32);
  }
  bool gatherMode() const {
    return m.options.reproSum && !loop.block &&
           access.race == RaceClass::IncStrips;
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

  void emitContext(std::string &d) {
    d += "struct ctx_" + name + " {\n";
    for (unsigned f = 0; f < access.dats.size(); ++f) {
      d += "  " + datType(int(f)) + " *d" + std::to_string(f) + ";\n";
      if (!loop.block)
        d += "  int64_t ds" + std::to_string(f) + ";\n";
      for (unsigned k = 1; loop.block && k < dims; ++k)
        d += "  int64_t dt" + std::to_string(f) + "_" + std::to_string(k) +
             ";\n";
    }
    for (unsigned f = 0; f < access.maps.size(); ++f)
      d += "  int32_t *m" + std::to_string(f) + ";\n";
    for (unsigned f = 0; f < access.mapValues.size(); ++f)
      d += "  const int32_t *mv" + std::to_string(f) + ";\n";
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      std::string i = std::to_string(n);
      if (a.kind == ArgKind::GlobalRead)
        d += largeGlobal(n) ? "  const " + elemType(n) + " *g" + i + ";\n"
                            : "  " +
                                  cudaValueType(
                                      loop.kernel->kernelParams[n].type) +
                                  " g" + i + ";\n";
      if (a.kind == ArgKind::Reduction)
        d += "  " + elemType(n) + " *r" + i + ";\n";
      if (exactSum(n))
        d += "  unsigned long long *x" + i + ";\n";
      if (gathered(n))
        d += "  " + elemType(n) + " *gr" + i + ";\n";
    }
    if (loop.block)
      d += "  int64_t lo[3], hi[3];\n";
    if (globalIds())
      d += "  const int64_t *gid;\n";
    d += "};\n";
  }

  void emitKernel(std::string &d) {
    const Function &k = *loop.kernel;
    std::string sig;
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      bool ro = !modeWrites(a.mode);
      // Read-only data no argument of the loop writes may go through the
      // read-only cache.
      bool restrict_ = ro && (a.kind == ArgKind::GlobalRead ||
                              (a.usesDat() && !writtenDats.count(a.dat)) ||
                              (a.kind == ArgKind::MapDirect &&
                               !writesMap(a.map)));
      sig += std::string(sig.empty() ? "" : ", ") + (ro ? "const " : "") +
             elemType(n) + " *" + (restrict_ ? "__restrict__ " : "") + "a" +
             std::to_string(n) + ", I s" + std::to_string(n);
      if (blockStrides(n))
        for (unsigned dd = 1; dd < dims; ++dd)
          sig += ", I t" + std::to_string(n) + "_" + std::to_string(dd);
    }
    for (unsigned dd = 0; dd < dims; ++dd)
      sig += (sig.empty() ? "" : ", ") + std::string("int64_t c") +
             std::to_string(dd);
    d += "template <class I>\n__device__ __forceinline__ void kernel_" + name +
         "(" + sig + ") {\n";
    CUDAFunctionWriter w(m, k, CUDAFunctionWriter::Mode::Kernel, d);
    w.setLoop(&loop, &access);
    w.declareVars(1);
    w.body(k.body, 1);
    d += "}\n";
  }

  /// Declarations at the top of a __global__ function: accumulators and
  /// the threads' copies of global values.
  void emitThreadState(std::string &d) {
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      std::string i = std::to_string(n);
      if (a.kind == ArgKind::Reduction) {
        d += "  " + elemType(n) + " acc" + i + "[" + std::to_string(a.dim) +
             "];\n";
        d += "  for (int k = 0; k < " + std::to_string(a.dim) + "; ++k)\n";
        d += "    acc" + i + "[k] = " +
             identityLiteral(reductionIdentity(a.mode, a.scalar), a.scalar) +
             ";\n";
      }
      if (a.kind == ArgKind::GlobalRead && !largeGlobal(n))
        d += "  const " + cudaValueType(loop.kernel->kernelParams[n].type) +
             " g" + i + " = c.g" + i + ";\n";
      if (exactSum(n)) {
        d += "  unsigned long long *const xs" + i + " = c.x" + i +
             " + (poff + int64_t(blockIdx.x) + int64_t(gridDim.x) * "
             "(blockIdx.y + int64_t(gridDim.y) * blockIdx.z)) * " +
             xsumWords(n) + ";\n";
        d += "  opd::xsum_clear(xs" + i + ", " + xsumWords(n) + ");\n";
      }
    }
  }

  /// The kernel call for element `i` (set loops) or coordinates c0.. (block
  /// loops), with increment buffers set up before and applied after.
  void emitElement(std::string &d, const std::string &pad, bool atomics) {
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      if (!incBuffer(n))
        continue;
      const AccessDescriptor &a = loop.args[n];
      std::string i = std::to_string(n);
      d += pad + elemType(n) + " inc" + i + "[" + std::to_string(a.dim) +
           "];\n";
      d += pad + "for (int k = 0; k < " + std::to_string(a.dim) + "; ++k)\n";
      d += pad + "  inc" + i + "[k] = " +
           identityLiteral(incrementIdentity(a.scalar), a.scalar) + ";\n";
    }
    // -frepro-sum: each element's float sums start from -0.0 (the
    // identity), so its contribution is the CPU build's.
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (exactSum(n))
        d += pad + elemType(n) + " ex" + std::to_string(n) + "[" +
             std::to_string(loop.args[n].dim) + "] = {" +
             identityLiteral(IdentityValue::NegativeZero, loop.args[n].scalar) +
             "};\n" + pad + "for (int k = 1; k < " +
             std::to_string(loop.args[n].dim) + "; ++k)\n" + pad + "  ex" +
             std::to_string(n) + "[k] = ex" + std::to_string(n) + "[0];\n";
    std::string args, strides;
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      const ArgAccess &acc = access.args[n];
      std::string i = std::to_string(n);
      std::string p, s = "1";
      std::string df = std::to_string(acc.datField);
      switch (a.kind) {
      case ArgKind::Direct:
      case ArgKind::Stencil:
        if (loop.block) {
          p = "c.d" + df + " + c0 * " + std::to_string(a.dim);
          for (unsigned dd = 1; dd < dims; ++dd)
            p += " + c" + std::to_string(dd) + " * I(c.dt" + df + "_" +
                 std::to_string(dd) + ")";
          for (unsigned dd = 1; dd < dims; ++dd)
            strides += ", I(c.dt" + df + "_" + std::to_string(dd) + ")";
        } else {
          p = "c.d" + df + " + i" + step(a);
          s = "I(c.ds" + df + ")";
        }
        break;
      case ArgKind::Indirect:
        if (incBuffer(n)) {
          p = "inc" + i;
        } else {
          p = "c.d" + df + " + I(c.m" + std::to_string(acc.mapField) +
              "[i * " + std::to_string(a.map->arity) + " + " +
              std::to_string(a.mapIndex) + "])" + step(a);
          s = "I(c.ds" + df + ")";
        }
        break;
      case ArgKind::MapDirect:
        p = (acc.mapValuesField >= 0
                 ? "c.mv" + std::to_string(acc.mapValuesField)
                 : "c.m" + std::to_string(acc.mapField)) +
            " + i * " + std::to_string(a.map->arity);
        break;
      case ArgKind::GlobalRead:
        if (largeGlobal(n))
          p = "c.g" + i;
        else
          p = loop.kernel->kernelParams[n].type.isArray() ? "g" + i + ".v"
                                                          : "&g" + i;
        break;
      case ArgKind::Reduction:
        p = (exactSum(n) ? "ex" : "acc") + i;
        break;
      }
      args += (args.empty() ? "" : ", ") + p + ", " + s + strides;
      strides.clear();
    }
    // (A kernel may have no parameters: kernel-dce drops those it never
    // reads.)
    const std::string sep = args.empty() ? "" : ", ";
    if (loop.block) {
      for (unsigned dd = 0; dd < dims; ++dd)
        args += (dd == 0 ? sep : ", ") + "c" + std::to_string(dd);
    } else {
      // idx() and random numbers see the element's global index.
      args += sep + (globalIds() ? "opd::global_index(c.gid, i)" : "i");
    }
    d += pad + "kernel_" + name + "<I>(" + args + ");\n";
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (exactSum(n))
        d += pad + "for (int k = 0; k < " + std::to_string(loop.args[n].dim) +
             "; ++k)\n" + pad + "  opd::xsum_add(xs" + std::to_string(n) +
             " + k * OPD_XSUM_WORDS, double(ex" + std::to_string(n) +
             "[k]));\n";
    if (!atomics)
      return;
    emitApply(d, pad, true);
  }

  /// Adds element i's increment buffers to their targets.
  void emitApply(std::string &d, const std::string &pad, bool atomics) {
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      if (!incBuffer(n))
        continue;
      const AccessDescriptor &a = loop.args[n];
      const ArgAccess &acc = access.args[n];
      std::string i = std::to_string(n), df = std::to_string(acc.datField);
      if (gathered(n)) {
        // Row i of the argument's rows (components contiguous, as
        // opd_loop_gather's buffer).
        d += pad + "for (int k = 0; k < " + std::to_string(a.dim) + "; ++k)\n";
        d += pad + "  c.gr" + i + "[int64_t(i) * " + std::to_string(a.dim) +
             " + k] = inc" + i + "[k];\n";
        continue;
      }
      d += pad + "{\n";
      d += pad + "  " + elemType(n) + " *t = c.d" + df + " + I(c.m" +
           std::to_string(acc.mapField) + "[i * " +
           std::to_string(a.map->arity) + " + " + std::to_string(a.mapIndex) +
           "])" + step(a) + ";\n";
      d += pad + "  for (int k = 0; k < " + std::to_string(a.dim) + "; ++k)\n";
      if (atomics)
        d += pad + "    opd::atomic_inc(t + k * I(c.ds" + df + "), inc" + i +
             "[k]);\n";
      else
        d += pad + "    t[k * I(c.ds" + df + ")] = opd::combine<opd::Sum>(t[k * I(c.ds" +
             df + ")], inc" + i + "[k]);\n";
      d += pad + "}\n";
    }
  }

  void emitReduce(std::string &d) {
    if (!hasReduction)
      return;
    d += "  const int64_t blk = poff + int64_t(blockIdx.x) + int64_t(gridDim.x) "
         "* (blockIdx.y + int64_t(gridDim.y) * blockIdx.z);\n";
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      if (a.kind != ArgKind::Reduction || exactSum(n))
        continue;
      std::string i = std::to_string(n), dim = std::to_string(a.dim);
      d += "  for (int k = 0; k < " + dim + "; ++k)\n";
      d += std::string("    opd::block_reduce<") + reduceOp(a.mode) + ">(acc" +
           i + "[k], c.r" + i + " + blk * " + dim + " + k);\n";
    }
  }

  std::string globalHead(const std::string &suffix,
                         const std::string &params) {
    return "template <class I>\n__global__ void __launch_bounds__(" +
           std::to_string(bs) +
           ") loop_" + name + suffix + "(const ctx_" + name + " c, " + params +
           ") {\n";
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
  void planStaging() {
    if (!colouring || loop.block)
      return;
    std::vector<int> fieldSlot(access.dats.size(), -1);
    unsigned bytesPerTarget = 0;
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      if (!incBuffer(n))
        continue;
      const AccessDescriptor &a = loop.args[n];
      int f = access.args[n].datField;
      if (fieldSlot[unsigned(f)] < 0) {
        fieldSlot[unsigned(f)] = int(groups.size());
        groups.push_back({f, a.dim, a.bytes / a.dim, elemType(n), 0, a.scalar});
        bytesPerTarget += a.bytes;
      }
      incArgs.push_back({n, unsigned(fieldSlot[unsigned(f)])});
    }
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (!incBuffer(n) && loop.args[n].usesDat() &&
          fieldSlot[unsigned(access.args[n].datField)] >= 0)
        return; // read or written otherwise too: the increments go direct
    if (groups.empty() || bytesPerTarget == 0)
      return;
    unsigned cap = StageBytes / bytesPerTarget;
    if (cap < MinStageTargets)
      return;
    stageCapacity = std::min(cap, 65535u);
    unsigned words = 0;
    for (StageGroup &g : groups) {
      g.offsetWords = words;
      words += (stageCapacity * g.dim * g.scalarBytes + 7) / 8;
    }
    stageWords = words;
    staged = true;
  }

  /// The block's shared arrays and their extents: group g's sums in
  /// shg[k * sng + l] (component k, local target l), its targets
  /// stgt[sog .. sog + sng); zeroed (the increments' identity) before the
  /// first barrier.
  void emitStageSetup(std::string &d) {
    const std::string pad = "  ";
    d += pad + "__shared__ double opd_sh[" + std::to_string(stageWords) +
         "];\n";
    for (unsigned g = 0; g < groups.size(); ++g) {
      const StageGroup &sg = groups[g];
      std::string i = std::to_string(g);
      d += pad + sg.type + " *const sh" + i + " = reinterpret_cast<" +
           sg.type + " *>(opd_sh + " + std::to_string(sg.offsetWords) +
           ");\n";
      d += pad + "const int32_t so" + i + " = soff[" + i +
           " * (nb + 1) + b];\n";
      d += pad + "const int32_t sn" + i + " = soff[" + i +
           " * (nb + 1) + b + 1] - so" + i + ";\n";
      d += pad + "for (int32_t t = int32_t(threadIdx.x); t < sn" + i + " * " +
           std::to_string(sg.dim) + "; t += int32_t(blockDim.x))\n";
      d += pad + "  sh" + i + "[t] = " +
           identityLiteral(incrementIdentity(sg.scalar), sg.scalar) +
           ";\n";
    }
    d += pad + "__syncthreads();\n";
  }

  /// Element i's increment buffers into the shared sums (plain additions:
  /// the thread colours keep two threads off one target).
  void emitStageApply(std::string &d, const std::string &pad) {
    unsigned nw = unsigned(incArgs.size());
    for (unsigned a = 0; a < nw; ++a) {
      std::string n = std::to_string(incArgs[a].arg);
      std::string g = std::to_string(incArgs[a].group);
      d += pad + "{\n";
      d += pad + "  const int32_t l = sloc[int64_t(i - I(first)) * " +
           std::to_string(nw) + " + " + std::to_string(a) + "];\n";
      d += pad + "  for (int k = 0; k < " +
           std::to_string(loop.args[incArgs[a].arg].dim) + "; ++k)\n";
      d += pad + "    sh" + g + "[k * sn" + g +
           " + l] = opd::combine<opd::Sum>(sh" + g + "[k * sn" + g +
           " + l], inc" + n + "[k]);\n";
      d += pad + "}\n";
    }
  }

  /// The block's sums into device memory, once per target and component:
  /// consecutive threads, consecutive (ascending) targets; no atomics, as
  /// no block of the same block colour reaches these targets.
  void emitStageFlush(std::string &d) {
    d += "  __syncthreads();\n";
    for (unsigned g = 0; g < groups.size(); ++g) {
      const StageGroup &sg = groups[g];
      std::string i = std::to_string(g), f = std::to_string(sg.field);
      std::string stepg =
          m.options.soa ? "" : " * " + std::to_string(sg.dim);
      d += "  for (int32_t t = int32_t(threadIdx.x); t < sn" + i + " * " +
           std::to_string(sg.dim) + "; t += int32_t(blockDim.x)) {\n";
      d += "    const int32_t l = t % sn" + i + ", k = t / sn" + i + ";\n";
      d += "    " + sg.type + " *const p = c.d" + f + " + I(stgt[so" + i +
           " + l])" + stepg + " + k * I(c.ds" + f + ");\n";
      d += "    *p = opd::combine<opd::Sum>(*p, sh" + i + "[t]);\n";
      d += "  }\n";
    }
  }

  /// Colouring: one CUDA block per plan block (of this block colour),
  /// the block's elements blockDim.x at a time, increments applied thread
  /// colour by thread colour between barriers. Unstaged (_col) to device
  /// memory; staged (_colstg) into the block's shared sums, which go to
  /// device memory at the end without atomics (no block of the same block
  /// colour reaches the same targets).
  void emitColourGlobal(std::string &d, bool stage) {
    std::string params = "const int64_t first, const int64_t count, const "
                         "int64_t bsize, const int64_t *__restrict__ blocks, "
                         "const uint8_t *__restrict__ tcol, const int32_t "
                         "*__restrict__ ncol, ";
    if (stage)
      params += "const int64_t nb, const int32_t *__restrict__ soff, const "
                "int32_t *__restrict__ stgt, const uint16_t *__restrict__ "
                "sloc, ";
    d += globalHead(stage ? "_colstg" : "_col", params + "const int64_t poff");
    emitThreadState(d);
    d += "  const int64_t b = blocks[blockIdx.x];\n";
    d += "  const I s = I(first + b * bsize);\n";
    d += "  const I e = I(s + bsize < first + count ? s + bsize : first + "
         "count);\n";
    d += "  const int nc = ncol[b];\n";
    if (stage)
      emitStageSetup(d);
    d += "  for (I base = s; base < e; base += I(blockDim.x)) {\n";
    d += "    const I i = base + I(threadIdx.x);\n";
    d += "    const bool active = i < e;\n";
    // The increment buffers live across the colour steps: their
    // declarations go before the call, which only active threads make.
    std::string body;
    emitElement(body, "    ", false);
    size_t at = body.find("kernel_" + name);
    size_t lineStart = body.rfind('\n', at);
    std::string decls =
        body.substr(0, lineStart == std::string::npos ? 0 : lineStart + 1);
    d += decls;
    d += "    if (active) {\n  " + body.substr(decls.size()) + "    }\n";
    d += "    for (int col = 0; col < nc; ++col) {\n";
    d += "      if (active && tcol[i - first] == col) {\n";
    if (stage)
      emitStageApply(d, "        ");
    else
      emitApply(d, "        ", false);
    d += "      }\n";
    d += "      __syncthreads();\n";
    d += "    }\n";
    d += "  }\n";
    if (stage)
      emitStageFlush(d);
    emitReduce(d);
    d += "}\n";
  }

  void emitBlockGlobal(std::string &d) {
    d += globalHead("", "const int64_t begin, const int64_t end, "
                        "const int64_t poff");
    emitThreadState(d);
    std::string pad = "    ";
    auto range = [](const std::string &c, const std::string &lo,
                    const std::string &hi, const std::string &xyz) {
      return "  for (I " + c + " = I(" + lo + ") + I(blockIdx." + xyz +
             ") * I(blockDim." + xyz + ") + I(threadIdx." + xyz + "); " + c +
             " < I(" + hi + ");\n       " + c + " += I(gridDim." + xyz +
             ") * I(blockDim." + xyz + "))";
    };
    if (dims == 1) {
      d += range("c0", "begin", "end", "x") + " {\n";
    } else if (dims == 2 && sequential) {
      d += range("c1", "begin", "end", "y") + "\n";
      d += range("c0", "c.lo[0]", "c.hi[0]", "x") + " {\n";
    } else if (dims == 2) {
      // Each thread walks RowsPerThread rows from r0.
      std::string R = std::to_string(RowsPerThread);
      d += "  for (I r0 = I(begin) + (I(blockIdx.y) * I(blockDim.y) + "
           "I(threadIdx.y)) * " + R + "; r0 < I(end);\n       r0 += "
           "I(gridDim.y) * I(blockDim.y) * " + R + ")\n";
      d += range("c0", "c.lo[0]", "c.hi[0]", "x") + "\n";
      d += "  for (I c1 = r0; c1 < r0 + " + R + " && c1 < I(end); ++c1) {\n";
    } else if (sequential) {
      d += "  for (I c2 = I(begin) + I(blockIdx.z); c2 < I(end); c2 += "
           "I(gridDim.z))\n";
      d += range("c1", "c.lo[1]", "c.hi[1]", "y") + "\n";
      d += range("c0", "c.lo[0]", "c.hi[0]", "x") + " {\n";
    } else {
      // Each CUDA block walks PlanesPerBlock planes from z0.
      std::string P = std::to_string(PlanesPerBlock);
      d += "  for (I z0 = I(begin) + I(blockIdx.z) * " + P +
           "; z0 < I(end); z0 += I(gridDim.z) * " + P + ")\n";
      d += range("c1", "c.lo[1]", "c.hi[1]", "y") + "\n";
      d += range("c0", "c.lo[0]", "c.hi[0]", "x") + "\n";
      d += "  for (I c2 = z0; c2 < z0 + " + P + " && c2 < I(end); ++c2) {\n";
    }
    emitElement(d, pad, false);
    d += "  }\n";
    emitReduce(d);
    d += "}\n";
  }

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
  void emitIndexCheck(int in) {
    std::vector<std::string> e;
    for (const Dat *dat : access.dats)
      e.push_back("opd_dat_stored_points(" + CUDAModule::handle(dat) +
                  ") * " + std::to_string(dat->dim()));
    auto rows = [&](const Map *mp) {
      e.push_back("opd_set_local_size(" + CUDAModule::handle(mp->from) +
                  ") * " + std::to_string(mp->arity));
    };
    for (const Map *mp : access.maps)
      rows(mp);
    for (const Map *mp : access.mapValues)
      rows(mp);
    if (loop.block) {
      for (unsigned dd = 0; dd < dims; ++dd) {
        e.push_back("c.lo[" + std::to_string(dd) + "]");
        e.push_back("c.hi[" + std::to_string(dd) + "]");
      }
    } else {
      e.push_back("opd_set_local_size(" + CUDAModule::handle(loop.set) + ")");
    }
    std::string list;
    for (const std::string &x : e)
      list += (list.empty() ? "" : ", ") + x;
    line(in, "const bool opd_i32 = opd::index_fits({" + list + "});");
  }

  std::string hostElement(const AccessDescriptor &a, const std::string &k) {
    std::string v = host.var(unsigned(a.var));
    return host.fn.vars[unsigned(a.var)].type.isArray() ? v + "[" + k + "]" : v;
  }

  void emitRanges(int in) {
    if (!loop.ranges.empty()) {
      std::string lo, hi;
      for (unsigned dd = 0; dd < 3; ++dd) {
        lo += std::string(dd ? ", " : "") +
              (dd < dims ? "int64_t(" + host.expr(*loop.ranges[dd].lo) + ")"
                         : "0");
        hi += std::string(dd ? ", " : "") +
              (dd < dims ? "int64_t(" + host.expr(*loop.ranges[dd].hi) + ")"
                         : "1");
      }
      line(in, "int64_t opd_lo[3] = {" + lo + "};");
      line(in, "int64_t opd_hi[3] = {" + hi + "};");
      return;
    }
    // The whole block: the extent of the loop's first dat, from its base.
    const Dat *dat = access.extentDat;
    OPDC_ASSERT(dat, "a loop over a whole block without a dat argument");
    std::string lo, hi;
    for (unsigned dd = 0; dd < 3; ++dd) {
      int64_t base = dd < dat->base.size() ? dat->base[dd] : 0;
      lo += std::string(dd ? ", " : "") + (dd < dims ? std::to_string(base) : "0");
      hi += std::string(dd ? ", " : "") +
            (dd < dims ? std::to_string(base) + " + opd_dat_extent(" +
                             CUDAModule::handle(dat) + ", " +
                             std::to_string(dd) + ")"
                       : "1");
    }
    line(in, "int64_t opd_lo[3] = {" + lo + "};");
    line(in, "int64_t opd_hi[3] = {" + hi + "};");
  }

  void emitHaloChecks(int in) {
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      if (!a.usesDat())
        continue;
      const ArgAccess &acc = access.args[n];
      const Dat *dat = a.dat;
      std::string what = cudaStringLiteral(
          m.location(loop.range) + ": loop '" + loop.kernel->name +
          "' over '" + loop.block->name + "' " +
          (a.mode == AccessMode::Read ? "reads" : "writes") + " dat '" +
          dat->name + "'");
      for (unsigned dd = 0; dd < dims; ++dd) {
        auto at = [&](const std::vector<int64_t> &v) {
          return dd < v.size() ? v[dd] : 0;
        };
        std::string ds = std::to_string(dd);
        std::string first = std::to_string(at(dat->base) - at(dat->haloMinus));
        std::string last = "opd_dat_extent(" + CUDAModule::handle(dat) + ", " +
                           ds + ") + " +
                           std::to_string(at(dat->base) + at(dat->haloPlus) - 1);
        line(in, "if (opd_lo[" + ds + "] < opd_hi[" + ds + "]) {");
        line(in + 1, "const int64_t opd_first = " + first +
                         ", opd_last = " + last + ";");
        line(in + 1, "if (opd_lo[" + ds + "] + " + std::to_string(acc.lo[dd]) +
                         " < opd_first)");
        line(in + 2, "opd_rt_fail_outside(" + what + ", opd_lo[" + ds + "] + " +
                         std::to_string(acc.lo[dd]) + ", " + ds +
                         ", opd_first, opd_last);");
        line(in + 1, "if (opd_hi[" + ds + "] - 1 + " +
                         std::to_string(acc.hi[dd]) + " > opd_last)");
        line(in + 2, "opd_rt_fail_outside(" + what + ", opd_hi[" + ds +
                         "] - 1 + " + std::to_string(acc.hi[dd]) + ", " + ds +
                         ", opd_first, opd_last);");
        line(in, "}");
      }
    }
  }

  /// Communication avoidance (passes/CommAvoid.cpp), as the CPU backend
  /// calls it: the chain's grouped exchange before its first loop, and how
  /// far beyond the rank's points the loop runs (the runtime's segments
  /// and parts then cover the extension).
  void emitCommAvoid(int in) {
    auto list = [](const auto &v) {
      std::string r;
      for (size_t k = 0; k < v.size(); ++k)
        r += std::string(k ? ", " : "") + "INT64_C(" + std::to_string(v[k]) +
             ")";
      return r;
    };
    if (loop.haloGroup) {
      const HaloGroup &g = *loop.haloGroup;
      std::string dats, depth, costs;
      for (size_t i = 0; i < g.dats.size(); ++i) {
        dats += std::string(i ? ", " : "") + CUDAModule::handle(g.dats[i].dat);
        depth += std::string(i ? ", " : "") + list(g.dats[i].depth);
      }
      for (size_t i = 0; i < g.loops.size(); ++i) {
        const HaloGroup::LoopCost &c = g.loops[i];
        costs += std::string(i ? ", " : "") + "{INT64_C(" +
                 std::to_string(c.bytes) + "), INT64_C(" +
                 std::to_string(c.extension) + "), " +
                 std::to_string(c.exchanges) + ", " + std::to_string(c.depth) +
                 ", INT64_C(" + std::to_string(c.cached) + ")}";
      }
      line(in, "{");
      line(in + 1, "static opd_loop *opd_group = nullptr;");
      line(in + 1, "opd_dat *const opd_gd[] = {" +
                       (dats.empty() ? std::string("nullptr") : dats) + "};");
      line(in + 1, "static const int64_t opd_gdepth[] = {" +
                       (depth.empty() ? std::string("0, 0, 0") : depth) +
                       "};");
      line(in + 1, "static const opd_chain_loop opd_gl[] = {" +
                       (costs.empty() ? std::string("{0, 0, 0, 0, 0}") : costs) +
                       "};");
      line(in + 1, "opd_halo_group(&opd_group, " +
                       cudaStringLiteral("chain at " + m.location(loop.range)) +
                       ", " + (g.mode == HaloGroup::Mode::On ? "1" : "0") +
                       ", " + std::to_string(g.dats.size()) +
                       ", opd_gd, opd_gdepth, " +
                       std::to_string(g.loops.size()) + ", opd_gl);");
      line(in, "}");
    }
    if (loop.extended()) {
      line(in, "{");
      line(in + 1, "static const int64_t opd_xlo[] = {" + list(loop.extendLo) +
                       "}, opd_xhi[] = {" + list(loop.extendHi) + "};");
      line(in + 1, "opd_loop_extend_next(opd_xlo, opd_xhi);");
      line(in, "}");
    }
  }

  void emitPrepare(int in) {
    size_t n = loop.args.size();
    std::string table;
    auto triple = [](const std::array<int32_t, 3> &v) {
      return "{" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " +
             std::to_string(v[2]) + "}";
    };
    for (unsigned i = 0; i < n; ++i) {
      RuntimeArgEntry e = runtimeArgEntry(
          loop.args[i], access.args[i],
          access.race == RaceClass::IncStrips && !colouring);
      table += std::string(i ? ",\n" : "") + std::string(size_t(in + 1) * 2, ' ') +
               "{nullptr, nullptr, " + std::to_string(e.idx) + ", " +
               std::to_string(e.kind) + ", " + std::to_string(e.mode) + ", " +
               std::to_string(e.bytes) + ", " + triple(e.lo) + ", " +
               triple(e.hi) + ", " + std::to_string(e.flags) + "}";
    }
    emitCommAvoid(in);
    line(in, "static opd_loop *opd_cache = nullptr;");
    if (n) {
      line(in, "static opd_arg opd_args[" + std::to_string(n) + "] = {");
      host.out += table + "};\n";
    } else {
      line(in, "static opd_arg *const opd_args = nullptr;");
    }
    for (unsigned i = 0; i < n; ++i) {
      const AccessDescriptor &a = loop.args[i];
      if (a.usesDat())
        line(in, "opd_args[" + std::to_string(i) +
                     "].dat = " + CUDAModule::handle(a.dat) + ";");
      if (a.map)
        line(in, "opd_args[" + std::to_string(i) +
                     "].map = " + CUDAModule::handle(a.map) + ";");
    }
    // The profile's row names the strategy of loops with increments.
    std::string lname = ir::userLoopName(loop.kernel->name);
    if (access.race == RaceClass::IncStrips)
      lname += std::string("[") + cudaIndirectName(m.options.indirect) + "]";
    std::string nm = cudaStringLiteral(lname);
    if (staged) {
      lname.insert(lname.size() - 1, "+shared");
      nm = "opd::staging() ? " + cudaStringLiteral(lname) + " : " + nm;
    }
    if (loop.block)
      line(in, "opd_loop *const opd_l = opd_loop_prepare_block(&opd_cache, " +
                   nm + ", " + CUDAModule::handle(loop.block) +
                   ", opd_lo, opd_hi, " + std::to_string(n) + ", opd_args);");
    else
      line(in, "opd_loop *const opd_l = opd_loop_prepare(&opd_cache, " + nm +
                   ", " + CUDAModule::handle(loop.set) + ", " +
                   std::to_string(n) + ", opd_args);");
    line(in, "opd_loop_set_location(opd_l, " +
                 cudaStringLiteral(m.location(loop.range)) + ");");
  }

  void emitContextFill(int in) {
    line(in, "ctx_" + name + " c{};");
    for (unsigned f = 0; f < access.dats.size(); ++f) {
      const Dat *dat = access.dats[f];
      std::string fs = std::to_string(f), h = CUDAModule::handle(dat);
      std::string t = datType(int(f));
      bool writes = writtenDats.count(dat) > 0;
      std::string dim = std::to_string(dat->dim());
      std::string bytes = std::to_string(scalarBytes(dat->scalar()));
      if (!dat->structured()) {
        std::string size = "opd_dat_stored_points(" + h + ")";
        line(in, "c.d" + fs + " = static_cast<" + t + " *>(opd::device(opd_dat_data(" +
                     h + "), " + size + ", " + dim + ", " + bytes + ", " +
                     (m.options.soa ? "true" : "false") + ", " +
                     (writes ? "true" : "false") + "));");
        line(in, "c.ds" + fs + " = " + (m.options.soa ? size : "1") + ";");
        continue;
      }
      line(in, "{");
      line(in + 1, "int64_t opd_st[3] = {0, 0, 0};");
      line(in + 1, "char *const opd_o = static_cast<char *>(opd_dat_origin(" +
                       h + ", opd_st));");
      line(in + 1, "char *const opd_h = static_cast<char *>(opd_dat_data(" + h +
                       "));");
      // All stored points: halos and the runtime's row padding.
      line(in + 1, "char *const opd_dv = static_cast<char *>(opd::device(opd_h, "
                   "opd_dat_stored_points(" +
                       h + "), " + dim + ", " + bytes + ", false, " +
                       (writes ? "true" : "false") + "));");
      line(in + 1, "c.d" + fs + " = reinterpret_cast<" + t +
                       " *>(opd_dv + (opd_o - opd_h));");
      for (unsigned k = 1; k < dims; ++k)
        line(in + 1, "c.dt" + fs + "_" + std::to_string(k) + " = opd_st[" +
                         std::to_string(k) + "] * " + dim + ";");
      line(in, "}");
    }
    auto rows = [&](const Map *mp) {
      return "opd_set_local_size(" + CUDAModule::handle(mp->from) + "), " +
             std::to_string(mp->arity);
    };
    for (unsigned f = 0; f < access.maps.size(); ++f)
      line(in, "c.m" + std::to_string(f) + " = opd::map_device(" +
                   CUDAModule::handle(access.maps[f]) + ", " +
                   rows(access.maps[f]) + ", " +
                   (writesMap(access.maps[f]) ? "true" : "false") + ");");
    // Global indices on several ranks (opd_map_values).
    for (unsigned f = 0; f < access.mapValues.size(); ++f)
      line(in, "c.mv" + std::to_string(f) + " = opd::map_values(" +
                   CUDAModule::handle(access.mapValues[f]) + ", " +
                   rows(access.mapValues[f]) + ");");
    if (globalIds())
      line(in, "c.gid = opd::global_ids(" + CUDAModule::handle(loop.set) +
                   ");");
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      if (a.kind != ArgKind::GlobalRead)
        continue;
      std::string i = std::to_string(n);
      if (!largeGlobal(n)) {
        line(in, "c.g" + i + " = " + host.expr(*a.value) + ";");
        continue;
      }
      line(in, "{");
      line(in + 1, "const " + cudaValueType(loop.kernel->kernelParams[n].type) +
                       " opd_v = " + host.expr(*a.value) + ";");
      line(in + 1, "c.g" + i + " = static_cast<const " + elemType(n) +
                       " *>(opd::stage(" + i + ", opd_v.v, sizeof opd_v));");
      line(in, "}");
    }
    if (loop.block) {
      line(in, "for (int opd_d = 0; opd_d < 3; ++opd_d) {");
      line(in + 1, "c.lo[opd_d] = opd_lo[opd_d];");
      line(in + 1, "c.hi[opd_d] = opd_hi[opd_d];");
      line(in, "}");
    }
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      if (!gathered(n))
        continue;
      std::string i = std::to_string(n);
      line(in, "c.gr" + i + " = static_cast<" + elemType(n) +
                   " *>(opd::repro_buffer(" + i +
                   ", size_t(opd_set_local_size(" +
                   CUDAModule::handle(loop.set) + ")) * " +
                   std::to_string(loop.args[n].bytes) + "));");
      line(in,
           "void *const opd_gh" + i + " = opd_loop_gather(opd_l, " + i + ");");
    }
    if (!hasReduction)
      return;
    // One allocation for every reduction's partials, each 8-byte aligned.
    line(in, "const int64_t opd_slots = " + std::to_string(PartialSlots) +
                 " + opd_loop_chunks(opd_l);");
    std::string total = "0";
    std::vector<std::string> offsets(loop.args.size());
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      if (a.kind != ArgKind::Reduction)
        continue;
      offsets[n] = total;
      total += " + (opd_slots * " +
               std::to_string(a.dim * scalarBytes(a.scalar)) + " + 7) / 8 * 8";
    }
    line(in, "char *const opd_pb = static_cast<char *>(opd::partials(size_t(" +
                 total + ")));");
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (loop.args[n].kind == ArgKind::Reduction)
        line(in, "c.r" + std::to_string(n) + " = reinterpret_cast<" +
                     elemType(n) + " *>(opd_pb + " + offsets[n] + ");");
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (exactSum(n))
        line(in, "c.x" + std::to_string(n) +
                     " = static_cast<unsigned long long *>(opd::repro_buffer(" +
                     std::to_string(n) + ", size_t(opd_slots) * " +
                     xsumWords(n) + " * 8));");
  }

  void emitSetLaunches(int in) {
    std::string B = std::to_string(bs);
    std::string threads = sequential ? "1" : B;
    std::string cap = sequential     ? "1"
                      : hasReduction ? std::to_string(ReduceCap1D)
                                     : "0x7fffffff";
    auto rangeLaunch = [&](int ind, const std::string &b,
                           const std::string &e) {
      line(ind, "if (" + e + " > " + b + ") {");
      line(ind + 1, "const unsigned opd_g = opd::grid_for(" + e + " - " + b +
                        ", " + threads + ", " + cap + ");");
      launch(ind + 1, "loop_" + name, "opd_g, " + threads,
             "c, " + b + ", " + e + ", opd_used");
      line(ind + 1, "opd_used += opd_g;");
      line(ind, "}");
    };
    // for each runtime segment or part VAR: get it, wait for the halos
    // before the first one that needs them.
    auto forEach = [&](const std::string &kind, const std::string &var) {
      line(in, "for (int32_t opd_k = 0; opd_k < opd_loop_" + kind +
                   "_count(opd_l); ++opd_k) {");
      line(in + 1, "opd_loop_" + kind + " " + var + ";");
      line(in + 1, "opd_loop_" + kind + "_get(opd_l, opd_k, &" + var + ");");
      line(in + 1, "if (!" + var + ".before_halos)");
      line(in + 2, "opd_loop_wait_halos(opd_l);");
    };
    forEach("segment", "opd_sg");
    rangeLaunch(in + 1, "opd_sg.begin", "opd_sg.end");
    line(in, "}");
    if (loop.block)
      return;
    forEach("part", "opd_pt");
    // The exec halo's partials (other ranks' elements, after the counted
    // parts) are left out of the combination: the owners count them.
    if (hasReduction)
      line(in + 1, "const int64_t opd_u0 = opd_used;");
    auto endPart = [&] {
      if (hasReduction) {
        line(in + 1, "if (!opd_pt.partials_count)");
        line(in + 2, "opd_used = opd_u0;");
      }
      line(in, "}");
    };
    if (!colouring) {
      rangeLaunch(in + 1, "opd_pt.first", "opd_pt.first + opd_pt.count");
      endPart();
      return;
    }
    // One per plan part: core, rest, exec halo, deeper layers (an extended
    // loop, OPD_PART_DEEP_HALO).
    line(in + 1, "static opd::ThreadColours opd_tc[4];");
    line(in + 1, "const opd::Written opd_w[] = {" + writtenList() + "};");
    line(in + 1, "opd::colour_threads(opd_tc[opd_k], opd_pt, opd_w, " +
                     std::to_string(incArgs.size()) + ");");
    if (staged) {
      line(in + 1, "static opd::StagePlan opd_sp[4];");
      line(in + 1, "const bool opd_st = opd::stage_targets(opd_sp[opd_k], " +
                       cudaStringLiteral(loop.kernel->name) +
                       ", opd_pt, opd_w, " +
                       std::to_string(incArgs.size()) + ", " +
                       std::to_string(stageCapacity) + ");");
    }
    line(in + 1, "for (int32_t opd_c = 0; opd_c < opd_pt.ncolours; ++opd_c) {");
    line(in + 2, "const int64_t opd_b0 = opd_pt.colour_offsets[opd_c];");
    line(in + 2, "const int64_t opd_nb = opd_pt.colour_offsets[opd_c + 1] - "
                 "opd_b0;");
    line(in + 2, "if (opd_nb == 0)");
    line(in + 3, "continue;");
    // 64-bit indices only: the 32-bit instance ran res_calc slower on an
    // H100 (docs/gpu.md).
    std::string colArgs = "c, opd_pt.first, opd_pt.count, opd_pt.block_size, "
                          "opd_tc[opd_k].blocks + opd_b0, "
                          "opd_tc[opd_k].colour, opd_tc[opd_k].ncolours, ";
    int ind = in + 2;
    if (staged) {
      line(in + 2, "if (opd_st)");
      line(in + 3, "loop_" + name + "_colstg<int64_t><<<unsigned(opd_nb), " +
                       B + ">>>(" + colArgs +
                       "opd_pt.nblocks, opd_sp[opd_k].offsets, "
                       "opd_sp[opd_k].targets, opd_sp[opd_k].local, "
                       "opd_used);");
      line(in + 2, "else");
      ind = in + 3;
    }
    line(ind, "loop_" + name + "_col<int64_t><<<unsigned(opd_nb), " + B +
                  ">>>(" + colArgs + "opd_used);");
    line(in + 2, "opd_used += opd_nb;");
    line(in + 1, "}");
    endPart();
  }

  /// The written (map, idx) pairs of the increments with their groups,
  /// for the thread colours and the staging plan.
  std::string writtenList() const {
    std::string w;
    for (const IncArg &ia : incArgs) {
      const AccessDescriptor &a = loop.args[ia.arg];
      w += std::string(w.empty() ? "" : ", ") + "{opd_map_data(" +
           CUDAModule::handle(a.map) + "), " + std::to_string(a.map->arity) +
           ", " + std::to_string(a.mapIndex) + ", " +
           std::to_string(ia.group) + ", opd_set_local_size(" +
           CUDAModule::handle(a.map->to) + ")}";
    }
    return w;
  }

  void emitBlockLaunches(int in) {
    if (dims == 1)
      return emitSetLaunches(in);
    std::string B = std::to_string(bs), By = std::to_string(bs / 32);
    bool red = hasReduction;
    std::string capx = red ? std::to_string(dims == 2 ? ReduceCap2D : ReduceCap3D)
                           : "0x7fffffff";
    std::string capy =
        red ? std::to_string(dims == 2 ? ReduceCap2D : ReduceCap3D) : "65535";
    std::string capz = red ? std::to_string(ReduceCap3D) : "65535";
    line(in, "for (int32_t opd_k = 0; opd_k < opd_loop_segment_count(opd_l); "
             "++opd_k) {");
    line(in + 1, "opd_loop_segment opd_sg;");
    line(in + 1, "opd_loop_segment_get(opd_l, opd_k, &opd_sg);");
    line(in + 1, "if (!opd_sg.before_halos)");
    line(in + 2, "opd_loop_wait_halos(opd_l);");
    line(in + 1, "const int64_t opd_nx = c.hi[0] - c.lo[0];");
    std::string ny = dims == 2 ? "opd_sg.end - opd_sg.begin" : "c.hi[1] - c.lo[1]";
    line(in + 1, "const int64_t opd_ny = " + ny + ";");
    line(in + 1, std::string("const int64_t opd_nz = ") +
                     (dims == 3 ? "opd_sg.end - opd_sg.begin" : "1") + ";");
    line(in + 1, "if (opd_nx <= 0 || opd_ny <= 0 || opd_nz <= 0)");
    line(in + 2, "continue;");
    if (sequential) {
      line(in + 1, "const dim3 opd_b(1, 1, 1), opd_g(1, 1, 1);");
    } else {
      line(in + 1, "const dim3 opd_b(32, " + By + ", 1);");
      std::string rowsY = dims == 2 ? std::to_string(bs / 32 * RowsPerThread)
                                    : By;
      line(in + 1, "const dim3 opd_g(opd::grid_for(opd_nx, 32, " + capx +
                       "), opd::grid_for(opd_ny, " + rowsY + ", " + capy +
                       "), " +
                       (dims == 3 ? "opd::grid_for(opd_nz, " +
                                        std::to_string(PlanesPerBlock) + ", " +
                                        capz + ")"
                                  : std::string("1")) +
                       ");");
    }
    launch(in + 1, "loop_" + name, "opd_g, opd_b",
           "c, opd_sg.begin, opd_sg.end, opd_used");
    line(in + 1, "opd_used += int64_t(opd_g.x) * opd_g.y * opd_g.z;");
    line(in, "}");
  }

  void emitReductions(int in) {
    for (unsigned n = 0; n < loop.args.size(); ++n) {
      const AccessDescriptor &a = loop.args[n];
      if (a.kind != ArgKind::Reduction)
        continue;
      std::string i = std::to_string(n), dim = std::to_string(a.dim);
      std::string t = elemType(n);
      std::string v = host.var(unsigned(a.var));
      bool arr = host.fn.vars[unsigned(a.var)].type.isArray();
      std::string ptr = arr ? v + ".v" : "&" + v;
      if (exactSum(n)) {
        // v + every block's exact accumulator, rounded once (on every
        // rank): the CPU build's bits.
        std::string words = "size_t(opd_used) * " + xsumWords(n);
        line(in, "{");
        line(in + 1, "std::vector<int64_t> opd_x(" + words + ");");
        line(in + 1, "if (opd_used)");
        line(in + 2, "opd::check(cudaMemcpy(opd_x.data(), c.x" + i + ", " +
                         words +
                         " * 8, cudaMemcpyDeviceToHost), \"reading exact "
                         "sums\");");
        line(in + 1,
             "opd_reduce_sum_exact(" + ptr + ", opd_scalar(" +
                 std::to_string(runtimeScalar(Type::scalarOf(a.scalar))) +
                 "), " + dim + ", opd_x.data(), opd_used);");
        line(in, "}");
        continue;
      }
      std::string rargs =
          ptr + ", opd_scalar(" +
          std::to_string(runtimeScalar(Type::scalarOf(a.scalar))) +
          "), opd_access(" + std::to_string(runtimeMode(a.mode)) + "), " + dim;
      line(in, "{");
      line(in + 1, "std::vector<" + t + "> opd_h(size_t(opd_used) * " + dim +
                       ");");
      line(in + 1, "if (opd_used)");
      line(in + 2, "opd::check(cudaMemcpy(opd_h.data(), c.r" + i +
                       ", opd_h.size() * sizeof(" + t +
                       "), cudaMemcpyDeviceToHost), \"reading partials\");");
      line(in + 1, "opd_reduce_local(" + rargs + ");");
      line(in + 1, "for (int64_t opd_s = 0; opd_s < opd_used; ++opd_s)");
      line(in + 2, "for (int opd_c = 0; opd_c < " + dim + "; ++opd_c)");
      line(in + 3, hostElement(a, "opd_c") + " = opd::combine<" +
                       reduceOp(a.mode) + ">(" + hostElement(a, "opd_c") +
                       ", opd_h[size_t(opd_s) * " + dim + " + opd_c]);");
      line(in + 1, "opd_reduce_global(" + rargs + ");");
      line(in, "}");
    }
  }

  void emitHost(int in) {
    line(in, "{ // loop " + loop.kernel->name + " (" + strategy() +
                 "), device code: loop_" + name);
    int i2 = in + 1;
    if (loop.block) {
      emitRanges(i2);
      emitHaloChecks(i2);
    }
    emitPrepare(i2);
    emitContextFill(i2);
    emitIndexCheck(i2);
    line(i2, "int64_t opd_used = 0;");
    line(i2, "opd_loop_begin(opd_l);");
    if (loop.block)
      emitBlockLaunches(i2);
    else
      emitSetLaunches(i2);
    line(i2, "opd_loop_wait_halos(opd_l);");
    line(i2, "opd::finish_loop();");
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (gathered(n))
        line(i2, "opd::gather_to_host(opd_l, opd_gh" + std::to_string(n) +
                     ", c.gr" + std::to_string(n) + ", " +
                     std::to_string(loop.args[n].bytes) + ", " +
                     CUDAModule::handle(loop.args[n].dat) + ");");
    // --check-fp scans host memory at opd_loop_end.
    std::string fpDats;
    std::set<const Dat *> listed;
    for (const AccessDescriptor &a : loop.args)
      if (a.usesDat() && modeWrites(a.mode) &&
          (a.dat->scalar() == ScalarKind::F32 ||
           a.dat->scalar() == ScalarKind::F64) &&
          listed.insert(a.dat).second)
        fpDats += (fpDats.empty() ? "" : ", ") + CUDAModule::handle(a.dat);
    if (!fpDats.empty())
      line(i2, "opd::check_fp_written({" + fpDats + "});");
    // The runtime checks and plans maps on the host.
    for (const Map *mp : writtenMaps)
      line(i2, "opd::map_to_host(" + CUDAModule::handle(mp) + ");");
    line(i2, "opd_loop_end(opd_l);");
    // The ordered increments went into the targets' host copies.
    std::set<const Dat *> gatheredDats;
    for (unsigned n = 0; n < loop.args.size(); ++n)
      if (gathered(n) && gatheredDats.insert(loop.args[n].dat).second)
        line(i2, "opd::dat_host_changed(" +
                     CUDAModule::handle(loop.args[n].dat) + ");");
    if (!hasReduction)
      line(i2, "(void)opd_used;");
    emitReductions(i2);
    line(in, "}");
  }

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
};

} // namespace

void emitCUDALoop(CUDAFunctionWriter &host, const ir::ParLoopStmt &loop,
                  int indent) {
  LoopWriter(host, loop).emit(indent);
}

} // namespace opdc
