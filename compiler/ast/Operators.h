// Operators.h - Operators, intrinsics, access modes and argument kinds,
// shared by the AST and the IR.
// SPDX-License-Identifier: Apache-2.0
//
// One definition of each enumeration: sema annotates the AST with them and
// lowering copies them into the IR unchanged. `ast::AccessMode` and
// `ir::AccessMode` (and the other names) are using-declarations of these.
// Two enumerators exist for the AST only and never appear in valid IR:
// Intrinsic::None (a call that is not an intrinsic) and Intrinsic::Size
// (lowered to ir::SizeOfExpr). A loop argument that sema has not resolved
// has no ArgKind at all (ast::LoopArg::kind is empty), so a switch over
// ArgKind covers exactly the six kinds a backend sees.
#ifndef OPDC_AST_OPERATORS_H
#define OPDC_AST_OPERATORS_H

#include <cstdint>
#include <string>

namespace opdc {

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

enum class UnaryOp : uint8_t { Neg, Not, BitNot };
/// "-", "!" or "~".
const char *spelling(UnaryOp op);

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  // Bit operations on integers (i32, i64); C's precedence.
  BitAnd, ///< &
  BitOr,  ///< |
  BitXor, ///< ^
  Shl,    ///< <<: bits shifted out are lost (no overflow check)
  Shr,    ///< >>: arithmetic (sign-filling), as C compilers do
};
/// "+", "-", ..., "&&", "||", "&", "|", "^", "<<", ">>".
const char *spelling(BinaryOp op);
inline bool isComparison(BinaryOp op) {
  return op >= BinaryOp::Eq && op <= BinaryOp::Ge;
}
inline bool isLogical(BinaryOp op) {
  return op == BinaryOp::And || op == BinaryOp::Or;
}
inline bool isArithmetic(BinaryOp op) { return op <= BinaryOp::Rem; }
/// &, |, ^, << and >>: integer operands only.
inline bool isBitwise(BinaryOp op) { return op >= BinaryOp::BitAnd; }
inline bool isShift(BinaryOp op) {
  return op == BinaryOp::Shl || op == BinaryOp::Shr;
}

/// `=`, `+=`, `-=`, `*=`, `/=`, and on integers `&=`, `|=`, `^=`, `<<=`,
/// `>>=`. Compound assignments are kept (not expanded) because `+=` on an
/// `inc` or `sum` parameter is the increment itself.
enum class AssignOp : uint8_t {
  Set,
  Add,
  Sub,
  Mul,
  Div,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr
};
/// "=", "+=", "-=", "*=", "/=", "&=", "|=", "^=", "<<=", ">>=".
const char *spelling(AssignOp op);
/// The binary operator of a compound assignment (Add for `+=`); Set has none
/// (Add is returned).
BinaryOp binaryOpOf(AssignOp op);

//===----------------------------------------------------------------------===//
// Intrinsics
//===----------------------------------------------------------------------===//

