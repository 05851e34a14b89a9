// The cache directory: atomic publication by rename, verified lookups, removal, listing.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <system_error>

#include "cache_io.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::jit::cache {
namespace {

// The artefact files an entry may hold, in write order. Names come only from this list, never
// from meta.json, so a forged meta.json cannot point outside the entry.
constexpr const char* kArtefacts[] = {kTirFile, kPlanFile, kLlvmFile, kPtxFile, kCubinFile};

bool is_artefact(const std::string& name) {
  return std::any_of(std::begin(kArtefacts), std::end(kArtefacts), [&](const char* a) { return name == a; });
}

std::string_view artefact_bytes(const Entry& e, std::string_view name) {
  if (name == kTirFile) return e.tir;
  if (name == kPlanFile) return e.plan;
  if (name == kLlvmFile) return e.llvm_ir;
  if (name == kPtxFile) return e.ptx;
  return {e.cubin.data(), e.cubin.size()};
}

// Every file name an entry (or one of tessel's temporaries) may hold.
bool is_entry_file(const std::string& name) { return is_artefact(name) || name == kMetaFile || name == kHitsFile; }

// Whether `p` is a directory (not a link to one) holding only entry files, none of them a
// directory: the shape of an entry or of one of tessel's temporaries. Anything else, or a
// directory that cannot be listed, is not tessel's to remove.
bool holds_only_entry_files(const fs::path& p) {
  std::error_code ec;
  if (fs::symlink_status(p, ec).type() != fs::file_type::directory || ec) return false;
  fs::directory_iterator it(p, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code ec2;
    if (!is_entry_file(it->path().filename().string()) || it->symlink_status(ec2).type() == fs::file_type::directory)
      return false;
  }
  return !ec;
}

// Whether `p` is a real directory (not a link to one).
bool is_real_dir(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::directory;
}

// The tags that mark tessel's temporaries in <dir>/tmp/: <key>.<tag>.<pid>.<16 hex>.
constexpr const char* kTmpTag = "tessel-tmp";      // an entry being written
constexpr const char* kTrashTag = "tessel-trash";  // an entry being removed

fs::path temporary_path(const fs::path& root, const std::string& key, const char* tag) {
  return root / "tmp" / fmt::format("{}.{}.{}", key, tag, io::unique_suffix());
}

// The writer's pid when `name` is one of tessel's temporary names, else nullopt. Besides the tagged
// names, those of earlier versions (<key>.<pid>.<16 hex>, <key>.trash.<pid>.<16 hex>) are
// recognised: their exact shape (a 32-hex key, a decimal pid, 16 hex digits) is no user's name.
std::optional<long> temporary_pid(std::string_view name) {
  if (name.size() < 33 || !is_key(name.substr(0, 32)) || name[32] != '.') return std::nullopt;
  std::string_view rest = name.substr(33);
  for (std::string_view tag : {"tessel-tmp.", "tessel-trash.", "trash."})
    if (rest.substr(0, tag.size()) == tag) {
      rest.remove_prefix(tag.size());
      break;
    }
  size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 10 || rest.size() - dot - 1 != 16) return std::nullopt;
  long pid = 0;
  for (char c : rest.substr(0, dot)) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  for (char c : rest.substr(dot + 1))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  return pid;
}

bool is_shard_name(const std::string& s) {
  return s.size() == 2 && is_key(s + std::string(30, '0'));  // two lowercase hex digits
}

// What the cache directory holds: tessel's entries (key, path), and how many other things
// (the user's files and folders) are in places tessel uses.
struct Scan {
  std::vector<std::pair<std::string, fs::path>> entries;
  size_t foreign = 0;
};

Scan scan(const fs::path& root) {
  Scan out;
  std::error_code ec;
  for (auto top = fs::directory_iterator(root, ec); !ec && top != fs::directory_iterator(); top.increment(ec)) {
    const fs::path& p = top->path();
    std::string name = p.filename().string();
    std::error_code ec2;
    if (name == "tmp" && top->is_directory(ec2)) {
      for (auto t = fs::directory_iterator(p, ec2); !ec2 && t != fs::directory_iterator(); t.increment(ec2))
        out.foreign += temporary_pid(t->path().filename().string()) && is_real_dir(t->path()) ? 0 : 1;
    } else if (is_shard_name(name) && is_real_dir(p)) {
      for (auto e = fs::directory_iterator(p, ec2); !ec2 && e != fs::directory_iterator(); e.increment(ec2)) {
        std::string key = e->path().filename().string();
        if (is_key(key) && key.compare(0, 2, name) == 0 && holds_only_entry_files(e->path()))
          out.entries.emplace_back(key, e->path());
        else
          ++out.foreign;
      }
    } else {
      ++out.foreign;
    }
  }
  std::sort(out.entries.begin(), out.entries.end());
  return out;
}

