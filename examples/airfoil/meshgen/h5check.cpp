// h5check.cpp - test helper: reads new_grid.h5 the way OP2's
// op_decl_set_hdf5 / op_decl_map_hdf5 / op_decl_dat_hdf5 / op_get_const_hdf5
// do and compares it with new_grid.dat read the way OP2's airfoil reads it.
// SPDX-License-Identifier: Apache-2.0
//
//   opd-airfoil-meshgen-h5check new_grid.dat new_grid.h5 [--list]
//
// Exit status 0 when both files describe the same mesh (p_x equal to the
// .dat coordinates as fscanf reads them), 1 otherwise.

#include <hdf5.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

void fail(const std::string &msg) {
  std::fprintf(stderr, "h5check: %s\n", msg.c_str());
  ++failures;
}

struct Dataset {
  hsize_t size = 0, dim = 0;
  bool is_int = false, is_double = false;
};

// Shape and type from the dataspace and datatype (OP2's
// get_dataset_properties).
bool props(hid_t file, const char *name, Dataset &d) {
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  if (ds < 0) {
    fail(std::string("missing dataset ") + name);
    return false;
  }
  hid_t sp = H5Dget_space(ds);
  int nd = H5Sget_simple_extent_ndims(sp);
  hsize_t dims[2] = {0, 0};
  if (nd >= 1 && nd <= 2)
    H5Sget_simple_extent_dims(sp, dims, nullptr);
  d.size = dims[0];
  d.dim = nd > 1 ? dims[1] : 1;
  hid_t t = H5Dget_type(ds);
  d.is_int = H5Tequal(t, H5T_NATIVE_INT) > 0;
  d.is_double = H5Tequal(t, H5T_NATIVE_DOUBLE) > 0;
  H5Tclose(t);
  H5Sclose(sp);
  H5Dclose(ds);
  return true;
}

