// ScalarSemantics.h - The one definition of what opd's float intrinsics
// compute, and how closely constant folding and the backends agree.
// SPDX-License-Identifier: Apache-2.0
//
// Every float intrinsic has one row below: the C library function that
// defines it (the f64 name; f32 appends "f": sinf) and its agreement class.
// Constant folding (sema/ConstFolding.cpp) evaluates with evaluate() here;
// the CPU backend (codegen/llvm/FunctionEmitterMath.cpp) calls libmName()'s
// function, nobuiltin, for the Libm rows and LLVM's exact operations for the
// Exact rows; the CUDA backend (codegen/cuda/CUDAFunctions.cpp) prints
// libmName()'s function, which CUDA's math library provides on the device.
// min and max are IEEE 754-2019 minimum and maximum (NaN if either is NaN,
// -0 below +0) everywhere: minimum()/maximum() here, llvm.minimum/maximum,
// opd::vmin/vmax in lib/cuda/opd_cuda.cuh.
//
// The documented agreement (docs/features.md, "Scalar semantics"; checked
// by tests/cuda/scalar_semantics.py for every intrinsic, type and edge
// value):
//   Exact  correctly rounded or exact IEEE operations: the same bits from
//          folding, the CPU build and the CUDA build (NaNs: NaN, any payload).
//   Libm   the C library's function: folding and the CPU build call the same
//          glibc function (the same bits), so does the emulated CUDA build;
//          on a GPU, CUDA's device function, within the ulps its manual
//          documents.
#ifndef OPDC_AST_SCALARSEMANTICS_H
#define OPDC_AST_SCALARSEMANTICS_H

#include "ast/Operators.h"

#include <cmath>

