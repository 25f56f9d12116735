// Type.h - Value types of the .opd language and compile-time constant values.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_AST_TYPE_H
#define OPDC_AST_TYPE_H

#include <cstdint>
#include <string>
#include <vector>

namespace opdc {

enum class ScalarKind : uint8_t { Bool, I32, I64, F32, F64 };

/// "f64", "i32", ...
const char *scalarName(ScalarKind k);
inline bool isFloat(ScalarKind k) {
  return k == ScalarKind::F32 || k == ScalarKind::F64;
}
inline bool isInteger(ScalarKind k) {
  return k == ScalarKind::I32 || k == ScalarKind::I64;
}
/// Size in bytes of one scalar (bool is stored as one byte).
unsigned scalarBytes(ScalarKind k);

/// The type of a value: a scalar, a fixed-length array of scalars, a string
/// (host only), void (statements, procs without result) or Error (already
/// reported; suppresses follow-on errors).
struct Type {
  enum class Kind : uint8_t { Error, Void, Scalar, Array, String };
  Kind kind = Kind::Error;
  ScalarKind scalar = ScalarKind::F64; ///< element type of Scalar and Array
  uint32_t length = 0;                 ///< Array only, >= 1

  static Type error() { return {}; }
  static Type voidType() { return {Kind::Void, ScalarKind::F64, 0}; }
  static Type string() { return {Kind::String, ScalarKind::F64, 0}; }
  static Type scalarOf(ScalarKind k) { return {Kind::Scalar, k, 0}; }
  static Type arrayOf(ScalarKind k, uint32_t n) { return {Kind::Array, k, n}; }

  bool isError() const { return kind == Kind::Error; }
  bool isVoid() const { return kind == Kind::Void; }
  bool isScalar() const { return kind == Kind::Scalar; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  bool isNumeric() const { return isScalar() && scalar != ScalarKind::Bool; }
  bool isFloatScalar() const { return isScalar() && isFloat(scalar); }
  bool isIntegerScalar() const { return isScalar() && isInteger(scalar); }
  bool isBool() const { return isScalar() && scalar == ScalarKind::Bool; }
  /// Components per element: 1 for a scalar, length for an array.
  unsigned dim() const { return isArray() ? length : 1; }

  /// "f64", "f64[4]", "str", "void", "<error>".
  std::string str() const;

  bool operator==(const Type &o) const {
    return kind == o.kind && (kind != Kind::Scalar && kind != Kind::Array
                                  ? true
                                  : scalar == o.scalar && length == o.length);
  }
  bool operator!=(const Type &o) const { return !(*this == o); }
};

/// \p s in double quotes, escaped the way the lexer reads strings back
/// (newline, tab, backslash, quote, NUL) and other control bytes as \xNN:
/// how every printer shows a string.
std::string quoteString(const std::string &s);

/// A compile-time value (folded const, param default, literal). Integers and
/// bools live in `ints`, floats in `floats` (an f32 value is stored already
/// rounded to single precision), one entry per component; strings in `text`.
struct ConstValue {
  Type type;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string text; ///< String values

  static ConstValue ofInt(ScalarKind k, int64_t v);
  static ConstValue ofFloat(ScalarKind k, double v);
  static ConstValue ofBool(bool v);
  static ConstValue ofString(std::string s);

  bool valid() const { return !type.isError(); }
  /// Component \p i as a double / integer whatever the storage.
  double asDouble(unsigned i = 0) const;
  int64_t asInt(unsigned i = 0) const;
  /// Exact, round-trippable text: integers in decimal, floats with 17
  /// significant digits ("%.17g"), arrays as "[a, b]", strings quoted.
  std::string str() const;
};

} // namespace opdc
#endif
