// Output.cpp - `write DATS to FILE`: the file name chooses the output
// (docs/io.md). "*.csv": CSV text. Otherwise HDF5 in OP2's layout plus a
// VTKHDF file beside it (FILE with .vtkhdf for .h5) that ParaView opens. A
// run of '#' in the name numbers the writes of that name: "u_####.h5"
// writes u_0000.h5, u_0001.h5, ... (and u_0000.vtkhdf, ...: ParaView opens
// the numbered files as one time series). Strings have no formatting in
// the language; this keeps a time series a one-line change.
// SPDX-License-Identifier: Apache-2.0
#include "io/Output.h"
#include "core/Dist.h"
#include "core/Format.h"
#include "core/Objects.h"
#include "core/Runtime.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace opdc::rt::io {
namespace {

bool endsWith(const std::string &s, const char *tail) {
  const std::size_t n = std::strlen(tail);
  if (s.size() < n)
    return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) !=
        tail[i])
      return false;
  return true;
}

// FILE without its HDF5 extension.
std::string withoutH5(const std::string &file) {
  for (const char *ext : {".h5", ".hdf5", ".hdf", ".he5"})
    if (endsWith(file, ext))
      return file.substr(0, file.size() - std::strlen(ext));
  return file;
}

std::string scalarText(const char *p, int type) {
  switch (type) {
  case OPD_F64: {
    double v;
    std::memcpy(&v, p, sizeof v);
    return formatF64(v);
  }
  case OPD_F32: {
    float v;
    std::memcpy(&v, p, sizeof v);
    return formatF32(v);
  }
  case OPD_I32: {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return std::to_string(v);
  }
  case OPD_I64: {
    int64_t v;
    std::memcpy(&v, p, sizeof v);
    return std::to_string(v);
  }
  default:
    return *p ? "1" : "0";
  }
}

// Why `b` cannot share a CSV file with `a` ("" if it can).
std::string csvMismatch(const opd_dat *a, const opd_dat *b) {
  if (a->set || b->set)
    return a->set == b->set ? "" : a->describe() + " and " + b->describe();
  bool same = a->block == b->block && a->ndims == b->ndims;
  for (int k = 0; same && k < a->ndims; ++k)
    same = a->size[k] == b->size[k] && a->base[k] == b->base[k];
  return same ? ""
              : a->describe() + " and " + b->describe() +
                    " (their blocks, sizes or bases differ)";
}

} // namespace

// A scratch HDF5 file for a CSV dump to standard output, in $TMPDIR (or
// /tmp) with rank 0's process id, which every rank receives: the ranks
// write one file collectively.
std::string stdoutScratch() {
  int64_t pid = dist::rank() == 0 ? int64_t(getpid()) : 0;
  dist::broadcast(&pid, sizeof pid);
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/opd-csv-" +
         std::to_string(pid) + ".tmp.h5";
}

// The points of `d` a ranged write keeps, checked against its extent:
// [lo, hi) per dimension (the set's element indices, or the block's indices
// base included); the whole extent without ranges.
struct PointRange {
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  bool contains(const opd_dat *d, int64_t p) const {
    if (d->set)
      return p >= lo[0] && p < hi[0];
    for (int k = 0; k < d->ndims; ++k) {
      const int64_t i = d->base[k] + p % d->size[k];
      if (i < lo[k] || i >= hi[k])
        return false;
      p /= d->size[k];
    }
    return true;
  }
};

PointRange checkedRange(const opd_dat *d, const char *file, const int64_t *lo,
                        const int64_t *hi, int nranges) {
  PointRange r;
  const int dims = d->set ? 1 : d->ndims;
  for (int k = 0; k < dims; ++k) {
    r.lo[k] = d->set ? 0 : d->base[k];
    r.hi[k] = d->set ? d->set->globalSize : d->base[k] + d->size[k];
  }
  if (nranges == 0)
    return r;
  if (nranges != dims)
    opd_rt_fail_allf("write of %s to '%s' over %d ranges: it has %d "
                     "dimension%s",
                     d->describe().c_str(), file, nranges, dims,
                     dims == 1 ? "" : "s");
  for (int k = 0; k < dims; ++k) {
    if (lo[k] < r.lo[k] || hi[k] > r.hi[k])
      opd_rt_fail_allf("write of %s to '%s': range %" PRId64 " .. %" PRId64
                       "%s is outside its %s %" PRId64 " .. %" PRId64
                       "; write a range inside them",
                       d->describe().c_str(), file, lo[k], hi[k],
                       dims > 1 ? (" of dimension " + std::to_string(k)).c_str()
                                : "",
                       d->set ? "elements" : "points", r.lo[k], r.hi[k]);
    r.lo[k] = lo[k];
    r.hi[k] = std::max(lo[k], hi[k]);
  }
  return r;
}

