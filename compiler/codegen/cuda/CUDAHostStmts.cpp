// CUDAHostStmts.cpp - Host-only statements of an IR function as C++.
// SPDX-License-Identifier: Apache-2.0
//
// The statements only host code holds (loops, swaps, dat I/O, tapes,
// checkpoints, solves, prints), written as calls into the runtime (opd_rt.h)
// and lib/cuda/opd_cuda.cuh. Split from CUDAFunctions.cpp, which keeps the
// walk every function shares (statements and expressions).
#include "codegen/cuda/CUDAEmitter.h"

#include "support/Assert.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using llvm::cast;
using llvm::dyn_cast;
using namespace ir;

void CUDAFunctionWriter::hostStmt(const ir::Stmt &s, int indent) {
  switch (s.kind) {
  case StmtKind::ParLoop:
    return emitCUDALoop(*this, cast<ParLoopStmt>(s), indent);
  case StmtKind::Swap: {
    // The device copies are keyed by the host storage, so they follow it.
    const auto &w = cast<SwapStmt>(s);
    line(indent, "opd_dat_swap(" + CUDAModule::handle(w.a) + ", " +
                     CUDAModule::handle(w.b) + ");");
    return;
  }
  case StmtKind::Write:
  case StmtKind::Read: {
    const auto &io = cast<DatIOStmt>(s);
    std::string list;
    for (const Dat *d : io.dats)
      list += (list.empty() ? "" : ", ") + CUDAModule::handle(d);
    line(indent, "{");
    line(indent + 1, "opd_dat *const opd_io[] = {" + list + "};");
    if (!io.isRead())
      for (const Dat *d : io.dats)
        line(indent + 1, "opd::dat_to_host(" + CUDAModule::handle(d) + ");");
    if (!io.ranges.empty()) {
      auto [lo, hi] = rangeArrays(io.ranges, indent + 1);
      line(indent + 1, "opd_dat_write_range(opd_io, " +
                           std::to_string(io.dats.size()) + ", " +
                           expr(*io.file) + ", " + lo + ", " + hi + ", " +
                           std::to_string(io.ranges.size()) + ");");
    } else {
      line(indent + 1,
           std::string(io.isRead() ? "opd_dat_read" : "opd_dat_write") +
               "(opd_io, " + std::to_string(io.dats.size()) + ", " +
               expr(*io.file) + ");");
    }
    if (io.isRead())
      for (const Dat *d : io.dats)
        line(indent + 1,
             "opd::dat_host_changed(" + CUDAModule::handle(d) + ");");
    line(indent, "}");
    return;
  }
  case StmtKind::Print:
    return print(cast<PrintStmt>(s), indent);
  case StmtKind::Solve:
    return solve(cast<SolveStmt>(s), indent);
  case StmtKind::Tape:
    return tape(cast<TapeStmt>(s), indent);
  case StmtKind::Checkpoint:
    return checkpoint(cast<CheckpointStmt>(s), indent);
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
    m.diags.error(s.range,
                  std::string("'") +
                      (s.kind == StmtKind::Adjoint ? "adjoint" : "tangent") +
                      "' is not supported by the CUDA backend yet");
    m.failed = true;
    return;
  default:
    OPDC_UNREACHABLE("unknown host statement");
  }
}

// The adjoint's tape and snapshots live in host memory (lib/exec/Adjoint.cpp):
// a dat's host copy is brought up to date before it is saved, and its device
// copy is stale after it is restored. Host scalars travel as 64 bits.
unsigned CUDAFunctionWriter::words(unsigned slot) const {
  const Type &t = fn.vars[slot].type;
  return t.isArray() ? unsigned(t.length) : 1;
}

unsigned CUDAFunctionWriter::words(const std::vector<unsigned> &vars) const {
  unsigned n = 0;
  for (unsigned v : vars)
    n += words(v);
  return n;
}

// Element i of a host variable (a scalar's only one) as 64 bits.
std::string CUDAFunctionWriter::bits(unsigned slot, unsigned i) {
  const Type &t = fn.vars[slot].type;
  std::string v = var(slot), et = cudaScalarType(t.scalar);
  if (t.isArray())
    v += "[" + std::to_string(i) + "]";
  return "opd::to_bits<" + et + ">(" + v + ")";
}

void CUDAFunctionWriter::setBits(unsigned slot, unsigned i,
                                 const std::string &from, int indent) {
  const Type &t = fn.vars[slot].type;
  std::string v = var(slot);
  if (t.isArray())
    v += "[" + std::to_string(i) + "]";
  line(indent, v + " = opd::from_bits<" + cudaScalarType(t.scalar) + ">(" +
                   from + ");");
}

