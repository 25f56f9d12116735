// CUDALoopHost.cpp - Parallel loops, CUDA backend: the host half.
// SPDX-License-Identifier: Apache-2.0
//
// The host code of a loop (CUDALoops.cpp describes the whole). Its
// protocol with the runtime (range, halo checks, exchanges, the opd_arg
// table, prepare, and the reductions combined in block order) is the
// host-program form's (codegen/common/LoopLowering.cpp); this file writes
// the phase in between: the context filled with device pointers, the
// index check, the launches of each segment, part and colour, and the
// partials copied to host memory. Split from CUDALoops.cpp, which keeps
// the device half.
#include "codegen/cuda/CUDALoopWriter.h"

#include "codegen/common/HostProgram.h"
#include "codegen/common/RuntimeMapping.h"
#include "ir/LoopNames.h"

#include "support/Assert.h"

namespace opdc::cuda_loop {

void LoopWriter::emitIndexCheck(int in) {
  std::vector<std::string> e;
  for (const Dat *dat : access.dats)
    e.push_back("opd_dat_stored_points(" + CUDAModule::handle(dat) + ") * " +
                std::to_string(dat->dim()));
  auto rows = [&](const Map *mp) {
    e.push_back("opd_set_local_size(" + CUDAModule::handle(mp->from) + ") * " +
                std::to_string(mp->arity));
  };
  for (const Map *mp : access.maps)
    rows(mp);
  for (const Map *mp : access.mapValues)
    rows(mp);
  if (loop.block) {
    for (unsigned dd = 0; dd < dims; ++dd) {
      e.push_back("c.lo[" + std::to_string(dd) + "]");
      e.push_back("c.hi[" + std::to_string(dd) + "]");
    }
  } else {
    e.push_back("opd_set_local_size(" + CUDAModule::handle(loop.set) + ")");
  }
  std::string list;
  for (const std::string &x : e)
    list += (list.empty() ? "" : ", ") + x;
  line(in, "const bool opd_i32 = opd::index_fits({" + list + "});");
}

void LoopWriter::emitContextFill(int in) {
  line(in, "ctx_" + name + " c{};");
  for (unsigned f = 0; f < access.dats.size(); ++f) {
    const Dat *dat = access.dats[f];
    std::string fs = std::to_string(f), h = CUDAModule::handle(dat);
    std::string t = datType(int(f));
    bool writes = writtenDats.count(dat) > 0;
    std::string dim = std::to_string(dat->dim());
    std::string bytes = std::to_string(scalarBytes(dat->scalar()));
    if (!dat->structured()) {
      std::string size = "opd_dat_stored_points(" + h + ")";
      line(in, "c.d" + fs + " = static_cast<" + t +
                   " *>(opd::device(opd_dat_data(" + h + "), " + size + ", " +
                   dim + ", " + bytes + ", " +
                   (m.options.soa ? "true" : "false") + ", " +
                   (writes ? "true" : "false") + "));");
      line(in, "c.ds" + fs + " = " + (m.options.soa ? size : "1") + ";");
      continue;
    }
    line(in, "{");
    line(in + 1, "int64_t opd_st[3] = {0, 0, 0};");
    line(in + 1, "char *const opd_o = static_cast<char *>(opd_dat_origin(" + h +
                     ", opd_st));");
    line(in + 1,
         "char *const opd_h = static_cast<char *>(opd_dat_data(" + h + "));");
    // All stored points: halos and the runtime's row padding.
    line(in + 1, "char *const opd_dv = static_cast<char *>(opd::device(opd_h, "
                 "opd_dat_stored_points(" +
                     h + "), " + dim + ", " + bytes + ", false, " +
                     (writes ? "true" : "false") + "));");
    line(in + 1, "c.d" + fs + " = reinterpret_cast<" + t +
                     " *>(opd_dv + (opd_o - opd_h));");
    for (unsigned k = 1; k < dims; ++k)
      line(in + 1, "c.dt" + fs + "_" + std::to_string(k) + " = opd_st[" +
                       std::to_string(k) + "] * " + dim + ";");
    line(in, "}");
  }
  auto rows = [&](const Map *mp) {
    return "opd_set_local_size(" + CUDAModule::handle(mp->from) + "), " +
           std::to_string(mp->arity);
  };
  for (unsigned f = 0; f < access.maps.size(); ++f)
    line(in, "c.m" + std::to_string(f) + " = opd::map_device(" +
                 CUDAModule::handle(access.maps[f]) + ", " +
                 rows(access.maps[f]) + ", " +
                 (writesMap(access.maps[f]) ? "true" : "false") + ");");
  // Global indices on several ranks (opd_map_values).
  for (unsigned f = 0; f < access.mapValues.size(); ++f)
    line(in, "c.mv" + std::to_string(f) + " = opd::map_values(" +
                 CUDAModule::handle(access.mapValues[f]) + ", " +
                 rows(access.mapValues[f]) + ");");
  if (globalIds())
    line(in, "c.gid = opd::global_ids(" + CUDAModule::handle(loop.set) + ");");
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    if (a.kind != ArgKind::GlobalRead)
      continue;
    std::string i = std::to_string(n);
    if (!largeGlobal(n)) {
      line(in, "c.g" + i + " = " + host.expr(*a.value) + ";");
      continue;
    }
    line(in, "{");
    line(in + 1, "const " + cudaValueType(loop.kernel->kernelParams[n].type) +
                     " opd_v = " + host.expr(*a.value) + ";");
    line(in + 1, "c.g" + i + " = static_cast<const " + elemType(n) +
                     " *>(opd::stage(" + i + ", opd_v.v, sizeof opd_v));");
    line(in, "}");
  }
  if (loop.block) {
    line(in, "for (int opd_d = 0; opd_d < 3; ++opd_d) {");
    line(in + 1, "c.lo[opd_d] = opd_lo[opd_d];");
    line(in + 1, "c.hi[opd_d] = opd_hi[opd_d];");
    line(in, "}");
  }
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    if (!gathered(n))
      continue;
    std::string i = std::to_string(n);
    line(in, "c.gr" + i + " = static_cast<" + elemType(n) +
                 " *>(opd::repro_buffer(" + i + ", size_t(opd_set_local_size(" +
                 CUDAModule::handle(loop.set) + ")) * " +
                 std::to_string(loop.args[n].bytes) + "));");
    line(in,
         "void *const opd_gh" + i + " = opd_loop_gather(opd_l, " + i + ");");
  }
  if (!hasReduction)
    return;
  // One allocation for every reduction's partials, each 8-byte aligned.
  line(in, "const int64_t opd_slots = " + std::to_string(PartialSlots) +
               " + opd_loop_chunks(opd_l);");
  std::string total = "0";
  std::vector<std::string> offsets(loop.args.size());
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    if (a.kind != ArgKind::Reduction)
      continue;
    offsets[n] = total;
    total += " + (opd_slots * " +
             std::to_string(a.dim * scalarBytes(a.scalar)) + " + 7) / 8 * 8";
  }
  line(in, "char *const opd_pb = static_cast<char *>(opd::partials(size_t(" +
               total + ")));");
  for (unsigned n = 0; n < loop.args.size(); ++n)
    if (loop.args[n].kind == ArgKind::Reduction)
      line(in, "c.r" + std::to_string(n) + " = reinterpret_cast<" +
                   elemType(n) + " *>(opd_pb + " + offsets[n] + ");");
  for (unsigned n = 0; n < loop.args.size(); ++n)
    if (exactSum(n))
      line(in, "c.x" + std::to_string(n) +
                   " = static_cast<unsigned long long *>(opd::repro_buffer(" +
                   std::to_string(n) + ", size_t(opd_slots) * " + xsumWords(n) +
                   " * 8));");
}

