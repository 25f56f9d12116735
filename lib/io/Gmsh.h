// Gmsh.h - Sets, maps and dats from Gmsh .msh 4.1 files (Gmsh.cpp): the
// `from FILE` declarations take this path when FILE is a Gmsh mesh.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_IO_GMSH_H
#define OPDC_LIB_IO_GMSH_H

#include "opd_rt.h"

namespace opdc::rt::gmsh {
/// FILE ends in .msh or starts with $MeshFormat.
bool isGmshFile(const char *file);
opd_set *setFromFile(const char *name, const char *file);
opd_map *mapFromFile(const char *name, opd_set *from, opd_set *to, int arity,
                     const char *file);
opd_dat *datFromFile(const char *name, opd_set *set, opd_scalar type, int dim,
                     const char *file);
} // namespace opdc::rt::gmsh
#endif