// Reads and checks the entry open as `dir`: the Entry, or nullopt with the verdict in `check`.
std::optional<Entry> load_checked(const io::Dir& dir, const std::string& key, EntryCheck& check) {
  auto bad = [&](std::string why, EntryCheck::Kind kind = EntryCheck::Corrupt) {
    check = EntryCheck{kind, std::move(why)};
    return std::nullopt;
  };
  auto unread = [&](const io::ReadFailure& rf, const std::string& name) {
    return bad(rf.str(name), rf.kind == io::ReadFailure::Unreadable ? EntryCheck::Unreadable : EntryCheck::Corrupt);
  };
  io::ReadFailure rf;
  std::optional<std::string> text = dir.read(kMetaFile, &rf);
  if (!text) return unread(rf, kMetaFile);
  Entry e;
  try {
    e.meta = parse_meta(*text);
  } catch (const std::exception& ex) {
    return bad(ex.what());
  }
  if (e.meta.key != key) return bad("meta.json names another key");
  if (!e.meta.files.count(kTirFile)) return bad("meta.json lists no kernel.tir");
  for (const auto& [name, sum] : e.meta.files) {
    if (!is_artefact(name)) return bad(fmt::format("meta.json lists an unknown file '{}'", name));
    std::optional<std::string> bytes = dir.read(name, &rf);
    if (!bytes) return unread(rf, name);
    if (bytes->size() < sum.size) return bad(fmt::format("{} truncated ({} of {} bytes)", name, bytes->size(), sum.size));
    if (bytes->size() != sum.size || file_hash(*bytes) != sum.xxh3) return bad(name + " checksum mismatch");
    if (name == kTirFile) e.tir = std::move(*bytes);
    else if (name == kPlanFile) e.plan = std::move(*bytes);
    else if (name == kLlvmFile) e.llvm_ir = std::move(*bytes);
    else if (name == kPtxFile) e.ptx = std::move(*bytes);
    else e.cubin.assign(bytes->begin(), bytes->end());
  }
  check = EntryCheck{};
  return e;
}

// The verdict on an entry directory that cannot be opened: absent, or there but unreadable.
EntryCheck unopened(const io::ReadFailure& rf) {
  if (rf.kind != io::ReadFailure::Unreadable) return {EntryCheck::Absent, "no such entry"};
  return {EntryCheck::Unreadable, rf.str("the entry directory")};
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

// Moves the entry at `path` out of the live tree into tmp/ (one atomic step: readers see it or
// nothing), then deletes it at leisure. 0 when done; ENOENT when there was nothing to move;
// ENOTEMPTY when the directory holds files that are not tessel's (left alone); else the errno of
// the failed rename (EACCES, EROFS: a read-only cache, where nothing is removed or gutted).
int move_out_and_remove(const fs::path& root, const fs::path& path, const std::string& key) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return ENOENT;
  // (Gone meanwhile, moved out by another process, is not a foreign directory.)
  if (!holds_only_entry_files(path)) return fs::exists(fs::symlink_status(path, ec)) ? ENOTEMPTY : ENOENT;
  fs::create_directories(root / "tmp", ec);
  fs::path trash = temporary_path(root, key, kTrashTag);
  if (::rename(path.c_str(), trash.c_str()) != 0) {
    int err = errno;
    // Only an entry on another file system than tmp/ is deleted in place.
    if (err != EXDEV) return err;
    remove_tree(path);
    return fs::exists(path, ec) || ec ? EIO : 0;
  }
  remove_tree(trash);
  return 0;
}

// A temporary directory of tessel's may be removed when it holds only entry files and the
// process named in it is gone, or it is an hour old (a writer on another host sharing the directory).
bool abandoned(const fs::path& tmp) {
  std::optional<long> pid = temporary_pid(tmp.filename().string());
  if (!pid || !holds_only_entry_files(tmp)) return false;
  if (*pid > 0 && ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH) return true;
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
    io::ReadFailure rf;
    std::optional<io::Dir> dir = io::Dir::open(path, &rf);
    EntryCheck check = dir ? EntryCheck{} : unopened(rf);
    std::optional<Entry> e = dir ? load_checked(*dir, key, check) : std::nullopt;
    if (e) {
      io::bump_counter(path / kHitsFile);
      return e;
    }
    if (check.kind == EntryCheck::Absent) return std::nullopt;
    // What could not be read is not known to be damaged: a miss, and the entry is left alone.
    if (check.kind == EntryCheck::Unreadable) {
      io::report_once("unreadable:" + key,
                      fmt::format("cache entry {} cannot be read ({}); compiling without it and leaving it in place",
                                  key, check.problem));
      return std::nullopt;
    }
    // Files vanishing because another process moved this entry out is not corruption: only
    // an entry still in place is judged (and removed).
    if (!dir->still_at(path)) continue;
    io::report_once("corrupt:" + key, fmt::format("cache entry {} is corrupt ({}); recompiling", key, check.problem));
    move_out_and_remove(dir_, path, key);
    return std::nullopt;
  }
  return std::nullopt;
}

