// Verifier.h - Checks the invariants of the Program IR.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_VERIFIER_H
#define OPDC_IR_VERIFIER_H

#include <string>

namespace opdc {
namespace ir {
struct Program;
} // namespace ir

/// Checks \p p against the rules of ir/IR.h; run after lowering and after
/// every pass in debug builds. Checked:
///  - globals: unique names per kind, references to objects of this program,
///    set size xor file, map arity >= 1, block and stencil dims 1..3, dat
///    shape (set xor block, per-dimension size/halo/base), initialiser types,
///    derivative dats linked to a primal of the same shape;
///  - types: every expression's stored type equals the one its operands give
///    (same-typed binary operands, bool conditions, integer indices and
///    bounds, intrinsic and call signatures, assignment and return types);
///  - variables: every slot declared exactly once and used only where its
///    declaration is in scope; assignments only to mutable slots and to
///    written kernel parameters (inc/sum only by `+=`/`-=`);
///  - placement: loops, I/O, print, solve and derivative nodes only in host
///    functions; kernel arguments and idx() only in kernels; break/continue
///    inside loops; no recursion among fns and procs;
///  - loops: argument count equals the kernel's parameter count, and each
///    access descriptor agrees with its parameter (mode, scalar type, dim,
///    bytes) and with the loop (direct dat on the loop's set or block,
///    indirect map from the loop's set to the dat's set with index < arity
///    and no out/inout, stencil equal to the parameter's with dims of the
///    block, reductions bound to host variables).
/// Returns true when nothing is wrong; otherwise false, with \p why holding
/// one problem per line (the first 20), each naming the function and node.
bool verifyIR(const ir::Program &p, std::string &why);

} // namespace opdc
#endif
