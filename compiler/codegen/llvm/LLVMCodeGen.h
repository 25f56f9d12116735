// LLVMCodeGen.h - The LLVM CPU backend: Program IR -> LLVM module -> object.
// SPDX-License-Identifier: Apache-2.0
//
// The backend turns a verified Program IR into one LLVM module holding the
// whole program: `main` (runtime start-up, mesh creation, the host code),
// one body function per parallel loop (called by the runtime per chunk, the
// kernel inlined into the element loop) and the fns and procs. Generated code
// calls the runtime only through lib/include/opd_rt.h. Target.cpp then
// optimises the module for the host CPU and emits an object file.
#ifndef OPDC_CODEGEN_LLVM_LLVMCODEGEN_H
#define OPDC_CODEGEN_LLVM_LLVMCODEGEN_H

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace opdc {
class DiagnosticEngine;
namespace ir {
struct Program;
} // namespace ir

/// How the CPU backend compiles (from the driver's -O, -march, -ffp-contract
/// and the target profile, --target).
struct CPUCodeGenOptions {
  unsigned optLevel = 3;      ///< 0..3: the new pass manager's O0..O3
  std::string cpu = "native"; ///< an LLVM CPU name, or "native": the host's
  /// Allow fusing a multiply and an add into an fma (-ffp-contract=fast).
  /// Off by default: results keep the source's rounding step by step.
  bool fpContract = false;
  /// Let the vectoriser replace math calls by glibc's libmvec variants
  /// (-fveclib=libmvec; x86-64). Off by default: the scalar C library's
  /// results, bit for bit at every -O (FunctionEmitterMath.cpp).
  bool vecLibMvec = false;
  /// Float sum reductions exact and rounded once (-frepro-sum; LoopBody.cpp,
  /// lib/exec/ReproSum.cpp): the same bits for any thread or rank count.
  bool reproSum = false;
  /// Float sums split into 4 partial sums per row (-fsum-lanes, the
  /// default; LoopBody.cpp, "Float sums"); false: in element order.
  bool sumLanes = true;
  /// Block loops whose elements may run twice end each row with whole
  /// vectors, the last shifted back (-frow-tails, the default;
  /// LoopBody.cpp, "Row tails"); false: the vectoriser's scalar remainder.
  bool rowTails = true;
  /// Block loops compute their kernels' column values (expressions of
  /// idx(0) alone that call the C library; analysis/ColumnValues.h) once
  /// per column into tables the rows read (-fcolumn-tables, the default;
  /// ColumnTables.cpp); false: at every point.
  bool columnTables = true;
  /// Loops with increments through maps load each strip's rows read through
  /// maps whole and transpose them into a strip buffer of component vectors
  /// (-ftranspose-rows, the default; StagedRows.cpp); false: the vectoriser
  /// reads them lane by lane.
  bool transposeRows = true;
  /// Loops whose kernels branch around costly work get a scalar body too,
  /// which the runtime times against the vectorised one (-fscalar-bodies,
  /// the default; analysis/BranchWork.h, LoopHost.cpp). The driver sets
  /// it and sumLanes from TargetQueries (passes/Pass.h: -O2 and up for
  /// scalar bodies), the answers the fuse pass followed.
  bool scalarBodies = true;
  /// The LLVM target triple; empty: the host's.
  std::string triple;
  /// LLVM features added to the CPU's ("+avx512f,-avx512bw"); ignored for
  /// "native", which takes the host's.
  std::string features;
  /// How vectorised loops read through maps on x86-64: "hardware" (LLVM's
  /// choice: gathers where the CPU model has them), "scalar" (scalar loads
  /// put into vectors: the feature +prefer-no-gather), "auto" (scalar on
  /// CPUs whose gathers measured slower, hardware elsewhere; Target.cpp).
  std::string gathers = "auto";
  /// "prefer-vector-width" in bits for every function (0: LLVM's choice
  /// for the CPU; some CPUs otherwise stay at 256 bits despite AVX-512).
  unsigned preferVectorWidthBits = 0;
  /// Passed to opd_rt_set_default_threads before opd_rt_init (0: none).
  unsigned defaultThreads = 0;
  /// The L2 cache of one core in bytes (the target profile's
  /// cpu.l2_cache_kib; 0: unknown): 3D loops' cache tiles are sized from it.
  int64_t l2CacheBytes = 0;
  /// Embedded as the string "opdc-build:<stamp>" in the program, so the
  /// driver can tell whether an output was built with the same options.
  std::string buildStamp;
};

/// Creates the TargetMachine for \p options.triple (the host's when empty)
/// and \p options.cpu (with the host's features for "native"; "native"
/// is only valid for the host's triple). Returns null with \p error set
/// when LLVM has no target for the triple or does not know the CPU.
std::unique_ptr<llvm::TargetMachine>
createCPUTargetMachine(const CPUCodeGenOptions &options, std::string &error);

/// Builds the LLVM module of \p program for \p tm (triple, data layout and
/// CPU attributes are taken from it). Statements the CPU backend cannot
/// compile yet (adjoint, tangent) are reported at their location
/// through \p diags; then, as on any error, the result is null. The module
/// is unoptimised and passes llvm::verifyModule.
std::unique_ptr<llvm::Module>
generateLLVMModule(const ir::Program &program, llvm::LLVMContext &context,
                   llvm::TargetMachine &tm, const CPUCodeGenOptions &options,
                   DiagnosticEngine &diags);

/// Runs the default per-module pipeline of \p optLevel (0..3) on \p module,
/// after mergeIdenticalFunctions.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel, bool libmvec = false);
/// Marks non-temporal the stores of body variants with the "opd-stream"
/// attribute that go through a streaming argument's alias scope
/// (KernelCodeGen.h, isStreamCandidate); optimizeModule's last step.
void markStreamingStores(llvm::Module &module);

/// Name of the function metadata that tags a loop's body function with the
/// loop's kernel name and source location: !{!"kernel", i32 buffer, i32 line,
/// i32 column}.
inline constexpr const char *LoopMetadataKind = "opd.loop";
/// Module metadata listing the loop tags of bodies that
/// mergeIdenticalFunctions removed: !{ptr @kept_body, !opd.loop tag}.
inline constexpr const char *MergedLoopMetadataKind = "opd.loop.merged";

/// Keeps one of each set of identical internal kernels and loop bodies and
/// points the uses of the others at it (MergeBodies.cpp). Returns how many
/// functions it removed.
unsigned mergeIdenticalFunctions(llvm::Module &module);

/// -Rpass=vectorize: collects the loop vectoriser's remarks while the module
/// is optimised (construct before optimizeModule, on the module's context)
/// and reports, per parallel loop at its source location, whether its
/// element loop was vectorised and with which width, or why not.
class VectorizationRemarks {
public:
  explicit VectorizationRemarks(llvm::LLVMContext &context);
  ~VectorizationRemarks();
  VectorizationRemarks(const VectorizationRemarks &) = delete;
  VectorizationRemarks &operator=(const VectorizationRemarks &) = delete;
  /// One remark of pass "vectorize" per loop, in source order.
  void report(const llvm::Module &module, unsigned optLevel,
              DiagnosticEngine &diags);

private:
  struct State;
  llvm::LLVMContext &context;
  std::unique_ptr<State> state;
};

/// Writes \p module as a native object file to \p out. Returns false with
/// \p error set if the target cannot emit objects.
bool emitObjectFile(llvm::Module &module, llvm::TargetMachine &tm,
                    llvm::raw_pwrite_stream &out, std::string &error);

/// How many objects emitObjectFiles should make of \p module: the machine's
/// cores (or $OPDC_CODEGEN_THREADS), fewer for a module of few functions.
unsigned codeGenThreads(const llvm::Module &module);

/// Splits the optimised \p module into paths.size() parts and writes each
/// part's object file to its path, the parts compiled in parallel, each with
/// its own TargetMachine for \p options (Target.cpp). Linked together, the
/// objects are the program emitObjectFile would have written; \p module is
/// left with its internal symbols made hidden externals. Returns false with
/// \p error set when an object cannot be written.
bool emitObjectFiles(llvm::Module &module, const CPUCodeGenOptions &options,
                     const std::vector<std::string> &paths, std::string &error);

} // namespace opdc
#endif
