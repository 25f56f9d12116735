// Target.cpp - TargetMachine, optimisation pipeline and object emission.
// SPDX-License-Identifier: Apache-2.0
//
// Without a target profile, compiles for the machine opdc runs on (like
// -march=native): the host's triple, CPU and features, so the vectoriser
// uses the widest vectors the host has; -march=CPU names another CPU of the
// host's architecture. With a profile (--target, resolved by the driver),
// the triple, CPU name and features come from it; every target LLVM was
// built with is registered, so objects and LLVM IR can be made for another
// architecture (linking them needs that machine).
//
// Floating point: the TargetMachine never fuses a multiply and an add
// (FPOpFusion::Strict) unless -ffp-contract=fast asked for it, and nothing
// sets fast-math flags, so the optimiser keeps every rounding step of the
// source. OP2's published Airfoil residuals are reproduced digit for digit
// only that way.
//
// Optimisation is the new pass manager's default per-module pipeline at the
// requested level (O0 still runs the always-inliner, which kernels and fns
// rely on), with loop and SLP vectorisation from O2 up, as clang does.
// -fveclib=libmvec lets the vectoriser call glibc's vector math functions
// (_ZGVdN4v_sin, ...) for math calls; they differ from scalar libm in the
// last bits (bench/libmvec/results.txt), so it is opt-in.
//
// Host code (main and procs: runtime calls, their argument tables, range
// checks and scalar arithmetic) is most of a derivative program's IR but
// none of its run time. It gets a light function pipeline (SROA, early CSE,
// instcombine, simplifycfg) and is then marked optnone, so the default
// pipeline passes over it and the code generator selects its instructions
// with FastISel (its register allocator is still the module level's:
// compiling host code at level None was measured slower to run, decision
// 0320); kernels inlined into loop bodies get the full pipeline as before.
// Always-inline fns are still inlined into host code.
// docs/decisions/0311 has the measurements.
//
// Code generation (instruction selection, register allocation, the
// codegen IR passes such as loop strength reduction) costs more than the
// optimisation pipeline for opdc's programs and works one function at a
// time, so a program's module is split (llvm::SplitModule, partitions of
// about equal size; internal symbols become hidden externals so that the
// parts can call each other) and the parts are compiled to objects on as
// many threads as the machine has cores (emitObjectFiles). Each function
// gets the same machine code either way; only its placement in the
// program differs. Each part goes through bitcode into its own
// LLVMContext: a context is not thread-safe.
#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LLVMCodeGen.h"
#include "codegen/llvm/StreamTwins.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/ConstantMerge.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <cstdlib>
#include <mutex>
#include <thread>

namespace opdc {

/// CPUs on which -fgathers=auto reads through maps with scalar loads: those
/// whose hardware gathers measured slower than scalar loads in opdc's loops
/// (bench/airfoil/levers.sh). Zen 5 (znver5) has not been measured.
static bool slowGathers(llvm::StringRef cpu) { return cpu == "znver4"; }

std::unique_ptr<llvm::TargetMachine>
createCPUTargetMachine(const CPUCodeGenOptions &options, std::string &error) {
  static std::once_flag initOnce;
  std::call_once(initOnce, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });

  bool host = options.triple.empty();
  std::string triple = host ? llvm::sys::getProcessTriple() : options.triple;
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for " +
            (host ? "this machine (" + triple + ")" : "'" + triple + "'") +
            ": " + lookupError;
    return nullptr;
  }

  if (options.vecLibMvec &&
      llvm::Triple(triple).getArch() != llvm::Triple::x86_64) {
    error = "-fveclib=libmvec needs an x86-64 target (glibc's libmvec); " +
            triple + " is not one";
    return nullptr;
  }

  std::string cpu = options.cpu, features = options.features;
  if (cpu == "native" && !host &&
      llvm::Triple(triple).getArch() !=
          llvm::Triple(llvm::sys::getProcessTriple()).getArch()) {
    error = "-march=native means this machine's CPU, which cannot run " +
            triple + " code; name a CPU of that architecture";
    return nullptr;
  }
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature.getKey(), feature.getValue());
    features = f.getString();
  } else {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!sti || !sti->isCPUStringValid(cpu)) {
      if (host)
        error = "unknown CPU '" + cpu + "' for -march on " + triple +
                "; use 'native' or a CPU name LLVM knows (llc -mcpu=help)";
      else
        error = "unknown CPU '" + cpu + "' for " + triple +
                " (from -march or the target profile's cpu.name); use a "
                "CPU name LLVM knows (llc -mtriple=" +
                triple + " -mcpu=help)";
      return nullptr;
    }
  }

  // Reads through maps in vectorised loops: LLVM gathers with AVX-512 on
  // every CPU that has it, but on some CPUs (znver4) a gather of 8 doubles
  // is slower than 8 scalar loads put into a vector (docs/performance.md,
  // "Gathers on Zen 4"). The loaded values are the same, so the bits are.
  if (llvm::Triple(triple).getArch() == llvm::Triple::x86_64 &&
      (options.gathers == "scalar" ||
       (options.gathers == "auto" && slowGathers(cpu))))
    features += std::string(features.empty() ? "" : ",") + "+prefer-no-gather";

  llvm::TargetOptions to;
  to.AllowFPOpFusion =
      options.fpContract ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive;
  switch (options.optLevel) {
  case 0:
    level = llvm::CodeGenOptLevel::None;
    break;
  case 1:
    level = llvm::CodeGenOptLevel::Less;
    break;
  case 2:
    level = llvm::CodeGenOptLevel::Default;
    break;
  default:
    break;
  }
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, to, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    error =
        "LLVM cannot create a target machine for " + triple + " (" + cpu + ")";
  return tm;
}

