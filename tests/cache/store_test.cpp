// The store: publication, lookups, hit counts, corrupt-entry recovery, listing, prefixes, clearing.
#include <doctest/doctest.h>

#include "cache_test_util.hpp"

using namespace cache_test;

namespace {

void check_same(const cache::Entry& a, const cache::Entry& b) {
  CHECK(a.tir == b.tir);
  CHECK(a.llvm_ir == b.llvm_ir);
  CHECK(a.ptx == b.ptx);
  CHECK(a.cubin == b.cubin);
  CHECK(a.meta.key == b.meta.key);
  CHECK(a.meta.kernel == b.meta.kernel);
  CHECK(a.meta.registers == b.meta.registers);
  CHECK(a.meta.launch.shared_bytes == b.meta.launch.shared_bytes);
}

// Stores an entry, damages it with `damage`, and checks lookup reports it once, removes it,
// misses, and that storing again works.
void check_recovery(uint64_t seed, const std::string& expected_reason,
                    const std::function<void(const fs::path&)>& damage) {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry e = random_entry(seed, 777 + seed % 100);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  damage(store.entry_path(e.meta.key));
  CHECK(store.verify(e.meta.key).find(expected_reason) != std::string::npos);
  std::string err;
  {
    StderrCapture cap;
    CHECK_FALSE(store.lookup(e.meta.key).has_value());
    CHECK_FALSE(store.lookup(e.meta.key).has_value());  // gone now: a plain miss, not reported again
    err = cap.text();
  }
  CHECK(err == "tessel: cache entry " + e.meta.key + " is corrupt (" + expected_reason + "); recompiling\n");
  CHECK_FALSE(fs::exists(store.entry_path(e.meta.key)));
  CHECK(count_temporaries(dir.path) == 0);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  auto again = store.lookup(e.meta.key);
  REQUIRE(again.has_value());
  check_same(*again, e);
}

}  // namespace

TEST_CASE("a stored entry is found again, byte for byte, with its checksums filled in") {
  TempDir dir;
  cache::Store store(dir.path);
  for (size_t cubin : {size_t{0}, size_t{1}, size_t{4097}, size_t{100003}}) {
    cache::Entry e = random_entry(1000 + cubin, cubin);
    CHECK_FALSE(store.lookup(e.meta.key).has_value());
    REQUIRE(store.store(e) == cache::StoreResult::Stored);
    fs::path p = store.entry_path(e.meta.key);
    CHECK(p.parent_path().filename() == e.meta.key.substr(0, 2));
    CHECK(fs::exists(p / "meta.json"));
    CHECK(fs::exists(p / "kernel.cubin") == (cubin > 0));
    auto got = store.lookup(e.meta.key);
    REQUIRE(got.has_value());
    check_same(*got, e);
    CHECK(got->meta.files.at("kernel.ptx").size == e.ptx.size());
    CHECK(got->meta.files.at("kernel.ptx").xxh3 == cache::file_hash(e.ptx));
    CHECK(got->meta.files.count("kernel.cubin") == (cubin > 0 ? 1u : 0u));
    CHECK(store.verify(e.meta.key).empty());
  }
  CHECK(count_temporaries(dir.path) == 0);
}

TEST_CASE("a second store of a key leaves the first entry; replace swaps it") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry a = random_entry(5, 100);
  cache::Entry b = random_entry(6, 2000);
  b.meta.key = a.meta.key;
  REQUIRE(store.store(a) == cache::StoreResult::Stored);
  CHECK(store.store(b) == cache::StoreResult::Exists);
  check_same(*store.lookup(a.meta.key), a);
  CHECK(store.store(b, /*replace=*/true) == cache::StoreResult::Stored);
  check_same(*store.lookup(a.meta.key), b);
  CHECK(count_entries(dir.path) == 1);
  CHECK(count_temporaries(dir.path) == 0);
}

TEST_CASE("hits are counted per entry") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry a = random_entry(11, 10), b = random_entry(12, 10);
  store.store(a);
  store.store(b);
  for (int i = 0; i < 5; ++i) REQUIRE(store.lookup(a.meta.key));
  REQUIRE(store.lookup(b.meta.key));
  auto list = store.list();
  REQUIRE(list.size() == 2);
  for (const auto& info : list) CHECK(info.hits == (info.key == a.meta.key ? 5u : 1u));
  // A garbled counter is a statistic lost, not a corrupt entry.
  write_bytes(store.entry_path(a.meta.key) / "hits", "x\x01garbage");
  CHECK(store.lookup(a.meta.key).has_value());
  CHECK(read_bytes(store.entry_path(a.meta.key) / "hits") == "1\n");
  for (const auto& info : store.list()) CHECK(info.hits == 1);  // a: restarted at the garbage; b: one hit
}

TEST_CASE("a truncated cubin is reported, removed, and recompiled") {
  check_recovery(21, "kernel.cubin truncated (100 of 798 bytes)", [](const fs::path& p) {
    fs::resize_file(p / "kernel.cubin", 100);
  });
}

TEST_CASE("a flipped byte in the cubin is a checksum mismatch") {
  check_recovery(22, "kernel.cubin checksum mismatch", [](const fs::path& p) {
    std::string b = read_bytes(p / "kernel.cubin");
    b[b.size() / 3] ^= 0x10;
    write_bytes(p / "kernel.cubin", b);
  });
}

