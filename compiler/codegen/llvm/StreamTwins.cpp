// StreamTwins.cpp - A body's streaming-store variant optimised once, with it.
// SPDX-License-Identifier: Apache-2.0
//
// A loop whose data may exceed the last-level cache gets two bodies
// (LoopHost.cpp): BODY, and BODY.nt, a copy of BODY with a fence before
// each return, whose vector stores to streaming arguments become
// non-temporal after optimisation (markStreamingStores). Both went through
// the whole pipeline, which reached the same loops twice: about a quarter
// of the body code of CloverLeaf. Instead, before the pipeline, each .nt
// variant that is exactly its twin plus those fences becomes a
// declaration (so the pipeline neither optimises it nor assumes anything
// about it, and the host's choice between the two stays); after the
// pipeline it is made again from the optimised twin, with the same
// fences, and markStreamingStores marks its stores as before. A fence
// before the return orders the stores that precede it and changes nothing
// the optimiser does to the loops before it, so the variant's loops are
// the twin's loops, as before. A .nt variant that is not such a copy (a
// change in LoopHost.cpp) is optimised on its own, as before.
#include "codegen/llvm/StreamTwins.h"

#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LLVMCodeGen.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/FunctionComparator.h"

namespace opdc {

namespace {

constexpr llvm::StringLiteral NtSuffix = ".nt";

/// The fence LoopHost.cpp puts before each return of a .nt variant.
void addFences(llvm::Function &f) {
  for (llvm::BasicBlock &bb : f)
    if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
      new llvm::FenceInst(f.getContext(),
                          llvm::AtomicOrdering::SequentiallyConsistent,
                          llvm::SyncScope::System, ret->getIterator());
}

/// Whether \p nt is \p twin with addFences applied: the same instructions
/// (FunctionComparator) and attributes apart from StreamFnAttr, and the
/// same metadata nodes (a CloneFunction shares them).
bool isFencedCopy(const llvm::Function &nt, llvm::Function &twin) {
  if (nt.getFunctionType() != twin.getFunctionType() ||
      nt.getMetadata(LoopMetadataKind) != twin.getMetadata(LoopMetadataKind))
    return false;
  llvm::AttributeList a =
      nt.getAttributes().removeFnAttribute(nt.getContext(), StreamFnAttr);
  if (a != twin.getAttributes())
    return false;
  llvm::ValueToValueMapTy vmap;
  llvm::Function *copy = llvm::CloneFunction(&twin, vmap);
  copy->addFnAttr(StreamFnAttr);
  addFences(*copy);
  llvm::GlobalNumberState numbers;
  bool same = llvm::FunctionComparator(copy, &nt, &numbers).compare() == 0;
  // Metadata: the clone shares the twin's nodes, as the variant does.
  auto ic = llvm::instructions(*copy).begin();
  for (const llvm::Instruction &x : llvm::instructions(nt)) {
    if (!same)
      break;
    llvm::SmallVector<std::pair<unsigned, llvm::MDNode *>, 8> mx, mc;
    x.getAllMetadata(mx);
    (ic++)->getAllMetadata(mc);
    same = mx == mc;
  }
  copy->eraseFromParent();
  return same;
}

/// Gives each value of the copy of \p from (through \p vmap) the order of
/// its uses that the value it copies has. The code generator visits uses
/// in that order (a block's predecessors, for one), so the copy compiles
/// to the same machine code as the original only with the same order;
/// CloneFunctionInto makes the uses in its own order.
void copyUseListOrder(llvm::Function &from, llvm::ValueToValueMapTy &vmap) {
  auto copyOrder = [&](llvm::Value &v) {
    llvm::Value *c = vmap.lookup(&v);
    if (!c || c->hasOneUse() || c->use_empty())
      return;
    llvm::DenseMap<const llvm::Use *, unsigned> rank;
    unsigned n = 0;
    for (llvm::Use &u : v.uses()) {
      auto *user = llvm::dyn_cast<llvm::Instruction>(u.getUser());
      auto *copy =
          user ? llvm::dyn_cast_or_null<llvm::Instruction>(vmap.lookup(user))
               : nullptr;
      if (copy)
        rank[&copy->getOperandUse(u.getOperandNo())] = n++;
    }
    c->sortUseList([&](const llvm::Use &l, const llvm::Use &r) {
      return rank.lookup(&l) < rank.lookup(&r);
    });
  };
  for (llvm::Argument &a : from.args())
    copyOrder(a);
  for (llvm::BasicBlock &bb : from) {
    copyOrder(bb);
    for (llvm::Instruction &i : bb)
      copyOrder(i);
  }
}

} // namespace

std::vector<StreamTwin> deferStreamingTwins(llvm::Module &module) {
  // Candidates first: isFencedCopy adds a function to the module and
  // removes it again.
  std::vector<std::pair<llvm::Function *, llvm::Function *>> candidates;
  for (llvm::Function &nt : module) {
    llvm::StringRef name = nt.getName();
    if (nt.isDeclaration() || !nt.hasLocalLinkage() ||
        !nt.hasFnAttribute(StreamFnAttr) || !name.ends_with(NtSuffix))
      continue;
    llvm::Function *twin = module.getFunction(name.drop_back(NtSuffix.size()));
    if (twin && !twin->isDeclaration() && twin->hasLocalLinkage())
      candidates.emplace_back(&nt, twin);
  }
  std::vector<StreamTwin> twins;
  for (auto [nt, twin] : candidates)
    if (isFencedCopy(*nt, *twin))
      twins.push_back({nt, twin, nt->getLinkage()});
  for (const StreamTwin &t : twins) {
    auto *nt = llvm::cast<llvm::Function>(t.variant);
    nt->deleteBody(); // a declaration, external until restored
    nt->setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
  return twins;
}

void restoreStreamingTwins(const std::vector<StreamTwin> &twins) {
  for (const StreamTwin &t : twins) {
    auto *nt = llvm::cast_or_null<llvm::Function>(t.variant);
    auto *twin = llvm::cast_or_null<llvm::Function>(t.twin);
    if (!nt)
      continue;
    if (!twin || twin->isDeclaration()) {
      // The twin was dead, so was the variant: the host code that chose
      // between them is gone.
      if (nt->use_empty()) {
        nt->eraseFromParent();
        continue;
      }
      llvm::report_fatal_error("internal compiler error: the optimiser "
                               "removed a loop body whose streaming "
                               "variant is still used");
    }
    llvm::ValueToValueMapTy vmap;
    auto arg = nt->arg_begin();
    for (const llvm::Argument &a : twin->args())
      vmap[&a] = &*arg++;
    llvm::SmallVector<llvm::ReturnInst *, 4> returns;
    llvm::CloneFunctionInto(nt, twin, vmap,
                            llvm::CloneFunctionChangeType::LocalChangesOnly,
                            returns);
    nt->setLinkage(t.linkage);
    nt->addFnAttr(StreamFnAttr);
    copyUseListOrder(*twin, vmap);
    addFences(*nt);
  }
}

} // namespace opdc
