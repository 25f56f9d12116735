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
//
// This file holds the device half (context struct, __device__ kernel,
// __global__ functions); the host half is CUDALoopHost.cpp, the class
// both fill CUDALoopWriter.h.
#include "codegen/cuda/CUDALoopWriter.h"

#include "support/Assert.h"

namespace opdc {
namespace cuda_loop {

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

void LoopWriter::emitContext(std::string &d) {
  d += "struct ctx_" + name + " {\n";
  for (unsigned f = 0; f < access.dats.size(); ++f) {
    d += "  " + datType(int(f)) + " *d" + std::to_string(f) + ";\n";
    if (!loop.block)
      d += "  int64_t ds" + std::to_string(f) + ";\n";
    for (unsigned k = 1; loop.block && k < dims; ++k)
      d += "  int64_t dt" + std::to_string(f) + "_" + std::to_string(k) + ";\n";
  }
  for (unsigned f = 0; f < access.maps.size(); ++f)
    d += "  int32_t *m" + std::to_string(f) + ";\n";
  for (unsigned f = 0; f < access.mapValues.size(); ++f)
    d += "  const int32_t *mv" + std::to_string(f) + ";\n";
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    std::string i = std::to_string(n);
    if (a.kind == ArgKind::GlobalRead)
      d += largeGlobal(n)
               ? "  const " + elemType(n) + " *g" + i + ";\n"
               : "  " + cudaValueType(loop.kernel->kernelParams[n].type) +
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

void LoopWriter::emitKernel(std::string &d) {
  const Function &k = *loop.kernel;
  std::string sig;
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    bool ro = !modeWrites(a.mode);
    // Read-only data no argument of the loop writes may go through the
    // read-only cache.
    bool restrict_ =
        ro && (a.kind == ArgKind::GlobalRead ||
               (a.usesDat() && !writtenDats.count(a.dat) &&
                !writtenInKernel.count(a.dat)) ||
               (a.kind == ArgKind::MapDirect && !writesMap(a.map)));
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

void LoopWriter::emitThreadState(std::string &d) {
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

void LoopWriter::emitElement(std::string &d, const std::string &pad,
                             bool atomics) {
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    if (!incBuffer(n))
      continue;
    const AccessDescriptor &a = loop.args[n];
    std::string i = std::to_string(n);
    d += pad + elemType(n) + " inc" + i + "[" + std::to_string(a.dim) + "];\n";
    d += pad + "for (int k = 0; k < " + std::to_string(a.dim) + "; ++k)\n";
    d += pad + "  inc" + i +
         "[k] = " + identityLiteral(incrementIdentity(a.scalar), a.scalar) +
         ";\n";
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
      if (auto o = overrides.find(n); o != overrides.end()) {
        p = o->second.pointer;
        for (const std::string &t : o->second.strides)
          strides += ", " + t;
      } else if (loop.block) {
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
        p = "c.d" + df + " + I(c.m" + std::to_string(acc.mapField) + "[i * " +
            std::to_string(a.map->arity) + " + " + std::to_string(a.mapIndex) +
            "])" + step(a);
        s = "I(c.ds" + df + ")";
      }
      break;
    case ArgKind::MapDirect:
      p = (acc.mapValuesField >= 0 ? "c.mv" + std::to_string(acc.mapValuesField)
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
           " + k * OPD_XSUM_WORDS, double(ex" + std::to_string(n) + "[k]));\n";
  if (!atomics)
    return;
  emitApply(d, pad, true);
}

void LoopWriter::emitApply(std::string &d, const std::string &pad,
                           bool atomics) {
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
         std::to_string(acc.mapField) + "[i * " + std::to_string(a.map->arity) +
         " + " + std::to_string(a.mapIndex) + "])" + step(a) + ";\n";
    d += pad + "  for (int k = 0; k < " + std::to_string(a.dim) + "; ++k)\n";
    if (atomics)
      d += pad + "    opd::atomic_inc(t + k * I(c.ds" + df + "), inc" + i +
           "[k]);\n";
    else
      d += pad + "    t[k * I(c.ds" + df +
           ")] = opd::combine<opd::Sum>(t[k * I(c.ds" + df + ")], inc" + i +
           "[k]);\n";
    d += pad + "}\n";
  }
}

void LoopWriter::emitReduce(std::string &d) {
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

void LoopWriter::planStaging() {
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

void LoopWriter::emitStageSetup(std::string &d) {
  const std::string pad = "  ";
  d += pad + "__shared__ double opd_sh[" + std::to_string(stageWords) + "];\n";
  for (unsigned g = 0; g < groups.size(); ++g) {
    const StageGroup &sg = groups[g];
    std::string i = std::to_string(g);
    d += pad + sg.type + " *const sh" + i + " = reinterpret_cast<" + sg.type +
         " *>(opd_sh + " + std::to_string(sg.offsetWords) + ");\n";
    d += pad + "const int32_t so" + i + " = soff[" + i + " * (nb + 1) + b];\n";
    d += pad + "const int32_t sn" + i + " = soff[" + i +
         " * (nb + 1) + b + 1] - so" + i + ";\n";
    d += pad + "for (int32_t t = int32_t(threadIdx.x); t < sn" + i + " * " +
         std::to_string(sg.dim) + "; t += int32_t(blockDim.x))\n";
    d += pad + "  sh" + i +
         "[t] = " + identityLiteral(incrementIdentity(sg.scalar), sg.scalar) +
         ";\n";
  }
  d += pad + "__syncthreads();\n";
}

void LoopWriter::emitStageApply(std::string &d, const std::string &pad) {
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

void LoopWriter::emitStageFlush(std::string &d) {
  d += "  __syncthreads();\n";
  for (unsigned g = 0; g < groups.size(); ++g) {
    const StageGroup &sg = groups[g];
    std::string i = std::to_string(g), f = std::to_string(sg.field);
    std::string stepg = m.options.soa ? "" : " * " + std::to_string(sg.dim);
    d += "  for (int32_t t = int32_t(threadIdx.x); t < sn" + i + " * " +
         std::to_string(sg.dim) + "; t += int32_t(blockDim.x)) {\n";
    d += "    const int32_t l = t % sn" + i + ", k = t / sn" + i + ";\n";
    d += "    " + sg.type + " *const p = c.d" + f + " + I(stgt[so" + i +
         " + l])" + stepg + " + k * I(c.ds" + f + ");\n";
    d += "    *p = opd::combine<opd::Sum>(*p, sh" + i + "[t]);\n";
    d += "  }\n";
  }
}

void LoopWriter::emitColourGlobal(std::string &d, bool stage) {
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

void LoopWriter::emitBlockGlobal(std::string &d) {
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
         "I(threadIdx.y)) * " +
         R +
         "; r0 < I(end);\n       r0 += "
         "I(gridDim.y) * I(blockDim.y) * " +
         R + ")\n";
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

} // namespace cuda_loop

void emitCUDALoop(CUDAFunctionWriter &host, const ir::ParLoopStmt &loop,
                  int indent) {
  cuda_loop::LoopWriter(host, loop).emit(indent);
}

} // namespace opdc
