// LoopEmitter.h - One parallel loop's code: shared by LoopHost and LoopBody.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to the LLVM backend. LoopHost.cpp emits the host side (argument
// table, context, opd_loop_run, reduction partials) and LoopBody.cpp the
// body function the runtime calls per chunk; both work on one LoopEmitter,
// which holds the loop's analysis (analysis/LoopAccess.h) and the context
// layout that connects the two sides.
#ifndef OPDC_CODEGEN_LLVM_LOOPEMITTER_H
#define OPDC_CODEGEN_LLVM_LOOPEMITTER_H

#include "codegen/llvm/FunctionEmitter.h"
#include "codegen/llvm/HostCodeGen.h"
#include "codegen/llvm/KernelCodeGen.h"

#include "analysis/ColumnValues.h"
#include "analysis/LoopAccess.h"
#include "codegen/common/HostProgram.h"
#include "codegen/common/Identities.h"
#include "ir/IR.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/IRBuilder.h"

#include <memory>
#include <vector>

namespace opdc {

/// for (v = lo; v < hi; v += step) body(v) at \p b's insertion point, which
/// is left after the loop. \p loopID goes on the latch branch.
void emitCountedLoop(llvm::IRBuilder<> &b, llvm::Value *lo, llvm::Value *hi,
                     llvm::MDNode *loopID, const llvm::Twine &name,
                     llvm::function_ref<void(llvm::Value *)> body,
                     int64_t step = 1);

/// A distinct loop ID: `!{self, !{"llvm.loop.mustprogress"}}`, plus
/// `!{"llvm.loop.parallel_accesses", group}` when \p group is given.
llvm::MDNode *makeLoopID(llvm::LLVMContext &c, llvm::MDNode *group);

/// A distinct loop ID for a loop left scalar and rolled: mustprogress,
/// `llvm.loop.vectorize.enable` false and `llvm.loop.unroll.disable`.
llvm::MDNode *makeScalarLoopID(llvm::LLVMContext &c);

/// \p v as a constant of \p t, the memory type of a scalar.
llvm::Constant *identityConstant(IdentityValue v, llvm::Type *t);

/// Float sums: the partial sums each accumulator is split into in an
/// element loop, whatever the scalar type and the target's vector width
/// (one number for every loop, so that fusing loops does not change it).
inline constexpr unsigned SumLanes = 4;

/// Elements per strip of a loop with indirect increments. Airfoil's
/// res_calc on OP2's 720K-cell grid, AVX2 (VF 4), ms per call, best of 3:
///   1 thread:  unstripped 14.9; S = 8: 15.5, 16: 11.5, 32: 11.7, 64: 12.1,
///              128: 13.3
///   2 threads: unstripped 7.3; S = 16: 5.5, 32: 5.8
/// Forcing an interleave count of 2 on the compute loop, copying the
/// gathered elements into strip buffers first (vector loads instead of
/// gathers in the compute loop), or a constant trip count for full strips
/// gained nothing measurable.
inline constexpr int64_t IncStripSize = 16;

class LoopEmitter {
public:
  LoopEmitter(FunctionEmitter &host, const ir::ParLoopStmt &loop);

  /// The body function, then the host code at the host's insertion point.
  void emit();

  /// emit() in two halves around the run call: the body function and the
  /// host code up to opd_loop_run, whose operands it returns (the loop
  /// handle, the body to run, the context), and the code after it (the
  /// reduction partials). A skewed group (emitSkewedLoops) runs its loops
  /// in between with one opd_skew_run.
  struct Prepared {
    llvm::Value *handle, *body, *ctx;
  };
  Prepared emitBeforeRun();
  void emitAfterRun();
  /// After emitBeforeRun, for opd_skew_run's schedule: a 3D block loop's
  /// context size in bytes and the offset of its range (int64_t lo[3],
  /// then hi[3]), which the runtime may copy and narrow along dimension 1
  /// (lib/exec/Skew.cpp, tiles); {0, 0} for other loops.
  std::pair<int64_t, int64_t> contextRange() const;
  /// The reduction scratch slot (opd_rt_scratch_slot): loop k of a skewed
  /// group uses slot k, so the partials of its loops that reduce live side
  /// by side while the sweep runs them all.
  unsigned scratchSlot = 0;

private:
  // LoopHost.cpp
  void layoutContext();
  /// The loop's host protocol up to its phase (host::lowerLoop: range,
  /// halo checks, exchanges, argument table, prepare); returns the handle.
  llvm::Value *emitPrepare();
  /// The phase: the context, with the reductions' partials (whose
  /// pointers and count go to the program's locals for the combination).
  void emitContext(llvm::Value *loopHandle);

