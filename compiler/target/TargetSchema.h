// TargetSchema.h - The keys of a target profile: type, unit, bounds, field.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to compiler/target: one table drives parsing and validation
// (TargetProfile.cpp) and printing (TargetSchema.cpp), so a key is declared
// once with its type, unit, bounds and place in the TargetProfile struct.
#ifndef OPDC_TARGET_TARGETSCHEMA_H
#define OPDC_TARGET_TARGETSCHEMA_H

#include "target/TargetProfile.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace opdc::profile {

enum class Kind { String, Integer, Number, StringList, Choice, Section };

/// Bounds of a numeric key: value >= min (or > min when strict).
struct Bound {
  double min = 0;
  bool strict = true;
};

struct Key {
  std::string name;
  Kind kind;
  std::string what; ///< for messages: "the LLVM target triple", "GB/s"
  Bound bound{};
  std::vector<std::string> choices{};
  std::function<std::string &(TargetProfile &)> str{};
  std::function<int64_t &(TargetProfile &)> integer{};
  std::function<double &(TargetProfile &)> number{};
  std::function<std::vector<std::string> &(TargetProfile &)> list{};
  std::vector<Key> children{};
  /// Extra check of an accepted value; returns a message or "".
  std::function<std::string(double)> check{};
};

/// Every key a profile may hold, in printing order, sections with their
/// children; built on first use.
const std::vector<Key> &schema();

} // namespace opdc::profile
#endif
