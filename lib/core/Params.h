// Params.h - A compiled program's params: values from text, input decks,
// defaults as text (core/Params.cpp).
// SPDX-License-Identifier: Apache-2.0
//
// The command line itself (opd_rt_init, exec/Init.cpp) sets options of
// every layer of the runtime, so it sits above core/; what it asks of the
// params is here, in the ground floor.
#ifndef OPDC_LIB_CORE_PARAMS_H
#define OPDC_LIB_CORE_PARAMS_H

#include "opd_rt.h"

#include <string>

namespace opdc::rt {

/// "str", or the scalar's name ("i32", "f64", ...) for a param's type.
const char *typeLabel(int type);
/// Fails: `value` is not what option (or, inside a deck, key) `option`
/// expects.
[[noreturn]] void badValue(const std::string &option, const char *value,
                           const char *expected);
/// A decimal integer filling all of `text`; `range` when it overflows.
bool parseInteger(const char *text, long long &out, bool &range);
/// true, false, 1, 0 (bool params and --check-fp=); -1 for anything else.
int parseBool(const char *value);
/// Sets param `p` from `value`, failing with a message naming it.
void setParam(const opd_param_desc &p, const char *value);
/// --deck=FILE: the params set in an input deck (Params.cpp says how).
void readDeck(const char *path, const opd_param_desc *params, int nparams);
/// A param's value as --help shows it.
std::string defaultText(const opd_param_desc &p);

} // namespace opdc::rt
#endif