void LoopWriter::emitSetLaunches(int in) {
  std::string B = std::to_string(bs);
  std::string threads = sequential ? "1" : B;
  std::string cap = sequential     ? "1"
                    : hasReduction ? std::to_string(ReduceCap1D)
                                   : "0x7fffffff";
  auto rangeLaunch = [&](int ind, const std::string &b, const std::string &e) {
    line(ind, "if (" + e + " > " + b + ") {");
    line(ind + 1, "const unsigned opd_g = opd::grid_for(" + e + " - " + b +
                      ", " + threads + ", " + cap + ");");
    launch(ind + 1, "loop_" + name, "opd_g, " + threads,
           "c, " + b + ", " + e + ", opd_used");
    line(ind + 1, "opd_used += opd_g;");
    line(ind, "}");
  };
  // for each runtime segment or part VAR: get it, wait for the halos
  // before the first one that needs them.
  auto forEach = [&](const std::string &kind, const std::string &var) {
    line(in, "for (int32_t opd_k = 0; opd_k < opd_loop_" + kind +
                 "_count(opd_l); ++opd_k) {");
    line(in + 1, "opd_loop_" + kind + " " + var + ";");
    line(in + 1, "opd_loop_" + kind + "_get(opd_l, opd_k, &" + var + ");");
    line(in + 1, "if (!" + var + ".before_halos)");
    line(in + 2, "opd_loop_wait_halos(opd_l);");
  };
  forEach("segment", "opd_sg");
  rangeLaunch(in + 1, "opd_sg.begin", "opd_sg.end");
  line(in, "}");
  if (loop.block)
    return;
  forEach("part", "opd_pt");
  // The exec halo's partials (other ranks' elements, after the counted
  // parts) are left out of the combination: the owners count them.
  if (hasReduction)
    line(in + 1, "const int64_t opd_u0 = opd_used;");
  auto endPart = [&] {
    if (hasReduction) {
      line(in + 1, "if (!opd_pt.partials_count)");
      line(in + 2, "opd_used = opd_u0;");
    }
    line(in, "}");
  };
  if (!colouring) {
    rangeLaunch(in + 1, "opd_pt.first", "opd_pt.first + opd_pt.count");
    endPart();
    return;
  }
  // One per plan part: core, rest, exec halo, deeper layers (an extended
  // loop, OPD_PART_DEEP_HALO).
  line(in + 1, "static opd::ThreadColours opd_tc[4];");
  line(in + 1, "const opd::Written opd_w[] = {" + writtenList() + "};");
  line(in + 1, "opd::colour_threads(opd_tc[opd_k], opd_pt, opd_w, " +
                   std::to_string(incArgs.size()) + ");");
  if (staged) {
    line(in + 1, "static opd::StagePlan opd_sp[4];");
    line(in + 1, "const bool opd_st = opd::stage_targets(opd_sp[opd_k], " +
                     cudaStringLiteral(loop.kernel->name) +
                     ", opd_pt, opd_w, " + std::to_string(incArgs.size()) +
                     ", " + std::to_string(stageCapacity) + ");");
  }
  line(in + 1, "for (int32_t opd_c = 0; opd_c < opd_pt.ncolours; ++opd_c) {");
  line(in + 2, "const int64_t opd_b0 = opd_pt.colour_offsets[opd_c];");
  line(in + 2, "const int64_t opd_nb = opd_pt.colour_offsets[opd_c + 1] - "
               "opd_b0;");
  line(in + 2, "if (opd_nb == 0)");
  line(in + 3, "continue;");
  // 64-bit indices only: the 32-bit instance ran res_calc slower on an
  // H100 (docs/gpu.md).
  std::string colArgs = "c, opd_pt.first, opd_pt.count, opd_pt.block_size, "
                        "opd_tc[opd_k].blocks + opd_b0, "
                        "opd_tc[opd_k].colour, opd_tc[opd_k].ncolours, ";
  int ind = in + 2;
  if (staged) {
    line(in + 2, "if (opd_st)");
    line(in + 3, "loop_" + name + "_colstg<int64_t><<<unsigned(opd_nb), " + B +
                     ">>>(" + colArgs +
                     "opd_pt.nblocks, opd_sp[opd_k].offsets, "
                     "opd_sp[opd_k].targets, opd_sp[opd_k].local, "
                     "opd_used);");
    line(in + 2, "else");
    ind = in + 3;
  }
  line(ind, "loop_" + name + "_col<int64_t><<<unsigned(opd_nb), " + B + ">>>(" +
                colArgs + "opd_used);");
  line(in + 2, "opd_used += opd_nb;");
  line(in + 1, "}");
  endPart();
}