TEST_CASE("a flipped byte in meta.json is detected") {
  check_recovery(23, "meta.json checksum mismatch", [](const fs::path& p) {
    std::string m = read_bytes(p / "meta.json");
    size_t at = m.find("\"shared_bytes\": ") + 16;  // a digit: the JSON still parses
    m[at] = m[at] == '9' ? '8' : static_cast<char>(m[at] + 1);
    write_bytes(p / "meta.json", m);
  });
}

TEST_CASE("a deleted file is reported as missing") {
  check_recovery(24, "kernel.ptx missing", [](const fs::path& p) { fs::remove(p / "kernel.ptx"); });
  check_recovery(25, "meta.json missing", [](const fs::path& p) { fs::remove(p / "meta.json"); });
}

TEST_CASE("an extra byte appended to the tile IR is a checksum mismatch") {
  check_recovery(26, "kernel.tir checksum mismatch", [](const fs::path& p) {
    std::ofstream(p / "kernel.tir", std::ios::app) << "x";
  });
}

TEST_CASE("an entry copied under another key is rejected") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry a = random_entry(31, 50);
  cache::Entry b = random_entry(32, 50);
  store.store(a);
  fs::create_directories(store.entry_path(b.meta.key).parent_path());
  fs::copy(store.entry_path(a.meta.key), store.entry_path(b.meta.key));
  StderrCapture cap;
  CHECK_FALSE(store.lookup(b.meta.key).has_value());
  CHECK(cap.text().find("meta.json names another key") != std::string::npos);
  cap.restore();
  CHECK(store.lookup(a.meta.key).has_value());
}

TEST_CASE("list is sorted by key with sizes; resolve takes unique prefixes; clear empties") {
  TempDir dir;
  cache::Store store(dir.path);
  std::vector<cache::Entry> entries;
  for (uint64_t s = 40; s < 52; ++s) {
    entries.push_back(random_entry(s, 13 * s));
    REQUIRE(store.store(entries.back()) == cache::StoreResult::Stored);
  }
  auto list = store.list();
  REQUIRE(list.size() == entries.size());
  for (size_t i = 1; i < list.size(); ++i) CHECK(list[i - 1].key < list[i].key);
  for (const auto& info : list) {
    REQUIRE(info.meta.has_value());
    uint64_t bytes = 0;
    for (const auto& f : fs::directory_iterator(info.path)) bytes += f.file_size();
    CHECK(info.bytes == bytes);
    CHECK(info.hits == 0);
  }
  const std::string& k = list[3].key;
  CHECK(store.resolve(k) == k);
  // The shortest prefix that no other key shares resolves; a one-character prefix shared by two does not.
  size_t n = 1;
  auto unique = [&](size_t len) {
    int c = 0;
    for (const auto& e : list) c += e.key.compare(0, len, k, 0, len) == 0;
    return c == 1;
  };
  while (!unique(n)) ++n;
  CHECK(store.resolve(k.substr(0, n)) == k);
  CHECK_THROWS_WITH_AS(store.resolve("zz"), doctest::Contains("no cache entry matches"), std::invalid_argument);
  CHECK_THROWS_AS(store.resolve(""), std::invalid_argument);
  if (n > 1) CHECK_THROWS_WITH_AS(store.resolve(k.substr(0, n - 1)), doctest::Contains("matches"), std::invalid_argument);

  CHECK(store.clear().removed == entries.size());
  CHECK(store.list().empty());
  CHECK(count_entries(dir.path) == 0);
  REQUIRE(store.store(entries[0]) == cache::StoreResult::Stored);  // usable after clearing
  CHECK(store.lookup(entries[0].meta.key).has_value());
}

TEST_CASE("clear removes temporaries of dead writers but not of live ones") {
  TempDir dir;
  cache::Store store(dir.path);
  fs::create_directories(dir.path / "tmp");
  cache::Entry e = random_entry(60, 10);
  fs::path live = dir.path / "tmp" / (e.meta.key + "." + std::to_string(::getpid()) + ".00000000000000aa");
  fs::path dead = dir.path / "tmp" / (e.meta.key + ".999999999.00000000000000bb");  // no such pid
  // The names this version makes, tagged as tessel's.
  fs::path live_tagged = dir.path / "tmp" / (e.meta.key + ".tessel-tmp." + std::to_string(::getpid()) + ".00000000000000cc");
  fs::path dead_tagged = dir.path / "tmp" / (e.meta.key + ".tessel-trash.999999999.00000000000000dd");
  for (const fs::path& t : {live, dead, live_tagged, dead_tagged}) fs::create_directory(t);
  store.clear();
  CHECK(fs::exists(live));
  CHECK(fs::exists(live_tagged));
  CHECK_FALSE(fs::exists(dead));
  CHECK_FALSE(fs::exists(dead_tagged));
  CHECK(store.temporaries() == std::vector<fs::path>{live, live_tagged});
}

TEST_CASE("an unwritable cache directory is reported once and bypassed, never thrown") {
  TempDir dir;
  fs::path file = dir.path / "not-a-dir";
  write_bytes(file, "x");
  cache::Store store(file / "cache");
  cache::Entry e = random_entry(70, 10);
  StderrCapture cap;
  CHECK(store.store(e) == cache::StoreResult::Failed);
  CHECK(store.store(random_entry(71, 10)) == cache::StoreResult::Failed);
  CHECK_FALSE(store.lookup(e.meta.key).has_value());
  std::string err = cap.text();
  CHECK(err.find("cannot write to the kernel cache") != std::string::npos);
  CHECK(err.find("cannot write", err.find("cannot write") + 1) == std::string::npos);  // once
  CHECK(store.list().empty());
}
