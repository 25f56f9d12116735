// MergeBodies.cpp - One function for identical kernels and loop bodies.
// SPDX-License-Identifier: Apache-2.0
//
// Codegen emits a kernel and a body function per loop statement of the
// lowered program, and the passes multiply loop statements: the unrolled
// steps of a skewed sweep, a proc inlined at each call, the adjoint's
// reverse steps and zeroing loops. Many of these functions are the same
// instruction for instruction (e.g. 24 copies of each sweep body in
// examples/adjoint/poisson_inverse.opd, half of its IR), and the
// optimisation pipeline and the code generator would work on each copy.
// Before the pipeline, this step keeps the first of each set of identical
// internal functions and points every use of the others at it: kernels
// first, then the bodies that became identical once they call the same
// kernel, until nothing changes. Each remaining function is optimised as
// before, so the code a loop runs is the same; only the number of copies
// differs.
//
// Identity: LLVM's FunctionComparator (the comparison MergeFunctions uses:
// types by structure, so each loop's context struct compares by layout),
// and in addition the instructions' metadata must be isomorphic: the same
// graph of nodes up to a one-to-one renaming of nodes, which is what alias
// scopes, access groups and loop IDs mean (FunctionComparator does not
// look inside nested metadata nodes). Names in distinct nodes (alias scope
// and domain names) only describe a node, apart from the streaming-store
// prefix markStreamingStores reads, so they compare by that prefix. Host
// functions (main, procs) are left alone: they are never identical in
// practice and are compiled without optimisation anyway.
//
// -Rpass=vectorize reports per loop statement: the `!opd.loop` tag of a
// removed body moves to the module's `opd.loop.merged` list together with
// the body that replaces it (Remarks.cpp).
#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LLVMCodeGen.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/StructuralHash.h"
#include "llvm/Transforms/Utils/FunctionComparator.h"

#include <map>
#include <vector>

namespace opdc {

namespace {

/// Whether the metadata attached to two functions' instructions are the
/// same graph up to renaming nodes.
class MetadataIsomorphism {
public:
  bool same(const llvm::Function &a, const llvm::Function &b) {
    auto ib = llvm::instructions(b).begin(), eb = llvm::instructions(b).end();
    for (const llvm::Instruction &x : llvm::instructions(a)) {
      if (ib == eb)
        return false;
      const llvm::Instruction &y = *ib++;
      llvm::SmallVector<std::pair<unsigned, llvm::MDNode *>, 8> mx, my;
      x.getAllMetadata(mx);
      y.getAllMetadata(my);
      if (mx.size() != my.size())
        return false;
      for (size_t i = 0; i < mx.size(); ++i)
        if (mx[i].first != my[i].first || !node(mx[i].second, my[i].second))
          return false;
    }
    return ib == eb;
  }

private:
  llvm::DenseMap<const llvm::MDNode *, const llvm::MDNode *> forward, backward;

  bool node(const llvm::MDNode *a, const llvm::MDNode *b) {
    if (a == b && !forward.count(a) && !backward.count(b))
      return true;
    auto f = forward.find(a);
    auto r = backward.find(b);
    if (f != forward.end() || r != backward.end())
      return f != forward.end() && r != backward.end() && f->second == b &&
             r->second == a;
    if (a->isDistinct() != b->isDistinct() ||
        a->getNumOperands() != b->getNumOperands())
      return false;
    // Mapped before the operands: distinct nodes refer to themselves.
    forward[a] = b;
    backward[b] = a;
    for (unsigned i = 0; i < a->getNumOperands(); ++i)
      if (!operand(a->getOperand(i), b->getOperand(i), a->isDistinct()))
        return false;
    return true;
  }

  bool operand(const llvm::Metadata *a, const llvm::Metadata *b,
               bool inDistinct) {
    if (!a || !b)
      return a == b;
    if (auto *na = llvm::dyn_cast<llvm::MDNode>(a)) {
      auto *nb = llvm::dyn_cast<llvm::MDNode>(b);
      return nb && node(na, nb);
    }
    if (auto *sa = llvm::dyn_cast<llvm::MDString>(a)) {
      auto *sb = llvm::dyn_cast<llvm::MDString>(b);
      if (!sb)
        return false;
      if (!inDistinct)
        return sa == sb;
      return sa->getString().starts_with(StreamScopePrefix) ==
             sb->getString().starts_with(StreamScopePrefix);
    }
    // Constants are uniqued: the same value is the same pointer.
    return a == b;
  }
};

bool candidate(const llvm::Function &f) {
  return !f.isDeclaration() && f.hasLocalLinkage() &&
         !f.hasFnAttribute(HostFnAttr);
}

} // namespace

unsigned mergeIdenticalFunctions(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  unsigned removed = 0;
  for (bool changed = true; changed;) {
    changed = false;
    llvm::GlobalNumberState numbers;
    // Buckets in module order, so that the first of a set survives and the
    // output does not depend on hash order.
    std::map<llvm::IRHash, std::vector<llvm::Function *>> buckets;
    for (llvm::Function &f : llvm::make_early_inc_range(module)) {
      if (!candidate(f))
        continue;
      std::vector<llvm::Function *> &bucket = buckets[llvm::StructuralHash(f)];
      llvm::Function *same = nullptr;
      for (llvm::Function *g : bucket)
        if (llvm::FunctionComparator(g, &f, &numbers).compare() == 0 &&
            MetadataIsomorphism().same(*g, f)) {
          same = g;
          break;
        }
      if (!same) {
        bucket.push_back(&f);
        continue;
      }
      if (llvm::MDNode *tag = f.getMetadata(LoopMetadataKind))
        module.getOrInsertNamedMetadata(MergedLoopMetadataKind)
            ->addOperand(llvm::MDNode::get(
                context, {llvm::ValueAsMetadata::get(same), tag}));
      numbers.erase(&f);
      f.replaceAllUsesWith(same);
      f.eraseFromParent();
      ++removed;
      changed = true;
    }
  }
  return removed;
}

} // namespace opdc
