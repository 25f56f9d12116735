// StreamTwins.h - A body's streaming-store variant optimised once, with it.
// SPDX-License-Identifier: Apache-2.0
//
// See StreamTwins.cpp; Target.cpp's optimizeModule calls these around the
// pipeline.
#ifndef OPDC_CODEGEN_LLVM_STREAMTWINS_H
#define OPDC_CODEGEN_LLVM_STREAMTWINS_H

#include "llvm/IR/GlobalValue.h"
#include "llvm/IR/ValueHandle.h"

#include <vector>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace opdc {

/// A loop body's streaming-store variant whose optimisation is its twin's.
/// The pipeline may delete both (a proc that is never called, and the
/// bodies only it ran), hence the weak handles.
struct StreamTwin {
  llvm::WeakVH variant; ///< BODY.nt, a declaration while deferred
  llvm::WeakVH twin;    ///< BODY
  llvm::GlobalValue::LinkageTypes linkage; ///< the variant's own
};

/// Makes each .nt variant that is a fenced copy of its twin a declaration,
/// so that the pipeline does not optimise it (before the pipeline).
std::vector<StreamTwin> deferStreamingTwins(llvm::Module &module);

/// Makes each deferred variant again from its optimised twin (after the
/// pipeline, before markStreamingStores).
void restoreStreamingTwins(const std::vector<StreamTwin> &twins);

} // namespace opdc
#endif
