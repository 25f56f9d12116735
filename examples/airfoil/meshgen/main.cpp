// main.cpp - opd-airfoil-meshgen command line.
// SPDX-License-Identifier: Apache-2.0
//
//   opd-airfoil-meshgen [--I=400] [--J=600] [--shuffle=SEED] [--dat FILE]
//                       [--h5 FILE]
//
// Without --dat and --h5 it writes new_grid.dat and new_grid.h5 in the
// current directory.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "meshgen.hpp"

namespace {

constexpr const char *kUsage =
    "usage: opd-airfoil-meshgen [--I=N] [--J=N] [--shuffle=SEED] [--dat FILE] "
    "[--h5 FILE]\n"
    "\n"
    "Generates OP2's Airfoil mesh (NACA0012, naca0012.m) with 3I x J cells.\n"
    "  --I=N       cells around the airfoil per third of the grid (default "
    "400)\n"
    "  --J=N       cells from the airfoil to the far field (default 600)\n"
    "  --shuffle=SEED  number the elements at random (seeded), as an\n"
    "              unstructured generator might (locality studies)\n"
    "  --dat FILE  write OP2's text mesh (new_grid.dat format)\n"
    "  --h5 FILE   write OP2's HDF5 mesh (new_grid.h5 layout)\n"
    "  -h, --help  show this help\n"
    "Without --dat and --h5, writes new_grid.dat and new_grid.h5.\n"
    "The default I=400, J=600 gives OP2's standard 720000-cell mesh.\n";

[[noreturn]] void usage_error(const std::string &msg) {
  std::fprintf(stderr, "opd-airfoil-meshgen: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

long parse_count(std::string_view opt, std::string_view text) {
  if (text.empty())
    usage_error(std::string(opt) + " needs a value");
  long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      usage_error(std::string(opt) + " expects a positive integer, got '" +
                  std::string(text) + "'");
    if (v > 1000000000L)
      usage_error(std::string(opt) + " value is too large");
    v = v * 10 + (c - '0');
  }
  if (v < 1)
    usage_error(std::string(opt) + " must be at least 1");
  return v;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  long I = 400, J = 600;
  long seed = -1; // --shuffle
  std::string dat, h5;
  bool have_dat = false, have_h5 = false;

  for (int a = 1; a < argc; ++a) {
    const std::string_view arg = argv[a];
    // --opt=value or --opt value for the two file options.
    auto file_opt = [&](std::string_view name, std::string &out,
                        bool &have) -> bool {
      if (arg == name) {
        if (a + 1 >= argc)
          usage_error(std::string(name) + " needs a file name");
        out = argv[++a];
      } else if (arg.size() > name.size() &&
                 arg.substr(0, name.size()) == name &&
                 arg[name.size()] == '=') {
        out = std::string(arg.substr(name.size() + 1));
      } else {
        return false;
      }
      if (out.empty())
        usage_error(std::string(name) + " needs a file name");
      if (have)
        usage_error(std::string(name) + " given twice");
      have = true;
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg.substr(0, 4) == "--I=") {
      I = parse_count("--I", arg.substr(4));
    } else if (arg.substr(0, 4) == "--J=") {
      J = parse_count("--J", arg.substr(4));
    } else if (arg.substr(0, 10) == "--shuffle=") {
      seed = parse_count("--shuffle", arg.substr(10));
    } else if (arg == "--I" || arg == "--J") {
      usage_error(std::string(arg) + " takes its value as " + std::string(arg) +
                  "=N");
    } else if (file_opt("--dat", dat, have_dat) ||
               file_opt("--h5", h5, have_h5)) {
      // handled
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (!have_dat && !have_h5) {
    dat = "new_grid.dat";
    h5 = "new_grid.h5";
    have_dat = have_h5 = true;
  }
  if (!opd::meshgen::sizes_fit_int(I, J))
    usage_error("--I=" + std::to_string(I) + " --J=" + std::to_string(J) +
                " is too large: the mesh sizes must fit in 32-bit ints");

  try {
    const auto t0 = std::chrono::steady_clock::now();
    opd::meshgen::AirfoilMesh m = opd::meshgen::generate(I, J);
    if (seed >= 0)
      opd::meshgen::shuffle(m, unsigned(seed));
    std::printf(
        "mesh I=%ld J=%ld: %d nodes, %d cells, %d edges, %d bedges (%.2f s)\n",
        I, J, m.nnode, m.ncell, m.nedge, m.nbedge, seconds_since(t0));
    if (have_dat) {
      const auto t1 = std::chrono::steady_clock::now();
      const std::string err = opd::meshgen::write_dat(m, dat);
      if (!err.empty()) {
        std::fprintf(stderr, "opd-airfoil-meshgen: %s\n", err.c_str());
        return 1;
      }
      std::printf("wrote %s (%.2f s)\n", dat.c_str(), seconds_since(t1));
    }
    if (have_h5) {
      const auto t1 = std::chrono::steady_clock::now();
      const std::string err = opd::meshgen::write_hdf5(m, h5);
      if (!err.empty()) {
        std::fprintf(stderr, "opd-airfoil-meshgen: %s\n", err.c_str());
        return 1;
      }
      std::printf("wrote %s (%.2f s)\n", h5.c_str(), seconds_since(t1));
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "opd-airfoil-meshgen: %s\n", e.what());
    return 1;
  }
  return 0;
}
