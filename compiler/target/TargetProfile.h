// TargetProfile.h - Machine profiles (targets/*.yaml): what opdc compiles for.
// SPDX-License-Identifier: Apache-2.0
//
// A target profile describes one machine an HPC user deploys on: its CPU
// (LLVM triple, CPU name, ISA features, vector width, cores, caches, memory
// bandwidth, clock), an optional GPU, the node (sockets, GPUs, memory), the
// cluster and its network (for the communication cost model), and options
// for each backend. Profiles are YAML files read with yaml-cpp; every value
// carries its unit in its key name (`memory_bandwidth_gbs`, `l2_cache_kib`).
// The schema, with units and meaning, is man/opd-target.5; this library
// parses, validates (clang-style `file:line:col: error:` from the YAML
// node's mark), resolves `extends:` chains and detects the host (`native`).
// The driver turns a profile into code generation options; backends never
// see YAML.
#ifndef OPDC_TARGET_TARGETPROFILE_H
#define OPDC_TARGET_TARGETPROFILE_H

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace opdc {
class DiagnosticEngine;

/// One CPU package (socket) of a node.
struct CPUProfile {
  std::string triple;                ///< LLVM target triple
  std::string name;                  ///< LLVM CPU name (llc -mcpu=help)
  std::vector<std::string> features; ///< "+avx2", "-avx512f", ...
  int64_t vectorWidthBits = 0;       ///< widest vectors the vectoriser uses
  int64_t cores = 0;                 ///< physical cores per socket
  int64_t threadsPerCore = 0;        ///< hardware threads per core (SMT)
  double frequencyGHz = 0;           ///< base clock
  int64_t l1dCacheKiB = 0;           ///< per core
  int64_t l2CacheKiB = 0;            ///< per core
  int64_t l3CacheMiB = 0;            ///< per socket
  double memoryBandwidthGBs = 0;     ///< STREAM triad class, per socket
};

/// One GPU of a node.
struct GPUProfile {
  std::string vendor;            ///< nvidia, amd
  std::string arch;              ///< sm_90, gfx90a
  int64_t smCount = 0;           ///< streaming multiprocessors / CUs
  double memoryGiB = 0;          ///< device memory
  double memoryBandwidthGBs = 0; ///< device memory bandwidth
  int64_t blockSize = 0;         ///< preferred threads per block
};

/// Options one backend honours (backend.cpu, backend.cuda).
struct BackendProfile {
  int64_t threads = 0;   ///< default thread count (0: the runtime decides)
  std::string indirect;  ///< "colouring" or "atomics" for indirect increments
  std::string layout;    ///< "aos" or "soa"
  std::string gathers;   ///< cpu: "auto", "hardware" or "scalar"
  int64_t blockSize = 0; ///< cuda: threads per block (overrides gpu)
};

/// A fully resolved profile (after `extends:`).
struct TargetProfile {
  std::string name;
  std::string description;
  std::vector<std::string> files; ///< the files read, most derived first
  CPUProfile cpu;
  GPUProfile gpu;
  int64_t nodeSockets = 0;         ///< node.sockets: CPU packages per node
  int64_t nodeGPUs = 0;            ///< node.gpus: GPUs per node
  double nodeMemoryGiB = 0;        ///< node.memory_gib
  int64_t clusterNodes = 0;        ///< cluster.nodes
  double networkLatencyUs = 0;     ///< network.latency_us (one hop, small msg)
  double networkBandwidthGBs = 0;  ///< network.bandwidth_gbs per node
  int64_t networkRanksPerNode = 0; ///< network.ranks_per_node
  BackendProfile cpuBackend;       ///< backend.cpu
  BackendProfile cudaBackend;      ///< backend.cuda
  /// Dotted keys given by some file of the chain ("cpu.triple", "gpu"):
  /// a section is present when one of its keys was given.
  std::set<std::string> given;
  bool has(const std::string &key) const { return given.count(key) != 0; }
  bool hasGPU() const { return has("gpu"); }

  /// The default thread count for CPU loops: backend.cpu.threads, else
  /// cores * threads_per_core of one socket times sockets; 0 if unknown.
  int64_t defaultThreads() const;
  /// The GPU block size: backend.cuda.block_size, else gpu.block_size.
  int64_t blockSize() const;
};

/// Where profile names are looked up, in order.
struct TargetSearchPath {
  std::vector<std::string> dirs;
};

/// True when \p spec names a file (contains '/' or ends in .yaml/.yml)
/// rather than a profile in the search path.
bool isProfilePath(const std::string &spec);

/// Finds NAME.yaml in \p path; empty if absent.
std::string findProfile(const std::string &name, const TargetSearchPath &path);

/// Loads \p spec ("native", a NAME in \p path, or a file) with its
/// `extends:` chain. Reports every problem through \p diags (the YAML
/// files are added to its SourceManager, so messages point into them) and
/// returns nullopt on any error.
std::optional<TargetProfile> loadTargetProfile(const std::string &spec,
                                               const TargetSearchPath &path,
                                               DiagnosticEngine &diags);

/// The machine opdc runs on: LLVM's host triple, CPU and features, cores,
/// SMT and caches from the OS; bandwidths are not measured (left 0).
TargetProfile detectHostProfile();

/// Writes \p profile as YAML (schema order, only given keys), loadable again.
std::string printTargetProfile(const TargetProfile &profile);

/// Names of the profiles found in \p path (for error messages), sorted.
std::vector<std::string> listProfiles(const TargetSearchPath &path);

} // namespace opdc
#endif
