// TargetProfileTest.cpp - Target profiles: parsing, validation, extends.
// SPDX-License-Identifier: Apache-2.0
//
// Every shipped profile loads; every kind of bad profile (malformed YAML,
// not a mapping, unknown key, duplicate key, wrong type, impossible value,
// unknown choice, bad triple, missing required key, extends that names
// nothing or makes a cycle) is an error at the right line and column.
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "target/TargetProfile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace opdc;

namespace {

struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { llvm::sys::fs::createUniqueDirectory("opdc-target", path); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name, const std::string &text) {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    std::ofstream(std::string(p)) << text;
    return std::string(p);
  }
};

/// Loads \p spec, collecting the messages.
struct Loaded {
  SourceManager sm;
  std::string messages;
  llvm::raw_string_ostream os{messages};
  DiagnosticEngine diags{sm, os};
  std::optional<TargetProfile> profile;
  Loaded(const std::string &spec, const TargetSearchPath &path) {
    profile = loadTargetProfile(spec, path, diags);
    os.flush();
  }
  bool mentions(const std::string &s) const {
    return messages.find(s) != std::string::npos;
  }
};

const char *kMinimal = "name: t\n"
                       "cpu:\n"
                       "  triple: x86_64-unknown-linux-gnu\n"
                       "  name: haswell\n"
                       "  vector_width_bits: 256\n"
                       "  cores: 4\n";

TargetSearchPath shipped() { return {{OPDC_SOURCE_DIR "/targets"}}; }

