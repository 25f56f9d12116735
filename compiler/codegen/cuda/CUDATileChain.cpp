// CUDATileChain.cpp - A stencil chain of two loops as one CUDA kernel.
// SPDX-License-Identifier: Apache-2.0
//
// The fuse pass (passes/loops/FuseTile.cpp, which says why it is legal)
// marks two loops P; C over one 2-D or 3-D block, where C reads at stencil
// offsets dats P writes, as a group of 2 (ParLoopStmt::skew). They become
//
//   ctx_P_N, kernel_P_N<I>  P's context and __device__ kernel, as alone
//   ctx_C_M, kernel_C_M<I>  C's
//   loop_P_N_C_M<I>         __global__: one CUDA block per tile
//                           (TargetQueries::ChainTile2D/3D, in a
//                           grid-stride loop over tiles) of the box that
//                           holds both loops' ranges, which
//                             1. runs P at the points of its range in the
//                                tile grown by C's reach (per dimension,
//                                below and above), each thread a point at
//                                a time: the dats C reads at offsets
//                                ("staged") go to the block's shared
//                                array, copied to device memory at the
//                                tile's own points; P's other writes go to
//                                device memory at the tile's points and to
//                                a thread's scratch elsewhere (another
//                                block owns them); points outside P's
//                                range that C may read (its range grown by
//                                the reach: inside every dat's halo) load
//                                the staged dats' values from device
//                                memory (nothing writes them in the
//                                kernel);
//                             2. __syncthreads();
//                             3. runs C at the points of its range in the
//                                tile, its staged dats read from shared
//                                memory (the kernel's strides are the
//                                shared array's);
//                             4. __syncthreads() before the next tile.
//
// and on the host P's loop phases (prepare, begin, end: the runtime runs
// one loop at a time), then C's around the one launch. The shared array
// holds every staged dat over the grown tile, dimension 0 fastest, each
// dat's components together as in device memory.
#include "codegen/cuda/CUDALoopWriter.h"

#include "passes/Pass.h"

#include "support/Assert.h"

namespace opdc {
namespace cuda_loop {

class TileChainWriter {
public:
  TileChainWriter(CUDAFunctionWriter &host, const ParLoopStmt &p,
                  const ParLoopStmt &c)
      : m(host.m), P(host, p), C(host, c), dims(p.block->dims) {
    const unsigned *t =
        dims == 2 ? TargetQueries::ChainTile2D : TargetQueries::ChainTile3D;
    for (unsigned k = 0; k < dims; ++k)
      tile[k] = t[k];
    planStaged();
  }

  void emit(int indent) {
    std::string &d = m.loops;
    d += "\n// " + m.location(P.loop.range) + ": loops " + P.loop.kernel->name +
         " and " + C.loop.kernel->name + " over " + P.loop.block->name +
         " (one kernel, a recomputed halo)\n";
    for (LoopWriter *w : {&P, &C}) {
      w->emitContext(d);
      w->emitKernel(d);
    }
    emitGlobal(d);
    emitHost(indent);
  }

private:
  /// A dat P writes and C reads at stencil offsets: its place in the
  /// shared array and P's context field.
  struct Staged {
    const Dat *dat;
    unsigned dim, offsetWords;
    std::string type;
    int field; ///< P's
    /// C's reach into it, below and above (dats differ in halos).
    int64_t lo[3], hi[3];
  };

