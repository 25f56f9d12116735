// LoopAccessTest.cpp - Loop access analysis: race class, extents, fields.
// SPDX-License-Identifier: Apache-2.0
#include "analysis/LoopAccess.h"

#include "ir/IR.h"
#include "ir/IRBuilder.h"

#include <gtest/gtest.h>

using namespace opdc;
using namespace opdc::ir;
using B = IRBuilder;

namespace {

const Type F64 = Type::scalarOf(ScalarKind::F64);
const Type F64x2 = Type::arrayOf(ScalarKind::F64, 2);

/// A mesh with sets, a map from edges to nodes, a map from nodes to nodes,
/// a 2D block with stencils, and kernels with and without idx(). Loops are
/// built per test; the analysis reads only their arguments and kernel.
struct Mesh {
  Program p;
  Set *nodes, *edges;
  Map *pedge, *nbr;
  Dat *x, *res, *q;
  Block *grid;
  Stencil *point, *cross, *box, *skew;
  Dat *u, *v;
  Function *k, *kIdx;

  Mesh() {
    B b(p);
    p.name = "mesh";
    nodes = b.addSet("nodes", B::i32(100));
    edges = b.addSet("edges", B::i32(300));
    pedge = b.addMap("pedge", edges, nodes, 2);
    nbr = b.addMap("nbr", nodes, nodes, 4);
    x = b.addDat("x", nodes, F64x2);
    res = b.addDat("res", nodes, F64);
    q = b.addDat("q", nodes, F64);
    grid = b.addBlock("grid", 2);
    point = b.addStencil("point", 2, {{0, 0}});
    cross =
        b.addStencil("cross", 2, {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}});
    box = b.addStencil("box", 2, {{-1, -1}, {0, 0}, {1, 1}});
    skew = b.addStencil("skew", 2, {{0, 0}, {2, 0}, {0, -3}});
    std::vector<ExprPtr> size;
    size.push_back(B::i32(16));
    size.push_back(B::i32(16));
    u = b.addBlockDat("u", grid, F64, std::move(size), {1, 1}, {2, 3});
    size.clear();
    size.push_back(B::i32(16));
    size.push_back(B::i32(16));
    v = b.addBlockDat("v", grid, F64, std::move(size), {1, 1}, {2, 3});
    k = b.addKernel("k");
    kIdx = b.addKernel("kidx");
    B::addKernelParam(*kIdx, "a", AccessMode::Write, F64);
    std::vector<ExprPtr> dim0;
    dim0.push_back(B::i32(0));
    kIdx->body.stmts.push_back(
        B::assign(B::arg(*kIdx, 0),
                  B::cast(ScalarKind::F64,
                          B::intrinsic(Intrinsic::Idx, std::move(dim0)))));
  }

  std::unique_ptr<ParLoopStmt> overEdges(std::vector<AccessDescriptor> args) {
    auto l = B::loopOverSet(k, edges);
    l->args = std::move(args);
    return l;
  }
  std::unique_ptr<ParLoopStmt> overNodes(std::vector<AccessDescriptor> args) {
    auto l = B::loopOverSet(k, nodes);
    l->args = std::move(args);
    return l;
  }
  std::unique_ptr<ParLoopStmt> overGrid(std::vector<AccessDescriptor> args) {
    auto l = B::loopOverBlock(k, grid);
    l->args = std::move(args);
    return l;
  }
};

template <typename... A> std::vector<AccessDescriptor> args(A &&...a) {
  std::vector<AccessDescriptor> v;
  (v.push_back(std::move(a)), ...);
  return v;
}

//===----------------------------------------------------------------------===//
// Race class
//===----------------------------------------------------------------------===//