void CUDAFunctionWriter::tape(const ir::TapeStmt &s, int indent) {
  if (s.push) {
    for (const Dat *d : s.dats) {
      line(indent, "opd::dat_to_host(" + CUDAModule::handle(d) + ");");
      line(indent, "opd_tape_push_dat(" + CUDAModule::handle(d) + ");");
    }
    for (unsigned v : s.vars)
      for (unsigned i = 0; i < words(v); ++i)
        line(indent, "opd_tape_push_value(" + bits(v, i) + ");");
    return;
  }
  for (auto v = s.vars.rbegin(); v != s.vars.rend(); ++v)
    for (unsigned i = words(*v); i-- > 0;)
      setBits(*v, i, "opd_tape_pop_value()", indent);
  for (auto d = s.dats.rbegin(); d != s.dats.rend(); ++d) {
    // By copy: the device copy is keyed by the host storage's address.
    line(indent, "opd_tape_pop_dat_copy(" + CUDAModule::handle(*d) + ");");
    line(indent, "opd::dat_host_changed(" + CUDAModule::handle(*d) + ");");
  }
}

void CUDAFunctionWriter::checkpoint(const ir::CheckpointStmt &s, int indent) {
  std::string n = std::to_string(temps++);
  std::string dats = "opd_ck_dats" + n, vals = "opd_ck_vals" + n;
  std::string list;
  for (const Dat *d : s.dats)
    list += (list.empty() ? "" : ", ") + CUDAModule::handle(d);
  std::string stepType = cudaValueType(fn.vars[s.slot].type);
  line(indent, "{");
  int in = indent + 1;
  line(in, "uint64_t " + vals + "[" +
               std::to_string(std::max<size_t>(words(s.vars), 1)) + "] = {};");
  auto save = [&](const std::string &slot, int ind) {
    for (const Dat *d : s.dats)
      line(ind, "opd::dat_to_host(" + CUDAModule::handle(d) + ");");
    unsigned w = 0;
    for (unsigned v : s.vars)
      for (unsigned i = 0; i < words(v); ++i)
        line(ind, vals + "[" + std::to_string(w++) + "] = " + bits(v, i) + ";");
    line(ind, "opd_ckpt_save(" + slot + ", " + vals + ");");
  };
  if (!s.reverse) {
    line(in, "opd_dat *const " + dats + "[] = {" +
                 (list.empty() ? "nullptr" : list) + "};");
    line(in, "const int64_t opd_lo = int64_t(" + expr(*s.lo) + ");");
    line(in, "const int64_t opd_hi = int64_t(" + expr(*s.hi) + ");");
    line(in, "opd_ckpt_begin(opd_lo, opd_hi - opd_lo, " +
                 (s.snapshots ? "int64_t(" + expr(*s.snapshots) + ")"
                              : std::string("0")) +
                 ", " + dats + ", " + std::to_string(s.dats.size()) + ", " +
                 std::to_string(words(s.vars)) + ");");
    line(in, "for (int64_t opd_k = opd_lo; opd_k < opd_hi; ++opd_k) {");
    line(in + 1, var(s.slot) + " = " + stepType + "(opd_k);");
    line(in + 1, "const int32_t opd_slot = opd_ckpt_forward(opd_k);");
    line(in + 1, "if (opd_slot >= 0) {");
    save("opd_slot", in + 2);
    line(in + 1, "}");
    line(in + 1, "if (opd_slot == OPD_CKPT_TAPE) {");
    body(s.tapedBody, in + 2);
    line(in + 1, "} else {");
    body(s.body, in + 2);
    line(in + 1, "}");
    line(in, "}");
    line(indent, "}");
    return;
  }
  line(in, "int64_t opd_step = 0;");
  line(in, "int32_t opd_slot = 0;");
  line(in, "for (;;) {");
  line(in + 1, "const int32_t opd_act = opd_ckpt_next(&opd_step, &opd_slot);");
  line(in + 1, "if (opd_act == OPD_CKPT_DONE) break;");
  line(in + 1, "if (opd_act == OPD_CKPT_ADVANCE) {");
  line(in + 2, var(s.slot) + " = " + stepType + "(opd_step);");
  body(s.body, in + 2);
  line(in + 1, "} else if (opd_act == OPD_CKPT_SAVE) {");
  save("opd_slot", in + 2);
  line(in + 1, "} else if (opd_act == OPD_CKPT_RESTORE) {");
  // By copy: the device copies are keyed by the host storage's address.
  line(in + 2, "opd_ckpt_restore_copy(opd_slot, " + vals + ");");
  for (const Dat *d : s.dats)
    line(in + 2, "opd::dat_host_changed(" + CUDAModule::handle(d) + ");");
  unsigned w = 0;
  for (unsigned v : s.vars)
    for (unsigned i = 0; i < words(v); ++i)
      setBits(v, i, vals + "[" + std::to_string(w++) + "]", in + 2);
  line(in + 1, "} else if (opd_act == OPD_CKPT_REVERSE_TAPED) {");
  line(in + 2, var(s.slot) + " = " + stepType + "(opd_step);");
  body(s.tapedReverseBody, in + 2);
  line(in + 1, "} else {");
  line(in + 2, var(s.slot) + " = " + stepType + "(opd_step);");
  body(s.reverseBody, in + 2);
  line(in + 1, "}");
  line(in, "}");
  line(in, "opd_ckpt_end();");
  line(indent, "}");
}