/// The built-in functions sema recognises by name.
enum class Intrinsic : uint8_t {
  None, ///< AST only: the call is not an intrinsic
  Sqrt,
  Abs,
  Exp,
  Log,
  Pow,
  Sin,
  Cos,
  Tan,
  Atan,
  Atan2,
  Min,
  Max,
  Floor,
  Ceil,
  Fma,
  Select, ///< select(cond, a, b)
  Idx,    ///< idx(d): kernels only; in the IR d is an integer Constant
  Size,   ///< AST only: size(set) / size(dat, d), host only (ir::SizeOfExpr)
  Wtime,  ///< wtime(): host only, seconds as f64
  // Counter-based random numbers (codegen/llvm/RandomCodeGen.cpp): kernels
  // only, (seed, n) as i64, a function of the seed, the loop's element and n.
  RngUniform, ///< rng_uniform(seed, n): f64 in [0, 1)
  RngNormal,  ///< rng_normal(seed, n): f64, standard normal
  // The rest of C's <math.h>, on f32 and f64 (sinf for f32, sin for f64):
  // computed by the C library (glibc libm) at run time and when folded.
  Asin,
  Acos,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Cbrt,
  Hypot,
  Log2,
  Log10,
  Log1p,
  Exp2,
  Expm1,
  Erf,
  Erfc,
  Copysign,
  Fmod,
  Trunc,
  Round,   ///< halfway cases away from zero, as C's round
  IsNan,   ///< isnan(x) -> bool
  IsFinite ///< isfinite(x) -> bool
};
/// The intrinsic called \p name, or None.
Intrinsic lookupIntrinsic(const std::string &name);
/// Source spelling: "sqrt", ..., "idx", "size", "wtime"; "<none>" for None.
const char *intrinsicName(Intrinsic i);
/// Number of arguments the intrinsic takes in the IR (0 for None and Size,
/// which the IR does not have).
unsigned intrinsicArity(Intrinsic i);
/// True for the intrinsics an ir::IntrinsicExpr may hold (all but None and
/// Size).
inline bool isIRIntrinsic(Intrinsic i) {
  return i != Intrinsic::None && i != Intrinsic::Size;
}
/// rng_uniform and rng_normal: they draw for the current loop element, so,
/// like idx(), they need the element's global index.
inline bool isRandomIntrinsic(Intrinsic i) {
  return i == Intrinsic::RngUniform || i == Intrinsic::RngNormal;
}
/// True for isnan and isfinite: a float argument, a bool result.
inline bool isFloatPredicate(Intrinsic i) {
  return i == Intrinsic::IsNan || i == Intrinsic::IsFinite;
}
/// Every intrinsic's source spelling, in declaration order (for "did you
/// mean" suggestions).
const char *const *intrinsicNames(unsigned &count);

//===----------------------------------------------------------------------===//
// Access modes and loop arguments
//===----------------------------------------------------------------------===//

/// How a kernel parameter uses its argument. Min, Max and Sum are global
/// reductions.
enum class AccessMode : uint8_t { Read, Write, ReadWrite, Inc, Min, Max, Sum };
/// Source spelling: "read" for Read (no keyword), "out", "inout", "inc",
/// "min", "max", "sum".
const char *accessModeName(AccessMode m);
inline bool isReduction(AccessMode m) {
  return m == AccessMode::Min || m == AccessMode::Max || m == AccessMode::Sum;
}
/// True for modes whose argument the kernel may read (all but Write; an Inc
/// or reduction parameter reads its own running value).
inline bool modeReads(AccessMode m) { return m != AccessMode::Write; }
/// True for modes that change the argument.
inline bool modeWrites(AccessMode m) { return m != AccessMode::Read; }

/// How a loop argument reaches the kernel (sema decides from the argument's
/// shape and the kernel parameter it binds to).
enum class ArgKind : uint8_t {
  Direct,     ///< dat on the loop's set (or block, centre only), element i
  Indirect,   ///< dat[map[k]]: element map(i, k) of a dat on the map's target
  Stencil,    ///< dat on the loop's block, read at the stencil's points
  MapDirect,  ///< the map itself, as an i32[arity] value per element
  GlobalRead, ///< a host expression, constant during the loop
  Reduction,  ///< a host variable, target of a min/max/sum parameter
};
/// As --emit=ir prints it: "direct", "indirect", "stencil", "map-direct",
/// "global-read", "reduction".
const char *argKindName(ArgKind k);
/// As --emit=ast prints it: "map" and "global" for MapDirect and GlobalRead,
/// otherwise as argKindName.
const char *argKindShortName(ArgKind k);

//===----------------------------------------------------------------------===//
// Dat initialisers
//===----------------------------------------------------------------------===//

enum class DatInit : uint8_t {
  Zero, ///< every component 0
  Fill, ///< every element set to one value (scalar or whole element)
  File, ///< read from a file
};

} // namespace opdc
#endif
