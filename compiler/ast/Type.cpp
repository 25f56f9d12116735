// Type.cpp - Value types of the .opd language and compile-time constant values.
// SPDX-License-Identifier: Apache-2.0
#include "ast/Type.h"

#include <cstdio>

namespace opdc {

const char *scalarName(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool:
    return "bool";
  case ScalarKind::I32:
    return "i32";
  case ScalarKind::I64:
    return "i64";
  case ScalarKind::F32:
    return "f32";
  case ScalarKind::F64:
    return "f64";
  }
  return "?";
}

unsigned scalarBytes(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool:
    return 1;
  case ScalarKind::I32:
  case ScalarKind::F32:
    return 4;
  case ScalarKind::I64:
  case ScalarKind::F64:
    return 8;
  }
  return 0;
}

std::string Type::str() const {
  switch (kind) {
  case Kind::Error:
    return "<error>";
  case Kind::Void:
    return "void";
  case Kind::String:
    return "str";
  case Kind::Scalar:
    return scalarName(scalar);
  case Kind::Array:
    return std::string(scalarName(scalar)) + "[" + std::to_string(length) + "]";
  }
  return "?";
}

std::string quoteString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '"':
      out += "\\\"";
      break;
    case '\0':
      out += "\\0";
      break;
    default:
      if (ch < 0x20 || ch == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", ch);
        out += buf;
      } else {
        out += char(ch);
      }
    }
  }
  return out + "\"";
}

ConstValue ConstValue::ofInt(ScalarKind k, int64_t v) {
  ConstValue c;
  c.type = Type::scalarOf(k);
  c.ints.push_back(v);
  return c;
}

ConstValue ConstValue::ofFloat(ScalarKind k, double v) {
  ConstValue c;
  c.type = Type::scalarOf(k);
  c.floats.push_back(k == ScalarKind::F32 ? double(float(v)) : v);
  return c;
}

ConstValue ConstValue::ofBool(bool v) {
  ConstValue c;
  c.type = Type::scalarOf(ScalarKind::Bool);
  c.ints.push_back(v ? 1 : 0);
  return c;
}

ConstValue ConstValue::ofString(std::string s) {
  ConstValue c;
  c.type = Type::string();
  c.text = std::move(s);
  return c;
}

double ConstValue::asDouble(unsigned i) const {
  if (i < floats.size())
    return floats[i];
  if (i < ints.size())
    return double(ints[i]);
  return 0.0;
}

int64_t ConstValue::asInt(unsigned i) const {
  if (i < ints.size())
    return ints[i];
  if (i < floats.size())
    return int64_t(floats[i]);
  return 0;
}

static std::string componentStr(const ConstValue &c, unsigned i) {
  ScalarKind k = c.type.scalar;
  if (k == ScalarKind::Bool)
    return c.asInt(i) ? "true" : "false";
  if (isInteger(k))
    return std::to_string(c.asInt(i));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", c.asDouble(i));
  std::string s = buf;
  // Keep floats recognisable as floats in printed IR ("1" -> "1.0").
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  if (k == ScalarKind::F32)
    s += "f";
  return s;
}

std::string ConstValue::str() const {
  switch (type.kind) {
  case Type::Kind::String:
    return quoteString(text);
  case Type::Kind::Scalar:
    return componentStr(*this, 0);
  case Type::Kind::Array: {
    std::string out = "[";
    for (unsigned i = 0; i < type.length; ++i) {
      if (i)
        out += ", ";
      out += componentStr(*this, i);
    }
    return out + "]";
  }
  default:
    return "<invalid>";
  }
}

} // namespace opdc
