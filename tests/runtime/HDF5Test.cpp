// HDF5Test.cpp - HDF5 I/O in OP2's layout: round trips, OP2's files, errors;
// the other outputs of opd_dat_write (CSV, numbered files, VTKHDF beside).
// SPDX-License-Identifier: Apache-2.0
#include "TestUtil.h"
#include "core/Objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hdf5.h>

#include <cstring>
#include <fstream>
#include <random>

using opdc::rt::test::tempPath;
using ::testing::ExitedWithCode;
using ::testing::HasSubstr;

namespace {

class HDF5Test : public ::testing::Test {
protected:
  void SetUp() override { opd_rt_init(0, nullptr, "rt", nullptr, 0); }
  void TearDown() override { opd_rt_finalize(); }
};

void randomBytes(opd_dat *d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto *p = static_cast<unsigned char *>(opd_dat_data(d));
  int64_t n = d->elements * d->elementBytes();
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<unsigned char>(rng());
  if (d->type == OPD_BOOL)
    for (int64_t i = 0; i < n; ++i)
      p[i] &= 1;
  if (d->type == OPD_F64 || d->type == OPD_F32) // no NaN payloads
    for (int64_t i = 0; i < d->elements * d->dim; ++i) {
      if (d->type == OPD_F64)
        static_cast<double *>(opd_dat_data(d))[i] = double(rng() % 100000) / 7;
      else
        static_cast<float *>(opd_dat_data(d))[i] = float(rng() % 1000) / 7;
    }
}

bool sameBytes(opd_dat *a, opd_dat *b) {
  return a->elements == b->elements &&
         std::memcmp(opd_dat_data(a), opd_dat_data(b),
                     std::size_t(a->elements * a->elementBytes())) == 0;
}

// Writes one dataset directly with the HDF5 API (shapes and types our
// writer never produces).
template <typename T>
void writeRaw(const std::string &file, const char *name, hid_t type,
              std::vector<hsize_t> dims, const std::vector<T> &values,
              bool truncate = true) {
  hid_t f = truncate ? H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT,
                                 H5P_DEFAULT)
                     : H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t s = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t d = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Dclose(d);
  H5Sclose(s);
  H5Fclose(f);
}

TEST_F(HDF5Test, SetDatsRoundTripEveryType) {
  std::string file = tempPath("dats.h5");
  opd_set *s = opd_set_create("cells", 1000);
  opd_dat *out[5] = {
      opd_dat_create("q", s, OPD_F64, 4), opd_dat_create("adt", s, OPD_F32, 1),
      opd_dat_create("id", s, OPD_I32, 2), opd_dat_create("gid", s, OPD_I64, 1),
      opd_dat_create("on", s, OPD_BOOL, 3)};
  for (int i = 0; i < 5; ++i)
    randomBytes(out[i], uint64_t(i) + 1);
  opd_dat_write(out, 5, file.c_str());

  opd_dat *in[5];
  for (int i = 0; i < 5; ++i)
    in[i] = opd_dat_create(out[i]->name.c_str(), s, opd_scalar(out[i]->type),
                           out[i]->dim);
  opd_dat_read(in, 5, file.c_str());
  for (int i = 0; i < 5; ++i)
    EXPECT_TRUE(sameBytes(in[i], out[i])) << out[i]->name;
  opd_dat *q = opd_dat_from_file("q", s, OPD_F64, 4, file.c_str());
  EXPECT_TRUE(sameBytes(q, out[0]));
}

std::string readTypeAttr(hid_t d) {
  hid_t a = H5Aopen(d, "type", H5P_DEFAULT);
  hid_t t = H5Aget_type(a);
  std::string s(H5Tget_size(t), '\0');
  H5Aread(a, t, s.data());
  H5Tclose(t);
  H5Aclose(a);
  return s;
}
int readIntAttr(hid_t d, const char *name) {
  int v = -1;
  hid_t a = H5Aopen(d, name, H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT, &v);
  H5Aclose(a);
  return v;
}

