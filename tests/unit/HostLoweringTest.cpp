// HostLoweringTest.cpp - The host-program form: one protocol for every
// backend (codegen/common/HostLowering.cpp). The tape and checkpoint
// protocols are written once; the only differences between a CPU and a
// CUDA lowering are the ones HostTraits names (copies instead of storage
// handed over, residency operations).
// SPDX-License-Identifier: Apache-2.0
#include "codegen/common/HostProgram.h"

#include "analysis/LoopAccess.h"
#include "ir/IR.h"
#include "ir/IRBuilder.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace opdc;

namespace {

struct Fixture {
  ir::Dat u, v;
  ir::Function fn;
  SourceManager sm;
  std::string messages;
  llvm::raw_string_ostream os{messages};
  DiagnosticEngine diags{sm, os};

  Fixture() {
    u.name = "u";
    v.name = "v";
    fn.kind = ir::FunctionKind::Main;
    fn.vars.push_back({"t", Type::scalarOf(ScalarKind::I32), true, {}});
    fn.vars.push_back({"e", Type::arrayOf(ScalarKind::F64, 2), true, {}});
  }

  std::string lower(const ir::Stmt &s, bool deviceCopies) {
    host::Program p;
    EXPECT_TRUE(
        host::lowerHostStmt(fn, s, host::HostTraits{deviceCopies}, diags, p));
    return host::dump(p);
  }
};

ir::ExprPtr i64(int64_t v) {
  return std::make_unique<ir::ConstantExpr>(
      ConstValue::ofInt(ScalarKind::I64, v));
}

} // namespace

TEST(HostLowering, TapePushAndPopInReverse) {
  Fixture f;
  ir::TapeStmt push(true, {&f.u, &f.v}, {0, 1});
  push.overwritten = {true, false};
  // The saved dats are the runtime's (or its device store's) business:
  // no residency operations around them.
  EXPECT_EQ(f.lower(push, false), "opd_tape_push_dat_overwritten(u)\n"
                                  "opd_tape_push_dat(v)\n"
                                  "opd_tape_push_value(bits(var0[0]))\n"
                                  "opd_tape_push_value(bits(var1[0]))\n"
                                  "opd_tape_push_value(bits(var1[1]))\n");
  // A device store copies at the push: a CUDA loop reads its device
  // pointers before the prepare that would take the storage.
  EXPECT_EQ(f.lower(push, true), "opd_tape_push_dat(u)\n"
                                 "opd_tape_push_dat(v)\n"
                                 "opd_tape_push_value(bits(var0[0]))\n"
                                 "opd_tape_push_value(bits(var1[0]))\n"
                                 "opd_tape_push_value(bits(var1[1]))\n");
  ir::TapeStmt pop(false, {&f.u, &f.v}, {0, 1});
  EXPECT_EQ(f.lower(pop, false), "%bits = opd_tape_pop_value()\n"
                                 "var1[1] = from_bits(%bits)\n"
                                 "%bits = opd_tape_pop_value()\n"
                                 "var1[0] = from_bits(%bits)\n"
                                 "%bits = opd_tape_pop_value()\n"
                                 "var0[0] = from_bits(%bits)\n"
                                 "opd_tape_pop_dat(v)\n"
                                 "opd_tape_pop_dat(u)\n");
  // Pops hand the saved buffer over on both (a device store's to the
  // dat's device copy).
  EXPECT_EQ(f.lower(pop, true), f.lower(pop, false));
}

