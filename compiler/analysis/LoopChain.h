// LoopChain.h - Loop chains: runs of parallel loops with no host dependence.
// SPDX-License-Identifier: Apache-2.0
//
// A loop chain is a maximal sequence of `loop` statements of one host Body
// between which the host does nothing that depends on them or that they
// depend on in ways a reordering pass could not see: in between there may
// only be `let`/`var` declarations and assignments of host values that
// neither read nor write a reduction result of the chain's loops, call no
// proc and read no clock (wtime). Everything else ends the chain: swap,
// print, I/O, solve, a derivative request, a proc call, control flow (if,
// for, while, break, continue, return) and a host use of a reduction
// result. Bodies nested in control flow have chains of their own.
//
// For every dat the chain touches, the analysis lists each access, in loop
// and argument order: which loop, its mode, and how it reaches the dat
// (directly, through which map and index, or through which stencil and its
// first off-centre point). This is what loop fusion (passes/loops/Fuse.cpp) and
// communication avoidance ask: who writes a dat and who reads it after, at
// the element itself or elsewhere.
#ifndef OPDC_ANALYSIS_LOOPCHAIN_H
#define OPDC_ANALYSIS_LOOPCHAIN_H

#include "analysis/LoopAccess.h"
#include "ast/Operators.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace opdc {
namespace ir {
struct Body;
struct Function;
struct Stmt;
struct Stencil;
} // namespace ir

/// One argument of one loop of a chain that reaches a dat.
struct ChainAccess {
  unsigned loop = 0; ///< index into LoopChain::loops
  unsigned arg = 0;  ///< argument of that loop
  AccessMode mode = AccessMode::Read;
  ArgKind kind = ArgKind::Direct; ///< Direct, Indirect or Stencil
  const ir::Map *map = nullptr;   ///< Indirect: the map, with mapIndex
  int mapIndex = -1;
  const ir::Stencil *stencil = nullptr; ///< Stencil
  /// The access reaches only the loop element's own point: direct, or a
  /// stencil whose only point is the centre.
  bool centre = true;
  /// Not centre, through a stencil: its first off-centre point in source
  /// order (for messages); empty otherwise.
  std::vector<int64_t> offset;
};

/// Every access of the chain to one dat.
struct ChainDat {
  const ir::Dat *dat = nullptr;
  std::vector<ChainAccess> accesses; ///< loop order, then argument order
  /// Some loop of the chain writes it (out, inout or inc).
  bool written() const;
};

/// Why a chain ends.
enum class ChainEnd : uint8_t {
  EndOfBody,
  Swap,
  DatIO, ///< read or write of dats from or to a file
  Print,
  Solve,
  Derivative,   ///< adjoint or tangent request, or their tape or checkpoint
  ControlFlow,  ///< if, for, while, break, continue, return
  ProcCall,     ///< a proc call (it may run loops or print)
  ReductionUse, ///< a host statement uses a reduction result of the chain
  Clock,        ///< wtime(): moving loops across it changes what it times
};

/// A short phrase for remarks ("swap", "print", ...).
const char *chainEndText(ChainEnd e);

/// One loop chain of a host Body.
struct LoopChain {
  const ir::Body *body = nullptr;
  /// body->stmts indices of the loops, in order, and the loops.
  std::vector<size_t> loopStmts;
  std::vector<const ir::ParLoopStmt *> loops;
  /// analyzeLoopAccess() of each loop.
  std::vector<LoopAccess> access;
  /// The host statements between the first and the last loop (declarations
  /// and assignments), as body->stmts indices.
  std::vector<size_t> hostStmts;
  /// Every dat a loop of the chain reaches, in order of first access.
  std::vector<ChainDat> dats;
  /// What ended the chain: body->stmts index of the statement that did
  /// (body->stmts.size() for EndOfBody), and why. For ReductionUse, the
  /// variable slot whose result was used in `endVar`.
  size_t endStmt = 0;
  ChainEnd end = ChainEnd::EndOfBody;
  int endVar = -1;

  /// The accesses to \p dat, or null when no loop of the chain reaches it.
  const ChainDat *find(const ir::Dat *dat) const;
};

/// The chains among the statements of \p body (not of the bodies nested in
/// its control flow), in order. Never fails.
std::vector<LoopChain> findLoopChains(const ir::Body &body);

/// The chains of \p f's body and of every body nested in it, in source
/// order of their first loops.
std::vector<LoopChain> findAllLoopChains(const ir::Function &f);

/// Host variable slots that \p s reads or writes (declarations count as
/// writes), in increasing order.
std::vector<unsigned> hostSlotsUsed(const ir::Stmt &s);

/// Host variable slots a loop reads or writes through its arguments and
/// ranges: reduction targets and variables in global-read values and range
/// bounds, in increasing order.
std::vector<unsigned> loopSlotsUsed(const ir::ParLoopStmt &loop);

