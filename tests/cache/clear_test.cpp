// Only tessel's own files are removed: clear beside a user's files, unreadable entries, read-only caches.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <vector>

#include "../common/child_process.hpp"
#include "cache_test_util.hpp"

using namespace cache_test;

namespace {

void make_old(const fs::path& p) { fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(3)); }

// Every regular file under `root` with its bytes, and every directory (as ""), by relative path.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    out[fs::relative(e.path(), root).string() + (e.is_directory() ? "/" : "")] =
        e.is_regular_file() ? read_bytes(e.path()) : "";
  return out;
}

// A key that no entry of these tests has, for folders shaped like entries that are not.
std::string other_key(char first) { return std::string(2, first) + std::string(30, '7'); }

// Makes directories unwritable for this process: chmod a-w, or as root (which ignores
// permissions) the immutable attribute through chattr. ok() is false when neither takes effect.
class ReadOnly {
 public:
  explicit ReadOnly(std::vector<fs::path> dirs) : dirs_(std::move(dirs)) {
    for (const fs::path& d : dirs_) {
      if (::geteuid() == 0) {
        immutable_ = true;
        if (std::system(("chattr +i '" + d.string() + "' 2>/dev/null").c_str()) != 0) return;
      } else {
        fs::permissions(d, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                        fs::perm_options::remove);
      }
    }
    fs::path probe = dirs_.front() / "probe";  // does the protection hold for this process?
    std::error_code ec;
    ok_ = !fs::create_directory(probe, ec);
    if (!ok_) fs::remove(probe, ec);
  }
  ~ReadOnly() {
    for (const fs::path& d : dirs_) {
      if (immutable_)
        (void)std::system(("chattr -i '" + d.string() + "' 2>/dev/null").c_str());
      else
        fs::permissions(d, fs::perms::owner_write, fs::perm_options::add);
    }
  }
  bool ok() const { return ok_; }

 private:
  std::vector<fs::path> dirs_;
  bool immutable_ = false;
  bool ok_ = false;
};

}  // namespace

