// TargetSchema.cpp - The table of target profile keys; printing a profile.
// SPDX-License-Identifier: Apache-2.0
//
// Each key names its type, its unit or meaning (for messages), its bounds and
// the TargetProfile field it fills. Printing walks the same table, so a
// printed profile lists its keys in schema order.
#include "target/TargetSchema.h"

#include <charconv>

namespace opdc {
namespace profile {

namespace {

#define OPDC_STR(expr) [](TargetProfile &p) -> std::string & { return expr; }
#define OPDC_INT(expr) [](TargetProfile &p) -> int64_t & { return expr; }
#define OPDC_NUM(expr) [](TargetProfile &p) -> double & { return expr; }

Key str(const char *name, const char *what,
        std::function<std::string &(TargetProfile &)> f) {
  return Key{name, Kind::String, what, {}, {}, std::move(f)};
}
Key integer(const char *name, const char *what,
            std::function<int64_t &(TargetProfile &)> f, Bound b = {}) {
  Key k{name, Kind::Integer, what, b};
  k.integer = std::move(f);
  return k;
}
Key number(const char *name, const char *what,
           std::function<double &(TargetProfile &)> f, Bound b = {}) {
  Key k{name, Kind::Number, what, b};
  k.number = std::move(f);
  return k;
}
Key choice(const char *name, const char *what, std::vector<std::string> c,
           std::function<std::string &(TargetProfile &)> f) {
  Key k{name, Kind::Choice, what, {}, std::move(c)};
  k.str = std::move(f);
  return k;
}
Key section(const char *name, const char *what, std::vector<Key> children) {
  Key k{name, Kind::Section, what};
  k.children = std::move(children);
  return k;
}

std::string powerOfTwoVectors(double v) {
  auto n = uint64_t(v);
  if (n < 64 || n > 2048 || (n & (n - 1)) != 0)
    return "a vector width is a power of two from 64 to 2048 bits";
  return "";
}

std::string threadBlock(double v) {
  auto n = uint64_t(v);
  if (n > 1024 || n % 32 != 0)
    return "a thread block holds a multiple of 32 threads (one warp), at "
           "most 1024";
  return "";
}

const Bound kPositive{0, true};
const Bound kNonNegative{0, false};

} // namespace

const std::vector<Key> &schema() {
  static const std::vector<Key> keys = [] {
    std::vector<Key> top;
    top.push_back(str("name", "the profile's name", OPDC_STR(p.name)));
    top.push_back(
        str("description", "a one-line description", OPDC_STR(p.description)));
    top.push_back(str("extends", "the profile this one refines", nullptr));
    Key features{"features", Kind::StringList,
                 "LLVM feature names, each with + or -"};
    features.list = [](TargetProfile &p) -> std::vector<std::string> & {
      return p.cpu.features;
    };
    Key width = integer("vector_width_bits", "bits",
                        OPDC_INT(p.cpu.vectorWidthBits), kPositive);
    width.check = powerOfTwoVectors;
    top.push_back(section(
        "cpu", "the CPU of one socket",
        {str("triple", "the LLVM target triple", OPDC_STR(p.cpu.triple)),
         str("name", "the LLVM CPU name", OPDC_STR(p.cpu.name)), features,
         width,
         integer("cores", "physical cores per socket", OPDC_INT(p.cpu.cores),
                 kPositive),
         integer("threads_per_core", "hardware threads per core",
                 OPDC_INT(p.cpu.threadsPerCore), kPositive),
         number("frequency_ghz", "GHz", OPDC_NUM(p.cpu.frequencyGHz),
                kPositive),
         integer("l1d_cache_kib", "KiB per core", OPDC_INT(p.cpu.l1dCacheKiB),
                 kPositive),
         integer("l2_cache_kib", "KiB per core", OPDC_INT(p.cpu.l2CacheKiB),
                 kPositive),
         integer("l3_cache_mib", "MiB per socket", OPDC_INT(p.cpu.l3CacheMiB),
                 kNonNegative),
         number("memory_bandwidth_gbs", "GB/s per socket",
                OPDC_NUM(p.cpu.memoryBandwidthGBs), kPositive)}));
    Key block = integer("block_size", "threads per block",
                        OPDC_INT(p.gpu.blockSize), kPositive);
    block.check = threadBlock;
    top.push_back(section(
        "gpu", "one GPU of a node",
        {choice("vendor", "the GPU vendor", {"nvidia", "amd"},
                OPDC_STR(p.gpu.vendor)),
         str("arch", "the GPU architecture (sm_90, gfx90a)",
             OPDC_STR(p.gpu.arch)),
         integer("sm_count", "streaming multiprocessors",
                 OPDC_INT(p.gpu.smCount), kPositive),
         number("memory_gib", "GiB", OPDC_NUM(p.gpu.memoryGiB), kPositive),
         number("memory_bandwidth_gbs", "GB/s",
                OPDC_NUM(p.gpu.memoryBandwidthGBs), kPositive),
         block}));
    top.push_back(section(
        "node", "one node",
        {integer("sockets", "CPU sockets per node", OPDC_INT(p.nodeSockets),
                 kPositive),
         integer("gpus", "GPUs per node", OPDC_INT(p.nodeGPUs), kNonNegative),
         number("memory_gib", "GiB per node", OPDC_NUM(p.nodeMemoryGiB),
                kPositive)}));
    top.push_back(section(
        "cluster", "the whole machine",
        {integer("nodes", "nodes", OPDC_INT(p.clusterNodes), kPositive)}));
    top.push_back(
        section("network", "the interconnect between nodes",
                {number("latency_us", "microseconds",
                        OPDC_NUM(p.networkLatencyUs), kPositive),
                 number("bandwidth_gbs", "GB/s per node",
                        OPDC_NUM(p.networkBandwidthGBs), kPositive),
                 integer("ranks_per_node", "MPI ranks per node",
                         OPDC_INT(p.networkRanksPerNode), kPositive)}));
    Key cudaBlock = integer("block_size", "threads per block",
                            OPDC_INT(p.cudaBackend.blockSize), kPositive);
    cudaBlock.check = threadBlock;
    top.push_back(section(
        "backend", "options of each code generator",
        {section(
             "cpu", "the LLVM CPU backend",
             {integer("threads", "default thread count",
                      OPDC_INT(p.cpuBackend.threads), kPositive),
              choice("indirect", "how indirect increments avoid races",
                     {"colouring", "atomics"}, OPDC_STR(p.cpuBackend.indirect)),
              choice("layout", "dat layout", {"aos", "soa"},
                     OPDC_STR(p.cpuBackend.layout)),
              choice("gathers", "how vectorised loops read dats through maps",
                     {"auto", "hardware", "scalar"},
                     OPDC_STR(p.cpuBackend.gathers))}),
         section("cuda", "the CUDA backend",
                 {cudaBlock,
                  choice("indirect", "how indirect increments avoid races",
                         {"colouring", "atomics"},
                         OPDC_STR(p.cudaBackend.indirect)),
                  choice("layout", "dat layout", {"aos", "soa"},
                         OPDC_STR(p.cudaBackend.layout))})}));
    return top;
  }();
  return keys;
}

#undef OPDC_STR
#undef OPDC_INT
#undef OPDC_NUM

} // namespace profile

namespace {

using profile::Key;
using profile::Kind;
using profile::schema;

/// A scalar as YAML reads it back: quoted when plain style would not do.
std::string yamlString(const std::string &s) {
  bool plain = !s.empty() &&
               s.find_first_of(":#'\"{}[],&*!|>%@`") == std::string::npos &&
               s.front() != ' ' && s.back() != ' ' && s.front() != '-' &&
               s.front() != '?';
  if (plain)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

std::string numberText(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void printSection(const std::vector<Key> &keys, const std::string &prefix,
                  const TargetProfile &cp, int indent, std::string &out) {
  auto &p = const_cast<TargetProfile &>(cp); // accessors take non-const
  std::string pad(size_t(indent), ' ');
  for (const Key &k : keys) {
    std::string dotted = prefix + k.name;
    if (!p.has(dotted) || k.name == "extends")
      continue;
    switch (k.kind) {
    case Kind::Section:
      out += pad + k.name + ":\n";
      printSection(k.children, dotted + ".", p, indent + 2, out);
      break;
    case Kind::String:
    case Kind::Choice:
      out += pad + k.name + ": " + yamlString(k.str(p)) + "\n";
      break;
    case Kind::Integer:
      out += pad + k.name + ": " + std::to_string(k.integer(p)) + "\n";
      break;
    case Kind::Number:
      out += pad + k.name + ": " + numberText(k.number(p)) + "\n";
      break;
    case Kind::StringList: {
      out += pad + k.name + ": [";
      const auto &l = k.list(p);
      for (size_t i = 0; i < l.size(); ++i)
        out += (i ? ", " : "") + l[i];
      out += "]\n";
      break;
    }
    }
  }
}

} // namespace

std::string printTargetProfile(const TargetProfile &profile) {
  std::string out = "# opdc target profile '" + profile.name + "'";
  if (profile.files.empty())
    out += " (detected)\n";
  else {
    out += ", resolved from:";
    for (const auto &f : profile.files)
      out += " " + f;
    out += "\n";
  }
  printSection(schema(), "", profile, 0, out);
  return out;
}

} // namespace opdc