  // ColumnTables.cpp
  /// The loop's column values (analysis/ColumnValues.h) unless
  /// -fno-column-tables; empty for set loops.
  void findColumns();
  /// After the context's range: the column tables' pointers in the
  /// context, the tables filled when the program's copy does not cover the
  /// range (ColumnTables.cpp).
  void emitColumnTables();
  /// The function that fills the tables: `void opd_cols_K.N(i64 lo, i64 hi,
  /// ptr table0, ...)`, table k's element x - lo the value k at column x.
  llvm::Function *emitColumnFill();
  /// Column value \p k at the element in column \p x, from its table.
  llvm::Value *loadColumnValue(llvm::IRBuilder<> &bb, unsigned k,
                               llvm::Value *x, llvm::MDNode *group);

  // LoopBody.cpp
  /// The i64 constant \p v (LoopHost.cpp uses it too).
  llvm::ConstantInt *i64(int64_t v) const;
  void tagWithLoop(llvm::Function &f);
  llvm::Function *emitBody(const KernelInterface &kernel, llvm::MDNode *group);
  void loadFields(llvm::IRBuilder<> &bb, llvm::Value *ctxArg,
                  std::vector<llvm::AllocaInst *> &accumulators);
  void chooseRowShape(llvm::Function *f, llvm::MDNode *group);
  /// The elements [begin, end) as strips (RaceClass::IncStrips).
  void emitIncStrips(llvm::IRBuilder<> &bb, const KernelInterface &kernel,
                     llvm::MDNode *group, llvm::Value *begin, llvm::Value *end);
  // StagedRows.cpp
  /// Sets staged: the arguments whose rows each strip loads whole and
  /// transposes into stagedBuf (-ftranspose-rows).
  void chooseStagedRows();
  /// KernelInterface::componentStride for staged.
  std::vector<int64_t> stagedStrides() const;
  /// The staged arguments' buffers [dim][IncStripSize], allocated at \p bb
  /// (the entry block), and their lanes.
  void allocStagedRows(llvm::IRBuilder<> &bb);
  /// The length of the strip starting at \p s of a loop ending at \p end:
  /// IncStripSize, or what is left.
  llvm::Value *stripLength(llvm::IRBuilder<> &bb, llvm::Value *s,
                           llvm::Value *end) const;
  /// The strip [s, s + len)'s rows of the staged arguments into stagedBuf.
  void emitStagedRows(llvm::IRBuilder<> &bb, llvm::Value *s, llvm::Value *len);
  /// One group of L strip elements (strip positions j0 + js[l]) of the
  /// staged arguments \p args into stagedBuf at j0.
  void emitStagedGroup(llvm::IRBuilder<> &bb, llvm::Value *s, llvm::Value *j0,
                       const std::vector<llvm::Value *> &js,
                       const std::vector<unsigned> &args);
  /// Strip element \p j of staged argument \p n alone into stagedBuf.
  void emitStagedElement(llvm::IRBuilder<> &bb, llvm::Value *s, llvm::Value *j,
                         unsigned n);
  /// \p rows (each a vector of \p dim components) as dim vectors of
  /// rows.size() lanes, component k's vector at k.
  std::vector<llvm::Value *>
  emitTranspose(llvm::IRBuilder<> &bb, const std::vector<llvm::Value *> &rows,
                unsigned dim);
  bool anyStaged() const;
  /// A parallel set loop with staged arguments: [begin, end) in strips of
  /// IncStripSize, each staged (emitStagedRows), then its elements in a
  /// loop declared parallel over \p group.
  void emitStagedStrips(llvm::IRBuilder<> &bb, const KernelInterface &kernel,
                        llvm::MDNode *group, llvm::Value *begin,
                        llvm::Value *end);
  std::vector<bool> staged;
  std::vector<llvm::Value *> stagedBuf;
  std::vector<unsigned> stageLanes;
  /// Per staged argument, inside a strip's compute loop: the element's first
  /// component in stagedBuf, which the kernel gets; null elsewhere.
  std::vector<llvm::Value *> stagedRow;
  /// -frepro-sum on a loop whose only cross-element writes are increments
  /// through maps: each element's increments go to its row of a runtime
  /// buffer, which the runtime adds to the targets in global element order.
  bool gatherMode() const;
  /// -frepro-sum: adds component \p k of the element's contribution in
  /// \p acc exactly to the chunk's accumulators at \p slot.
  void emitExactAdd(llvm::IRBuilder<> &bb, const ir::AccessDescriptor &a,
                    llvm::Value *slot, llvm::Value *acc, unsigned k);
  /// Whether argument \p a is a float sum summed exactly (-frepro-sum).
  bool exactSum(const ir::AccessDescriptor &a) const;
  /// The innermost loop of a block loop over [lo, hi) with the rows of
  /// alignArgs aligned: a scalar prologue up to the lead argument's first
  /// 64-byte aligned point, then the element loop with that row's alignment
  /// (and the others', when they share it) known to LLVM (the vectoriser's
  /// remainder follows it).
  void emitAlignedRow(llvm::IRBuilder<> &bb, const KernelInterface &kernel,
                      std::vector<llvm::Value *> &coords, llvm::Value *lo,
                      llvm::Value *hi, llvm::MDNode *group);
  /// Pointers and values the kernel receives at coordinates \p coords.
  void emitKernelCall(llvm::IRBuilder<> &bb, const KernelInterface &kernel,
                      const std::vector<llvm::Value *> &coords,
                      llvm::MDNode *group);

