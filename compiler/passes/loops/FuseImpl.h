// FuseImpl.h - What the files of the fuse pass share: the Fuser, its
// steps, and the helpers they use.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to compiler/passes/loops/ (the pass's entry point is Fuse.h).
// The pass is split along its steps: legality and the driver (Fuse.cpp,
// whose comment says why fusing is legal), moving loops next to each other
// (FuseReorder.cpp), skewed sweeps (FuseSkew.cpp), stencil chains in one
// GPU kernel (FuseTile.cpp) and building the fused loop and kernel
// (FuseBuild.cpp).
#ifndef OPDC_PASSES_LOOPS_FUSEIMPL_H
#define OPDC_PASSES_LOOPS_FUSEIMPL_H

#include "passes/Pass.h"

#include "analysis/LoopAccess.h"
#include "analysis/LoopChain.h"
#include "ir/IR.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace opdc::fuse {

// The pass's code names the IR's types unqualified, as every pass does.
using namespace ir;

inline constexpr const char *PassName = "fuse";
inline constexpr const char *MissedName = "fuse-missed";

/// \p s in single quotes, as messages quote names.
std::string quoted(const std::string &s);
/// A loop as remarks name it: its kernel's user name (ir/LoopNames.h), not
/// the compiler-made one (step.b2, a+b).
std::string shown(const ParLoopStmt &l);
/// A unit of chain \p c (its loops \p loops, element-fused when several)
/// as remarks name it: the user names joined by '+', quoted.
std::string unitText(const LoopChain &c, const std::vector<unsigned> &loops);
/// Remarks name several loops but sit at one; a note at each other loop's
/// own statement (when it is another one) shows where it is.
void noteOthers(PassContext &ctx, const char *pass, SourceRange at,
                const std::vector<const ParLoopStmt *> &others);
/// An offset as messages show it: "(1, 0)".
std::string offsetText(const std::vector<int64_t> &o);
/// How a dat access reaches memory, for messages: "at offset (1, 0) of
/// stencil 'cross'" or "through 'pedge'[1]".
std::string howReached(const ChainAccess &a);
/// The host variable slots \p e reads.
std::set<unsigned> slotsIn(const Expr &e);
/// Two descriptors that the fused kernel can pass as one parameter: the
/// same dat reached the same way, or the same dat at the centre only.
bool sameAccess(const AccessDescriptor &a, const AccessDescriptor &b);
/// Whether \p a reaches its dat at the element itself only.
bool atCentre(const AccessDescriptor &a);
/// Reads of one block dat (through stencils or directly) that one
/// parameter can stand for, through the union of their stencils: the dat is
/// read only (check 3 keeps a dat some loop of the group writes at the
/// element), so every offset reads the same value either way. The fused
/// body then loads each point from one base pointer, and LLVM can share the
/// loads of points the loops' stencils have in common (the transposed
/// stencil's shifted reads of one dat).
bool blockReads(const AccessDescriptor &a, const AccessDescriptor &b);
/// The points of a block access: its stencil's, or the centre.
std::vector<std::vector<int64_t>> pointsOf(const AccessDescriptor &a);
/// The mode of one parameter standing for \p first then \p second at the
/// same element.
AccessMode mergeModes(AccessMode first, AccessMode second);
/// The iteration space of a loop as text, for comparisons and messages.
std::string spaceText(const ParLoopStmt &l, const LoopAccess &acc,
                      const Function *host = nullptr);
/// Whole-block loops run over their extent dat's points without halos:
/// the same range when the dats' size expressions and bases agree.
bool sameExtent(const Dat *a, const Dat *b);
/// Whether a loop of unit \p a and a loop of unit \p b reach a common dat
/// (FuseSkew.cpp).
bool shareDat(const LoopChain &c, const std::vector<unsigned> &a,
              const std::vector<unsigned> &b);
/// Moves the constant starts of reductions among the loops of chain \p c
/// before its first loop (FuseReorder.cpp says which); returns whether it
/// moved any.
bool hoistConstantStarts(Body &body, const LoopChain &c);

