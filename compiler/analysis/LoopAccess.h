// LoopAccess.h - What the arguments of a parallel loop let its elements do.
// SPDX-License-Identifier: Apache-2.0
//
// Every backend and every pass that reorders or fuses loops asks the same
// questions of a `loop K over S (args)`: may its elements run in any order,
// how far do its stencils reach, which dat gives a whole-block loop its
// range, which arguments share a dat or a map, does the kernel call idx().
// analyzeLoopAccess() answers them once, from the IR alone, so that no
// backend keeps its own copy of the rules.
//
// Race class. An element may only touch its own data unless the runtime or
// the generated code orders the conflicting accesses:
//   Parallel    no element reads or writes what another element writes;
//               the element loop may be declared parallel (vectorised
//               without run-time alias checks, or one GPU thread per
//               element).
//   IncStrips   the only writes that reach other elements are increments
//               through maps (`inc` on `q[m[k]]`), and no other argument
//               touches an incremented dat. The increments can then be
//               computed in parallel into private buffers and applied
//               afterwards in element order, which gives each target the
//               same sequence of additions as the plain loop (LLVM:
//               strips; GPU: colouring or atomics).
//   Sequential  anything else that lets one element see another element's
//               writes; the reason names the first argument that causes
//               it (SequentialReason):
//                 q[m[0]] out                      IndirectWriteNotInc
//                 r[m[0]] inc beside r read        IncrementedDatShared
//                 map m out beside q[m[0]] read    MapWrittenWhileIndirected
//                 q out beside q[m[0]] read        WrittenDatReadIndirectly
//                 u out beside u @ cross read      WrittenDatReadAtOffset
//
// Stencil extent. Per stencil argument and dimension, the least and
// greatest offset, and whether some point lies off the axes (in more than
// one dimension at once): the depth and shape of halo exchanges, and how far
// outside the loop's range it reads.
//
// Field plan. Arguments on the same dat (x1..x4 of adt_calc) or the same map
// share one entry, so that a backend passes each base pointer once and the
// optimiser sees common bases (map rows load once per element, strided map
// reads become interleaved vector loads). A map the kernel reads as values
// (map-direct `read`) gets an entry of its own: on several ranks it needs
// global indices, not the local ones the indirect accesses use.
//
// Results depend only on the loop's arguments in order, never on pointer
// values, so every backend and every run sees the same numbering.
#ifndef OPDC_ANALYSIS_LOOPACCESS_H
#define OPDC_ANALYSIS_LOOPACCESS_H

#include <array>
#include <cstdint>
#include <vector>

namespace opdc {
namespace ir {
struct ParLoopStmt;
struct Function;
struct Dat;
struct Map;
} // namespace ir

/// The most dimensions of a block, and so of a stencil extent.
constexpr unsigned MaxLoopDims = 3;

/// How the elements of a loop may run relative to one another.
enum class RaceClass : uint8_t {
  /// No element touches another element's data.
  Parallel,
  /// Only increments through maps reach other elements, and no other
  /// argument touches the incremented dats.
  IncStrips,
  /// Elements must run in order.
  Sequential,
};

/// Why a loop is RaceClass::Sequential.
enum class SequentialReason : uint8_t {
  /// Not sequential.
  None,
  /// A dat written through a map with a mode other than `inc`.
  IndirectWriteNotInc,
  /// A dat incremented through a map is also reached by another argument
  /// that is not an increment through a map.
  IncrementedDatShared,
  /// The loop writes a map that another argument indirects through.
  MapWrittenWhileIndirected,
  /// A dat written at element i is also reached through a map.
  WrittenDatReadIndirectly,
  /// A dat written at element i is also read at a stencil offset.
  WrittenDatReadAtOffset,
};

/// "parallel", "inc-strips", "sequential".
const char *raceClassName(RaceClass c);
/// A short phrase for remarks ("indirect write that is not an increment",
/// ...); "" for None.
const char *sequentialReasonText(SequentialReason r);

/// What one loop argument needs beyond its AccessDescriptor.
struct ArgAccess {
  /// An increment through a map (`inc` on `q[m[k]]`).
  bool indirectInc = false;

  /// Arguments with a stencil: the least and greatest offset per dimension
  /// (zeros for dimensions the stencil lacks and for every other argument;
  /// both always include 0, the centre).
  std::array<int64_t, MaxLoopDims> lo{}, hi{};
  /// Some stencil point is off-centre in more than one dimension.
  bool diagonal = false;

  /// Index into LoopAccess::dats of the dat the argument reaches (direct,
  /// indirect, stencil), or -1.
  int datField = -1;
  /// Index into LoopAccess::maps of the map whose storage the argument uses
  /// (indirect, map-direct other than `read`), or -1.
  int mapField = -1;
  /// Index into LoopAccess::mapValues of a map the kernel reads as values
  /// (map-direct `read`), or -1.
  int mapValuesField = -1;
};

/// The result of analyzeLoopAccess().
struct LoopAccess {
  RaceClass race = RaceClass::Parallel;
  /// Why race is Sequential; None otherwise.
  SequentialReason reason = SequentialReason::None;
  /// Sequential: the argument whose write causes it, and the other argument
  /// involved (-1 for IndirectWriteNotInc, which needs no other).
  int reasonArg = -1, otherArg = -1;

  /// One entry per loop argument, in argument order.
  std::vector<ArgAccess> args;

  /// Distinct dats, maps used as storage, and maps read as values, each in
  /// the order of their first argument.
  std::vector<const ir::Dat *> dats;
  std::vector<const ir::Map *> maps;
  std::vector<const ir::Map *> mapValues;

  /// Block loops without ranges (the whole block): the argument whose dat's
  /// extent without halos gives the range, the first dat argument; -1 for
  /// other loops and when the loop has no dat argument (sema rejects that).
  int extentArg = -1;
  const ir::Dat *extentDat = nullptr;

  /// The kernel calls idx() or draws random numbers (rng_uniform,
  /// rng_normal): set loops pass it the element's global index, which
  /// differs from the local one on several ranks.
  bool usesIdx = false;
};

/// Analyses the arguments and kernel of \p loop. Never fails: an IR loop
/// that passed the verifier always has an answer.
LoopAccess analyzeLoopAccess(const ir::ParLoopStmt &loop);

/// Whether \p kernel calls idx(), rng_uniform() or rng_normal() anywhere in
/// its body (each needs the element's global index).
bool kernelUsesIdx(const ir::Function &kernel);

} // namespace opdc
#endif