  void planStaged() {
    std::set<const Dat *> written;
    for (const AccessDescriptor &a : P.loop.args)
      if (a.usesDat() && modeWrites(a.mode))
        written.insert(a.dat);
    C.writtenInKernel = written;
    for (unsigned n = 0; n < C.loop.args.size(); ++n) {
      const AccessDescriptor &a = C.loop.args[n];
      if (!a.usesDat() || !written.count(a.dat))
        continue;
      for (const std::vector<int64_t> &pt : pointsOfArg(a))
        for (unsigned k = 0; k < dims && k < pt.size(); ++k) {
          lo[k] = std::max(lo[k], -pt[k]);
          hi[k] = std::max(hi[k], pt[k]);
        }
    }
    for (unsigned n = 0; n < C.loop.args.size(); ++n) {
      const AccessDescriptor &a = C.loop.args[n];
      if (!a.usesDat() || !written.count(a.dat) || !offCentre(a))
        continue;
      bool seen = false;
      for (const Staged &s : staged)
        seen = seen || s.dat == a.dat;
      if (seen)
        continue;
      int field = -1;
      for (unsigned q = 0; q < P.loop.args.size(); ++q)
        if (P.loop.args[q].usesDat() && P.loop.args[q].dat == a.dat)
          field = P.access.args[q].datField;
      OPDC_ASSERT(field >= 0, "a staged dat P does not reach");
      Staged st{
          a.dat, unsigned(a.dim), words,    cudaScalarType(a.dat->scalar()),
          field, {0, 0, 0},       {0, 0, 0}};
      for (const AccessDescriptor &o : C.loop.args)
        if (o.usesDat() && o.dat == a.dat)
          for (const std::vector<int64_t> &pt : pointsOfArg(o))
            for (unsigned k = 0; k < dims && k < pt.size(); ++k) {
              st.lo[k] = std::max(st.lo[k], -pt[k]);
              st.hi[k] = std::max(st.hi[k], pt[k]);
            }
      staged.push_back(st);
      words += unsigned(
          (boxPoints() * a.dim * scalarBytes(a.dat->scalar()) + 7) / 8);
    }
    OPDC_ASSERT(!staged.empty(), "a stencil chain without a staged dat");
  }

  static std::vector<std::vector<int64_t>>
  pointsOfArg(const AccessDescriptor &a) {
    if (a.kind == ArgKind::Stencil && a.stencil && !a.stencil->points.empty())
      return a.stencil->points;
    return {std::vector<int64_t>(3, 0)};
  }
  static bool offCentre(const AccessDescriptor &a) {
    for (const std::vector<int64_t> &pt : pointsOfArg(a))
      for (int64_t o : pt)
        if (o)
          return true;
    return false;
  }
  const Staged *stagedOf(const Dat *dat) const {
    for (const Staged &s : staged)
      if (s.dat == dat)
        return &s;
    return nullptr;
  }
  /// The grown tile's extent in dimension k, and its points.
  int64_t box(unsigned k) const { return int64_t(tile[k]) + lo[k] + hi[k]; }
  uint64_t boxPoints() const {
    uint64_t n = 1;
    for (unsigned k = 0; k < dims; ++k)
      n *= uint64_t(box(k));
    return n;
  }
  std::string ks(unsigned k) const { return std::to_string(k); }
  /// Shared-array strides (in components) of dimensions 1 up.
  std::vector<std::string> sharedStrides(unsigned dim) const {
    std::vector<std::string> s;
    int64_t st = box(0) * dim;
    for (unsigned k = 1; k < dims; ++k) {
      s.push_back("I(" + std::to_string(st) + ")");
      st *= box(k);
    }
    return s;
  }
  /// Point (c0, c1, c2) of P's context field f in device memory.
  std::string devicePoint(const std::string &ctx, int f, unsigned dim) const {
    std::string fs = std::to_string(f);
    std::string p = ctx + ".d" + fs + " + c0 * " + std::to_string(dim);
    for (unsigned k = 1; k < dims; ++k)
      p += " + c" + ks(k) + " * I(" + ctx + ".dt" + fs + "_" + ks(k) + ")";
    return p;
  }

  void emitGlobal(std::string &d);
  void emitProducer(std::string &d);
  void emitConsumer(std::string &d);
  void emitHost(int in);