void LoopWriter::emitBlockLaunches(int in) {
  if (dims == 1)
    return emitSetLaunches(in);
  std::string B = std::to_string(bs), By = std::to_string(bs / 32);
  bool red = hasReduction;
  std::string capx = red ? std::to_string(dims == 2 ? ReduceCap2D : ReduceCap3D)
                         : "0x7fffffff";
  std::string capy =
      red ? std::to_string(dims == 2 ? ReduceCap2D : ReduceCap3D) : "65535";
  std::string capz = red ? std::to_string(ReduceCap3D) : "65535";
  line(in, "for (int32_t opd_k = 0; opd_k < opd_loop_segment_count(opd_l); "
           "++opd_k) {");
  line(in + 1, "opd_loop_segment opd_sg;");
  line(in + 1, "opd_loop_segment_get(opd_l, opd_k, &opd_sg);");
  line(in + 1, "if (!opd_sg.before_halos)");
  line(in + 2, "opd_loop_wait_halos(opd_l);");
  line(in + 1, "const int64_t opd_nx = c.hi[0] - c.lo[0];");
  std::string ny =
      dims == 2 ? "opd_sg.end - opd_sg.begin" : "c.hi[1] - c.lo[1]";
  line(in + 1, "const int64_t opd_ny = " + ny + ";");
  line(in + 1, std::string("const int64_t opd_nz = ") +
                   (dims == 3 ? "opd_sg.end - opd_sg.begin" : "1") + ";");
  line(in + 1, "if (opd_nx <= 0 || opd_ny <= 0 || opd_nz <= 0)");
  line(in + 2, "continue;");
  if (sequential) {
    line(in + 1, "const dim3 opd_b(1, 1, 1), opd_g(1, 1, 1);");
  } else {
    line(in + 1, "const dim3 opd_b(32, " + By + ", 1);");
    std::string rowsY =
        dims == 2 ? std::to_string(bs / 32 * RowsPerThread) : By;
    line(in + 1,
         "const dim3 opd_g(opd::grid_for(opd_nx, 32, " + capx +
             "), opd::grid_for(opd_ny, " + rowsY + ", " + capy + "), " +
             (dims == 3 ? "opd::grid_for(opd_nz, " +
                              std::to_string(PlanesPerBlock) + ", " + capz + ")"
                        : std::string("1")) +
             ");");
  }
  launch(in + 1, "loop_" + name, "opd_g, opd_b",
         "c, opd_sg.begin, opd_sg.end, opd_used");
  line(in + 1, "opd_used += int64_t(opd_g.x) * opd_g.y * opd_g.z;");
  line(in, "}");
}