TEST_CASE("clear removes tessel's entries and temporaries and leaves every file of the user's") {
  TempDir dir;
  const fs::path& d = dir.path;
  cache::Store store(d);
  std::vector<std::string> keys;
  // Keys hash the build id, so which shard an entry lands in changes with every source change:
  // skip the ones that would land in the user's empty "ab" or "zz" folder, which must be kept.
  for (uint64_t seed = 80; keys.size() < 3; ++seed) {
    cache::Entry e = random_entry(seed, 100 + seed);
    if (e.meta.key.starts_with("ab") || e.meta.key.starts_with("zz")) continue;
    REQUIRE(store.store(e) == cache::StoreResult::Stored);
    keys.push_back(e.meta.key);
  }
  // tessel's temporaries of writers that are gone: tagged, and named as earlier versions did.
  const std::string k = keys[0];
  fs::path dead_tmp = d / "tmp" / (k + ".tessel-tmp.999999999.00000000000000aa");
  fs::path dead_trash = d / "tmp" / (k + ".tessel-trash.999999999.00000000000000bb");
  fs::path dead_legacy = d / "tmp" / (k + ".999999999.00000000000000cc");
  for (const fs::path& t : {dead_tmp, dead_trash, dead_legacy}) write_bytes(t / "kernel.ptx", "half written");

  // The user's files, in every place tessel uses: names with a number between dots (which the
  // old sweep took for a dead writer's pid), old files in tmp/, empty two-letter folders (one of
  // them a shard name), two-letter folders with files, and folders shaped like entries.
  const std::vector<fs::path> user_files = {
      d / "thesis.2024.tex",
      d / "tmp" / "thesis.2024.tex",
      d / "tmp" / "notes.v2.txt",
      d / "tmp" / "report.pdf",
      d / "tmp" / "mine" / "a.1.b",
      d / "photos" / "cat.jpg",
      d / "db" / "notes.txt",              // "db": a shard name
      d / "db" / "backup" / "x.999999.y",  // a folder in a shard folder
      d / "cc" / other_key('c') / "kernel.tir",  // shaped like an entry, with a file tessel never makes
      d / "cc" / other_key('c') / "notes.txt",
      d / "tmp" / (k + ".tessel-tmp.999999999.00000000000000dd") / "mine.txt",  // a temporary's name, not its contents
  };
  for (const fs::path& f : user_files) write_bytes(f, "the user's " + f.filename().string());
  write_bytes(d / "tmp" / (k + ".tessel-tmp.999999999.00000000000000ee"), "a file, not a temporary directory");
  for (const char* name : {"tmp/report.pdf", "tmp/mine", "tmp/mine/a.1.b", "tmp/notes.v2.txt"}) make_old(d / name);
  fs::create_directory(d / "ab");  // empty folders with two-letter names
  fs::create_directory(d / "zz");
  make_old(d / "ab");

  cache::ClearResult r = store.clear();
  CHECK(r.removed == keys.size());
  CHECK(r.kept == 0);
  // Left: thesis, photos, zz at the top; db's two; cc's entry-shaped folder; in tmp/: thesis,
  // notes, report, mine, and the file with a temporary's name (the directory one is a temporary).
  CHECK(r.foreign == 11);
  CHECK(store.list().empty());
  for (const std::string& key : keys) CHECK_FALSE(fs::exists(store.entry_path(key)));
  for (const fs::path& t : {dead_tmp, dead_trash, dead_legacy}) CHECK_FALSE(fs::exists(t));
  // Of the temporaries, only the one holding the user's file is left (and no user's file counts as one).
  CHECK(store.temporaries() == std::vector<fs::path>{d / "tmp" / (k + ".tessel-tmp.999999999.00000000000000dd")});

  // Everything of the user's is still there, byte for byte.
  for (const fs::path& f : user_files) {
    CAPTURE(f);
    CHECK(read_bytes(f) == "the user's " + f.filename().string());
  }
  CHECK(read_bytes(d / "tmp" / (k + ".tessel-tmp.999999999.00000000000000ee")) == "a file, not a temporary directory");
  CHECK(fs::is_directory(d / "ab"));
  CHECK(fs::is_directory(d / "zz"));
  // Shards that only held the removed entries are gone (unless it is one of the user's folders).
  for (const std::string& key : keys) {
    std::string shard = key.substr(0, 2);
    if (shard != "ab" && shard != "cc" && shard != "db") CHECK_FALSE(fs::exists(d / shard));
  }
  // The store still works in a directory shared with the user's files.
  cache::Entry e = random_entry(80, 180);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  CHECK(store.lookup(e.meta.key).has_value());
  CHECK(store.list().size() == 1);
}

TEST_CASE("list, verify and remove ignore folders shaped like entries that hold the user's files") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry e = random_entry(84, 64);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  fs::path p = store.entry_path(e.meta.key);
  write_bytes(p / "notes.txt", "the user's notes, dropped into an entry");
  CHECK(store.list().empty());
  CHECK_FALSE(store.remove(e.meta.key));
  CHECK(store.clear().foreign == 1);
  // Damaged as well: a replace cannot move it out of the way, and says so rather than "exists".
  std::ofstream(p / "kernel.tir", std::ios::app) << "x";
  std::string failure;
  CHECK(store.store(e, /*replace=*/true, &failure) == cache::StoreResult::Failed);
  CHECK(failure == p.string() + " holds files that are not tessel's");
  CHECK(read_bytes(p / "notes.txt") == "the user's notes, dropped into an entry");
  CHECK(fs::exists(p / "meta.json"));
}