namespace {
// See the header: host functions get a light pipeline, then optnone.
void lightenHostCode(llvm::Module &module, llvm::FunctionAnalysisManager &fam) {
  llvm::FunctionPassManager light;
  light.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  light.addPass(llvm::EarlyCSEPass());
  light.addPass(llvm::InstCombinePass());
  light.addPass(llvm::SimplifyCFGPass());
  for (llvm::Function &f : module) {
    if (f.isDeclaration() || !f.hasFnAttribute(HostFnAttr))
      continue;
    light.run(f, fam);
    fam.invalidate(f, llvm::PreservedAnalyses::none());
    f.addFnAttr(llvm::Attribute::OptimizeNone);
    f.addFnAttr(llvm::Attribute::NoInline);
  }
}
} // namespace

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel, bool libmvec) {
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  pto.LoopUnrolling = optLevel >= 1;

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The standard instrumentations make the pass managers skip optnone
  // functions (host code, see the header); without them the new pass
  // manager runs every pass on them.
  llvm::PassInstrumentationCallbacks pic;
  llvm::StandardInstrumentations si(module.getContext(),
                                    /*DebugLogging=*/false);
  si.registerCallbacks(pic, &mam);
  llvm::PassBuilder pb(&tm, pto, std::nullopt, &pic);
  llvm::Triple triple(module.getTargetTriple());
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (libmvec) {
    tlii.addVectorizableFunctionsFromVecLib(
        llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  }
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  switch (optLevel) {
  case 0:
    level = llvm::OptimizationLevel::O0;
    break;
  case 1:
    level = llvm::OptimizationLevel::O1;
    break;
  case 2:
    level = llvm::OptimizationLevel::O2;
    break;
  default:
    break;
  }
  // Identical constant tables (a kernel's array literals, emitted per
  // copy of the kernel) first, so that the kernels reading them compare
  // equal in mergeIdenticalFunctions.
  llvm::ConstantMergePass().run(module, mam);
  mergeIdenticalFunctions(module);
  std::vector<StreamTwin> twins;
  if (optLevel > 0) {
    lightenHostCode(module, fam);
    twins = deferStreamingTwins(module);
  }
  llvm::ModulePassManager mpm = optLevel == 0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
  restoreStreamingTwins(twins);
  markStreamingStores(module);
}

void markStreamingStores(llvm::Module &module) {
  // After vectorisation: the vectoriser refuses to widen a store already
  // marked non-temporal unless it can prove an aligned vector form of it,
  // so the mark goes on the widened stores. Only on vector stores aligned
  // to their size (the aligned rows of LoopRows.cpp's emitAlignedRow, whose
  // alignment the pipeline propagated): x86 emits an under-aligned one as
  // MOVNTI/MOVNTSD pieces, and scalar ones (the peeled prologue, the
  // remainder) would stream partial lines; both measured slower than plain
  // stores (docs/performance.md).
  const llvm::DataLayout &layout = module.getDataLayout();
  auto *one =
      llvm::MDNode::get(module.getContext(),
                        {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                            llvm::Type::getInt32Ty(module.getContext()), 1))});
  for (llvm::Function &f : module) {
    if (!f.hasFnAttribute(StreamFnAttr))
      continue;
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &inst : bb) {
        auto *st = llvm::dyn_cast<llvm::StoreInst>(&inst);
        llvm::MDNode *scopes =
            st ? st->getMetadata(llvm::LLVMContext::MD_alias_scope) : nullptr;
        if (!scopes)
          continue;
        llvm::Type *t = st->getValueOperand()->getType();
        llvm::TypeSize size = layout.getTypeStoreSize(t);
        if (!t->isVectorTy() || size.isScalable() ||
            st->getAlign().value() < size.getFixedValue())
          continue;
        for (const llvm::MDOperand &op : scopes->operands()) {
          auto *scope = llvm::dyn_cast<llvm::MDNode>(op);
          auto *name =
              scope && scope->getNumOperands() > 2
                  ? llvm::dyn_cast<llvm::MDString>(scope->getOperand(2))
                  : nullptr;
          if (name && name->getString().starts_with(StreamScopePrefix)) {
            st->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
            break;
          }
        }
      }
  }
}

