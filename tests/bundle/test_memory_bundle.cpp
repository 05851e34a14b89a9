// Bundles opened from memory (Bundle::open / open_borrowed over a span): the same bundle as
// from the file, the same checks, errors naming the origin for every truncation and for random
// damage (no crash: run under scripts/test-sanitize.sh for ASan), the copy/borrow lifetime
// rule, and images read from the bytes when a variant first loads (on the fake driver).
// Needs tessel::runtime only (and the build's sample bundle where there is one).
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstddef>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "../common/fake_driver.hpp"
#include "bundle_test_util.hpp"
#include "tessel/runtime/buffer.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/context.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/sha256.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::byte> to_bytes(std::string_view s) {
  const auto b = std::as_bytes(std::span(s.data(), s.size()));
  return {b.begin(), b.end()};
}

// The BundleError message of f(), "" when it succeeds. Any other exception fails the test: a
// damaged bundle must always be a BundleError.
std::string bundle_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const rt::BundleError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("not a BundleError: " << std::string(e.what()));
    return e.what();
  }
  return "";
}

// A small but complete packed bundle made with the runtime alone: small_manifest()'s kernel with
// real images (PTX text the fake driver accepts, a fake ELF cubin), real sizes and checksums,
// packed by rt::pack_bundle. Returns the .tsb's path; the directory is `dir`/b.
fs::path make_small_bundle(const fs::path& dir) {
  rt::BundleManifest m = small_manifest();
  fs::create_directories(dir / "b");
  for (auto& k : m.kernels)
    for (auto& v : k.variants)
      for (auto& im : v.images) {
        const std::string body =
            im.kind == rt::ImageKind::Cubin
                ? std::string("\x7f" "ELF fake cubin of ") + im.file
                : ".version 8.0\n.target " + im.arch + "\n.address_size 64\n.visible .entry " + v.entry +
                      "(\n)\n{\n  ret;\n}\n// " + im.file + "\n";
        write(dir / "b" / im.file, body);
        im.size = body.size();
        im.sha256 = rt::sha256_hex(body);
      }
  write(dir / "b" / rt::kBundleManifestFile, rt::manifest_to_json(m));
  rt::pack_bundle(dir / "b", dir / "b.tsb");
  return dir / "b.tsb";
}

// The two forms agree: manifest, kernels, packed, and both verify.
void check_same_bundle(rt::Bundle& from_memory, rt::Bundle& from_file) {
  CHECK(from_memory.packed());
  CHECK(from_memory.manifest() == from_file.manifest());
  for (const auto& k : from_file.manifest().kernels) {
    CAPTURE(k.name);
    rt::BundleKernel* mk = from_memory.find(k.name);
    REQUIRE(mk != nullptr);
    CHECK(mk->info() == k);
    CHECK(signature_string(mk->info()) == signature_string(from_file.kernel(k.name).info()));
  }
  CHECK_NOTHROW(from_memory.verify());
  CHECK_NOTHROW(from_file.verify());
}

// Offset of `name`'s bytes inside a packed bundle (its index read back by hand).
size_t packed_offset(const std::string& bytes, const std::string& name) {
  uint64_t index_len = 0;
  for (int i = 7; i >= 0; --i) index_len = index_len << 8 | static_cast<uint8_t>(bytes[8 + i]);
  size_t offset = 16 + index_len, pos = 16;
  while (pos < 16 + index_len) {
    const size_t space = bytes.find(' ', pos), eol = bytes.find('\n', pos);
    const uint64_t size = std::stoull(bytes.substr(pos, space - pos));
    if (bytes.substr(space + 1, eol - space - 1) == name) return offset;
    offset += size;
    pos = eol + 1;
  }
  FAIL("no file '" << name << "' in the packed bundle");
  return 0;
}

}  // namespace