template <class T>
std::vector<T> read_all(hid_t file, const char *name, hid_t memtype,
                        size_t count) {
  std::vector<T> v(count);
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  if (ds < 0 ||
      H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    fail(std::string("cannot read ") + name);
  if (ds >= 0)
    H5Dclose(ds);
  return v;
}

int int_attr(hid_t file, const char *name, const char *attr) {
  int v = -1;
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t a = H5Aopen(ds, attr, H5P_DEFAULT);
  if (a < 0 || H5Aread(a, H5T_NATIVE_INT, &v) < 0)
    fail(std::string(name) + ": no " + attr);
  if (a >= 0)
    H5Aclose(a);
  H5Dclose(ds);
  return v;
}

std::string type_attr(hid_t file, const char *name) {
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t a = H5Aopen(ds, "type", H5P_DEFAULT);
  std::string s;
  if (a >= 0) {
    hsize_t len = H5Aget_storage_size(a);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len + 1);
    std::vector<char> buf(len + 1, '\0');
    H5Aread(a, t, buf.data());
    s = buf.data();
    H5Tclose(t);
    H5Aclose(a);
  } else {
    fail(std::string(name) + ": no type attribute");
  }
  H5Dclose(ds);
  return s;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(
        stderr,
        "usage: opd-airfoil-meshgen-h5check FILE.dat FILE.h5 [--list]\n");
    return 2;
  }
  const bool list = argc > 3 && std::strcmp(argv[3], "--list") == 0;

  // new_grid.dat, scanned as OP2's airfoil does.
  FILE *fp = std::fopen(argv[1], "r");
  if (!fp) {
    std::perror(argv[1]);
    return 1;
  }
  int nnode, ncell, nedge, nbedge;
  if (std::fscanf(fp, "%d %d %d %d \n", &nnode, &ncell, &nedge, &nbedge) != 4) {
    fail("bad .dat header");
    return 1;
  }
  std::vector<double> x(2 * (size_t)nnode);
  std::vector<int> cell(4 * (size_t)ncell), edge(2 * (size_t)nedge),
      ecell(2 * (size_t)nedge), bedge(2 * (size_t)nbedge), becell(nbedge),
      bound(nbedge);
  for (int n = 0; n < nnode; n++)
    if (std::fscanf(fp, "%lf %lf \n", &x[2 * n], &x[2 * n + 1]) != 2)
      fail("bad node line");
  for (int n = 0; n < ncell; n++)
    if (std::fscanf(fp, "%d %d %d %d \n", &cell[4 * n], &cell[4 * n + 1],
                    &cell[4 * n + 2], &cell[4 * n + 3]) != 4)
      fail("bad cell line");
  for (int n = 0; n < nedge; n++)
    if (std::fscanf(fp, "%d %d %d %d \n", &edge[2 * n], &edge[2 * n + 1],
                    &ecell[2 * n], &ecell[2 * n + 1]) != 4)
      fail("bad edge line");
  for (int n = 0; n < nbedge; n++)
    if (std::fscanf(fp, "%d %d %d %d \n", &bedge[2 * n], &bedge[2 * n + 1],
                    &becell[n], &bound[n]) != 4)
      fail("bad bedge line");
  std::fclose(fp);
  if (failures)
    return 1;

  hid_t file = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    fail(std::string("cannot open ") + argv[2]);
    return 1;
  }

  // Sets: a single int (op_decl_set_hdf5 reads it into an int).
  struct {
    const char *name;
    int expect;
  } sets[] = {
      {"nodes", nnode}, {"edges", nedge}, {"bedges", nbedge}, {"cells", ncell}};
  for (auto &s : sets) {
    Dataset d;
    if (!props(file, s.name, d))
      continue;
    auto v = read_all<int>(file, s.name, H5T_NATIVE_INT, 1);
    if (!d.is_int || d.size != 1 || v[0] != s.expect)
      fail(std::string("set ") + s.name + " wrong");
    if (list)
      std::printf("set  %-8s int[1] = %d\n", s.name, v[0]);
  }

  struct {
    const char *name;
    int from;
    int dim;
    const std::vector<int> *ref;
  } maps[] = {{"pedge", nedge, 2, &edge},
              {"pecell", nedge, 2, &ecell},
              {"pbedge", nbedge, 2, &bedge},
              {"pbecell", nbedge, 1, &becell},
              {"pcell", ncell, 4, &cell}};
  for (auto &m : maps) {
    Dataset d;
    if (!props(file, m.name, d))
      continue;
    if (!d.is_int || d.size != (hsize_t)m.from || d.dim != (hsize_t)m.dim)
      fail(std::string("map ") + m.name + " shape/type wrong");
    auto v =
        read_all<int>(file, m.name, H5T_NATIVE_INT, (size_t)m.from * m.dim);
    if (v != *m.ref)
      fail(std::string("map ") + m.name + " differs from .dat");
    const int sz = int_attr(file, m.name, "size"),
              dm = int_attr(file, m.name, "dim");
    const std::string ty = type_attr(file, m.name);
    if (sz != m.from || dm != m.dim || ty != "int")
      fail(std::string("map ") + m.name + " attrs");
    if (list)
      std::printf("map  %-8s int[%llu][%llu] size=%d dim=%d type=\"%s\"\n",
                  m.name, (unsigned long long)d.size, (unsigned long long)d.dim,
                  sz, dm, ty.c_str());
  }

  // Dats.
  {
    Dataset d;
    if (props(file, "p_bound", d)) {
      auto v = read_all<int>(file, "p_bound", H5T_NATIVE_INT, nbedge);
      if (!d.is_int || d.size != (hsize_t)nbedge || d.dim != 1 || v != bound)
        fail("p_bound differs");
    }
  }
  struct {
    const char *name;
    int set;
    int dim;
  } dats[] = {{"p_bound", nbedge, 1}, {"p_x", nnode, 2},   {"p_q", ncell, 4},
              {"p_qold", ncell, 4},   {"p_adt", ncell, 1}, {"p_res", ncell, 4}};
  for (auto &dd : dats) {
    Dataset d;
    if (!props(file, dd.name, d))
      continue;
    const bool is_int = std::strcmp(dd.name, "p_bound") == 0;
    if (d.size != (hsize_t)dd.set || d.dim != (hsize_t)dd.dim ||
        (is_int ? !d.is_int : !d.is_double))
      fail(std::string("dat ") + dd.name + " shape/type wrong");
    const int sz = int_attr(file, dd.name, "size"),
              dm = int_attr(file, dd.name, "dim");
    const std::string ty = type_attr(file, dd.name);
    if (dm != dd.dim || sz != dd.dim * (is_int ? 4 : 8) ||
        ty != (is_int ? "int" : "double"))
      fail(std::string("dat ") + dd.name + " attrs");
    if (list)
      std::printf("dat  %-8s %s[%llu][%llu] size=%d dim=%d type=\"%s\"\n",
                  dd.name, is_int ? "int" : "double",
                  (unsigned long long)d.size, (unsigned long long)d.dim, sz, dm,
                  ty.c_str());
  }
  {
    auto px =
        read_all<double>(file, "p_x", H5T_NATIVE_DOUBLE, 2 * (size_t)nnode);
    // OP2's file is converted from the .dat: p_x must equal the parsed text
    // bit for bit (including the sign of zeros).
    size_t differ = 0;
    for (size_t i = 0; i < px.size(); ++i)
      if (std::memcmp(&px[i], &x[i], sizeof(double)) != 0)
        ++differ;
    if (differ)
      fail("p_x differs from .dat in " + std::to_string(differ) + " values");
    if (list)
      std::printf("     p_x identical to the .dat coordinates\n");
    // Initial flow field: q = qinf in every cell, res = 0.
    auto q =
        read_all<double>(file, "p_q", H5T_NATIVE_DOUBLE, 4 * (size_t)ncell);
    auto qinf = read_all<double>(file, "qinf", H5T_NATIVE_DOUBLE, 4);
    for (size_t i = 0; i < q.size(); ++i)
      if (q[i] != qinf[i % 4]) {
        fail("p_q is not qinf in every cell");
        break;
      }
    auto res =
        read_all<double>(file, "p_res", H5T_NATIVE_DOUBLE, 4 * (size_t)ncell);
    for (double r : res)
      if (r != 0.0) {
        fail("p_res is not zero");
        break;
      }
  }

  // Constants (op_get_const_hdf5).
  struct {
    const char *name;
    int dim;
  } consts[] = {{"gam", 1},  {"gm1", 1},   {"cfl", 1}, {"eps", 1},
                {"mach", 1}, {"alpha", 1}, {"qinf", 4}};
  for (auto &c : consts) {
    Dataset d;
    if (!props(file, c.name, d))
      continue;
    auto v = read_all<double>(file, c.name, H5T_NATIVE_DOUBLE, c.dim);
    const int dm = int_attr(file, c.name, "dim");
    const std::string ty = type_attr(file, c.name);
    if (!d.is_double || d.size != (hsize_t)c.dim || dm != c.dim ||
        ty != "double")
      fail(std::string("const ") + c.name + " wrong");
    if (list) {
      std::printf("const %-7s double[%d] =", c.name, c.dim);
      for (double e : v)
        std::printf(" %.17g", e);
      std::printf("\n");
    }
  }
  H5Fclose(file);
  if (failures == 0)
    std::printf("h5check: OK\n");
  return failures ? 1 : 0;
}