namespace opdc::scalar {

enum class Agreement : uint8_t { Exact, Libm };

struct FloatIntrinsic {
  Intrinsic id;
  const char *libm; ///< the C library's f64 function; f32: libm + "f"
  Agreement agreement;
};

inline constexpr FloatIntrinsic floatIntrinsics[] = {
    {Intrinsic::Sqrt, "sqrt", Agreement::Exact},
    {Intrinsic::Abs, "fabs", Agreement::Exact},
    {Intrinsic::Exp, "exp", Agreement::Libm},
    {Intrinsic::Log, "log", Agreement::Libm},
    {Intrinsic::Pow, "pow", Agreement::Libm},
    {Intrinsic::Sin, "sin", Agreement::Libm},
    {Intrinsic::Cos, "cos", Agreement::Libm},
    {Intrinsic::Tan, "tan", Agreement::Libm},
    {Intrinsic::Atan, "atan", Agreement::Libm},
    {Intrinsic::Atan2, "atan2", Agreement::Libm},
    {Intrinsic::Floor, "floor", Agreement::Exact},
    {Intrinsic::Ceil, "ceil", Agreement::Exact},
    {Intrinsic::Fma, "fma", Agreement::Exact},
    {Intrinsic::Asin, "asin", Agreement::Libm},
    {Intrinsic::Acos, "acos", Agreement::Libm},
    {Intrinsic::Sinh, "sinh", Agreement::Libm},
    {Intrinsic::Cosh, "cosh", Agreement::Libm},
    {Intrinsic::Tanh, "tanh", Agreement::Libm},
    {Intrinsic::Asinh, "asinh", Agreement::Libm},
    {Intrinsic::Acosh, "acosh", Agreement::Libm},
    {Intrinsic::Atanh, "atanh", Agreement::Libm},
    {Intrinsic::Cbrt, "cbrt", Agreement::Libm},
    {Intrinsic::Hypot, "hypot", Agreement::Libm},
    {Intrinsic::Log2, "log2", Agreement::Libm},
    {Intrinsic::Log10, "log10", Agreement::Libm},
    {Intrinsic::Log1p, "log1p", Agreement::Libm},
    {Intrinsic::Exp2, "exp2", Agreement::Libm},
    {Intrinsic::Expm1, "expm1", Agreement::Libm},
    {Intrinsic::Erf, "erf", Agreement::Libm},
    {Intrinsic::Erfc, "erfc", Agreement::Libm},
    {Intrinsic::Copysign, "copysign", Agreement::Exact},
    {Intrinsic::Fmod, "fmod", Agreement::Exact},
    {Intrinsic::Trunc, "trunc", Agreement::Exact},
    {Intrinsic::Round, "round", Agreement::Exact},
};

/// The row of \p i, or null (min, max, select, isnan, ... are not library
/// functions).
inline const FloatIntrinsic *floatIntrinsic(Intrinsic i) {
  for (const FloatIntrinsic &f : floatIntrinsics)
    if (f.id == i)
      return &f;
  return nullptr;
}
/// The C library function of \p i for f64 (nullptr: none).
inline const char *libmName(Intrinsic i) {
  const FloatIntrinsic *f = floatIntrinsic(i);
  return f ? f->libm : nullptr;
}

/// IEEE 754-2019 minimum / maximum: NaN if either is NaN, -0 below +0.
template <class T> T minimum(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <class T> T maximum(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// Float intrinsic \p i of (a, b, c) in T's precision, as folding computes
/// it: the C library's function for T (std::sin(float) is sinf), so a
/// folded value has the bits the CPU build computes at run time. Returns
/// false for intrinsics that are not float functions.
template <class T> bool evaluate(Intrinsic i, T a, T b, T c, T &r) {
  switch (i) {
  case Intrinsic::Min:
    r = minimum(a, b);
    return true;
  case Intrinsic::Max:
    r = maximum(a, b);
    return true;
  case Intrinsic::Sqrt:
    r = std::sqrt(a);
    return true;
  case Intrinsic::Abs:
    r = std::fabs(a);
    return true;
  case Intrinsic::Exp:
    r = std::exp(a);
    return true;
  case Intrinsic::Log:
    r = std::log(a);
    return true;
  case Intrinsic::Pow:
    r = std::pow(a, b);
    return true;
  case Intrinsic::Sin:
    r = std::sin(a);
    return true;
  case Intrinsic::Cos:
    r = std::cos(a);
    return true;
  case Intrinsic::Tan:
    r = std::tan(a);
    return true;
  case Intrinsic::Atan:
    r = std::atan(a);
    return true;
  case Intrinsic::Atan2:
    r = std::atan2(a, b);
    return true;
  case Intrinsic::Floor:
    r = std::floor(a);
    return true;
  case Intrinsic::Ceil:
    r = std::ceil(a);
    return true;
  case Intrinsic::Fma:
    r = std::fma(a, b, c);
    return true;
  case Intrinsic::Asin:
    r = std::asin(a);
    return true;
  case Intrinsic::Acos:
    r = std::acos(a);
    return true;
  case Intrinsic::Sinh:
    r = std::sinh(a);
    return true;
  case Intrinsic::Cosh:
    r = std::cosh(a);
    return true;
  case Intrinsic::Tanh:
    r = std::tanh(a);
    return true;
  case Intrinsic::Asinh:
    r = std::asinh(a);
    return true;
  case Intrinsic::Acosh:
    r = std::acosh(a);
    return true;
  case Intrinsic::Atanh:
    r = std::atanh(a);
    return true;
  case Intrinsic::Cbrt:
    r = std::cbrt(a);
    return true;
  case Intrinsic::Hypot:
    r = std::hypot(a, b);
    return true;
  case Intrinsic::Log2:
    r = std::log2(a);
    return true;
  case Intrinsic::Log10:
    r = std::log10(a);
    return true;
  case Intrinsic::Log1p:
    r = std::log1p(a);
    return true;
  case Intrinsic::Exp2:
    r = std::exp2(a);
    return true;
  case Intrinsic::Expm1:
    r = std::expm1(a);
    return true;
  case Intrinsic::Erf:
    r = std::erf(a);
    return true;
  case Intrinsic::Erfc:
    r = std::erfc(a);
    return true;
  case Intrinsic::Copysign:
    r = std::copysign(a, b);
    return true;
  case Intrinsic::Fmod:
    r = std::fmod(a, b);
    return true;
  case Intrinsic::Trunc:
    r = std::trunc(a);
    return true;
  case Intrinsic::Round:
    r = std::round(a);
    return true;
  default:
    return false;
  }
}

} // namespace opdc::scalar
#endif