bool emitObjectFile(llvm::Module &module, llvm::TargetMachine &tm,
                    llvm::raw_pwrite_stream &out, std::string &error) {
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out, nullptr,
                             llvm::CodeGenFileType::ObjectFile)) {
    error = "LLVM cannot emit object files for " + tm.getTargetTriple().str();
    return false;
  }
  pm.run(module);
  out.flush();
  return true;
}

unsigned codeGenThreads(const llvm::Module &module) {
  unsigned threads = std::thread::hardware_concurrency();
  if (const char *env = std::getenv("OPDC_CODEGEN_THREADS")) {
    char *end = nullptr;
    unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0)
      threads = static_cast<unsigned>(n);
  }
  // Small programs: splitting and the bitcode round trip cost more than
  // they save.
  unsigned defined = 0;
  for (const llvm::Function &f : module)
    defined += !f.isDeclaration();
  constexpr unsigned FunctionsPerThread = 8;
  threads = std::min(threads, defined / FunctionsPerThread);
  return std::clamp(threads, 1u, 16u);
}

bool emitObjectFiles(llvm::Module &module, const CPUCodeGenOptions &options,
                     const std::vector<std::string> &paths,
                     std::string &error) {
  // Split into bitcode buffers, one per part.
  std::vector<llvm::SmallString<0>> parts;
  llvm::SplitModule(
      module, static_cast<unsigned>(paths.size()),
      [&](std::unique_ptr<llvm::Module> part) {
        parts.emplace_back();
        llvm::raw_svector_ostream os(parts.back());
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false);
  if (parts.size() > paths.size()) {
    error = "internal compiler error: the module split into more parts "
            "than asked for";
    return false;
  }
  std::vector<std::string> errors(parts.size());
  auto emitPart = [&](size_t i) {
    llvm::LLVMContext context;
    context.setDiscardValueNames(true);
    auto part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(llvm::StringRef(parts[i].data(), parts[i].size()),
                              "part"),
        context);
    if (!part) {
      errors[i] = "internal compiler error: a split module does not read "
                  "back: " +
                  llvm::toString(part.takeError());
      return;
    }
    auto tm = createCPUTargetMachine(options, errors[i]);
    if (!tm)
      return;
    std::error_code ec;
    llvm::raw_fd_ostream os(paths[i], ec, llvm::sys::fs::OF_None);
    if (ec) {
      errors[i] = "cannot open output file '" + paths[i] + "': " + ec.message();
      return;
    }
    if (!emitObjectFile(**part, *tm, os, errors[i]))
      return;
    os.close();
    if (os.has_error()) {
      errors[i] = "cannot write output file '" + paths[i] +
                  "': " + os.error().message();
      os.clear_error();
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < parts.size(); ++i)
    threads.emplace_back(emitPart, i);
  if (!parts.empty())
    emitPart(0);
  for (std::thread &t : threads)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty()) {
      error = e;
      return false;
    }
  // SplitModule makes no empty parts; name an empty object for each
  // missing one so that every path exists.
  for (size_t i = parts.size(); i < paths.size(); ++i) {
    llvm::Module empty("empty", module.getContext());
    empty.setTargetTriple(module.getTargetTriple());
    empty.setDataLayout(module.getDataLayout());
    auto tm = createCPUTargetMachine(options, error);
    if (!tm)
      return false;
    std::error_code ec;
    llvm::raw_fd_ostream os(paths[i], ec, llvm::sys::fs::OF_None);
    if (ec || !emitObjectFile(empty, *tm, os, error)) {
      if (ec)
        error = "cannot open output file '" + paths[i] + "': " + ec.message();
      return false;
    }
  }
  return true;
}

} // namespace opdc