TEST_F(HDF5Test, WritesOP2Layout) {
  std::string file = tempPath("layout.h5");
  opd_set *s = opd_set_create("nodes", 10);
  opd_dat *x = opd_dat_create("p_x", s, OPD_F64, 2);
  opd_dat *b = opd_dat_create("p_bound", s, OPD_I32, 1);
  opd_dat *dats[2] = {x, b};
  opd_dat_write(dats, 2, file.c_str());
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t d = H5Dopen2(f, "p_x", H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t dims[2];
  ASSERT_EQ(H5Sget_simple_extent_ndims(sp), 2);
  H5Sget_simple_extent_dims(sp, dims, nullptr);
  EXPECT_EQ(dims[0], 10u);
  EXPECT_EQ(dims[1], 2u);
  hid_t t = H5Dget_type(d);
  EXPECT_GT(H5Tequal(t, H5T_NATIVE_DOUBLE), 0);
  EXPECT_EQ(readIntAttr(d, "size"), 16);
  EXPECT_EQ(readIntAttr(d, "dim"), 2);
  EXPECT_EQ(readTypeAttr(d), "double");
  H5Tclose(t);
  H5Sclose(sp);
  H5Dclose(d);
  d = H5Dopen2(f, "p_bound", H5P_DEFAULT);
  t = H5Dget_type(d);
  EXPECT_GT(H5Tequal(t, H5T_NATIVE_INT), 0);
  EXPECT_EQ(readIntAttr(d, "size"), 4);
  EXPECT_EQ(readTypeAttr(d), "int");
  H5Tclose(t);
  H5Dclose(d);
  H5Fclose(f);
}

TEST_F(HDF5Test, BlockDatsWithoutHalos) {
  std::string file = tempPath("block.h5");
  opd_block *g = opd_block_create("grid", 2);
  int64_t size[2] = {5, 3}, hm[2] = {1, 2}, hp[2] = {2, 1}, base[2] = {0, 0};
  opd_dat *u = opd_block_dat_create("u", g, OPD_F64, 2, size, hm, hp, base);
  int64_t st[2];
  auto *o = static_cast<double *>(opd_dat_origin(u, st));
  double fill[2] = {-1, -1};
  opd_dat_fill(u, fill); // halos too: they must not be written
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i)
      for (int c = 0; c < 2; ++c)
        o[(i * st[0] + j * st[1]) * 2 + c] = 100 * j + 10 * i + c;
  opd_dat_write(&u, 1, file.c_str());

  // [s1][s0][dim], dimension 0 fastest.
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "u", H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t dims[3];
  ASSERT_EQ(H5Sget_simple_extent_ndims(sp), 3);
  H5Sget_simple_extent_dims(sp, dims, nullptr);
  EXPECT_EQ(dims[0], 3u);
  EXPECT_EQ(dims[1], 5u);
  EXPECT_EQ(dims[2], 2u);
  std::vector<double> raw(30);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[2 * (1 * 5 + 4) + 1], 141);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);

  // Back into a dat with other halos: interior equal, halos untouched.
  int64_t hm2[2] = {0, 3}, hp2[2] = {1, 0};
  opd_dat *v = opd_block_dat_create("u", g, OPD_F64, 2, size, hm2, hp2, base);
  opd_dat_read(&v, 1, file.c_str());
  auto *ov = static_cast<double *>(opd_dat_origin(v, st));
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i)
      for (int c = 0; c < 2; ++c)
        ASSERT_EQ(ov[(i * st[0] + j * st[1]) * 2 + c], 100 * j + 10 * i + c);
  auto *all = static_cast<double *>(opd_dat_data(v));
  int nonzero = 0;
  for (int64_t k = 0; k < v->elements * 2; ++k)
    nonzero += all[k] != 0;
  EXPECT_EQ(nonzero, 29); // every interior value but (0, 0, 0)
}

