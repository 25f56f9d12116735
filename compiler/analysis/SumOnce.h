// SumOnce.h - Does a kernel add to a sum argument at most once an element?
// SPDX-License-Identifier: Apache-2.0
//
// The CPU backend splits a float sum into fixed partial sums (lanes):
// element lo + 4g + l adds to partial l (codegen/llvm/LoopBody.cpp, "Float
// sums"). When the kernel adds to the argument at most once an element,
// each lane's kernel copy may run on an accumulator that starts from -0.0
// and the four results join the partials in one vector addition: p + (-0.0
// + e) is p + e for every p and e (and p + -0.0 is p where the kernel adds
// nothing), so the sums keep their bits, and the loop-carried chain of the
// row is that one addition instead of the whole kernel.
#ifndef OPDC_ANALYSIS_SUMONCE_H
#define OPDC_ANALYSIS_SUMONCE_H

namespace opdc::ir {
struct Function;
} // namespace opdc::ir

namespace opdc {

/// Whether every run of \p kernel adds to each component of its parameter
/// \p param at most once and uses the parameter no other way: every use is
/// the target of a `+=` (the parameter itself, or a component at a
/// constant index), no `+=` of a component sits in a `for` or `while`, and
/// no component has two. Branches may hold the one `+=`.
bool addsAtMostOnce(const ir::Function &kernel, unsigned param);

} // namespace opdc

#endif