TEST(TargetProfile, EveryShippedProfileLoads) {
  auto names = listProfiles(shipped());
  for (const char *want :
       {"generic-x86_64", "x86_64-avx2", "x86_64-avx512",
        "aarch64-neoverse-v1", "nvidia-h100", "nvidia-a100", "nvidia-v100",
        "cluster-h100-example"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end())
        << want;
  for (const auto &name : names) {
    Loaded l(name, shipped());
    ASSERT_TRUE(l.profile) << name << ":\n" << l.messages;
    EXPECT_EQ(l.profile->name, name);
    EXPECT_EQ(l.messages, "");
  }
}

TEST(TargetProfile, ValuesAndUnits) {
  Loaded l("x86_64-avx512", shipped());
  ASSERT_TRUE(l.profile) << l.messages;
  const TargetProfile &p = *l.profile;
  EXPECT_EQ(p.cpu.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(p.cpu.name, "sapphirerapids");
  EXPECT_EQ(p.cpu.vectorWidthBits, 512);
  EXPECT_DOUBLE_EQ(p.cpu.memoryBandwidthGBs, 307.2);
  EXPECT_EQ(p.cpu.l2CacheKiB, 2048);
  EXPECT_FALSE(p.hasGPU());
  EXPECT_EQ(p.defaultThreads(), 0);
}

TEST(TargetProfile, ExtendsMergesKeyByKey) {
  Loaded l("cluster-h100-example", shipped());
  ASSERT_TRUE(l.profile) << l.messages;
  const TargetProfile &p = *l.profile;
  // From x86_64-avx512, two levels up.
  EXPECT_EQ(p.cpu.name, "sapphirerapids");
  EXPECT_EQ(p.cpu.cores, 56);
  // nvidia-h100 overrides node.sockets and adds the GPU.
  EXPECT_EQ(p.nodeSockets, 2);
  EXPECT_EQ(p.nodeGPUs, 8);
  EXPECT_EQ(p.gpu.arch, "sm_90");
  EXPECT_EQ(p.blockSize(), 256);
  // Its own keys.
  EXPECT_EQ(p.clusterNodes, 16);
  EXPECT_EQ(p.networkRanksPerNode, 8);
  EXPECT_EQ(p.defaultThreads(), 14);
  // backend.cpu keys of the base survive the derived backend.cpu section.
  EXPECT_EQ(p.cpuBackend.indirect, "colouring");
  ASSERT_EQ(p.files.size(), 3u);
  EXPECT_NE(p.files[2].find("x86_64-avx512.yaml"), std::string::npos);
}

TEST(TargetProfile, NameAndDescriptionAreNotInherited) {
  TempDir d;
  d.file("base.yaml", std::string(kMinimal) + "description: base\n");
  std::string f = d.file("derived.yaml", "name: derived\nextends: base\n");
  Loaded l(f, {});
  ASSERT_TRUE(l.profile) << l.messages;
  EXPECT_EQ(l.profile->name, "derived");
  EXPECT_EQ(l.profile->description, "");
  EXPECT_EQ(l.profile->cpu.name, "haswell");
}

TEST(TargetProfile, PrintedProfileLoadsBackTheSame) {
  Loaded l("nvidia-a100", shipped());
  ASSERT_TRUE(l.profile) << l.messages;
  TempDir d;
  std::string f = d.file("again.yaml", printTargetProfile(*l.profile));
  Loaded again(f, {});
  ASSERT_TRUE(again.profile) << again.messages;
  EXPECT_EQ(printTargetProfile(*again.profile).substr(
                printTargetProfile(*again.profile).find('\n')),
            printTargetProfile(*l.profile).substr(
                printTargetProfile(*l.profile).find('\n')));
}

TEST(TargetProfile, NativeIsTheHost) {
  Loaded l("native", {});
  ASSERT_TRUE(l.profile) << l.messages;
  EXPECT_FALSE(l.profile->cpu.triple.empty());
  EXPECT_FALSE(l.profile->cpu.name.empty());
  EXPECT_GE(l.profile->cpu.cores, 1);
  EXPECT_GE(l.profile->cpu.vectorWidthBits, 128);
}

/// One bad profile: the message, with its location.
struct Bad {
  const char *what;
  const char *text;
  const char *message;
};

TEST(TargetProfile, EveryKindOfBadProfileIsAnErrorAtItsNode) {
  const Bad cases[] = {
      // An unclosed flow sequence: reported at its '[', not where the
      // YAML parser gave up (the end of the file).
      {"malformed YAML", "name: t\ncpu: [a, b\n",
       ":2:6: error: malformed YAML: this '[' is never closed; add the ']'"},
      {"unclosed flow map", "name: t\ncpu: {name: x\n# a ] comment\n",
       ":2:6: error: malformed YAML: this '{' is never closed; add the '}'"},
      {"not a mapping", "- a\n- b\n",
       ":1:1: error: a target profile is a YAML mapping of keys"},
      {"empty file", "", ":1:1: error: a target profile is a YAML mapping"},
      {"unknown key, suggestion",
       "name: t\ncpu:\n  triple: x86_64-unknown-linux-gnu\n  core: 4\n",
       ":4:3: error: unknown key 'cpu.core'; did you mean 'cpu.cores'?"},
      {"unknown top-level key", "name: t\nmemory: 4\n",
       ":2:1: error: unknown key 'memory'; a profile takes 'name'"},
      {"duplicate key", "name: t\nname: u\n",
       ":2:1: error: duplicate key 'name'"},
      {"section not a mapping", "name: t\ncpu: 4\n",
       ":2:6: error: 'cpu' is a section (the CPU of one socket): expected a "
       "mapping of keys, got '4'"},
      {"string where a number goes", "name: t\ncpu:\n  cores: many\n",
       ":3:10: error: 'cpu.cores' expects an integer (physical cores per "
       "socket), got 'many'"},
      {"quoted number", "name: t\ncpu:\n  cores: \"4\"\n",
       ":3:10: error: 'cpu.cores' expects an integer"},
      {"float for an integer", "name: t\ncpu:\n  cores: 4.5\n",
       ":3:10: error: 'cpu.cores' expects an integer"},
      {"list for a number", "name: t\ncpu:\n  frequency_ghz: [1, 2]\n",
       ":3:18: error: 'cpu.frequency_ghz' expects a number (GHz), got a list"},
      {"negative bandwidth", "name: t\ncpu:\n  memory_bandwidth_gbs: -5\n",
       ":3:25: error: 'cpu.memory_bandwidth_gbs' must be greater than 0 (GB/s "
       "per socket), got -5"},
      {"zero cores", "name: t\ncpu:\n  cores: 0\n",
       ":3:10: error: 'cpu.cores' must be greater than 0"},
      {"negative GPUs", "name: t\nnode:\n  gpus: -1\n",
       ":3:9: error: 'node.gpus' must be 0 or more"},
      {"vector width not a power of two",
       "name: t\ncpu:\n  vector_width_bits: 300\n",
       ":3:22: error: impossible value 300 for 'cpu.vector_width_bits': a "
       "vector width is a power of two from 64 to 2048 bits"},
      {"block size not a multiple of 32", "name: t\ngpu:\n  block_size: 100\n",
       ":3:15: error: impossible value 100 for 'gpu.block_size'"},
      {"unknown choice", "name: t\nbackend:\n  cpu:\n    layout: csr\n",
       ":4:13: error: 'backend.cpu.layout' must be 'aos' or 'soa' (dat "
       "layout), got 'csr'"},
      {"bad feature", "name: t\ncpu:\n  features: [avx2]\n",
       ":3:14: error: 'cpu.features' entries are LLVM feature names with + or "
       "- in front"},
      {"unknown triple", "name: t\ncpu:\n  triple: banana\n",
       ":3:11: error: 'banana' is not a target triple LLVM knows"},
      {"infinite number", "name: t\ncpu:\n  frequency_ghz: .inf\n",
       ":3:18: error: 'cpu.frequency_ghz' expects a number"},
      {"missing name", "cpu:\n  cores: 4\n", ":1:1: error: target profile"},
      {"missing required key",
       "name: t\ncpu:\n  triple: x86_64-unknown-linux-gnu\n  name: haswell\n"
       "  cores: 4\n",
       ":1:1: error: target profile 't' has no 'cpu.vector_width_bits' (the "
       "widest vectors in bits, e.g. 256)"},
      {"gpu without arch",
       "name: t\ncpu:\n  triple: x86_64-unknown-linux-gnu\n  name: haswell\n"
       "  vector_width_bits: 256\n  cores: 4\ngpu:\n  vendor: nvidia\n",
       ":1:1: error: target profile 't' has no 'gpu.arch'"},
      {"extends nothing", "name: t\nextends: nowhere\n",
       ":2:10: error: no target profile 'nowhere' for 'extends'"},
      {"extends not a string", "name: t\nextends: [a]\n",
       ":2:10: error: 'extends' expects a profile name or a file, got a list"},
  };
  for (const Bad &c : cases) {
    TempDir d;
    std::string f = d.file("bad.yaml", c.text);
    Loaded l(f, {});
    EXPECT_FALSE(l.profile) << c.what;
    EXPECT_TRUE(l.mentions(std::string("bad.yaml") + c.message))
        << c.what << ": expected '" << c.message << "' in:\n"
        << l.messages;
  }
}

TEST(TargetProfile, ExtendsCycleIsAnError) {
  TempDir d;
  d.file("a.yaml", "name: a\nextends: b\n");
  d.file("b.yaml", "name: b\nextends: c.yaml\n");
  d.file("c.yaml", "name: c\nextends: a\n");
  Loaded l("a", {{std::string(d.path)}});
  EXPECT_FALSE(l.profile);
  EXPECT_TRUE(l.mentions("c.yaml:2:10: error: 'extends' makes a cycle: "
                         "a.yaml -> b.yaml -> c.yaml -> a.yaml"))
      << l.messages;
}

TEST(TargetProfile, ErrorsInABaseProfilePointIntoTheBase) {
  TempDir d;
  d.file("base.yaml", "name: base\ncpu:\n  cores: -2\n");
  std::string f = d.file("top.yaml", "name: top\nextends: base\n");
  Loaded l(f, {});
  EXPECT_FALSE(l.profile);
  EXPECT_TRUE(l.mentions("base.yaml:3:10: error: 'cpu.cores' must be greater "
                         "than 0"))
      << l.messages;
}

TEST(TargetProfile, UnknownNameListsTheKnownOnes) {
  Loaded l("x86_64-avx1024", shipped());
  EXPECT_FALSE(l.profile);
  EXPECT_TRUE(l.mentions("error: unknown target 'x86_64-avx1024'; known: "
                         "native, aarch64-neoverse-v1"))
      << l.messages;
}

TEST(TargetProfile, SearchPathOrder) {
  TempDir first, second;
  first.file("m.yaml", std::string(kMinimal) + "description: first\n");
  second.file("m.yaml", std::string(kMinimal) + "description: second\n");
  Loaded l("m", {{std::string(first.path), std::string(second.path)}});
  ASSERT_TRUE(l.profile) << l.messages;
  EXPECT_EQ(l.profile->description, "first");
  EXPECT_TRUE(isProfilePath("dir/x.yaml"));
  EXPECT_TRUE(isProfilePath("x.yml"));
  EXPECT_FALSE(isProfilePath("x86_64-avx2"));
}

} // namespace