// Rows padded to whole cache lines (lib/core/Mesh.cpp) never reach the
// file: it holds the packed interior, as for dense rows, and reads back
// into dats of other halos (and other padding) point for point.
TEST_F(HDF5Test, BlockDatsWithPaddedRowsRoundTrip) {
  std::string file = tempPath("padded.h5");
  opd_block *g = opd_block_create("cube", 3);
  int64_t size[3] = {69, 4, 3}, hm[3] = {1, 1, 1}, hp[3] = {1, 0, 2},
          base[3] = {0, 0, 0};
  opd_dat *u = opd_block_dat_create("u", g, OPD_F64, 1, size, hm, hp, base);
  int64_t st[3];
  auto *o = static_cast<double *>(opd_dat_origin(u, st));
  ASSERT_EQ(st[1], 72) << "71 points a row, padded to 9 lines";
  ASSERT_EQ(st[2], 72 * 5);
  double fill = -1;
  opd_dat_fill(u, &fill); // halos and padding: never written
  auto value = [](int i, int j, int k) { return 10000.0 * k + 100 * j + i; };
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 69; ++i)
        o[i + j * st[1] + k * st[2]] = value(i, j, k);
  opd_dat_write(&u, 1, file.c_str());

  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "u", H5P_DEFAULT);
  std::vector<double> raw(3 * 4 * 69);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data());
  H5Dclose(d);
  H5Fclose(f);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 69; ++i)
        ASSERT_EQ(raw[std::size_t((k * 4 + j) * 69 + i)], value(i, j, k));

  int64_t hm2[3] = {3, 0, 0}, hp2[3] = {0, 2, 0};
  opd_dat *v = opd_block_dat_create("u", g, OPD_F64, 1, size, hm2, hp2, base);
  opd_dat_read(&v, 1, file.c_str());
  auto *ov = static_cast<double *>(opd_dat_origin(v, st));
  EXPECT_EQ(st[1], 72);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 69; ++i)
        ASSERT_EQ(ov[i + j * st[1] + k * st[2]], value(i, j, k));
  auto *all = static_cast<double *>(opd_dat_data(v));
  int nonzero = 0;
  for (int64_t e = 0; e < opd_dat_stored_points(v); ++e)
    nonzero += all[e] != 0;
  EXPECT_EQ(nonzero, 3 * 4 * 69 - 1); // every interior value but (0, 0, 0)
}

TEST_F(HDF5Test, ConvertsCompatibleTypes) {
  std::string file = tempPath("convert.h5");
  writeRaw<int32_t>(file, "a", H5T_NATIVE_INT, {4, 1}, {1, -2, 3, 4});
  writeRaw<double>(file, "b", H5T_NATIVE_DOUBLE, {4}, {0.1, 2, 3, 4}, false);
  writeRaw<int64_t>(file, "c", H5T_NATIVE_INT64, {4, 1}, {1, 2, -3, 1 << 30},
                    false);
  writeRaw<uint8_t>(file, "d", H5T_NATIVE_UINT8, {4, 1}, {1, 0, 1, 1}, false);
  opd_set *s = opd_set_create("s", 4);
  auto *a = static_cast<double *>(
      opd_dat_data(opd_dat_from_file("a", s, OPD_F64, 1, file.c_str())));
  EXPECT_EQ(a[1], -2.0);
  auto *b = static_cast<float *>(
      opd_dat_data(opd_dat_from_file("b", s, OPD_F32, 1, file.c_str())));
  EXPECT_EQ(b[0], 0.1f);
  auto *c = static_cast<int32_t *>(
      opd_dat_data(opd_dat_from_file("c", s, OPD_I32, 1, file.c_str())));
  EXPECT_EQ(c[2], -3);
  EXPECT_EQ(c[3], 1 << 30);
  auto *c64 = static_cast<int64_t *>(
      opd_dat_data(opd_dat_from_file("a", s, OPD_I64, 1, file.c_str())));
  EXPECT_EQ(c64[1], -2);
  auto *d = static_cast<uint8_t *>(
      opd_dat_data(opd_dat_from_file("d", s, OPD_BOOL, 1, file.c_str())));
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[1], 0);
}