class Fuser {
public:
  Fuser(Program &p, PassContext &ctx) : program(p), ctx(ctx) {}
  bool run();

private:
  /// Why loop \p l cannot be fused with anything; empty when it can.
  std::string whyNotFusable(const LoopChain &c, unsigned l);
  /// Why loop \p next cannot join the group of loops \p group of chain
  /// \p c; empty when it can. Without \p explain, the reason is only
  /// non-empty: the iteration spaces are not printed with the host's
  /// names, which costs the size of the host per call (reorderForFusion
  /// asks about every pair of loops).
  std::string whyNotJoin(const Function &host, const LoopChain &c,
                         const std::vector<unsigned> &group, unsigned next,
                         bool explain = true);
  /// Rule 2: why \p next runs over another iteration space than the
  /// group's; empty when it does not.
  std::string whyNotSameSpace(const Function &host, const LoopChain &c,
                              const std::vector<unsigned> &group, unsigned next,
                              bool explain = true);
  /// Rules 3 and 3b: a dat \p next and the group \p group reach where
  /// one side's writes would reach other elements; empty when none.
  std::string whyDatsConflict(const LoopChain &c,
                              const std::vector<unsigned> &group,
                              unsigned next);
  void fuseBody(Function &host, Body &body);
  /// Moves loops of chain \p c (in \p body) so that loops that could be
  /// fused at the same point but have others between them become
  /// neighbours (the header); returns whether it moved any.
  bool reorderForFusion(const Function &host, Body &body, const LoopChain &c);
  /// Skewed sweeps (see the file comment): why unit \p next cannot join
  /// the skewed group \p group of units (indices into \p units), or empty;
  /// then \p lag, \p lead, \p trail are next's schedule numbers and
  /// \p because the access that set its lag.
  struct Unit {
    std::vector<unsigned> loops; ///< chain loops, element-fused when > 1
    bool fusable = true;         ///< whyNotFusable() of every loop empty
    int64_t lag = 0, lead = 0, trail = 0;
    /// Under MPI: reads beyond the rank's points what an earlier unit of
    /// its sweep writes (SkewSchedule::needsExtension).
    bool needsExtension = false;
  };
  std::string whyNotSkew(const Function &host, const LoopChain &c,
                         const std::vector<Unit> &units,
                         const std::vector<unsigned> &group, unsigned next,
                         int64_t &lag, int64_t &lead, int64_t &trail,
                         bool &needsExtension, std::string &because,
                         bool bridged = false);
  // fuseBody's steps, per body: the chains with fusable loops moved next
  // to each other; per chain, the units of element-fused loops, the
  // skewed sweeps of units (unit indices; \p lagWhy the access that set
  // each unit's lag), and per sweep its loops built (fused units; the
  // statements they replace marked in \p replace), their skew schedule,
  // and their place at the sweep's last loop.
  std::vector<LoopChain> prepareChains(const Function &host, Body &body);
  std::vector<Unit> elementUnits(const Function &host, const LoopChain &c);
  std::vector<std::vector<unsigned>>
  skewGroups(const Function &host, const LoopChain &c, std::vector<Unit> &units,
             std::vector<std::string> &lagWhy);
  std::vector<StmtPtr>
  buildUnits(const Function &host, Body &body, const LoopChain &c,
             const std::vector<Unit> &units, const std::vector<unsigned> &sg,
             std::map<size_t, std::vector<StmtPtr>> &replace);
  void markSkewed(const LoopChain &c, const std::vector<Unit> &units,
                  const std::vector<unsigned> &sg,
                  const std::vector<std::string> &lagWhy,
                  std::vector<StmtPtr> &out);
  void placeGroup(Body &body, const LoopChain &c,
                  const std::vector<Unit> &units,
                  const std::vector<unsigned> &sg, std::vector<StmtPtr> out,
                  std::map<size_t, std::vector<StmtPtr>> &replace);
  /// Stencil chains in one GPU kernel (FuseTile.cpp): why units \p p and
  /// p + 1 cannot be one (empty when they can; \p chain: the second
  /// reads at stencil offsets what the first writes, so a refusal is
  /// worth a remark), the groups of units (pairs, and the other fusable
  /// units alone), and a pair built (\p out) marked.
  std::string whyNotTile(const Function &host, const LoopChain &c,
                         const std::vector<Unit> &units, unsigned p,
                         bool &chain);
  std::vector<std::vector<unsigned>> tileGroups(const Function &host,
                                                const LoopChain &c,
                                                const std::vector<Unit> &units);
  void markTiled(const LoopChain &c, const std::vector<Unit> &units,
                 const std::vector<unsigned> &sg, std::vector<StmtPtr> &out);
  StmtPtr buildFused(const LoopChain &c, const std::vector<unsigned> &group);
  Function *addKernel(std::unique_ptr<Function> k);
  /// A stencil with the points of both block reads (an existing one with
  /// the same points when there is one).
  Stencil *unionStencil(const AccessDescriptor &a, const AccessDescriptor &b);

  Program &program;
  PassContext &ctx;
  bool changed = false;
  /// Union stencils made while one group is fused (unionStencil).
  std::vector<std::unique_ptr<Stencil>> pending;
};

} // namespace opdc::fuse
#endif