TEST_CASE("a packed bundle opened from memory is the bundle opened from its file, copied or borrowed") {
  TempDir t;
  const fs::path file = make_small_bundle(t.path);
  const std::string bytes = read(file);
  rt::Bundle from_file = rt::Bundle::open(file);
  rt::Bundle from_dir = rt::Bundle::open(t.path / "b");

  const std::vector<std::byte> buffer = to_bytes(bytes);
  rt::Bundle copied = rt::Bundle::open(buffer);
  CHECK(copied.origin() == "<memory>");
  check_same_bundle(copied, from_file);
  CHECK(copied.manifest() == from_dir.manifest());

  rt::Bundle borrowed = rt::Bundle::open_borrowed(buffer, "embedded:small");
  CHECK(borrowed.origin() == "embedded:small");
  check_same_bundle(borrowed, from_file);

  // unsigned char (what xxd -i and #embed give) and a char buffer through std::as_bytes.
  const std::vector<unsigned char> uchars(bytes.begin(), bytes.end());
  rt::Bundle from_uchars = rt::Bundle::open(uchars);
  check_same_bundle(from_uchars, from_file);
  rt::Bundle from_string = rt::Bundle::open_borrowed(std::as_bytes(std::span(bytes)), "string");
  check_same_bundle(from_string, from_file);

  // Selection and configs come from the same manifest, so the same arguments pick the same.
  rt::BundleKernel& a = copied.kernel("scale");
  rt::BundleKernel& b = from_file.kernel("scale");
  for (int32_t n : {1, 17, 4096, 5000})
    for (CUdeviceptr x : {CUdeviceptr{0x1000}, CUdeviceptr{0x1004}}) {
      CAPTURE(n);
      CHECK(a.variant_for(x, n, 2.0f) == b.variant_for(x, n, 2.0f));
      CHECK(a.config_for(x, n, 2.0f).name == b.config_for(x, n, 2.0f).name);
    }
  // Kernel lookups name the origin.
  CHECK(contains(bundle_error_of([&] { borrowed.kernel("nope"); }), "bundle embedded:small: no kernel 'nope' (it has: scale)"));
}

TEST_CASE("the build's sample bundle opens from memory as from its file") {
  const fs::path file = TESSEL_SAMPLE_PACKED_BUNDLE;
  if (!fs::exists(file)) {
    MESSAGE("no sample bundle at " << file.string() << " (built without the lowering); not checked");
    return;
  }
  const std::string bytes = read(file);
  rt::Bundle from_file = rt::Bundle::open(file);
  rt::Bundle from_memory = rt::Bundle::open(std::as_bytes(std::span(bytes)), file.string());
  check_same_bundle(from_memory, from_file);
  CHECK(from_memory.origin() == from_file.origin());
  CHECK(from_memory.manifest().kernels.size() >= 10);

  // Damage to the real thing (mostly image bytes here, where the small bundle is mostly
  // bundle.json): truncations at the first 300 lengths and every 997th after, random flips.
  for (size_t len = 0; len < bytes.size(); len += len < 300 ? 1 : 997) {
    const std::vector<std::byte> prefix = to_bytes(std::string_view(bytes).substr(0, len));
    const std::string e = bundle_error_of([&] { rt::Bundle::open_borrowed(prefix, "sample prefix").verify(); });
    if (!contains(e, "bundle sample prefix: ")) {
      FAIL_CHECK("prefix of " << len << " bytes: " << (e.empty() ? "opened" : e));
      break;
    }
  }
  std::mt19937 rng(22);
  int caught = 0;
  for (int round = 0; round < 60; ++round) {
    std::vector<std::byte> damaged = to_bytes(bytes);
    damaged[rng() % damaged.size()] ^= static_cast<std::byte>(1u << (rng() % 8));
    std::string e = bundle_error_of([&] { rt::Bundle::open_borrowed(damaged, "sample").verify(); });
    if (!e.empty()) {
      CHECK_MESSAGE(contains(e, "bundle sample: "), e);
      ++caught;
    }
  }
  CHECK(caught >= 55);  // a flip in a description or other free text may pass; one in an image never does
}