StoreResult Store::store(Entry e, bool replace, std::string* failure) {
  const std::string key = e.meta.key;
  const fs::path dest = entry_path(key);
  std::error_code ec;
  if (!replace && fs::exists(dest / kMetaFile, ec)) return StoreResult::Exists;

  e.meta.files.clear();
  for (const char* name : kArtefacts) {
    std::string_view bytes = artefact_bytes(e, name);
    if (name == std::string_view(kTirFile) || !bytes.empty()) e.meta.files[name] = FileSum{bytes.size(), file_hash(bytes)};
  }

  fs::path tmp = temporary_path(dir_, key, kTmpTag);
  try {
    fs::create_directories(dir_ / "tmp");
    fs::create_directory(tmp);
    for (const auto& [name, sum] : e.meta.files) io::write_synced(tmp / name, artefact_bytes(e, name));
    io::write_synced(tmp / kMetaFile, meta_to_json(e.meta));
    io::sync_dir(tmp);
    if (replace) {
      // An entry that cannot be moved out would make the rename below report Exists: a failure.
      int err = move_out_and_remove(dir_, dest, key);
      if (err == ENOTEMPTY) throw std::runtime_error(dest.string() + " holds files that are not tessel's");
      if (err != 0 && err != ENOENT) throw std::system_error(err, std::generic_category(), "move out " + dest.string());
    }
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
    if (failure)
      *failure = ex.what();
    else
      io::report_once("store:" + dir_.string(),
                      fmt::format("cannot write to the kernel cache in {} ({}); continuing without it", dir_.string(),
                                  ex.what()));
    return StoreResult::Failed;
  }
}

EntryCheck Store::check(const std::string& key) const {
  io::ReadFailure rf;
  std::optional<io::Dir> dir = io::Dir::open(entry_path(key), &rf);
  if (!dir) return unopened(rf);
  EntryCheck c;
  load_checked(*dir, key, c);
  return c;
}

std::string Store::verify(const std::string& key) const { return check(key).problem; }

bool Store::remove(const std::string& key) { return move_out_and_remove(dir_, entry_path(key), key) == 0; }

std::vector<EntryInfo> Store::list() const {
  std::vector<EntryInfo> out;
  for (const auto& [key, path] : scan(dir_).entries) {
    EntryInfo info;
    info.key = key;
    info.path = path;
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(path, ec))
      if (f.is_regular_file(ec)) info.bytes += f.file_size(ec);
    info.hits = read_hits(path);
    io::ReadFailure rf;
    if (std::optional<std::string> text = io::read(path / kMetaFile, &rf)) {
      try {
        info.meta = parse_meta(*text);
      } catch (const std::exception& ex) {
        info.problem = ex.what();
      }
    } else {
      info.problem = rf.str(kMetaFile);
    }
    out.push_back(std::move(info));
  }
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

ClearResult Store::clear() {
  ClearResult r;
  Scan s = scan(dir_);
  r.foreign = s.foreign;
  std::set<fs::path> emptied;
  for (const auto& [key, path] : s.entries) {
    std::error_code ec;
    if (remove(key)) {
      ++r.removed;
      emptied.insert(path.parent_path());
    } else if (fs::exists(fs::symlink_status(path, ec))) {
      ++r.kept;
    }
  }
  // Only shards this clear emptied: an empty two-letter folder that held no entry may be the user's.
  for (const fs::path& shard : emptied) ::rmdir(shard.c_str());  // fails (and keeps it) unless empty
  for (const fs::path& t : temporaries())
    if (abandoned(t)) remove_tree(t);
  return r;
}

std::vector<fs::path> Store::temporaries() const {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto t = fs::directory_iterator(dir_ / "tmp", ec); !ec && t != fs::directory_iterator(); t.increment(ec))
    if (temporary_pid(t->path().filename().string()) && is_real_dir(t->path())) out.push_back(t->path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tessel::jit::cache
