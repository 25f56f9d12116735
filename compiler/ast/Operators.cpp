// Operators.cpp - Names of the enumerations shared by the AST and the IR.
// SPDX-License-Identifier: Apache-2.0
#include "ast/Operators.h"

namespace opdc {

const char *spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg:
    return "-";
  case UnaryOp::Not:
    return "!";
  case UnaryOp::BitNot:
    return "~";
  }
  return "?";
}

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Rem:
    return "%";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  case BinaryOp::BitAnd:
    return "&";
  case BinaryOp::BitOr:
    return "|";
  case BinaryOp::BitXor:
    return "^";
  case BinaryOp::Shl:
    return "<<";
  case BinaryOp::Shr:
    return ">>";
  }
  return "?";
}

const char *spelling(AssignOp op) {
  switch (op) {
  case AssignOp::Set:
    return "=";
  case AssignOp::Add:
    return "+=";
  case AssignOp::Sub:
    return "-=";
  case AssignOp::Mul:
    return "*=";
  case AssignOp::Div:
    return "/=";
  case AssignOp::BitAnd:
    return "&=";
  case AssignOp::BitOr:
    return "|=";
  case AssignOp::BitXor:
    return "^=";
  case AssignOp::Shl:
    return "<<=";
  case AssignOp::Shr:
    return ">>=";
  }
  return "?";
}

BinaryOp binaryOpOf(AssignOp op) {
  switch (op) {
  case AssignOp::Sub:
    return BinaryOp::Sub;
  case AssignOp::Mul:
    return BinaryOp::Mul;
  case AssignOp::Div:
    return BinaryOp::Div;
  case AssignOp::BitAnd:
    return BinaryOp::BitAnd;
  case AssignOp::BitOr:
    return BinaryOp::BitOr;
  case AssignOp::BitXor:
    return BinaryOp::BitXor;
  case AssignOp::Shl:
    return BinaryOp::Shl;
  case AssignOp::Shr:
    return BinaryOp::Shr;
  default:
    return BinaryOp::Add;
  }
}

namespace {
struct IntrinsicInfo {
  Intrinsic id;
  const char *name;
  unsigned arity;
};
constexpr IntrinsicInfo intrinsicTable[] = {
    {Intrinsic::Sqrt, "sqrt", 1},   {Intrinsic::Abs, "abs", 1},
    {Intrinsic::Exp, "exp", 1},     {Intrinsic::Log, "log", 1},
    {Intrinsic::Pow, "pow", 2},     {Intrinsic::Sin, "sin", 1},
    {Intrinsic::Cos, "cos", 1},     {Intrinsic::Tan, "tan", 1},
    {Intrinsic::Atan, "atan", 1},   {Intrinsic::Atan2, "atan2", 2},
    {Intrinsic::Min, "min", 2},     {Intrinsic::Max, "max", 2},
    {Intrinsic::Floor, "floor", 1}, {Intrinsic::Ceil, "ceil", 1},
    {Intrinsic::Fma, "fma", 3},     {Intrinsic::Select, "select", 3},
    {Intrinsic::Idx, "idx", 1},     {Intrinsic::Size, "size", 0},
    {Intrinsic::Wtime, "wtime", 0},
    {Intrinsic::RngUniform, "rng_uniform", 2},
    {Intrinsic::RngNormal, "rng_normal", 2},
    // <math.h>
    {Intrinsic::Asin, "asin", 1},   {Intrinsic::Acos, "acos", 1},
    {Intrinsic::Sinh, "sinh", 1},   {Intrinsic::Cosh, "cosh", 1},
    {Intrinsic::Tanh, "tanh", 1},   {Intrinsic::Asinh, "asinh", 1},
    {Intrinsic::Acosh, "acosh", 1}, {Intrinsic::Atanh, "atanh", 1},
    {Intrinsic::Cbrt, "cbrt", 1},   {Intrinsic::Hypot, "hypot", 2},
    {Intrinsic::Log2, "log2", 1},   {Intrinsic::Log10, "log10", 1},
    {Intrinsic::Log1p, "log1p", 1}, {Intrinsic::Exp2, "exp2", 1},
    {Intrinsic::Expm1, "expm1", 1}, {Intrinsic::Erf, "erf", 1},
    {Intrinsic::Erfc, "erfc", 1},   {Intrinsic::Copysign, "copysign", 2},
    {Intrinsic::Fmod, "fmod", 2},   {Intrinsic::Trunc, "trunc", 1},
    {Intrinsic::Round, "round", 1}, {Intrinsic::IsNan, "isnan", 1},
    {Intrinsic::IsFinite, "isfinite", 1},
};

constexpr unsigned intrinsicCount =
    sizeof(intrinsicTable) / sizeof(intrinsicTable[0]);
struct NameList {
  const char *names[intrinsicCount];
  constexpr NameList() : names() {
    for (unsigned i = 0; i < intrinsicCount; ++i)
      names[i] = intrinsicTable[i].name;
  }
};
constexpr NameList intrinsicNameList;
} // namespace

Intrinsic lookupIntrinsic(const std::string &name) {
  for (const auto &info : intrinsicTable)
    if (name == info.name)
      return info.id;
  return Intrinsic::None;
}

const char *intrinsicName(Intrinsic i) {
  for (const auto &info : intrinsicTable)
    if (info.id == i)
      return info.name;
  return "<none>";
}

const char *const *intrinsicNames(unsigned &count) {
  count = intrinsicCount;
  return intrinsicNameList.names;
}

unsigned intrinsicArity(Intrinsic i) {
  for (const auto &info : intrinsicTable)
    if (info.id == i)
      return info.arity;
  return 0;
}

const char *accessModeName(AccessMode m) {
  switch (m) {
  case AccessMode::Read:
    return "read";
  case AccessMode::Write:
    return "out";
  case AccessMode::ReadWrite:
    return "inout";
  case AccessMode::Inc:
    return "inc";
  case AccessMode::Min:
    return "min";
  case AccessMode::Max:
    return "max";
  case AccessMode::Sum:
    return "sum";
  }
  return "?";
}

const char *argKindName(ArgKind k) {
  switch (k) {
  case ArgKind::Direct:
    return "direct";
  case ArgKind::Indirect:
    return "indirect";
  case ArgKind::Stencil:
    return "stencil";
  case ArgKind::MapDirect:
    return "map-direct";
  case ArgKind::GlobalRead:
    return "global-read";
  case ArgKind::Reduction:
    return "reduction";
  }
  return "?";
}

const char *argKindShortName(ArgKind k) {
  switch (k) {
  case ArgKind::MapDirect:
    return "map";
  case ArgKind::GlobalRead:
    return "global";
  default:
    return argKindName(k);
  }
}

} // namespace opdc