void writeCSV(opd_dat *const *dats, int n, const char *file, const int64_t *lo,
              const int64_t *hi, int nranges) {
  for (int i = 1; i < n; ++i) {
    std::string why = csvMismatch(dats[0], dats[i]);
    if (!why.empty())
      opd_rt_fail_allf("cannot write %s to one CSV file '%s': a CSV file "
                       "holds dats of one set, or of one block and size; "
                       "write them to separate files",
                       why.c_str(), file);
  }
  const PointRange range = checkedRange(dats[0], file, lo, hi, nranges);
  const bool toStdout = std::strcmp(file, "-") == 0;
  // The HDF5 path gathers the rows in the original numbering for any rank
  // count; rank 0 reads them back and prints them.
  const std::string tmp =
      toStdout ? stdoutScratch() : std::string(file) + ".tmp.h5";
  writeHDF5(dats, n, tmp.c_str());
  std::string error;
  if (dist::rank() == 0) {
    CaptureFailures capture;
    try {
      std::vector<std::vector<char>> data;
      for (int i = 0; i < n; ++i)
        data.push_back(readWhole(tmp.c_str(), dats[i]));
      std::remove(tmp.c_str());
      const opd_dat *d0 = dats[0];
      std::fflush(stdout);
      FILE *f = toStdout ? stdout : std::fopen(file, "w");
      if (!f)
        failf("cannot create CSV file '%s'", file);
      std::string line;
      if (d0->set) {
        line = "index";
      } else {
        static const char *axes[] = {"i", "j", "k"};
        for (int k = 0; k < d0->ndims; ++k)
          line += std::string(k ? "," : "") + axes[k];
      }
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < dats[i]->dim; ++c)
          line += "," + dats[i]->name +
                  (dats[i]->dim > 1 ? "[" + std::to_string(c) + "]" : "");
      bool ok = std::fprintf(f, "%s\n", line.c_str()) >= 0;
      const int64_t points =
          d0->set ? d0->set->globalSize : d0->interiorPoints();
      for (int64_t p = 0; p < points && ok; ++p) {
        if (!range.contains(d0, p))
          continue;
        if (d0->set) {
          line = std::to_string(p);
        } else {
          line.clear();
          int64_t rest = p;
          for (int k = 0; k < d0->ndims; ++k) {
            line += (k ? "," : "") +
                    std::to_string(d0->base[k] + rest % d0->size[k]);
            rest /= d0->size[k];
          }
        }
        for (int i = 0; i < n; ++i) {
          const int bytes = scalarBytes(dats[i]->type);
          for (int c = 0; c < dats[i]->dim; ++c)
            line += "," + scalarText(data[std::size_t(i)].data() +
                                         (p * dats[i]->dim + c) * bytes,
                                     dats[i]->type);
        }
        ok = std::fprintf(f, "%s\n", line.c_str()) >= 0;
      }
      ok = (toStdout ? std::fflush(f) : std::fclose(f)) == 0 && ok;
      if (!ok)
        failf("cannot write CSV file '%s'", file);
    } catch (const Failure &e) {
      error = e.message;
    }
  }
  dist::agreeOnFailure(error);
}

} // namespace opdc::rt::io

using namespace opdc::rt;

extern "C" {

void opd_dat_write(opd_dat *const *dats, int n, const char *file) {
  opd_dat_write_range(dats, n, file, nullptr, nullptr, 0);
}

void opd_dat_write_range(opd_dat *const *dats, int n, const char *file,
                         const int64_t *lo, const int64_t *hi, int nranges) {
  dist::settleExchanges();
  std::string name = file ? file : "";
  const char *kind = io::endsWith(name, ".csv") || name == "-" ? "CSV" : "HDF5";
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (dats[i]->name == dats[j]->name)
        failf("cannot write dat '%s' twice to %s file '%s'",
              dats[i]->name.c_str(), kind, name.c_str());
  if (name.empty())
    failf("empty %s file name", kind);
  // A run of '#': this write's number among the writes of that name.
  const std::size_t hash = name.find('#');
  if (hash != std::string::npos) {
    std::size_t end = name.find_first_not_of('#', hash);
    if (end == std::string::npos)
      end = name.size();
    static std::map<std::string, int64_t> counts;
    std::string number = std::to_string(counts[name]++);
    if (number.size() < end - hash)
      number.insert(0, end - hash - number.size(), '0');
    name = name.substr(0, hash) + number + name.substr(end);
  }
  if (io::endsWith(name, ".csv") || name == "-") {
    io::writeCSV(dats, n, name.c_str(), lo, hi, nranges);
    return;
  }
  if (nranges > 0)
    failf("cannot write a range of %s to '%s': a range is written as CSV; "
          "name the file '*.csv' (or \"-\" for standard output), or write "
          "the whole dats without 'over'",
          dats[0]->describe().c_str(), name.c_str());
  io::writeHDF5(dats, n, name.c_str());
  io::describeVtkHdf(dats, n, name, io::withoutH5(name));
}

} // extern "C"