TEST(HostLowering, CheckpointForwardAndReverse) {
  Fixture f;
  ir::CheckpointStmt fwd(false);
  fwd.slot = 0;
  fwd.lo = i64(0);
  fwd.hi = i64(10);
  fwd.dats = {&f.u};
  fwd.vars = {1};
  EXPECT_EQ(f.lower(fwd, false),
            "%ckpt.lo[0] = expr:i64\n"
            "%ckpt.hi[0] = expr:i64\n"
            "opd_ckpt_begin(%ckpt.lo, %ckpt.hi - %ckpt.lo, i64 0, [u], i32 1, "
            "i32 2)\n"
            "for %ckpt.step in %ckpt.lo .. %ckpt.hi {\n"
            "  var0 = %ckpt.step\n"
            "  %ckpt.slot = opd_ckpt_forward(%ckpt.step)\n"
            "  if %ckpt.slot >= i32 0 {\n"
            "    %ckpt.vals[0] = bits(var1[0])\n"
            "    %ckpt.vals[1] = bits(var1[1])\n"
            "    opd_ckpt_save(%ckpt.slot, &%ckpt.vals)\n"
            "  }\n"
            "  if %ckpt.slot != i32 -2 {\n"
            "    run 0 statements\n"
            "  } else {\n"
            "    run 0 statements\n"
            "  }\n"
            "}\n");
  ir::CheckpointStmt rev(true);
  rev.slot = 0;
  rev.dats = {&f.u};
  rev.vars = {1};
  std::string cpu = f.lower(rev, false), cuda = f.lower(rev, true);
  EXPECT_NE(cpu.find("case 3:\n"
                     "  opd_ckpt_restore(%ckpt.slot, &%ckpt.vals)\n"
                     "  var1[0] = from_bits(%ckpt.vals[0])\n"
                     "  var1[1] = from_bits(%ckpt.vals[1])\n"),
            std::string::npos)
      << cpu;
  EXPECT_NE(cpu.find("}\nopd_ckpt_end()\n"), std::string::npos) << cpu;
  // A body whose first loop overwrites nothing: the same protocol (the
  // device store restores into the device copies).
  EXPECT_EQ(cuda, cpu);
}

// The CPU solves on the host copies (residency around the call); a target
// with HostTraits::deviceSolves gets its device runtime's call alone.
TEST(HostLowering, TridiagonalSolveOnTheHostOrTheDevice) {
  Fixture f;
  ir::Dat a, b;
  a.name = "a";
  b.name = "b";
  ir::SolveStmt s;
  s.dats = {&a, &b, &f.u, &f.v};
  s.along = 1;
  std::string cpu = f.lower(s, false);
  EXPECT_NE(cpu.find("need-host a\nneed-host b\nneed-host u\nneed-host v\n"
                     "opd_solve_tridiagonal("),
            std::string::npos)
      << cpu;
  EXPECT_NE(cpu.find("host-wrote v"), std::string::npos) << cpu;
  host::HostTraits device;
  device.deviceCopies = true;
  device.deviceSolves = true;
  host::Program p;
  ASSERT_TRUE(host::lowerHostStmt(f.fn, s, device, f.diags, p));
  std::string gpu = host::dump(p);
  EXPECT_EQ(gpu.find("opd::solve_tridiagonal("), 0u) << gpu;
  EXPECT_EQ(gpu.find("need-host"), std::string::npos) << gpu;
  EXPECT_EQ(gpu.find("host-wrote"), std::string::npos) << gpu;
}

TEST(HostLowering, UnexpandedStatementsNameTheirPass) {
  Fixture f;
  ir::SolveStmt cg;
  cg.solver = ir::SolverKind::CG;
  host::Program p;
  EXPECT_FALSE(host::lowerHostStmt(f.fn, cg, {}, f.diags, p));
  EXPECT_NE(f.messages.find("'solve cg' needs the 'expand-cg' pass"),
            std::string::npos)
      << f.messages;
}

//===----------------------------------------------------------------------===//
// Loops (codegen/common/LoopLowering.cpp)
//===----------------------------------------------------------------------===//

namespace {

/// Edges to nodes with an increment and two reductions (a sum and a max).
struct LoopFixture {
  ir::Program prog;
  ir::Set *nodes, *edges;
  ir::Map *pedge;
  ir::Dat *x, *res;
  ir::Function *k;
  std::unique_ptr<ir::ParLoopStmt> loop;