  CUDAModule &m;
  LoopWriter P, C;
  const unsigned dims;
  unsigned tile[3] = {1, 1, 1};
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  std::vector<Staged> staged;
  unsigned words = 0;
};

void TileChainWriter::emitGlobal(std::string &d) {
  d += "template <class I>\n__global__ void __launch_bounds__(" +
       std::to_string(P.bs) + ") loop_" + P.name + "_" + C.name +
       "(const ctx_" + P.name + " cp, const ctx_" + C.name + " cc) {\n";
  d += "  __shared__ double opd_tl[" + std::to_string(words) + "];\n";
  for (size_t g = 0; g < staged.size(); ++g)
    d += "  " + staged[g].type + " *const sh" + std::to_string(g) +
         " = reinterpret_cast<" + staged[g].type + " *>(opd_tl + " +
         std::to_string(staged[g].offsetWords) + ");\n";
  d += "  const I nthr = I(blockDim.x) * I(blockDim.y);\n";
  d += "  const I tid = I(threadIdx.x) + I(blockDim.x) * I(threadIdx.y);\n";
  // The tiles cover both ranges (P's may be larger).
  for (unsigned k = 0; k < dims; ++k) {
    std::string K = ks(k);
    d += "  const I u" + K + " = I(cp.lo[" + K + "] < cc.lo[" + K +
         "] ? cp.lo[" + K + "] : cc.lo[" + K + "]), v" + K + " = I(cp.hi[" + K +
         "] > cc.hi[" + K + "] ? cp.hi[" + K + "] : cc.hi[" + K + "]);\n";
  }
  const char *xyz[3] = {"x", "y", "z"};
  std::string pad = "  ";
  for (unsigned k = dims; k-- > 0;) {
    std::string T = std::to_string(tile[k]), K = ks(k);
    d += pad + "for (I b" + K + " = u" + K + " + I(blockIdx." + xyz[k] +
         ") * " + T + "; b" + K + " < v" + K + "; b" + K + " += I(gridDim." +
         xyz[k] + ") * " + T + ")\n";
    pad += "  ";
  }
  d += "  {\n";
  for (unsigned k = 0; k < dims; ++k) {
    std::string K = ks(k), T = std::to_string(tile[k]);
    d += "    const I e" + K + " = b" + K + " + " + T + " < v" + K + " ? b" +
         K + " + " + T + " : v" + K + ";\n";
    d += "    const I x" + K + " = b" + K + " - " + std::to_string(lo[k]) +
         ", n" + K + " = e" + K + " + " + std::to_string(hi[k]) + " - x" + K +
         ";\n";
  }
  emitProducer(d);
  d += "    __syncthreads();\n";
  emitConsumer(d);
  d += "    __syncthreads();\n";
  d += "  }\n";
  d += "}\n";
}

void TileChainWriter::emitProducer(std::string &d) {
  std::string count = "n0", loc = "(c0 - x0)", inRange, own;
  int64_t st = box(0);
  for (unsigned k = 1; k < dims; ++k) {
    count += " * n" + ks(k);
    loc +=
        " + I(" + std::to_string(st) + ") * (c" + ks(k) + " - x" + ks(k) + ")";
    st *= box(k);
  }
  for (unsigned k = 0; k < dims; ++k) {
    std::string K = ks(k);
    const std::string a = k ? " && " : "";
    inRange += a + "c" + K + " >= I(cp.lo[" + K + "]) && c" + K +
               " < I(cp.hi[" + K + "])";
    own += a + "c" + K + " >= b" + K + " && c" + K + " < e" + K;
  }
  d += "    for (I t = tid; t < " + count + "; t += nthr) {\n";
  d += "      const I c0 = x0 + t % n0;\n";
  if (dims == 2)
    d += "      const I c1 = x1 + t / n0;\n";
  else
    d += "      const I c1 = x1 + t / n0 % n1, c2 = x2 + t / (n0 * n1);\n";
  d += "      const I l = " + loc + ";\n";
  d += "      if (" + inRange + ") {\n";
  d += "        const bool own = " + own + ";\n";
  d += "        (void)own;\n";
  // P's arguments: staged dats into shared memory, its other writes to
  // device memory at the tile's points, else to scratch.
  P.overrides.clear();
  for (unsigned n = 0; n < P.loop.args.size(); ++n) {
    const AccessDescriptor &a = P.loop.args[n];
    if (!a.usesDat() || !modeWrites(a.mode))
      continue;
    std::string i = std::to_string(n);
    if (const Staged *s = stagedOf(a.dat)) {
      size_t g = size_t(s - staged.data());
      P.overrides[n] = {"sh" + std::to_string(g) + " + l * " +
                            std::to_string(s->dim),
                        sharedStrides(s->dim)};
      continue;
    }
    d += "        " + P.elemType(n) + " scr" + i + "[" + std::to_string(a.dim) +
         "];\n";
    int f = P.access.args[n].datField;
    std::vector<std::string> strides;
    for (unsigned k = 1; k < dims; ++k)
      strides.push_back("I(cp.dt" + std::to_string(f) + "_" + ks(k) + ")");
    P.overrides[n] = {
        "(own ? " + devicePoint("cp", f, a.dim) + " : scr" + i + ")", strides};
  }
  d += "        {\n";
  d += "          const ctx_" + P.name + " &c = cp;\n";
  P.emitThreadState(d);
  P.emitElement(d, "          ", false);
  d += "        }\n";
  // The tile's own points of the staged dats to device memory.
  d += "        if (own) {\n";
  for (size_t g = 0; g < staged.size(); ++g) {
    const Staged &s = staged[g];
    std::string D = std::to_string(s.dim), G = std::to_string(g);
    d += "          " + s.type + " *const p" + G + " = " +
         devicePoint("cp", s.field, s.dim) + ";\n";
    d += "          for (int k = 0; k < " + D + "; ++k)\n";
    d += "            p" + G + "[k] = sh" + G + "[l * " + D + " + k];\n";
  }
  d += "        }\n";
  d += "      } else {\n";
  // Outside P's range, where C reads the dat (its range grown by its
  // reach into that dat: inside the dat's halo): the values nothing
  // writes.
  for (size_t g = 0; g < staged.size(); ++g) {
    const Staged &st = staged[g];
    std::string D = std::to_string(st.dim), G = std::to_string(g), reached;
    for (unsigned k = 0; k < dims; ++k)
      reached += std::string(k ? " && " : "") + "c" + ks(k) + " >= I(cc.lo[" +
                 ks(k) + "]) - " + std::to_string(st.lo[k]) + " && c" + ks(k) +
                 " < I(cc.hi[" + ks(k) + "]) + " + std::to_string(st.hi[k]);
    d += "        if (" + reached + ") {\n";
    d += "          const " + st.type + " *const p" + G + " = " +
         devicePoint("cp", st.field, st.dim) + ";\n";
    d += "          for (int k = 0; k < " + D + "; ++k)\n";
    d += "            sh" + G + "[l * " + D + " + k] = p" + G + "[k];\n";
    d += "        }\n";
  }
  d += "      }\n";
  d += "    }\n";
}

void TileChainWriter::emitConsumer(std::string &d) {
  std::string count = "(e0 - b0)", loc = "(c0 - x0)";
  int64_t st = box(0);
  for (unsigned k = 1; k < dims; ++k) {
    count += " * (e" + ks(k) + " - b" + ks(k) + ")";
    loc +=
        " + I(" + std::to_string(st) + ") * (c" + ks(k) + " - x" + ks(k) + ")";
    st *= box(k);
  }
  d += "    for (I t = tid; t < " + count + "; t += nthr) {\n";
  d += "      const I c0 = b0 + t % (e0 - b0);\n";
  if (dims == 2)
    d += "      const I c1 = b1 + t / (e0 - b0);\n";
  else
    d += "      const I c1 = b1 + t / (e0 - b0) % (e1 - b1), c2 = b2 + t / "
         "((e0 - b0) * (e1 - b1));\n";
  std::string inC;
  for (unsigned k = 0; k < dims; ++k)
    inC += std::string(k ? " || " : "") + "c" + ks(k) + " < I(cc.lo[" + ks(k) +
           "]) || c" + ks(k) + " >= I(cc.hi[" + ks(k) + "])";
  d += "      if (" + inC + ")\n";
  d += "        continue;\n";
  d += "      const I l = " + loc + ";\n";
  C.overrides.clear();
  for (unsigned n = 0; n < C.loop.args.size(); ++n) {
    const AccessDescriptor &a = C.loop.args[n];
    if (!a.usesDat())
      continue;
    if (const Staged *s = stagedOf(a.dat)) {
      size_t g = size_t(s - staged.data());
      C.overrides[n] = {"sh" + std::to_string(g) + " + l * " +
                            std::to_string(s->dim),
                        sharedStrides(s->dim)};
    }
  }
  d += "      {\n";
  d += "        const ctx_" + C.name + " &c = cc;\n";
  C.emitThreadState(d);
  C.emitElement(d, "        ", false);
  d += "      }\n";
  d += "    }\n";
}

void TileChainWriter::emitHost(int in) {
  P.countsBlocks = false;
  P.hostOpen(in);
  int i1 = in + 1;
  P.line(i1, "const ctx_" + P.name + " opd_cp = c;");
  P.line(i1, "const bool opd_i32p = opd_i32;");
  // The runtime runs one loop at a time: P ends before C begins, and C's
  // row of the profile holds the kernel's time; C checks P's written
  // dats too (--check-fp).
  P.fpLoops.clear();
  C.fpLoops.push_back(&P.loop);
  P.hostClose(in, false);
  C.hostOpen(i1);
  int i2 = i1 + 1;
  // One launch over both ranges (one rank: the fuse pass keeps MPI
  // programs' chains apart, so the range is one segment).
  const char *n[3] = {"opd_nx", "opd_ny", "opd_nz"};
  std::string grid;
  for (unsigned k = 0; k < 3; ++k) {
    std::string K = ks(k);
    std::string ext = k >= dims ? "1"
                                : "std::max(opd_cp.hi[" + K + "], c.hi[" + K +
                                      "]) - std::min(opd_cp.lo[" + K +
                                      "], c.lo[" + K + "])";
    C.line(i2, std::string("const int64_t ") + n[k] + " = " + ext + ";");
    if (k < dims)
      grid += std::string(k ? ", " : "") + "opd::grid_for(" + n[k] + ", " +
              std::to_string(tile[k]) + ", " +
              (k == 0 ? "0x7fffffff" : "65535") + ")";
  }
  if (dims == 2)
    grid += ", 1";
  C.line(i2, "if (opd_nx > 0 && opd_ny > 0 && opd_nz > 0) {");
  C.line(i2 + 1, "const dim3 opd_b(32, " + std::to_string(C.bs / 32) + ", 1);");
  C.line(i2 + 1, "const dim3 opd_g(" + grid + ");");
  std::string fn = "loop_" + P.name + "_" + C.name, cfg = "opd_g, opd_b",
              args = "opd_cp, c";
  C.line(i2 + 1, "if (opd_i32 && opd_i32p)");
  C.line(i2 + 2, fn + "<int32_t><<<" + cfg + ">>>(" + args + ");");
  C.line(i2 + 1, "else");
  C.line(i2 + 2, fn + "<int64_t><<<" + cfg + ">>>(" + args + ");");
  C.line(i2 + 1, "opd_used += int64_t(opd_g.x) * opd_g.y * opd_g.z;");
  C.line(i2, "}");
  C.hostClose(i1);
  P.line(in, "}");
}

} // namespace cuda_loop

void emitCUDATileChain(CUDAFunctionWriter &host, const ir::ParLoopStmt &p,
                       const ir::ParLoopStmt &c, int indent) {
  cuda_loop::TileChainWriter(host, p, c).emit(indent);
}

} // namespace opdc
