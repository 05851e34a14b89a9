// Shared helpers for the disk cache tests: temp dirs, scoped env vars, stderr capture, random entries.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "../common/scoped_fs_env.hpp"
#include "tessel/jit/cache.hpp"

namespace cache_test {

// A file's bytes, written (parent folders made) and read back whole.
inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace fs = std::filesystem;
namespace cache = tessel::jit::cache;

using tessel_test::EnvVar;
using tessel_test::TempDir;

// Redirects file descriptor 2 into a file while alive; text() returns what was written so far.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    saved_ = ::dup(2);
    path_ = file_.path / "stderr.txt";
    int out = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 2);
    ::close(out);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    std::fflush(stderr);
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }

 private:
  TempDir file_;
  fs::path path_;
  int saved_ = -1;
};

inline std::string random_text(std::mt19937_64& rng, size_t n) {
  std::string s(n, ' ');
  for (char& c : s) c = static_cast<char>('!' + rng() % 90);
  return s;
}

// A complete entry with random artefacts (cubin of `cubin_bytes`, 0 for none) under a key made
// from `seed`.
inline cache::Entry random_entry(uint64_t seed, size_t cubin_bytes) {
  std::mt19937_64 rng(seed);
  cache::KeyInputs in;
  in.ir_text = "kernel @k" + std::to_string(seed) + "() {}\n";
  in.arch = "sm_90";
  in.ptx_version = 80;
  in.tessel_version = cache::tessel_version();
  in.tessel_build = cache::tessel_build_id();
  in.llvm_version = "19.1.7";
  cache::Entry e;
  e.meta.key = cache::make_key(in);
  e.meta.kernel = "k" + std::to_string(seed);
  e.meta.params = {{"x", "ptr<f32>", true, false}, {"n", "i32", false, true}};
  e.meta.specialisation = "x:d16 n:eq1";
  e.meta.num_warps = 1 << (rng() % 6);
  e.meta.num_stages = 1 + static_cast<int>(rng() % 4);
  e.meta.launch = tessel::launch_spec(e.meta.kernel + "_w" + std::to_string(e.meta.num_warps), e.meta.num_warps, 1,
                                      false, static_cast<int>(e.meta.params.size()));
  e.meta.launch.shared_bytes = static_cast<int>(rng() % 100000);
  e.meta.registers = 1 + static_cast<int>(rng() % 255);
  e.meta.arch = "sm_90";
  e.meta.ptx_version = 80;
  e.meta.tessel_version = in.tessel_version;
  e.meta.tessel_build = in.tessel_build;
  e.meta.llvm_version = in.llvm_version;
  e.meta.created = 1700000000 + static_cast<int64_t>(rng() % 1000000);
  e.tir = in.ir_text + random_text(rng, 1 + rng() % 3000);
  e.llvm_ir = random_text(rng, 1 + rng() % 5000);
  e.ptx = random_text(rng, 1 + rng() % 7000);
  e.cubin.resize(cubin_bytes);
  for (char& c : e.cubin) c = static_cast<char>(rng());
  if (cubin_bytes) {
    e.meta.cubin_arch = "sm_90";
    e.meta.cubin_tool = "driver";
  }
  return e;
}

inline size_t count_entries(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(dir, ec))
    if (shard.path().filename() != "tmp")
      for (const auto& e : fs::directory_iterator(shard.path(), ec)) n += e.is_directory() ? 1 : 0;
  return n;
}

inline size_t count_temporaries(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir / "tmp", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) ++n;
  return n;
}

}  // namespace cache_test
