// FPCheck.h - --check-fp: stop at the first NaN or infinity a loop produces.
// SPDX-License-Identifier: Apache-2.0
//
// With the check on (`--check-fp`, or OPD_CHECK_FP=1 in the environment),
// opd_loop_end scans what the loop may have written and opd_reduce_global
// the combined reduction results; the first non-finite value stops the
// program like any run-time error, naming the loop (kernel and source
// location), the dat or reduction, the element and the component. With
// the check off, each loop pays one predictable branch. See lib/README.md,
// "Floating-point checking".
#ifndef OPDC_LIB_EXEC_FPCHECK_H
#define OPDC_LIB_EXEC_FPCHECK_H

struct opd_loop;

namespace opdc::rt {
namespace detail {
extern bool fpCheckOn;
} // namespace detail

/// Whether the check is on.
inline bool fpCheckEnabled() { return detail::fpCheckOn; }
/// Turns the check on or off (opd_rt_init; tests).
void setFPCheck(bool on);

/// After a loop (opd_loop_end, check on): scans the f32/f64 dats `loop`
/// writes (OPD_WRITE, OPD_RW, OPD_INC) over the elements it could have
/// changed: set dats written directly, every owned element; set dats
/// written only through maps, the owned elements the loop's iterations
/// reach through them; block dats, the loop's range. Fails at the first
/// non-finite value: the first such dat in argument order, its lowest element
/// (global index; block dats, the one with the lowest outer coordinates), then
/// its lowest component. On several ranks the ranks agree (one MPI_Allreduce
/// per loop) and the rank holding that element reports it.
void checkLoopFP(opd_loop *loop);

/// opd_reduce_local (check on): records which components of the
/// reduction variable are finite before the loop's partials are combined.
void noteReductionStart(const void *v, int type, int dim);
/// opd_reduce_global (check on): fails when a component of the combined
/// result `v` (f32/f64) is not finite although it was before the
/// combination, naming the last loop run and its reduction argument.
void checkReductionFP(const void *v, int type, int op, int dim);

/// Forgets the last loop (opd_rt_finalize frees the loops).
void forgetFPLoops();
} // namespace opdc::rt
#endif
