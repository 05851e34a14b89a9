// The cache directory: atomic publication by rename, verified lookups, removal, listing.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "cache_io.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::jit::cache {
namespace {

// The artefact files an entry may hold, in write order. Names come only from this list, never
// from meta.json, so a forged meta.json cannot point outside the entry.
constexpr const char* kArtefacts[] = {kTirFile, kLlvmFile, kPtxFile, kCubinFile};

bool is_artefact(const std::string& name) {
  return std::any_of(std::begin(kArtefacts), std::end(kArtefacts), [&](const char* a) { return name == a; });
}

std::string_view artefact_bytes(const Entry& e, std::string_view name) {
  if (name == kTirFile) return e.tir;
  if (name == kLlvmFile) return e.llvm_ir;
  if (name == kPtxFile) return e.ptx;
  return {e.cubin.data(), e.cubin.size()};
}

// Reads and checks the entry open as `dir`: the Entry, or nullopt with the reason in `why`.
std::optional<Entry> load_checked(const io::Dir& dir, const std::string& key, std::string& why) {
  std::optional<std::string> text = dir.read(kMetaFile);
  if (!text) {
    why = "meta.json missing";
    return std::nullopt;
  }
  Entry e;
  try {
    e.meta = parse_meta(*text);
  } catch (const std::exception& ex) {
    why = ex.what();
    return std::nullopt;
  }
  if (e.meta.key != key) {
    why = "meta.json names another key";
    return std::nullopt;
  }
  if (!e.meta.files.count(kTirFile)) {
    why = "meta.json lists no kernel.tir";
    return std::nullopt;
  }
  for (const auto& [name, sum] : e.meta.files) {
    if (!is_artefact(name)) {
      why = fmt::format("meta.json lists an unknown file '{}'", name);
      return std::nullopt;
    }
    std::optional<std::string> bytes = dir.read(name);
    if (!bytes) {
      why = name + " missing";
      return std::nullopt;
    }
    if (bytes->size() < sum.size) {
      why = fmt::format("{} truncated ({} of {} bytes)", name, bytes->size(), sum.size);
      return std::nullopt;
    }
    if (bytes->size() != sum.size || file_hash(*bytes) != sum.xxh3) {
      why = name + " checksum mismatch";
      return std::nullopt;
    }
    if (name == kTirFile) e.tir = std::move(*bytes);
    else if (name == kLlvmFile) e.llvm_ir = std::move(*bytes);
    else if (name == kPtxFile) e.ptx = std::move(*bytes);
    else e.cubin.assign(bytes->begin(), bytes->end());
  }
  return e;
}

uint64_t read_hits(const fs::path& entry) { return io::read_counter(entry / kHitsFile); }

// remove_all, retried: a reader bumping a hit count may add a file while the tree is deleted.
void remove_tree(const fs::path& p) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::error_code ec;
    fs::remove_all(p, ec);
    if (!ec || !fs::exists(p, ec)) return;
  }
}

// Moves `path` out of the live tree into tmp/ (one atomic step: readers see it or nothing),
// then deletes it at leisure. False when there was nothing to move.
bool move_out_and_remove(const fs::path& root, const fs::path& path, const std::string& key) {
  std::error_code ec;
  fs::create_directories(root / "tmp", ec);
  fs::path trash = root / "tmp" / (key + ".trash." + io::unique_suffix());
  if (::rename(path.c_str(), trash.c_str()) != 0) {
    if (errno == ENOENT) return false;
    // A read-only cache (EACCES, EROFS): nothing is removed and nothing is gutted, and the caller
    // is told so. Only an entry on another file system than tmp/ is deleted in place.
    if (errno != EXDEV) return false;
    remove_tree(path);
    return !fs::exists(path, ec) && !ec;
  }
  remove_tree(trash);
  return true;
}

// A temporary directory is abandoned when the process named in it is gone, or it is an hour old
// (a writer on another host sharing the directory).
bool abandoned(const fs::path& tmp) {
  std::string name = tmp.filename().string();
  // <key>.<pid>.<rand> or <key>.trash.<pid>.<rand>
  size_t last = name.rfind('.');
  size_t prev = last == std::string::npos || last == 0 ? std::string::npos : name.rfind('.', last - 1);
  if (prev != std::string::npos) {
    try {
      long pid = std::stol(name.substr(prev + 1, last - prev - 1));
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
    } catch (const std::exception&) {
      return true;  // not a name this cache makes
    }
  }
  std::error_code ec;
  auto t = fs::last_write_time(tmp, ec);
  if (ec) return false;
  return fs::file_time_type::clock::now() - t > std::chrono::hours(1);
}

}  // namespace

fs::path Store::entry_path(const std::string& key) const {
  TESSEL_ASSERT(is_key(key), "cache key '" + key + "' is not 32 hex characters");
  return dir_ / key.substr(0, 2) / key;
}

