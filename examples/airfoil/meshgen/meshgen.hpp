// meshgen.hpp - OP2 Airfoil mesh generator (C++ port of OP2's naca0012.m).
// SPDX-License-Identifier: Apache-2.0
//
// The mesh is the structured C-type grid (with a wake cut) that OP2-Common
// builds with apps/mesh_generators/naca0012.m: a NACA0012 airfoil opened up
// by a complex square root into a shallow bump on a line, a rectangular
// (3I x J cells) grid above that line, and the grid squared back to the
// physical plane. See README.md for the
// algorithm and for why each numerical step is written the way it is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opd::meshgen {

// The airfoil mesh in OP2's representation, with 0-based ("C numbering")
// indices exactly as new_grid.dat and new_grid.h5 store them.
struct AirfoilMesh {
  long I = 0, J = 0; // generator parameters: 3I x J cells

  int nnode = 0, ncell = 0, nedge = 0, nbedge = 0;

  std::vector<double> x;   // [nnode][2] node coordinates      (p_x)
  std::vector<int> cell;   // [ncell][4] cell -> nodes          (pcell)
  std::vector<int> edge;   // [nedge][2] edge -> nodes          (pedge)
  std::vector<int> ecell;  // [nedge][2] edge -> cells          (pecell)
  std::vector<int> bedge;  // [nbedge][2] boundary edge -> nodes (pbedge)
  std::vector<int> becell; // [nbedge] boundary edge -> cell    (pbecell)
  std::vector<int> bound;  // [nbedge] 1 = airfoil wall, 2 = far field (p_bound)
};

// Largest I, J accepted: every count must fit OP2's 32-bit int indices.
bool sizes_fit_int(long I, long J);

// Builds the mesh for the given parameters (I >= 1, J >= 1, sizes_fit_int).
AirfoilMesh generate(long I, long J);

// Renumbers nodes, cells, edges and boundary edges at random (seeded,
// deterministic): the same mesh with the numbering of an unstructured mesh
// generator, for locality studies (docs/performance.md, --renumber).
void shuffle(AirfoilMesh &m, unsigned seed);

// OP2's flow constants and initial state, as OP2's airfoil/convert_mesh set
// them (float literals widened to double).
struct FlowConstants {
  double gam, gm1, cfl, eps, mach, alpha, qinf[4];
};
FlowConstants flow_constants();

// Writers. Each returns an empty string on success, else an error message.
std::string write_dat(const AirfoilMesh &m, const std::string &path);
std::string write_hdf5(const AirfoilMesh &m, const std::string &path);

} // namespace opd::meshgen
