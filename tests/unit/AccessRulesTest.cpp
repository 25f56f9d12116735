// AccessRulesTest.cpp - The loop-argument legality rules of ir/AccessRules.
// SPDX-License-Identifier: Apache-2.0
#include "ir/AccessRules.h"

#include <gtest/gtest.h>

using namespace opdc;
using namespace opdc::ir;

namespace {

const Type F64 = Type::scalarOf(ScalarKind::F64);

/// An edge loop: res[pedge[k]] through a map from edges to nodes.
struct EdgeLoop {
  Set nodes, edges;
  Map pedge;
  Dat res;
  KernelParam param;
  ParLoopStmt loop;

  EdgeLoop() {
    nodes.name = "nodes";
    edges.name = "edges";
    pedge.name = "pedge";
    pedge.from = &edges;
    pedge.to = &nodes;
    pedge.arity = 2;
    res.name = "res";
    res.set = &nodes;
    res.elemType = F64;
    param.name = "r";
    param.mode = AccessMode::Inc;
    param.type = F64;
    loop.set = &edges;
  }
  AccessDescriptor indirect(AccessMode m, int index) const {
    AccessDescriptor a;
    a.kind = ArgKind::Indirect;
    a.mode = m;
    a.dat = const_cast<Dat *>(&res);
    a.map = const_cast<Map *>(&pedge);
    a.mapIndex = index;
    return a;
  }
};

TEST(AccessRules, ModesThroughAMap) {
  EdgeLoop e;
  EXPECT_EQ(modeRule(e.indirect(AccessMode::Inc, 0)), "");
  EXPECT_EQ(modeRule(e.indirect(AccessMode::Read, 0)), "");
  EXPECT_EQ(modeRule(e.indirect(AccessMode::Write, 0)), "");
  EXPECT_EQ(modeRule(e.indirect(AccessMode::ReadWrite, 0)), "");
  EXPECT_EQ(modeRule(e.indirect(AccessMode::Sum, 0)),
            "dat 'res' bound to a reduction");
}

TEST(AccessRules, ModesOfGlobalsReductionsAndStencils) {
  AccessDescriptor g;
  g.kind = ArgKind::GlobalRead;
  EXPECT_EQ(modeRule(g), "");
  g.mode = AccessMode::Inc;
  EXPECT_EQ(modeRule(g), "global argument with mode inc");

  AccessDescriptor r;
  r.kind = ArgKind::Reduction;
  r.mode = AccessMode::Max;
  EXPECT_EQ(modeRule(r), "");
  r.mode = AccessMode::Write;
  EXPECT_EQ(modeRule(r), "reduction argument with mode out");

  Stencil centre, cross;
  centre.name = "c";
  centre.dims = 2;
  centre.points = {{0, 0}};
  cross.name = "x";
  cross.dims = 2;
  cross.points = {{0, 0}, {1, 0}, {-1, 0}};
  AccessDescriptor s;
  s.kind = ArgKind::Stencil;
  s.mode = AccessMode::Write;
  s.stencil = &centre;
  EXPECT_EQ(modeRule(s), "");
  s.stencil = &cross;
  EXPECT_EQ(modeRule(s), "written through off-centre stencil 'x'");
  s.mode = AccessMode::Read;
  EXPECT_EQ(modeRule(s), "");
}

TEST(AccessRules, DescriptorAgreesWithParamAndLoop) {
  EdgeLoop e;
  AccessDescriptor a = e.indirect(AccessMode::Inc, 1);
  EXPECT_TRUE(paramRules(a, e.param).empty());
  EXPECT_TRUE(placementRules(a, e.param, e.loop).empty());

  a.mode = AccessMode::Read;
  a.bytes = 4;
  std::vector<std::string> why = paramRules(a, e.param);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_EQ(why[0], "mode read differs from 'r' (inc)");
  EXPECT_EQ(why[1], "4 bytes per element, expected 8");

  a = e.indirect(AccessMode::Inc, 2);
  e.loop.set = &e.nodes;
  why = placementRules(a, e.param, e.loop);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_EQ(why[0], "map 'pedge' is not from set 'nodes'");
  EXPECT_EQ(why[1], "index 2 outside map 'pedge' of arity 2");
}

} // namespace