TEST_CASE("damaged bytes are refused with a BundleError naming the origin and the problem") {
  TempDir t;
  const std::string good = read(make_small_bundle(t.path));
  auto open_error = [](const std::string& bytes, const std::string& origin = "<memory>") {
    const std::vector<std::byte> exact = to_bytes(bytes);  // exactly sized: ASan sees any over-read
    std::string copied = bundle_error_of([&] { rt::Bundle::open(exact, origin); });
    std::string borrowed = bundle_error_of([&] { rt::Bundle::open_borrowed(exact, origin); });
    CHECK(copied == borrowed);  // the same checks whether copied or not
    return copied;
  };
  SUBCASE("nothing, or not a packed bundle") {
    CHECK(open_error("") == "bundle <memory>: not a single-file bundle (0 bytes that do not start with its header; "
                            "only the packed form, `tessel export --pack`, opens from memory)");
    CHECK(contains(open_error("{\"format_version\": 2}", "kernels.json"),
                   "bundle kernels.json: not a single-file bundle (21 bytes that do not start with its header"));
    CHECK(contains(open_error(good.substr(0, 15)), "bundle <memory>: not a single-file bundle (15 bytes"));
    std::string wrong_version = good;
    wrong_version[7] = '\x02';  // the magic's format byte
    CHECK(contains(open_error(wrong_version), "not a single-file bundle"));
  }
  SUBCASE("truncated, or with bytes after the end") {
    CHECK(contains(open_error(good.substr(0, good.size() - 1), "embedded"),
                   "bundle embedded: damaged single-file bundle: '"));
    CHECK(contains(open_error(good.substr(0, good.size() - 1)), "' runs past the end of the file (truncated?)"));
    CHECK(contains(open_error(good + "x"), "bundle <memory>: damaged single-file bundle: 1 unexpected bytes after the last file"));
    CHECK(contains(open_error(good.substr(0, 16)), "damaged single-file bundle: index runs past the end of the file"));
  }
  SUBCASE("a damaged index") {
    std::string huge = good;
    huge[15] = '\x7f';  // index length ~ 2^63
    CHECK(contains(open_error(huge), "index runs past the end of the file"));
    std::string bad_size = good;
    bad_size[16] = 'x';  // the first index line's size
    CHECK(contains(open_error(bad_size), "damaged single-file bundle: malformed size in index"));
  }
  SUBCASE("a damaged bundle.json inside the bytes") {
    std::string bad = good;
    const size_t json = packed_offset(good, "bundle.json");
    REQUIRE(bad[json] == '{');
    bad[json] = '[';
    CHECK(contains(open_error(bad, "embedded"), "bundle embedded: bundle.json is not valid JSON"));
  }
  SUBCASE("a damaged image: open succeeds (sizes match), verify names the file and the origin") {
    std::string bad = good;
    bad[packed_offset(good, "scale.generic.sm_80.ptx") + 3] ^= 0x20;
    rt::Bundle b = rt::Bundle::open(std::as_bytes(std::span(bad)), "embedded");
    CHECK(contains(bundle_error_of([&] { b.verify(); }),
                   "bundle embedded: file 'scale.generic.sm_80.ptx' is corrupt (sha256 "));
  }
  SUBCASE("more than a bundle may hold, refused before anything past the header is read") {
    // A reserved, untouched mapping: only the header's page is ever backed by memory.
    const size_t size = rt::kMaxBundleFileBytes + 1;
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    std::memcpy(p, good.data(), 16);
    const std::span<const std::byte> huge(static_cast<const std::byte*>(p), size);
    CHECK(contains(bundle_error_of([&] { rt::Bundle::open_borrowed(huge, "huge"); }),
                   "bundle huge: 1073741825 bytes, more than a bundle may hold (1024 MiB)"));
    ::munmap(p, size);
  }
}

TEST_CASE("fuzz: every truncation of a real bundle and random byte flips give a BundleError or a valid bundle") {
  TempDir t;
  const std::string good = read(make_small_bundle(t.path));
  // Every strict prefix: refused, naming the origin (a prefix may never pass as a bundle; were
  // one opened, verify() would read every image, so ASan would see a read past the span).
  size_t refused = 0;
  for (size_t len = 0; len < good.size(); ++len) {
    const std::vector<std::byte> prefix = to_bytes(std::string_view(good).substr(0, len));
    const std::string e = bundle_error_of([&] { rt::Bundle::open_borrowed(prefix, "prefix").verify(); });
    if (!contains(e, "bundle prefix: ")) {
      FAIL_CHECK("prefix of " << len << " bytes: " << (e.empty() ? "opened" : e));
      break;
    }
    ++refused;
  }
  CHECK(refused == good.size());
  // Random flips of 1-4 bytes anywhere (header, index, bundle.json, images): open and verify
  // either succeed or throw BundleError; a flip inside an image is always caught by verify().
  std::mt19937 rng(2026);
  int opened = 0, caught_at_open = 0, caught_at_verify = 0;
  for (int round = 0; round < 1500; ++round) {
    std::vector<std::byte> bytes = to_bytes(good);
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1u << (rng() % 8));
    std::optional<rt::Bundle> b;
    std::string e = bundle_error_of([&] { b.emplace(round % 2 ? rt::Bundle::open(bytes, "flipped")
                                                              : rt::Bundle::open_borrowed(bytes, "flipped")); });
    if (!b) {
      CHECK_MESSAGE(contains(e, "bundle flipped: "), e);
      ++caught_at_open;
      continue;
    }
    ++opened;
    e = bundle_error_of([&] { b->verify(); });
    if (!e.empty()) {
      CHECK_MESSAGE(contains(e, "bundle flipped: file '"), e);
      ++caught_at_verify;
    }
  }
  MESSAGE("flips: " << caught_at_open << " refused at open, " << caught_at_verify << " at verify, "
                    << opened - caught_at_verify << " harmless (e.g. in a description)");
  CHECK(caught_at_open > 0);
  CHECK(caught_at_verify > 0);
}

