// ABI.cpp - The version of the runtime's C ABI (opd_rt_check_abi).
// SPDX-License-Identifier: Apache-2.0
//
// Generated code and the runtime meet only through opd_rt.h; a program
// built against one version of it and linked or loaded with another
// (libopd_rt.so of another install, a stale object of `opdc build -c`)
// would otherwise run with mismatched argument tables or struct layouts.
// Every generated main first passes the OPD_RT_ABI_VERSION it was built
// with; a mismatch stops the program with both numbers before anything
// else runs (opd_rt_init has not run yet, so the message cannot use the
// program's name).
#include <opd_rt.h>

#include <cstdio>
#include <cstdlib>

extern "C" {

void opd_rt_check_abi(int32_t version) {
  if (version == OPD_RT_ABI_VERSION)
    return;
  std::fprintf(stderr,
               "error: this program was built for opd runtime ABI %d, this "
               "runtime is %d; rebuild it with the opdc of this runtime (or "
               "run it with the runtime it was built with)\n",
               int(version), int(OPD_RT_ABI_VERSION));
  std::exit(1);
}

int32_t opd_rt_abi_version(void) { return OPD_RT_ABI_VERSION; }

} // extern "C"