// The reductions' partials (exact sums: their accumulators), one row per
// block used, copied to host memory for the combination (host::lowerLoop).
void LoopWriter::emitPartialsToHost(
    int in, const CUDAFunctionWriter::ProgramPrinter &pr,
    const host::LoopProgram &lp) {
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    if (lp.partials[n] < 0)
      continue;
    const AccessDescriptor &a = loop.args[n];
    std::string i = std::to_string(n);
    bool exact = exactSum(n);
    std::string v = exact ? "opd_x" + i : "opd_h" + i;
    std::string t = exact ? "int64_t" : elemType(n);
    std::string count = exact ? "size_t(opd_used) * " + xsumWords(n)
                              : "size_t(opd_used) * " + std::to_string(a.dim);
    line(in, "std::vector<" + t + "> " + v + "(" + count + ");");
    line(in, "if (opd_used)");
    line(in + 1, "opd::check(cudaMemcpy(" + v + ".data(), c." +
                     (exact ? "x" : "r") + i + ", " + v + ".size() * sizeof(" +
                     t + "), cudaMemcpyDeviceToHost), \"reading " +
                     (exact ? "exact sums" : "partials") + "\");");
    line(in, pr.local(lp.partials[n]) + " = " + v + ".data();");
  }
  if (lp.chunks >= 0)
    line(in, pr.local(lp.chunks) + " = opd_used;");
}