TEST_CASE("a file that cannot be read is unreadable, not missing, and lookup leaves the entry in place") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry e = random_entry(85, 300);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  fs::path p = store.entry_path(e.meta.key);
  std::map<std::string, std::string> before = snapshot(p);

  // A read that fails for a reason other than the file's absence (here: no descriptor left, the
  // one case root cannot bypass) says nothing about the entry's bytes, so nothing is removed.
  StderrCapture cap;
  std::string status = tessel_test::run_in_child([&] {
    rlimit lim{64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) return false;
    std::vector<int> fds;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) fds.push_back(fd);
    if (errno != EMFILE || fds.empty()) return false;
    ::close(fds.back());  // one descriptor left: the entry's directory takes it, meta.json gets none
    cache::EntryCheck c = store.check(e.meta.key);
    if (c.kind != cache::EntryCheck::Unreadable || c.problem != "meta.json unreadable (Too many open files)") return false;
    return !store.lookup(e.meta.key).has_value();
  });
  std::string err = cap.text();
  cap.restore();
  CHECK(status == "exit 0");
  CHECK(err == "tessel: cache entry " + e.meta.key +
                   " cannot be read (meta.json unreadable (Too many open files)); compiling without it and leaving "
                   "it in place\n");
  CHECK(snapshot(p) == before);
  CHECK(store.verify(e.meta.key).empty());

  // Permissions: root reads anything, so this part needs an ordinary user.
  fs::permissions(p / "kernel.ptx", fs::perms::none);
  if (::access((p / "kernel.ptx").c_str(), R_OK) == 0) {
    fs::permissions(p / "kernel.ptx", fs::perms::owner_read | fs::perms::owner_write);
    MESSAGE("SKIPPED the chmod 000 part: this process (root?) reads files whatever their permissions");
    return;
  }
  CHECK(store.check(e.meta.key).kind == cache::EntryCheck::Unreadable);
  CHECK(store.verify(e.meta.key) == "kernel.ptx unreadable (Permission denied)");
  {
    StderrCapture cap2;
    CHECK_FALSE(store.lookup(e.meta.key).has_value());
    CHECK(cap2.text().find("cannot be read (kernel.ptx unreadable (Permission denied))") != std::string::npos);
  }
  CHECK(fs::exists(p / "kernel.ptx"));
  CHECK(fs::exists(p / "meta.json"));
  CHECK(store.store(e) == cache::StoreResult::Exists);  // a compile after the miss leaves it too
  CHECK(store.clear().removed == 1);                    // clear needs no reading: it removes it
  CHECK_FALSE(fs::exists(p));
}

TEST_CASE("a read-only cache: nothing is reported removed that was not, and a store fails with the reason") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry e = random_entry(86, 200);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  fs::path p = store.entry_path(e.meta.key);
  std::ofstream(p / "kernel.tir", std::ios::app) << "garbage";  // damaged: a replace is wanted
  std::map<std::string, std::string> before = snapshot(dir.path);
  std::string failure;
  {
    ReadOnly ro({dir.path, p.parent_path()});
    if (!ro.ok()) {
      MESSAGE("SKIPPED: neither chmod nor chattr +i makes a directory read-only for this process");
      return;
    }
    CHECK_FALSE(store.remove(e.meta.key));
    cache::ClearResult r = store.clear();
    CHECK(r.removed == 0);
    CHECK(r.kept == 1);
    StderrCapture cap;
    CHECK(store.store(e, /*replace=*/true, &failure) == cache::StoreResult::Failed);
    CHECK(store.store(random_entry(87, 10), false, &failure) == cache::StoreResult::Failed);
    CHECK(cap.text().empty());  // the reason went to the caller, not to stderr
    CHECK_FALSE(store.lookup(e.meta.key).has_value());  // corrupt, and cannot be removed: a miss
    CHECK(cap.text().find("is corrupt (kernel.tir checksum mismatch)") != std::string::npos);
  }
  CHECK(failure.find(dir.path.string()) != std::string::npos);
  CHECK(snapshot(dir.path) == before);  // nothing gutted, nothing left behind
  CHECK(store.store(e, /*replace=*/true, &failure) == cache::StoreResult::Stored);
  CHECK(store.verify(e.meta.key).empty());
}

TEST_CASE("a store into a directory that cannot exist fails with the reason, once, to the caller") {
  TempDir dir;
  write_bytes(dir.path / "file", "x");
  cache::Store store(dir.path / "file" / "cache");
  std::string failure;
  StderrCapture cap;
  CHECK(store.store(random_entry(88, 10), false, &failure) == cache::StoreResult::Failed);
  CHECK(cap.text().empty());
  CHECK(failure.find("Not a directory") != std::string::npos);
  CHECK(failure.find('\n') == std::string::npos);
}