/// Per loop of a structured chain, how far beyond its range it must run so
/// that every later loop can run over its own extended range with no halo
/// exchange inside the chain (communication avoidance: the chain's halos are
/// exchanged once, deeper, and the overlap is computed redundantly).
/// Backward dataflow over every dat: the last loop runs over its range;
/// a loop that writes a dat a later loop k reads at stencil extent [a, b]
/// (per dimension) must cover k's extension widened by the stencil:
///   lo[l] >= lo[k] - a,   hi[l] >= hi[k] + b.
/// A dat a loop reads before any loop of the chain writes it must be
/// exchanged before the chain, as deep as its readers' extensions plus
/// their stencils reach.
struct ChainHaloDepths {
  /// Why the analysis does not apply (loops over sets, over different
  /// blocks or ranges); empty when it does.
  std::string notApplicable;
  /// Per loop, per dimension: points to run below the range's start and
  /// above its end (>= 0).
  std::vector<std::array<int64_t, MaxLoopDims>> lo, hi;
  /// Dats to exchange before the chain, in order of first access, with the
  /// halo depth needed below and above per dimension (>= 0).
  struct Exchange {
    const ir::Dat *dat = nullptr;
    std::array<int64_t, MaxLoopDims> lo{}, hi{};
  };
  std::vector<Exchange> exchanges;
};

/// The halo depths of \p chain (see ChainHaloDepths).
ChainHaloDepths chainHaloDepths(const LoopChain &chain);

/// Per loop of a chain of set loops, how many exec halo layers it must run
/// (lib/mpi/Halo.cpp: layer 1 is the exec halo, layer k+1 the elements of
/// other ranks that reach layer k or its map targets) so that no loop of
/// the chain needs a halo exchange; the chain's dats are exchanged once,
/// before it, that deep (opd_halo_group), and the extra layers are computed
/// redundantly. The rules are the runtime's (lib/mpi/Exchange.cpp); a loop
/// running x layers, x >= 1 when it writes through a map, needs a dat
///   read directly:                       x layers current;
///   read through a map (read, inout):    max(x + 1, 2);
///   incremented or written through a map: x - 1 (the old values of the
///                                        targets that get every increment);
/// and leaves a dat it writes current x layers deep (directly) or x - 1
/// (through a map: only targets all of whose reachers ran are complete).
/// Backward dataflow over every dat: a loop that writes a dat runs as many
/// layers as the next readers (up to the next writer) need, plus one when
/// it writes through a map. Depth K + 1 (K = setLayers) means the whole
/// halo, non-exec elements too.
struct ChainSetLayers {
  /// Why the analysis does not apply (a block loop in the chain; a loop
  /// with a reduction that would have to run extra layers); empty when it
  /// does.
  std::string notApplicable;
  /// Per loop: exec halo layers to run (opd_loop_extend_next's lo[0]).
  std::vector<int64_t> layers;
  /// Dats a loop reads before the chain writes them, in order of first
  /// access, with the layers that must be current before the chain (> 0).
  struct Exchange {
    const ir::Dat *dat = nullptr;
    int64_t depth = 0;
  };
  std::vector<Exchange> exchanges;
  /// The halo layers the sets need (opd_rt_halo_depth): the most any loop
  /// runs, at least 1.
  int64_t setLayers = 1;
  /// When notApplicable is a loop with a reduction that would have to run
  /// extra layers: that loop (the last such in the chain), else -1. The
  /// chain cut right after it may be planned as two.
  int reducingLoop = -1;
};

/// The runtime's rules above: the layers of a dat that must be current
/// for an access (kind, mode) by a loop running \p layers, and how deep a
/// dat it writes that way is current after it.
int64_t setAccessNeed(ArgKind kind, AccessMode mode, int64_t layers);
int64_t setWriteValid(ArgKind kind, int64_t layers);

/// The exec layers of \p chain's loops (see ChainSetLayers).
ChainSetLayers chainSetHaloLayers(const LoopChain &chain);

/// The loops [\p first, \p last) of \p chain as a chain of their own: its
/// accesses, host statements and dats (in order of first access) are those
/// of these loops. Its end is the next loop's statement when \p last is
/// not the end of \p chain, with the reason \p chain ended.
LoopChain subChain(const LoopChain &chain, size_t first, size_t last);

/// Communication avoidance's plan for a chain of loops over one block
/// (passes/loops/CommAvoid.cpp), per rank boundary rather than per range: how
/// many points beyond a rank's part each loop runs (one depth for every
/// dimension and side), and how deep each dat the chain reads is needed
/// beyond the part. Backward: the last loop runs over the rank's points; a
/// loop writing a dat that a later loop k reads r points away (r: the
/// access's farthest offset in any dimension) runs ext[k] + r beyond; a dat
/// is needed as deep as its readers run plus reach. For a chain of one
/// range these depths bound chainHaloDepths' per side ones from above (a
/// unit test checks it on generated chains), so the plan computes every
/// point a later loop reads.
struct ChainExtensions {
  std::vector<int64_t> ext; ///< per loop
  struct Need {
    const ir::Dat *dat = nullptr;
    int64_t depth = 0;
  };
  std::vector<Need> needs; ///< dats read beyond the part, order of first access
};
ChainExtensions chainExtensions(const LoopChain &chain);

/// "dat 'u': 'jacobi' read @cross, 'residual' read @cross" style summary of
/// \p chain's dats, separated by "; " (what -Rpass=chain prints).
std::string describeChainDats(const LoopChain &chain);

} // namespace opdc
#endif