void CUDAFunctionWriter::solve(const ir::SolveStmt &s, int indent) {
  OPDC_ASSERT(s.solver == SolverKind::Tridiagonal && s.dats.size() == 4,
              "a solve other than tridiagonal(a, b, c, d)");
  // The runtime solves on the host: its copies first, d's device copy is
  // stale after.
  line(indent, "{");
  for (const Dat *d : s.dats)
    line(indent + 1, "opd::dat_to_host(" + CUDAModule::handle(d) + ");");
  auto [lo, hi] = rangeArrays(s.ranges, indent + 1);
  std::string args;
  for (const Dat *d : s.dats)
    args += CUDAModule::handle(d) + ", ";
  line(indent + 1, "opd_solve_tridiagonal(" + args + std::to_string(s.along) +
                       ", " + lo + ", " + hi + ");");
  line(indent + 1,
       "opd::dat_host_changed(" + CUDAModule::handle(s.dats[3]) + ");");
  line(indent, "}");
}

// Declares the ranges' bounds as arrays of int64_t in the current scope;
// returns their names, or "nullptr" for none.
std::pair<std::string, std::string>
CUDAFunctionWriter::rangeArrays(const std::vector<ir::LoopRange> &ranges,
                                int indent) {
  if (ranges.empty())
    return {"nullptr", "nullptr"};
  std::string l, h;
  for (const auto &r : ranges) {
    l += (l.empty() ? "" : ", ") + std::string("int64_t(") + expr(*r.lo) + ")";
    h += (h.empty() ? "" : ", ") + std::string("int64_t(") + expr(*r.hi) + ")";
  }
  line(indent, "const int64_t opd_lo[] = {" + l + "};");
  line(indent, "const int64_t opd_hi[] = {" + h + "};");
  return {"opd_lo", "opd_hi"};
}

void CUDAFunctionWriter::print(const ir::PrintStmt &s, int indent) {
  if (s.formatted) {
    // As the CPU backend (HostCodeGen.cpp, emitPrintf): `fail` ends the
    // program, warnings go to stderr.
    const char *fn = s.to == PrintTo::Error     ? "opd_rt_fail_allf("
                     : s.to == PrintTo::Warning ? "opd_rt_warnf("
                                                : "opd_rt_printf(";
    std::string call = fn + cudaStringLiteral(s.format);
    for (const auto &a : s.args) {
      std::string v = expr(*a);
      if (a->type.isBool())
        v = "int(" + v + ")";
      else if (a->type.isScalar() && a->type.scalar == ScalarKind::F32)
        v = "double(" + v + ")";
      call += ", " + v;
    }
    line(indent, call + ");");
    return;
  }
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Type &t = s.args[i]->type;
    std::string v = expr(*s.args[i]);
    std::string first = i == 0 ? "1" : "0";
    if (t.isString()) {
      line(indent, "opd_rt_print_str(" + v + ", " + first + ");");
      continue;
    }
    switch (t.scalar) {
    case ScalarKind::Bool:
      line(indent, "opd_rt_print_bool(int(" + v + "), " + first + ");");
      break;
    case ScalarKind::I32:
    case ScalarKind::I64:
      line(indent, "opd_rt_print_i64(int64_t(" + v + "), " + first + ");");
      break;
    case ScalarKind::F32:
      line(indent, "opd_rt_print_f32(" + v + ", " + first + ");");
      break;
    case ScalarKind::F64:
      line(indent, "opd_rt_print_f64(" + v + ", " + first + ");");
      break;
    }
  }
  line(indent, "opd_rt_print_end();");
}

} // namespace opdc