#ifdef OPD_RT_MESHGEN
TEST_F(HDF5Test, ReadsOP2AirfoilMesh) {
  std::string h5 = tempPath("new_grid.h5"), dat = tempPath("new_grid.dat");
  auto r = opdc::rt::test::runProgram(
      OPD_RT_MESHGEN, {"--I=20", "--J=30", "--h5", h5, "--dat", dat});
  ASSERT_EQ(r.status, 0) << r.err;
  opd_set *nodes = opd_set_from_file("nodes", h5.c_str());
  opd_set *edges = opd_set_from_file("edges", h5.c_str());
  opd_set *bedges = opd_set_from_file("bedges", h5.c_str());
  opd_set *cells = opd_set_from_file("cells", h5.c_str());
  EXPECT_EQ(opd_set_size(nodes), 1891);
  EXPECT_EQ(opd_set_size(cells), 1800);
  EXPECT_EQ(opd_set_size(edges), 3530);
  EXPECT_EQ(opd_set_size(bedges), 140);
  opd_map *pedge = opd_map_from_file("pedge", edges, nodes, 2, h5.c_str());
  opd_map_from_file("pecell", edges, cells, 2, h5.c_str());
  opd_map_from_file("pbedge", bedges, nodes, 2, h5.c_str());
  opd_map_from_file("pbecell", bedges, cells, 1, h5.c_str());
  opd_map *pcell = opd_map_from_file("pcell", cells, nodes, 4, h5.c_str());
  opd_dat *x = opd_dat_from_file("p_x", nodes, OPD_F64, 2, h5.c_str());
  opd_dat *q = opd_dat_from_file("p_q", cells, OPD_F64, 4, h5.c_str());
  opd_dat *bound = opd_dat_from_file("p_bound", bedges, OPD_I32, 1, h5.c_str());

  // The same numbers as the text file.
  std::ifstream text(dat);
  int64_t nn, nc, ne, nb;
  text >> nn >> nc >> ne >> nb;
  auto *xv = static_cast<double *>(opd_dat_data(x));
  for (int64_t i = 0; i < nn * 2; ++i) {
    double v;
    text >> v;
    ASSERT_EQ(xv[i], v);
  }
  for (int64_t i = 0; i < nc * 4; ++i) {
    int v;
    text >> v;
    ASSERT_EQ(pcell->data[i], v);
  }
  for (int64_t e = 0; e < ne; ++e) {
    int a, b, c, d;
    text >> a >> b >> c >> d;
    ASSERT_EQ(pedge->data[2 * e], a);
    ASSERT_EQ(pedge->data[2 * e + 1], b);
  }
  auto *qv = static_cast<double *>(opd_dat_data(q));
  for (int64_t i = 4; i < nc * 4; ++i)
    ASSERT_EQ(qv[i], qv[i % 4]);
  auto *bv = static_cast<int32_t *>(opd_dat_data(bound));
  for (int64_t i = 0; i < nb; ++i)
    ASSERT_TRUE(bv[i] == 1 || bv[i] == 2);

  // Our own output of OP2's dats reads back the same.
  std::string out = tempPath("written.h5");
  opd_dat *dats[2] = {x, q};
  opd_dat_write(dats, 2, out.c_str());
  opd_dat *x2 = opd_dat_from_file("p_x", nodes, OPD_F64, 2, out.c_str());
  EXPECT_TRUE(sameBytes(x, x2));
}
#endif

//===-- Errors --------------------------------------------------------------===

TEST_F(HDF5Test, MissingFile) {
  EXPECT_EXIT(opd_set_from_file("nodes", "no/such/mesh.h5"), ExitedWithCode(1),
              HasSubstr("rt: error: cannot open HDF5 file 'no/such/mesh.h5': "
                        "No such file or directory\n"));
}

TEST_F(HDF5Test, NotAnHDF5File) {
  std::string file = tempPath("text.h5");
  std::ofstream(file) << "not hdf5\n";
  EXPECT_EXIT(
      opd_set_from_file("nodes", file.c_str()), ExitedWithCode(1),
      HasSubstr("rt: error: file '" + file + "' is not an HDF5 file\n"));
}