void LoopWriter::emitHost(int in) {
  hostOpen(in);
  if (loop.block)
    emitBlockLaunches(in + 1);
  else
    emitSetLaunches(in + 1);
  hostClose(in);
}

void LoopWriter::hostOpen(int in) {
  line(in, "{ // loop " + loop.kernel->name + " (" + strategy() +
               "), device code: loop_" + name);
  int i2 = in + 1;
  // Ranges (opd_lo, opd_hi: three dimensions for the launches), halo
  // checks, the chain's exchanges, the argument table and the prepare: the
  // host-program form's (codegen/common/LoopLowering.cpp).
  host::LoopTraits traits;
  traits.location = m.location(loop.range);
  // The profile's row names the strategy of loops with increments.
  traits.name = ir::userLoopName(loop.kernel->name);
  if (access.race == RaceClass::IncStrips)
    traits.name +=
        std::string("[") + cudaIndirectName(m.options.indirect) + "]";
  if (staged) {
    traits.stagedName = traits.name;
    traits.stagedName.insert(traits.stagedName.size() - 1, "+shared");
    traits.stagingCall = "opd::staging";
  }
  traits.atomicIncrements = access.race == RaceClass::IncStrips && !colouring;
  traits.reproSum = m.options.reproSum;
  hostProgram = std::make_unique<host::Program>();
  hostLoop = host::lowerLoop(loop, access, traits, *hostProgram);
  printer = std::make_unique<CUDAFunctionWriter::ProgramPrinter>(
      this->host, *hostProgram, i2);
  bool phase = printer->printToPhase(i2);
  OPDC_ASSERT(phase, "a loop's program without its phase");
  emitContextFill(i2);
  emitIndexCheck(i2);
  if (countsBlocks)
    line(i2, "int64_t opd_used = 0;");
  line(i2, "opd_loop_begin(opd_l);");
}

void LoopWriter::hostClose(int in, bool brace) {
  int i2 = in + 1;
  line(i2, "opd_loop_wait_halos(opd_l);");
  line(i2, "opd::finish_loop();");
  for (unsigned n = 0; n < loop.args.size(); ++n)
    if (gathered(n))
      line(i2, "opd::gather_to_host(opd_l, opd_gh" + std::to_string(n) +
                   ", c.gr" + std::to_string(n) + ", " +
                   std::to_string(loop.args[n].bytes) + ", " +
                   CUDAModule::handle(loop.args[n].dat) + ");");
  // --check-fp scans host memory at opd_loop_end.
  std::string fpDats;
  std::set<const Dat *> listed;
  for (const ParLoopStmt *l : fpLoops)
    for (const AccessDescriptor &a : l->args)
      if (a.usesDat() && modeWrites(a.mode) &&
          (a.dat->scalar() == ScalarKind::F32 ||
           a.dat->scalar() == ScalarKind::F64) &&
          listed.insert(a.dat).second)
        fpDats += (fpDats.empty() ? "" : ", ") + CUDAModule::handle(a.dat);
  if (!fpDats.empty())
    line(i2, "opd::check_fp_written({" + fpDats + "});");
  // The runtime checks and plans maps on the host.
  for (const Map *mp : writtenMaps)
    line(i2, "opd::map_to_host(" + CUDAModule::handle(mp) + ");");
  line(i2, "opd_loop_end(opd_l);");
  // The ordered increments went into the targets' host copies.
  std::set<const Dat *> gatheredDats;
  for (unsigned n = 0; n < loop.args.size(); ++n)
    if (gathered(n) && gatheredDats.insert(loop.args[n].dat).second)
      line(i2, "opd::dat_host_changed(" + CUDAModule::handle(loop.args[n].dat) +
                   ");");
  if (!hasReduction && countsBlocks)
    line(i2, "(void)opd_used;");
  emitPartialsToHost(i2, *printer, hostLoop);
  printer->printToPhase(i2);
  printer.reset();
  if (brace)
    line(in, "}");
}

} // namespace opdc::cuda_loop
