// Output.h - What `write DATS to FILE` produces (Output.cpp dispatches on
// the file name): HDF5 in OP2's layout (HDF5IO.cpp) with a VTKHDF copy
// beside it for ParaView and VTK (VtkHdf.cpp), or CSV text.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_IO_OUTPUT_H
#define OPDC_LIB_IO_OUTPUT_H

#include "opd_rt.h"

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace opdc::rt::io {

/// The dats into an HDF5 file (created or truncated), one dataset per dat,
/// byte for byte the same for any rank count. Collective.
void writeHDF5(opd_dat *const *dats, int n, const char *file);
/// The whole dataset of `dat` in `file`, in the dat's scalar type (one
/// rank reads it alone; failures end the program).
std::vector<char> readWhole(const char *file, const opd_dat *dat);
/// The HDF5 type of an opd_scalar (native: the same in memory and files).
hid_t memTypeOf(int type);
/// The shape of `dat`'s dataset, outermost first: [set size][dim], or
/// [size(D-1)]..[size(0)][dim] for a block dat.
std::vector<int64_t> fileShape(const opd_dat *dat);

/// After writeHDF5 of `dats` to `h5`: the same fields with their mesh in
/// VTKHDF 1.0 for ParaView and VTK, <stem>.vtkhdf (or one file per grid,
/// <stem>_<grid>.vtkhdf), see VtkHdf.cpp. Collective (rank 0 writes them).
void describeVtkHdf(opd_dat *const *dats, int n, const std::string &h5,
                    const std::string &stem);

/// The dats as CSV text (one set, or one block size): rank 0 writes it;
/// FILE "-" is standard output. With `nranges` ranges (hi exclusive; one
/// for a set's element indices, one per block dimension in the indices
/// loops see), only the elements or points inside them. Collective.
void writeCSV(opd_dat *const *dats, int n, const char *file,
              const int64_t *lo = nullptr, const int64_t *hi = nullptr,
              int nranges = 0);

} // namespace opdc::rt::io
#endif