  FunctionEmitter &host;
  CodeGenModule &cgm;
  llvm::IRBuilder<> &b;
  const ir::ParLoopStmt &loop;
  const LoopAccess access;
  unsigned id, dims;

  // Context layout: field numbers per argument (-1: none).
  struct Fields {
    int base = -1, strides = -1, map = -1, value = -1, partials = -1;
    /// -frepro-sum increments through maps: the runtime's buffer
    /// (opd_loop_gather), one row per element.
    int gather = -1;
    /// `map` holds opd_map_values (a map the kernel reads), not
    /// opd_map_data.
    bool mapValues = false;
  };
  std::vector<Fields> fields;
  int loField = -1, hiField = -1;
  /// The column values and, per value, its table's context field
  /// (element x - lo[0] for column x) and, in the body, the table.
  ColumnValues columns;
  std::vector<int> columnFields;
  std::vector<llvm::Value *> columnTables;
  /// Set loops whose kernel calls idx(): opd_set_global_ids (null on one
  /// process), and in the body the same pointer, whether it is null, and a
  /// dummy the load reads instead when it is.
  int gidField = -1;
  llvm::Value *gids = nullptr, *gidsNull = nullptr, *gidDummy = nullptr;
  llvm::StructType *ctxTy = nullptr;

  // Body-side values per argument.
  std::vector<llvm::Value *> base, mapData, argPtr;
  /// Per argument: where the kernel increments instead of the dat element
  /// (the element's row of the strip buffer), or null.
  std::vector<llvm::Value *> incBuffer;
  /// Per argument, -frepro-sum float sums: the chunk's (3D: the plane's)
  /// exact accumulators (OPD_XSUM_WORDS i64 words per component), or null.
  std::vector<llvm::Value *> exactSlot;
  /// Per reduction argument: the loop's partials (the context's field).
  std::vector<llvm::Value *> partialBase;
  /// Per argument, -frepro-sum increments through maps (gatherMode()): the
  /// base of the runtime's per-element buffer, or null.
  std::vector<llvm::Value *> gatherBase;
  std::vector<std::vector<llvm::Value *>> strides;
  /// Block loops with write-only centre arguments of one component that
  /// may stream (isStreamCandidate), of the first one's scalar type: the
  /// arguments whose stores emitAlignedRow aligns, the first (the lead)
  /// deciding the peel. Inside an aligned element loop, argument n's
  /// element is at offset alignedStep from alignedRows[n] (when not null),
  /// a pointer LLVM knows to be 64-byte aligned.
  std::vector<unsigned> alignArgs;
  /// Element loops of a loop with float sum reductions (not -frepro-sum):
  /// the fixed number of partial sums each accumulator is split into, 0
  /// when there are none (LoopBody.cpp, "Float sums").
  unsigned sumLanes = 0;
  /// Per argument, float sums: the partial sums of each component (a
  /// vector of sumLanes), or empty.
  std::vector<std::vector<llvm::AllocaInst *>> laneSums;
  /// Per argument with laneSums: the accumulator of each lane's kernel.
  std::vector<std::vector<llvm::AllocaInst *>> laneAccs;
  /// Per argument with laneSums: the kernel adds to it at most once an
  /// element (analysis/SumOnce.h), so each lane's kernel starts from -0.0
  /// and the lanes' results join the partials in one vector addition.
  std::vector<bool> laneOnce;
  /// Alias scope and noalias lists for the kernel calls being emitted
  /// (emitLaneGroups), or null.
  llvm::MDNode *callScope = nullptr, *callNoAlias = nullptr;
  /// The element loop over [lo, hi), \p element emitting one element at
  /// its coordinate: one loop (declared parallel over \p group when given),
  /// or, with float sums, groups of sumLanes elements each adding to its
  /// own partial sum, then the rest in order (LoopBody.cpp, "Float sums").
  void emitElements(llvm::IRBuilder<> &bb, llvm::Value *lo, llvm::Value *hi,
                    llvm::MDNode *group, const llvm::Twine &name,
                    llvm::function_ref<void(llvm::Value *)> element);
  /// Block loops whose elements may run twice with the same result
  /// (elementsRerunnable): the elements one vector register holds, V; 0
  /// otherwise. Their element loops run the elements a whole vector loop
  /// leaves (fewer than 4V) as vectors of V, the last one shifted back to
  /// end at the row's end (LoopBody.cpp, "Row tails").
  unsigned tailVector = 0;
  /// Whether running an element of this loop a second time, right after
  /// the first, changes nothing: a parallel block loop without reductions
  /// whose written arguments are write-only, at the centre, and on dats no
  /// other argument reaches.
  bool elementsRerunnable() const;
  /// The elements [lo, hi) of a row with tailVector (V): \p mainLoop
  /// emits the vectoriser's loop over [lo, m), m = lo + (hi - lo) rounded
  /// down to a multiple of 4V (hi when the row is shorter than V), then
  /// [m, hi) runs in vectors of V elements, the last starting at hi - V,
  /// \p element emitting one element at its coordinate.
  void emitRowWithTail(llvm::IRBuilder<> &bb, llvm::Value *lo, llvm::Value *hi,
                       llvm::MDNode *group, const llvm::Twine &name,
                       llvm::function_ref<void(llvm::Value *)> mainLoop,
                       llvm::function_ref<void(llvm::Value *)> element);
  /// The (argument, component) pairs of laneSums.
  std::vector<std::pair<unsigned, unsigned>> laneSumList() const;
  /// Component \p k of argument \p n's accumulator (the kernel's).
  llvm::Value *accumulatorAt(llvm::IRBuilder<> &bb, unsigned n, unsigned k);
  /// Reduction argument \p n's partial slot number \p index (a chunk, or
  /// a plane of a 3D loop): its dim values, or exact accumulators.
  llvm::Value *partialSlot(llvm::IRBuilder<> &bb, unsigned n,
                           llvm::Value *index);
  /// The partial sums from the accumulators: lane 0 the running value, the
  /// others -0.0.
  void startLanes(llvm::IRBuilder<> &bb);
  /// The accumulators from the partial sums, added in lane order.
  void finishLanes(llvm::IRBuilder<> &bb);
  /// lo + (max(hi - lo, 0) rounded down to a multiple of sumLanes).
  llvm::Value *laneGroupsEnd(llvm::IRBuilder<> &bb, llvm::Value *lo,
                             llvm::Value *hi, const llvm::Twine &name);
  /// The elements [lo, mid) (whole groups), each adding to its partial.
  void emitLaneGroups(llvm::IRBuilder<> &bb, llvm::Value *lo, llvm::Value *mid,
                      llvm::MDNode *group, const llvm::Twine &name,
                      llvm::function_ref<void(llvm::Value *)> element);
  std::vector<llvm::Value *> alignedRows;
  llvm::Value *alignedStep = nullptr;
  std::vector<llvm::Value *> rangeLo, rangeHi;

  // Host-side values.
  llvm::Value *loArr = nullptr, *hiArr = nullptr, *ctx = nullptr;
  /// The loop's host program (codegen/common/LoopLowering.cpp), printed
  /// up to its phase by emitBeforeRun and the rest by emitAfterRun.
  host::Program program;
  host::LoopProgram locals;
  std::unique_ptr<HostProgramPrinter> printer;
};

} // namespace opdc
#endif