  LoopFixture() {
    using B = ir::IRBuilder;
    B b(prog);
    nodes = b.addSet("nodes", B::i32(100));
    edges = b.addSet("edges", B::i32(300));
    pedge = b.addMap("pedge", edges, nodes, 2);
    x = b.addDat("x", nodes, Type::scalarOf(ScalarKind::F64));
    res = b.addDat("res", nodes, Type::scalarOf(ScalarKind::F64));
    k = b.addKernel("flux");
    loop = B::loopOverSet(k, edges);
    loop->args.push_back(B::indirect(x, pedge, 0, ir::AccessMode::Read));
    loop->args.push_back(B::indirect(res, pedge, 1, ir::AccessMode::Inc));
    loop->args.push_back(
        B::reduction(0, Type::scalarOf(ScalarKind::F64), ir::AccessMode::Sum));
    loop->args.push_back(B::reduction(1, Type::arrayOf(ScalarKind::F64, 2),
                                      ir::AccessMode::Max));
  }

  std::string lower(const host::LoopTraits &t) {
    host::Program p;
    host::LoopProgram lp =
        host::lowerLoop(*loop, analyzeLoopAccess(*loop), t, p);
    EXPECT_EQ(lp.loop >= 0, true);
    EXPECT_EQ(lp.partials[0], -1);
    EXPECT_GE(lp.partials[2], 0);
    EXPECT_GE(lp.chunks, 0);
    return host::dump(p);
  }
};

host::LoopTraits traits(std::string name) {
  host::LoopTraits t;
  t.location = "f.opd:3:1";
  t.name = std::move(name);
  return t;
}

} // namespace

TEST(LoopLowering, PrepareThenPhaseThenReductionsInOrder) {
  LoopFixture f;
  EXPECT_EQ(
      f.lower(traits("flux")),
      "%args[0].0 = x\n"
      "%args[0].1 = pedge\n"
      "%args[1].0 = res\n"
      "%args[1].1 = pedge\n"
      "%l = opd_loop_prepare(&%loop_cache, \"flux\", edges, i32 4, &%args)\n"
      "opd_loop_set_location(%l, \"f.opd:3:1\")\n"
      "phase\n"
      "opd_reduce_local(&var0, i32 4, i32 6, i32 1)\n"
      "for %slot in i64 0 .. %chunks {\n"
      "  var0[0] += %partials[%slot * 1 + 0]\n"
      "}\n"
      "opd_reduce_global(&var0, i32 4, i32 6, i32 1)\n"
      "opd_reduce_local(&var1, i32 4, i32 5, i32 2)\n"
      "for %slot in i64 0 .. %chunks {\n"
      "  var1[0] max= %partials[%slot * 2 + 0]\n"
      "  var1[1] max= %partials[%slot * 2 + 1]\n"
      "}\n"
      "opd_reduce_global(&var1, i32 4, i32 5, i32 2)\n");
}

TEST(LoopLowering, ExactSumsRoundOnceAndMaxStaysOrdered) {
  LoopFixture f;
  host::LoopTraits t = traits("flux");
  t.reproSum = true;
  std::string d = f.lower(t);
  EXPECT_NE(d.find("phase\n"
                   "opd_reduce_sum_exact(&var0, i32 4, i32 1, %partials, "
                   "%chunks)\n"
                   "opd_reduce_local(&var1"),
            std::string::npos)
      << d;
}

TEST(LoopLowering, BackendsDifferOnlyInWhatTheTraitsSay) {
  // The CUDA backend names the strategy, asks the runtime whether the
  // increments are staged, and marks atomic increments; the rest of the
  // protocol is the CPU's.
  LoopFixture f;
  std::string cpu = f.lower(traits("flux"));
  host::LoopTraits t = traits("flux[colouring]");
  t.stagedName = "flux[colouring+shared]";
  t.stagingCall = "opd::staging";
  std::string cuda = f.lower(t);
  std::string staged = "%staged = opd::staging()\n"
                       "if %staged != i32 0 {\n"
                       "  %name[0] = \"flux[colouring+shared]\"\n"
                       "} else {\n"
                       "  %name[0] = \"flux[colouring]\"\n"
                       "}\n";
  size_t at = cuda.find(staged);
  ASSERT_NE(at, std::string::npos) << cuda;
  cuda.erase(at, staged.size());
  size_t name = cuda.find("%name");
  ASSERT_NE(name, std::string::npos);
  cuda.replace(name, 5, "\"flux\"");
  EXPECT_EQ(cuda, cpu);
}