TEST(LoopAccessRace, DirectLoopIsParallel) {
  Mesh m;
  auto l = m.overNodes(args(B::direct(m.x, AccessMode::Read),
                            B::direct(m.res, AccessMode::Write),
                            B::direct(m.q, AccessMode::ReadWrite)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::Parallel);
  EXPECT_EQ(a.reason, SequentialReason::None);
  EXPECT_EQ(a.reasonArg, -1);
  EXPECT_EQ(a.otherArg, -1);
}

TEST(LoopAccessRace, ReductionsAndIndirectReadsStayParallel) {
  Mesh m;
  auto l = m.overEdges(args(B::indirect(m.x, m.pedge, 0, AccessMode::Read),
                            B::indirect(m.x, m.pedge, 1, AccessMode::Read),
                            B::reduction(0, F64, AccessMode::Sum)));
  EXPECT_EQ(analyzeLoopAccess(*l).race, RaceClass::Parallel);
}

TEST(LoopAccessRace, IndirectIncrementsRunInStrips) {
  Mesh m;
  auto l = m.overEdges(args(B::indirect(m.x, m.pedge, 0, AccessMode::Read),
                            B::indirect(m.res, m.pedge, 0, AccessMode::Inc),
                            B::indirect(m.res, m.pedge, 1, AccessMode::Inc)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::IncStrips);
  EXPECT_EQ(a.reason, SequentialReason::None);
  ASSERT_EQ(a.args.size(), 3u);
  EXPECT_FALSE(a.args[0].indirectInc);
  EXPECT_TRUE(a.args[1].indirectInc);
  EXPECT_TRUE(a.args[2].indirectInc);
}

TEST(LoopAccessRace, IndirectWriteThatIsNotAnIncrementIsSequential) {
  Mesh m;
  auto l = m.overEdges(args(B::indirect(m.x, m.pedge, 0, AccessMode::Read),
                            B::indirect(m.res, m.pedge, 0, AccessMode::Write)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::Sequential);
  EXPECT_EQ(a.reason, SequentialReason::IndirectWriteNotInc);
  EXPECT_EQ(a.reasonArg, 1);
  EXPECT_EQ(a.otherArg, -1);
}

TEST(LoopAccessRace, IncrementedDatReachedByAnotherArgumentIsSequential) {
  // r[nbr[0]] inc beside r read directly: the direct read would see the
  // increments of a strip later than in element order.
  Mesh m;
  auto l = m.overNodes(args(B::indirect(m.res, m.nbr, 0, AccessMode::Inc),
                            B::direct(m.res, AccessMode::Read)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::Sequential);
  EXPECT_EQ(a.reason, SequentialReason::IncrementedDatShared);
  EXPECT_EQ(a.reasonArg, 0);
  EXPECT_EQ(a.otherArg, 1);
  EXPECT_TRUE(a.args[0].indirectInc);
}

TEST(LoopAccessRace, MapFilledWhileIndirectedThroughIsSequential) {
  Mesh m;
  auto l = m.overEdges(args(B::mapDirect(m.pedge, AccessMode::Write),
                            B::indirect(m.x, m.pedge, 0, AccessMode::Read)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::Sequential);
  EXPECT_EQ(a.reason, SequentialReason::MapWrittenWhileIndirected);
  EXPECT_EQ(a.reasonArg, 0);
  EXPECT_EQ(a.otherArg, 1);
}

TEST(LoopAccessRace, WrittenDatReadThroughMapIsSequential) {
  Mesh m;
  auto l = m.overNodes(args(B::direct(m.q, AccessMode::Write),
                            B::indirect(m.q, m.nbr, 2, AccessMode::Read)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::Sequential);
  EXPECT_EQ(a.reason, SequentialReason::WrittenDatReadIndirectly);
  EXPECT_EQ(a.reasonArg, 0);
  EXPECT_EQ(a.otherArg, 1);
}

TEST(LoopAccessRace, WrittenDatReadAtStencilOffsetIsSequential) {
  Mesh m;
  auto l = m.overGrid(args(B::stencil(m.u, m.point, AccessMode::Write),
                           B::stencil(m.u, m.cross, AccessMode::Read)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.race, RaceClass::Sequential);
  EXPECT_EQ(a.reason, SequentialReason::WrittenDatReadAtOffset);
  EXPECT_EQ(a.reasonArg, 0);
  EXPECT_EQ(a.otherArg, 1);
}

TEST(LoopAccessRace, StencilReadOfAnotherDatIsParallel) {
  // The Jacobi sweep: read u at offsets, write v at the centre.
  Mesh m;
  auto l = m.overGrid(args(B::stencil(m.u, m.cross, AccessMode::Read),
                           B::stencil(m.v, m.point, AccessMode::Write)));
  EXPECT_EQ(analyzeLoopAccess(*l).race, RaceClass::Parallel);
}

TEST(LoopAccessRace, CentreReadOfWrittenDatIsParallel) {
  Mesh m;
  auto l = m.overGrid(args(B::stencil(m.u, m.point, AccessMode::Write),
                           B::stencil(m.u, m.point, AccessMode::Read)));
  EXPECT_EQ(analyzeLoopAccess(*l).race, RaceClass::Parallel);
}

TEST(LoopAccessRace, FirstConflictInArgumentOrderGivesTheReason) {
  Mesh m;
  auto l = m.overNodes(args(B::direct(m.q, AccessMode::Write),
                            B::indirect(m.q, m.nbr, 0, AccessMode::Read),
                            B::indirect(m.res, m.nbr, 0, AccessMode::Write)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.reason, SequentialReason::WrittenDatReadIndirectly);
  EXPECT_EQ(a.reasonArg, 0);
}

TEST(LoopAccessRace, NamesAndReasonsArePrintable) {
  EXPECT_STREQ(raceClassName(RaceClass::IncStrips), "inc-strips");
  EXPECT_STREQ(sequentialReasonText(SequentialReason::None), "");
  EXPECT_STREQ(sequentialReasonText(SequentialReason::WrittenDatReadAtOffset),
               "written dat also read at a stencil offset");
}

//===----------------------------------------------------------------------===//
// Stencil extents and whole-block ranges
//===----------------------------------------------------------------------===//

TEST(LoopAccessExtent, CrossReachesOneEachWayOnTheAxes) {
  Mesh m;
  auto l = m.overGrid(args(B::stencil(m.u, m.cross, AccessMode::Read),
                           B::stencil(m.v, m.point, AccessMode::Write)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.args[0].lo, (std::array<int64_t, 3>{-1, -1, 0}));
  EXPECT_EQ(a.args[0].hi, (std::array<int64_t, 3>{1, 1, 0}));
  EXPECT_FALSE(a.args[0].diagonal);
  EXPECT_EQ(a.args[1].lo, (std::array<int64_t, 3>{0, 0, 0}));
  EXPECT_EQ(a.args[1].hi, (std::array<int64_t, 3>{0, 0, 0}));
}

TEST(LoopAccessExtent, OffAxisPointIsDiagonal) {
  Mesh m;
  auto l = m.overGrid(args(B::stencil(m.u, m.box, AccessMode::Read),
                           B::stencil(m.v, m.point, AccessMode::Write)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_TRUE(a.args[0].diagonal);
  EXPECT_FALSE(a.args[1].diagonal);
}

TEST(LoopAccessExtent, AsymmetricStencilKeepsEachSide) {
  // Points (2, 0) and (0, -3): each dimension's extent includes the centre.
  Mesh m;
  auto l = m.overGrid(args(B::stencil(m.u, m.skew, AccessMode::Read)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.args[0].lo, (std::array<int64_t, 3>{0, -3, 0}));
  EXPECT_EQ(a.args[0].hi, (std::array<int64_t, 3>{2, 0, 0}));
  EXPECT_FALSE(a.args[0].diagonal);
}

TEST(LoopAccessExtent, WholeBlockTakesTheFirstDat) {
  Mesh m;
  auto l = m.overGrid(args(B::globalRead(B::f64(0.5)),
                           B::stencil(m.v, m.cross, AccessMode::Read),
                           B::stencil(m.u, m.point, AccessMode::Write)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.extentArg, 1);
  EXPECT_EQ(a.extentDat, m.v);
}

TEST(LoopAccessExtent, ExplicitRangeNeedsNoDat) {
  Mesh m;
  std::vector<LoopRange> ranges;
  for (int d = 0; d < 2; ++d)
    ranges.push_back({B::i32(0), B::i32(8)});
  auto l = B::loopOverBlock(m.k, m.grid, std::move(ranges));
  l->args = args(B::stencil(m.u, m.point, AccessMode::Write));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.extentArg, -1);
  EXPECT_EQ(a.extentDat, nullptr);
}

TEST(LoopAccessExtent, SetLoopsHaveNoExtentDat) {
  Mesh m;
  auto l = m.overNodes(args(B::direct(m.q, AccessMode::Write)));
  EXPECT_EQ(analyzeLoopAccess(*l).extentArg, -1);
}

//===----------------------------------------------------------------------===//
// Field plan and idx()
//===----------------------------------------------------------------------===//

TEST(LoopAccessFields, ArgumentsOnOneDatOrMapShareAField) {
  Mesh m;
  auto l = m.overEdges(args(B::indirect(m.x, m.pedge, 0, AccessMode::Read),
                            B::indirect(m.x, m.pedge, 1, AccessMode::Read),
                            B::globalRead(B::f64(1.0)),
                            B::indirect(m.res, m.pedge, 0, AccessMode::Inc),
                            B::indirect(m.res, m.pedge, 1, AccessMode::Inc)));
  LoopAccess a = analyzeLoopAccess(*l);
  ASSERT_EQ(a.dats.size(), 2u);
  EXPECT_EQ(a.dats[0], m.x);
  EXPECT_EQ(a.dats[1], m.res);
  ASSERT_EQ(a.maps.size(), 1u);
  EXPECT_EQ(a.maps[0], m.pedge);
  EXPECT_TRUE(a.mapValues.empty());
  std::vector<int> datFields, mapFields;
  for (const ArgAccess &arg : a.args) {
    datFields.push_back(arg.datField);
    mapFields.push_back(arg.mapField);
    EXPECT_EQ(arg.mapValuesField, -1);
  }
  EXPECT_EQ(datFields, (std::vector<int>{0, 0, -1, 1, 1}));
  EXPECT_EQ(mapFields, (std::vector<int>{0, 0, -1, 0, 0}));
}

TEST(LoopAccessFields, MapReadAsValuesHasAFieldOfItsOwn) {
  // The kernel reads pedge's entries (global indices on several ranks)
  // and also indirects through it (local indices).
  Mesh m;
  auto l = m.overEdges(args(B::mapDirect(m.pedge, AccessMode::Read),
                            B::indirect(m.x, m.pedge, 0, AccessMode::Read)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.args[0].mapValuesField, 0);
  EXPECT_EQ(a.args[0].mapField, -1);
  EXPECT_EQ(a.args[1].mapValuesField, -1);
  EXPECT_EQ(a.args[1].mapField, 0);
  ASSERT_EQ(a.mapValues.size(), 1u);
  ASSERT_EQ(a.maps.size(), 1u);
}

TEST(LoopAccessFields, MapWrittenDirectlyUsesItsStorage) {
  Mesh m;
  auto l = m.overEdges(args(B::mapDirect(m.pedge, AccessMode::Write)));
  LoopAccess a = analyzeLoopAccess(*l);
  EXPECT_EQ(a.args[0].mapField, 0);
  EXPECT_EQ(a.args[0].mapValuesField, -1);
}

TEST(LoopAccessFields, OrderFollowsArgumentsNotPointers) {
  // The same dats in the opposite argument order get the opposite numbers.
  Mesh m;
  auto l1 = m.overNodes(args(B::direct(m.q, AccessMode::Read),
                             B::direct(m.res, AccessMode::Write)));
  auto l2 = m.overNodes(args(B::direct(m.res, AccessMode::Write),
                             B::direct(m.q, AccessMode::Read)));
  LoopAccess a1 = analyzeLoopAccess(*l1), a2 = analyzeLoopAccess(*l2);
  EXPECT_EQ(a1.dats, (std::vector<const Dat *>{m.q, m.res}));
  EXPECT_EQ(a2.dats, (std::vector<const Dat *>{m.res, m.q}));
}

TEST(LoopAccessIdx, KernelCallingIdxIsSeen) {
  Mesh m;
  auto l = B::loopOverSet(m.kIdx, m.nodes);
  l->args = args(B::direct(m.q, AccessMode::Write));
  EXPECT_TRUE(analyzeLoopAccess(*l).usesIdx);
  EXPECT_TRUE(kernelUsesIdx(*m.kIdx));
}

TEST(LoopAccessIdx, KernelDrawingRandomNumbersNeedsTheIndex) {
  // rng_uniform / rng_normal draw by the element's global index, as idx().
  for (Intrinsic id : {Intrinsic::RngUniform, Intrinsic::RngNormal}) {
    Mesh m;
    Function *kr = B(m.p).addKernel("krng");
    B::addKernelParam(*kr, "a", AccessMode::Write, F64);
    std::vector<ExprPtr> seedAndN;
    seedAndN.push_back(B::i64(1));
    seedAndN.push_back(B::i64(2));
    kr->body.stmts.push_back(
        B::assign(B::arg(*kr, 0), B::intrinsic(id, std::move(seedAndN))));
    auto l = B::loopOverSet(kr, m.nodes);
    l->args = args(B::direct(m.q, AccessMode::Write));
    EXPECT_TRUE(analyzeLoopAccess(*l).usesIdx) << intrinsicName(id);
    EXPECT_TRUE(kernelUsesIdx(*kr)) << intrinsicName(id);
  }
}

TEST(LoopAccessIdx, KernelWithoutIdx) {
  Mesh m;
  auto l = m.overNodes(args(B::direct(m.q, AccessMode::Write)));
  EXPECT_FALSE(analyzeLoopAccess(*l).usesIdx);
}

} // namespace