TEST_CASE("open copies the bytes; open_borrowed reads the caller's bytes for as long as the bundle lives") {
  TempDir t;
  const std::string good = read(make_small_bundle(t.path));
  const size_t image = packed_offset(good, "scale.generic.sm_80.ptx");
  SUBCASE("copied: the caller's buffer may change or go away at once") {
    std::optional<rt::Bundle> moved;
    {
      std::vector<std::byte> buffer = to_bytes(good);
      rt::Bundle b = rt::Bundle::open(buffer);
      buffer[image] ^= std::byte{1};
      CHECK_NOTHROW(b.verify());  // the copy is unchanged
      moved.emplace(std::move(b));
    }  // the buffer is freed: the (moved) bundle still reads its own copy
    CHECK_NOTHROW(moved->verify());
    CHECK(moved->kernel("scale").name() == "scale");
  }
  SUBCASE("borrowed: no copy, so a change to the bytes is seen (and caught by the checksum)") {
    std::vector<std::byte> buffer = to_bytes(good);
    rt::Bundle b = rt::Bundle::open_borrowed(buffer, "borrowed");
    CHECK_NOTHROW(b.verify());
    buffer[image] ^= std::byte{1};
    CHECK(contains(bundle_error_of([&] { b.verify(); }), "bundle borrowed: file 'scale.generic.sm_80.ptx' is corrupt"));
    buffer[image] ^= std::byte{1};
    rt::Bundle moved = std::move(b);  // moving the Bundle keeps the view of the same bytes
    CHECK_NOTHROW(moved.verify());
  }
}

// The launch path on the fake driver (no GPU): the image the first launch loads comes from the
// bundle's bytes and is checked against its SHA-256 there, not at open.
TEST_CASE("a bundle from memory loads its images from the bytes at the first launch, checked first") {
  TempDir t;
  const std::string good = read(make_small_bundle(t.path));
  const size_t image = packed_offset(good, "scale.generic.sm_80.ptx");
  tessel_test::FakeDriver fake;
  {
    rt::Context ctx(0);
    std::vector<std::byte> buffer = to_bytes(good);
    rt::Bundle bundle = rt::Bundle::open_borrowed(buffer, "embedded");
    rt::BundleKernel& k = bundle.kernel("scale");
    rt::DeviceBuffer x(5000 * 4);
    const int32_t n = 5000;  // the default config; div16's only image is an sm_90 cubin: generic on sm_80
    auto launch = [&] { k.launch(nullptr, rt::Dim3{5}, x.ptr(), n, 2.0f); };
    buffer[image] ^= std::byte{1};  // damaged after open, before the first load
    CHECK(contains(bundle_error_of(launch), "bundle embedded: file 'scale.generic.sm_80.ptx' is corrupt (sha256"));
    CHECK(tessel_test::FakeGpu::module_loads() == 0);  // refused before the driver saw it
    buffer[image] ^= std::byte{1};
    launch();
    CHECK(tessel_test::FakeGpu::module_loads() == 1);
    CHECK(tessel_test::FakeGpu::launches() == 1);
    const int v = k.variant_for(x.ptr(), n, 2.0f);
    REQUIRE(v >= 0);
    CHECK(k.info().variants[static_cast<size_t>(v)].name == "generic");
    auto loaded = k.loaded(static_cast<size_t>(v));
    REQUIRE(loaded.has_value());
    CHECK(loaded->file == "scale.generic.sm_80.ptx");
    CHECK(loaded->kind == rt::ImageKind::Ptx);
    // A second bundle from a copy of the same bytes loads and launches the same way.
    rt::Bundle copied = rt::Bundle::open(buffer);
    copied.kernel("scale").load_all();
    CHECK(tessel_test::FakeGpu::module_loads() == 4);  // + generic, one, small (sm_80 PTX); div16 has no sm_80 image
  }
  CHECK(tessel_test::FakeGpu::live() == tessel_test::FakeLive{});
}