std::optional<Entry> Store::lookup(const std::string& key) {
  fs::path path = entry_path(key);
  // A second try only when the entry was swapped under us (TESSEL_ALWAYS_COMPILE elsewhere).
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::optional<io::Dir> dir = io::Dir::open(path);
    if (!dir) return std::nullopt;
    std::string why;
    std::optional<Entry> e = load_checked(*dir, key, why);
    if (e) {
      io::bump_counter(path / kHitsFile);
      return e;
    }
    // Files vanishing because another process moved this entry out is not corruption: only
    // an entry still in place is judged (and removed).
    if (!dir->still_at(path)) continue;
    io::report_once("corrupt:" + key, fmt::format("cache entry {} is corrupt ({}); recompiling", key, why));
    move_out_and_remove(dir_, path, key);
    return std::nullopt;
  }
  return std::nullopt;
}

StoreResult Store::store(Entry e, bool replace) {
  const std::string key = e.meta.key;
  const fs::path dest = entry_path(key);
  std::error_code ec;
  if (!replace && fs::exists(dest / kMetaFile, ec)) return StoreResult::Exists;

  e.meta.files.clear();
  for (const char* name : kArtefacts) {
    std::string_view bytes = artefact_bytes(e, name);
    if (name == std::string_view(kTirFile) || !bytes.empty()) e.meta.files[name] = FileSum{bytes.size(), file_hash(bytes)};
  }

  fs::path tmp = dir_ / "tmp" / (key + "." + io::unique_suffix());
  try {
    fs::create_directories(dir_ / "tmp");
    fs::create_directory(tmp);
    for (const auto& [name, sum] : e.meta.files) io::write_synced(tmp / name, artefact_bytes(e, name));
    io::write_synced(tmp / kMetaFile, meta_to_json(e.meta));
    io::sync_dir(tmp);
    if (replace && fs::exists(dest, ec)) move_out_and_remove(dir_, dest, key);
    // Two tries: `cache clear` may remove an empty shard directory between creating and using it.
    for (int attempt = 0;; ++attempt) {
      fs::create_directories(dest.parent_path());
      if (::rename(tmp.c_str(), dest.c_str()) == 0) break;
      int err = errno;
      if (err == EEXIST || err == ENOTEMPTY) {  // another process published this key first
        fs::remove_all(tmp, ec);
        return StoreResult::Exists;
      }
      if (err != ENOENT || attempt == 1) throw std::system_error(err, std::generic_category(), "rename into " + dest.string());
    }
    io::sync_dir(dest.parent_path());
    return StoreResult::Stored;
  } catch (const std::exception& ex) {
    fs::remove_all(tmp, ec);
    io::report_once("store:" + dir_.string(),
                    fmt::format("cannot write to the kernel cache in {} ({}); continuing without it", dir_.string(),
                                ex.what()));
    return StoreResult::Failed;
  }
}

std::string Store::verify(const std::string& key) const {
  std::optional<io::Dir> dir = io::Dir::open(entry_path(key));
  if (!dir) return "no such entry";
  std::string why;
  return load_checked(*dir, key, why) ? std::string() : why;
}

bool Store::remove(const std::string& key) { return move_out_and_remove(dir_, entry_path(key), key); }

std::vector<EntryInfo> Store::list() const {
  std::vector<EntryInfo> out;
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(dir_, ec)) {
    std::string s = shard.path().filename().string();
    if (s.size() != 2 || !shard.is_directory(ec)) continue;
    std::error_code ec2;
    for (const auto& ent : fs::directory_iterator(shard.path(), ec2)) {
      std::string key = ent.path().filename().string();
      if (!is_key(key) || key.compare(0, 2, s) != 0 || !ent.is_directory(ec2)) continue;
      EntryInfo info;
      info.key = key;
      info.path = ent.path();
      std::error_code ec3;
      for (const auto& f : fs::directory_iterator(ent.path(), ec3))
        if (f.is_regular_file(ec3)) info.bytes += f.file_size(ec3);
      info.hits = read_hits(ent.path());
      if (std::optional<std::string> text = io::read(ent.path() / kMetaFile)) {
        try {
          info.meta = parse_meta(*text);
        } catch (const std::exception& ex) {
          info.problem = ex.what();
        }
      } else {
        info.problem = "meta.json missing";
      }
      out.push_back(std::move(info));
    }
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) { return a.key < b.key; });
  return out;
}

std::string Store::resolve(std::string_view prefix) const {
  if (prefix.empty()) throw std::invalid_argument("an empty key prefix matches every entry");
  std::vector<std::string> hits;
  for (const EntryInfo& e : list())
    if (std::string_view(e.key).substr(0, prefix.size()) == prefix) hits.push_back(e.key);
  if (hits.empty()) throw std::invalid_argument(fmt::format("no cache entry matches '{}'", prefix));
  if (hits.size() > 1)
    throw std::invalid_argument(fmt::format("'{}' matches {} cache entries; give more of the key", prefix, hits.size()));
  return hits.front();
}

size_t Store::clear() {
  size_t n = 0;
  for (const EntryInfo& e : list())
    if (remove(e.key)) ++n;
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(dir_, ec))
    if (shard.path().filename().string().size() == 2) ::rmdir(shard.path().c_str());  // only if empty
  for (const fs::path& t : temporaries())
    if (abandoned(t)) remove_tree(t);
  return n;
}

std::vector<fs::path> Store::temporaries() const {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& t : fs::directory_iterator(dir_ / "tmp", ec)) out.push_back(t.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tessel::jit::cache
