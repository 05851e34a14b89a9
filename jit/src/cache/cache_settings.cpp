// The cache's environment knobs, how compile paths apply them, and TESSEL_DUMP_DIR's stage dumps.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "cache_io.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::jit::cache {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool env_on(const char* name) {
  const char* v = env(name);
  return v && std::string_view(v) != "0";
}

}  // namespace

fs::path Settings::dir_from_env() {
  if (const char* d = env("TESSEL_CACHE_DIR")) return d;
  if (const char* x = env("XDG_CACHE_HOME")) return fs::path(x) / "tessel";
  if (const char* h = env("HOME")) return fs::path(h) / ".cache" / "tessel";
  return {};
}

Settings Settings::from_env() {
  Settings s;
  s.dir = dir_from_env();
  const char* c = env("TESSEL_CACHE");
  s.enabled = !s.dir.empty() && !(c && (std::string_view(c) == "0" || std::string_view(c) == "off"));
  s.always_compile = env_on("TESSEL_ALWAYS_COMPILE");
  if (const char* d = env("TESSEL_DUMP_DIR")) s.dump_dir = fs::path(d);
  return s;
}

std::string write_dump(const fs::path& dump_dir, const Entry& e) {
  // Kernel names are the user's strings: keep only characters that cannot leave dump_dir.
  std::string name = e.meta.kernel;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  fs::path dir = dump_dir / (name + "-" + e.meta.key);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create {}: {}", dir.string(), ec.message());
  EntryMeta meta = e.meta;
  std::string failed;
  auto put = [&](const char* name, std::string_view bytes) {
    meta.files[name] = FileSum{bytes.size(), file_hash(bytes)};
    if (!io::replace_file(dir / name, bytes) && failed.empty()) failed = fmt::format("cannot write {}", (dir / name).string());
  };
  put(kTirFile, e.tir);
  if (!e.plan.empty()) put(kPlanFile, e.plan);
  if (!e.llvm_ir.empty()) put(kLlvmFile, e.llvm_ir);
  if (!e.ptx.empty()) put(kPtxFile, e.ptx);
  if (!e.cubin.empty()) put(kCubinFile, std::string_view(e.cubin.data(), e.cubin.size()));
  if (!io::replace_file(dir / kMetaFile, meta_to_json(meta)) && failed.empty())
    failed = fmt::format("cannot write {}", (dir / kMetaFile).string());
  return failed;
}

void dump_entry(const fs::path& dump_dir, const Entry& e) {
  if (!write_dump(dump_dir, e).empty())
    io::report_once("dump:" + dump_dir.string(),
                    fmt::format("cannot write kernel dumps to {} (TESSEL_DUMP_DIR); continuing", dump_dir.string()));
}

std::optional<Entry> fetch(const Settings& s, const std::string& key) {
  if (!s.enabled || s.always_compile) return std::nullopt;
  return Store(s.dir).lookup(key);
}

void publish(const Settings& s, const Entry& e, bool hit, bool replace) {
  if (!hit && s.enabled) Store(s.dir).store(e, s.always_compile || replace);
  if (s.dump_dir) dump_entry(*s.dump_dir, e);
}

}  // namespace tessel::jit::cache