TEST_F(HDF5Test, MissingDataset) {
  std::string file = tempPath("missing.h5");
  writeRaw<int32_t>(file, "nodes", H5T_NATIVE_INT, {1}, {5});
  opd_set *s = opd_set_create("cells", 5);
  EXPECT_EXIT(opd_dat_from_file("p_q", s, OPD_F64, 4, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("rt: error: file '" + file +
                        "' has no dataset 'p_q' (for dat 'p_q' on set "
                        "'cells' of f64[4])\n"));
}

TEST_F(HDF5Test, WrongShape) {
  std::string file = tempPath("shape.h5");
  writeRaw<double>(file, "p_q", H5T_NATIVE_DOUBLE, {5, 3},
                   std::vector<double>(15, 1.0));
  opd_set *s = opd_set_create("cells", 5);
  EXPECT_EXIT(opd_dat_from_file("p_q", s, OPD_F64, 4, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("rt: error: file '" + file +
                        "', dataset 'p_q': expected shape [5][4], found "
                        "[5][3] (for dat 'p_q' on set 'cells' of f64[4])\n"));
  opd_set *t = opd_set_create("nodes", 6);
  EXPECT_EXIT(opd_map_from_file("p_q", s, t, 3, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("dataset 'p_q': expected integer data for i32, found "
                        "64-bit float (for map 'p_q' (cells -> nodes, arity "
                        "3))\n"));
}

TEST_F(HDF5Test, WrongType) {
  std::string file = tempPath("type.h5");
  writeRaw<double>(file, "ids", H5T_NATIVE_DOUBLE, {3, 1}, {1, 2, 3});
  opd_set *s = opd_set_create("s", 3);
  EXPECT_EXIT(opd_dat_from_file("ids", s, OPD_I32, 1, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("rt: error: file '" + file +
                        "', dataset 'ids': expected integer data for i32, "
                        "found 64-bit float (for dat 'ids' on set 's' of "
                        "i32[1])\n"));
}

TEST_F(HDF5Test, IntegerOutOfRange) {
  std::string file = tempPath("range.h5");
  writeRaw<int64_t>(file, "big", H5T_NATIVE_INT64, {3, 1},
                    {1, 2, 3000000000LL});
  writeRaw<int32_t>(file, "flags", H5T_NATIVE_INT, {3, 1}, {1, 2, 0}, false);
  opd_set *s = opd_set_create("s", 3);
  EXPECT_EXIT(opd_dat_from_file("big", s, OPD_I32, 1, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("dataset 'big': value 3000000000 at [2][0] does not "
                        "fit in i32"));
  EXPECT_EXIT(opd_dat_from_file("flags", s, OPD_BOOL, 1, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("dataset 'flags': value 2 at [1][0] is not a bool (0 "
                        "or 1)"));
}

TEST_F(HDF5Test, MapIndexOutOfRange) {
  std::string file = tempPath("map.h5");
  writeRaw<int32_t>(file, "pedge", H5T_NATIVE_INT, {3, 2}, {0, 1, 1, 2, 4, 7});
  opd_set *edges = opd_set_create("edges", 3);
  opd_set *nodes = opd_set_create("nodes", 5);
  EXPECT_EXIT(opd_map_from_file("pedge", edges, nodes, 2, file.c_str()),
              ExitedWithCode(1),
              HasSubstr("rt: error: file '" + file +
                        "', dataset 'pedge': map 'pedge' (edges -> nodes): "
                        "index 7 at [2][1] is out of range for set 'nodes' "
                        "of size 5\n"));
}

TEST_F(HDF5Test, SetDatasetMustHoldOneInteger) {
  std::string file = tempPath("set.h5");
  writeRaw<int32_t>(file, "nodes", H5T_NATIVE_INT, {2}, {5, 6});
  writeRaw<int32_t>(file, "neg", H5T_NATIVE_INT, {1}, {-5}, false);
  writeRaw<double>(file, "real", H5T_NATIVE_DOUBLE, {1}, {5}, false);
  EXPECT_EXIT(opd_set_from_file("nodes", file.c_str()), ExitedWithCode(1),
              HasSubstr("dataset 'nodes': expected one integer (the set "
                        "size), found shape [2] (for set 'nodes')\n"));
  EXPECT_EXIT(opd_set_from_file("neg", file.c_str()), ExitedWithCode(1),
              HasSubstr("dataset 'neg': the set size -5 is negative"));
  EXPECT_EXIT(opd_set_from_file("real", file.c_str()), ExitedWithCode(1),
              HasSubstr("dataset 'real': expected integer data for i64, "
                        "found 64-bit float"));
}

TEST_F(HDF5Test, UnwritableFile) {
  opd_set *s = opd_set_create("s", 3);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  EXPECT_EXIT(opd_dat_write(&d, 1, "no/such/dir/out.h5"), ExitedWithCode(1),
              HasSubstr("rt: error: cannot create HDF5 file "
                        "'no/such/dir/out.h5'\n"));
  opd_dat *twice[2] = {d, d};
  EXPECT_EXIT(opd_dat_write(twice, 2, tempPath("twice.h5").c_str()),
              ExitedWithCode(1),
              HasSubstr("cannot write dat 'd' twice to HDF5 file"));
}

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool exists(const std::string &path) { return std::ifstream(path).good(); }

TEST_F(HDF5Test, CsvOfEveryType) {
  opd_set *s = opd_set_create("cells", 3);
  opd_dat *d[5] = {
      opd_dat_create("q", s, OPD_F64, 2), opd_dat_create("f", s, OPD_F32, 1),
      opd_dat_create("k", s, OPD_I32, 1), opd_dat_create("w", s, OPD_I64, 1),
      opd_dat_create("on", s, OPD_BOOL, 1)};
  for (int i = 0; i < 3; ++i) {
    static_cast<double *>(opd_dat_data(d[0]))[2 * i] = 0.1 * i;
    static_cast<double *>(opd_dat_data(d[0]))[2 * i + 1] = -1e-5 * i;
    static_cast<float *>(opd_dat_data(d[1]))[i] = 0.1f + float(i);
    static_cast<int32_t *>(opd_dat_data(d[2]))[i] = -7 * i;
    static_cast<int64_t *>(opd_dat_data(d[3]))[i] = int64_t(i) << 40;
    static_cast<uint8_t *>(opd_dat_data(d[4]))[i] = uint8_t(i % 2);
  }
  std::string file = tempPath("dump.CSV");
  opd_dat_write(d, 5, file.c_str());
  // Shortest round-trip floats (f32 at float precision), no HDF5 left.
  EXPECT_EQ(slurp(file), "index,q[0],q[1],f,k,w,on\n"
                         "0,0.0,-0.0,0.1,0,0,0\n"
                         "1,0.1,-1e-05,1.1,-7,1099511627776,1\n"
                         "2,0.2,-2e-05,2.1,-14,2199023255552,0\n");
  EXPECT_FALSE(exists(file + ".tmp.h5"));
  EXPECT_FALSE(exists(tempPath("dump.vtkhdf")));
}

TEST_F(HDF5Test, CsvOfABlockWithItsIndices) {
  opd_block *b = opd_block_create("grid", 2);
  const int64_t size[2] = {2, 2}, halo[2] = {1, 1}, base[2] = {1, -1};
  opd_dat *u = opd_block_dat_create("u", b, OPD_I32, 1, size, halo, halo, base);
  int64_t strides[3];
  auto *origin = static_cast<int32_t *>(opd_dat_origin(u, strides));
  for (int64_t j = -1; j < 1; ++j)
    for (int64_t i = 1; i < 3; ++i)
      origin[i * strides[0] + j * strides[1]] = int32_t(10 * i + j);
  std::string file = tempPath("u.csv");
  opd_dat_write(&u, 1, file.c_str());
  EXPECT_EQ(slurp(file), "i,j,u\n1,-1,9\n2,-1,19\n1,0,10\n2,0,20\n");
}

TEST_F(HDF5Test, CsvHoldsOneSet) {
  opd_set *a = opd_set_create("a", 2), *c = opd_set_create("c", 2);
  opd_dat *d[2] = {opd_dat_create("x", a, OPD_F64, 1),
                   opd_dat_create("y", c, OPD_F64, 1)};
  EXPECT_EXIT(opd_dat_write(d, 2, tempPath("xy.csv").c_str()),
              ExitedWithCode(1),
              HasSubstr("cannot write dat 'x' on set 'a' and dat 'y' on set "
                        "'c' to one CSV file"));
}

TEST_F(HDF5Test, HashesNumberTheWritesOfOneName) {
  opd_set *s = opd_set_create("s", 4);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  const std::string pattern = tempPath("series_###.h5");
  for (int k = 0; k < 3; ++k) {
    static_cast<double *>(opd_dat_data(d))[0] = k;
    opd_dat_write(&d, 1, pattern.c_str());
  }
  for (const char *n : {"series_000.h5", "series_001.h5", "series_002.h5"})
    EXPECT_TRUE(exists(tempPath(n))) << n;
  EXPECT_FALSE(exists(tempPath("series_003.h5")));
  opd_dat *back = opd_dat_create("d", s, OPD_F64, 1);
  opd_dat_read(&back, 1, tempPath("series_002.h5").c_str());
  EXPECT_EQ(static_cast<double *>(opd_dat_data(back))[0], 2.0);
  // A set with no coordinates: nothing to show, no VTKHDF file.
  EXPECT_FALSE(exists(tempPath("series_000.vtkhdf")));
}

TEST_F(HDF5Test, VtkHdfBesideOutputsOnAMesh) {
  opd_set *nodes = opd_set_create("nodes", 4),
          *cells = opd_set_create("cells", 1);
  opd_map *m = opd_map_create("cell_nodes", cells, nodes, 4);
  for (int k = 0; k < 4; ++k)
    opd_map_data(m)[k] = k;
  opd_dat *x = opd_dat_create("node_xy", nodes, OPD_F64, 2);
  opd_dat *q = opd_dat_create("q", cells, OPD_F32, 1);
  const double xy[8] = {0, 0, 1, 0, 1, 1, 0, 1};
  std::memcpy(opd_dat_data(x), xy, sizeof xy);
  static_cast<float *>(opd_dat_data(q))[0] = 2.5f;
  const std::string file = tempPath("mesh_out.h5");
  opd_dat_write(&q, 1, file.c_str());
  const std::string vtk = tempPath("mesh_out.vtkhdf");
  hid_t f = H5Fopen(vtk.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  auto read = [&](const char *name, hid_t type, void *out) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    ASSERT_GE(d, 0) << name;
    EXPECT_GE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), 0);
    H5Dclose(d);
  };
  double points[12];
  int64_t conn[4], offsets[2];
  uint8_t types[1];
  float value[1];
  read("/VTKHDF/Points", H5T_NATIVE_DOUBLE, points);
  read("/VTKHDF/Connectivity", H5T_NATIVE_INT64, conn);
  read("/VTKHDF/Offsets", H5T_NATIVE_INT64, offsets);
  read("/VTKHDF/Types", H5T_NATIVE_UINT8, types);
  read("/VTKHDF/CellData/q", H5T_NATIVE_FLOAT, value);
  H5Fclose(f);
  EXPECT_EQ(points[3], 1.0);
  EXPECT_EQ(points[5], 0.0); // z of a 2D mesh
  EXPECT_EQ(points[7], 1.0);
  EXPECT_EQ(conn[2], 2);
  EXPECT_EQ(offsets[1], 4);
  EXPECT_EQ(types[0], 9); // VTK_QUAD
  EXPECT_EQ(value[0], 2.5f);
  EXPECT_FALSE(exists(tempPath("mesh_out.mesh.tmp.h5")));
}

} // namespace
