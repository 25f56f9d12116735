// LoopAccess.cpp - What the arguments of a parallel loop let its elements do.
// SPDX-License-Identifier: Apache-2.0
//
// The rules are explained in LoopAccess.h; each check below says which
// input it guards against. Arguments are visited in order and the first
// conflict found decides the reason, so the answer is the same on every run.
#include "analysis/LoopAccess.h"

#include "ir/IR.h"
#include "ir/IRVisitor.h"

#include <algorithm>
#include <map>

namespace opdc {

using namespace ir;

namespace {

bool isIndirectInc(const AccessDescriptor &a) {
  return a.kind == ArgKind::Indirect && a.mode == AccessMode::Inc;
}

struct RaceVerdict {
  RaceClass race = RaceClass::Parallel;
  SequentialReason reason = SequentialReason::None;
  int arg = -1, other = -1;
};

RaceVerdict sequential(SequentialReason why, unsigned arg, int other) {
  return {RaceClass::Sequential, why, int(arg), other};
}

// Indirect increments alone do not make the element loop sequential: the
// backend takes them out of the element loop (IncStrips). Everything else
// that lets one element see another element's writes does.
RaceVerdict classifyRaces(const ParLoopStmt &loop) {
  bool incStrips = false;
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (!modeWrites(a.mode) || a.kind == ArgKind::Reduction)
      continue;
    if (a.kind == ArgKind::Indirect) {
      // out/inout through a map keep the sequential element loop: the
      // runtime orders the elements (docs/decisions/0280-...).
      if (a.mode != AccessMode::Inc)
        return sequential(SequentialReason::IndirectWriteNotInc, i, -1);
      // Applying the increments after the kernels of several elements keeps
      // each target's sequence of additions only when no other argument
      // reaches the dat: a read through a map or directly would see the
      // increments later than in element order, a direct write would be
      // reordered against them.
      for (unsigned j = 0; j < loop.args.size(); ++j) {
        const AccessDescriptor &o = loop.args[j];
        if (j != i && o.usesDat() && o.dat == a.dat && !isIndirectInc(o))
          return sequential(SequentialReason::IncrementedDatShared, i, int(j));
      }
      incStrips = true;
      continue;
    }
    for (unsigned j = 0; j < loop.args.size(); ++j) {
      const AccessDescriptor &o = loop.args[j];
      if (j == i)
        continue;
      // A map the loop fills while it also indirects through it.
      if (a.kind == ArgKind::MapDirect && o.kind == ArgKind::Indirect &&
          o.map == a.map)
        return sequential(SequentialReason::MapWrittenWhileIndirected, i,
                          int(j));
      if (!a.usesDat() || !o.usesDat() || o.dat != a.dat)
        continue;
      // A dat written at element i and read at another element.
      if (o.kind == ArgKind::Indirect)
        return sequential(SequentialReason::WrittenDatReadIndirectly, i,
                          int(j));
      if (o.kind == ArgKind::Stencil && o.stencil && !o.stencil->isCentreOnly())
        return sequential(SequentialReason::WrittenDatReadAtOffset, i, int(j));
    }
  }
  RaceVerdict v;
  v.race = incStrips ? RaceClass::IncStrips : RaceClass::Parallel;
  return v;
}

void computeExtent(const AccessDescriptor &a, ArgAccess &out) {
  if (!a.stencil)
    return;
  for (const auto &p : a.stencil->points) {
    unsigned offAxis = 0;
    for (size_t d = 0; d < p.size() && d < MaxLoopDims; ++d) {
      out.lo[d] = std::min(out.lo[d], p[d]);
      out.hi[d] = std::max(out.hi[d], p[d]);
      offAxis += p[d] != 0;
    }
    if (offAxis > 1)
      out.diagonal = true;
  }
}

/// The index of \p key in \p list, appending it when new. The list, not
/// the pointer, gives the order: first use by argument position.
template <typename T>
int fieldOf(std::vector<const T *> &list, std::map<const T *, int> &index,
            const T *key) {
  auto [it, inserted] = index.insert({key, int(list.size())});
  if (inserted)
    list.push_back(key);
  return it->second;
}

} // namespace

const char *raceClassName(RaceClass c) {
  switch (c) {
  case RaceClass::Parallel:
    return "parallel";
  case RaceClass::IncStrips:
    return "inc-strips";
  case RaceClass::Sequential:
    return "sequential";
  }
  return "?";
}

const char *sequentialReasonText(SequentialReason r) {
  switch (r) {
  case SequentialReason::None:
    return "";
  case SequentialReason::IndirectWriteNotInc:
    return "indirect write that is not an increment";
  case SequentialReason::IncrementedDatShared:
    return "incremented dat also reached by another argument";
  case SequentialReason::MapWrittenWhileIndirected:
    return "map written while the loop indirects through it";
  case SequentialReason::WrittenDatReadIndirectly:
    return "written dat also read through a map";
  case SequentialReason::WrittenDatReadAtOffset:
    return "written dat also read at a stencil offset";
  }
  return "?";
}

bool kernelUsesIdx(const Function &kernel) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitIntrinsic(const IntrinsicExpr &e) override {
      found = found || e.id == Intrinsic::Idx || isRandomIntrinsic(e.id);
      IRVisitor::visitIntrinsic(e);
    }
  } finder;
  finder.visitFunction(kernel);
  return finder.found;
}

LoopAccess analyzeLoopAccess(const ParLoopStmt &loop) {
  LoopAccess r;
  RaceVerdict v = classifyRaces(loop);
  r.race = v.race;
  r.reason = v.reason;
  r.reasonArg = v.arg;
  r.otherArg = v.other;

  std::map<const Dat *, int> datIndex;
  std::map<const Map *, int> mapIndex, valuesIndex;
  r.args.resize(loop.args.size());
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    ArgAccess &out = r.args[i];
    out.indirectInc = isIndirectInc(a);
    computeExtent(a, out);
    if (a.usesDat())
      out.datField = fieldOf(r.dats, datIndex, a.dat);
    if (a.kind == ArgKind::MapDirect && a.mode == AccessMode::Read)
      out.mapValuesField = fieldOf(r.mapValues, valuesIndex, a.map);
    else if (a.kind == ArgKind::Indirect || a.kind == ArgKind::MapDirect)
      out.mapField = fieldOf(r.maps, mapIndex, a.map);
    if (loop.block && loop.ranges.empty() && r.extentArg < 0 && a.usesDat()) {
      r.extentArg = int(i);
      r.extentDat = a.dat;
    }
  }
  r.usesIdx = loop.kernel && kernelUsesIdx(*loop.kernel);
  return r;
}

} // namespace opdc
