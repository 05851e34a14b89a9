// Bundle paths that are not bundles: a FIFO, a device, a huge file, as the bundle or one of its
// files. Each is refused at once with an error naming it; none blocks or reads without end.
// The tests cannot hang when the fix regresses: readers run on a thread with a deadline (a FIFO
// reader blocked past it is released by opening the FIFO's other end), and /dev/zero is read in
// a child process with a memory limit and an alarm.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "../common/shell_command.hpp"
#include "../common/child_process.hpp"
#include "bundle_test_util.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/error.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr auto kDeadline = std::chrono::seconds(20);

// Runs `fn` on a thread. Returns its result, or "HUNG" when it had not returned by the deadline;
// then `release` (which must make it return, e.g. by opening the FIFO it waits on) is called and
// the thread joined, so a regression fails the test instead of hanging it.
std::string within_deadline(const std::function<std::string()>& fn, const std::function<void()>& release) {
  std::packaged_task<std::string()> task(fn);
  std::future<std::string> result = task.get_future();
  std::thread t(std::move(task));
  if (result.wait_for(kDeadline) == std::future_status::ready) {
    t.join();
    return result.get();
  }
  while (result.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) release();
  t.join();
  return "HUNG";
}

// Gives a reader blocked in opening `fifo` a writer that closes at once: its open returns and
// its reads see the end of the file.
std::function<void()> release_fifo(const fs::path& fifo) {
  return [fifo] {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
  };
}

// The message of the BundleError `fn` throws, "no error" when it throws none, or the other
// exception's message.
std::string bundle_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const rt::BundleError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a BundleError: ") + e.what();
  }
  return "no error";
}

// True when `body` returns true in a child process bounded by an alarm and a 4 GiB address space:
// code that reads without end fails there (out of memory, or killed).
bool in_bounded_child(const std::function<bool()>& body) {
  const std::string how = tessel_test::run_in_child(body, 30, rlim_t{4} << 30);
  INFO("child: " << how);
  return how == "exit 0";
}

void make_fifo(const fs::path& p) { REQUIRE(::mkfifo(p.c_str(), 0600) == 0); }

// A file of `bytes` bytes that takes no disk space (a hole after `head`).
void make_sparse(const fs::path& p, const std::string& head, uint64_t bytes) {
  write(p, head);
  REQUIRE(::truncate(p.c_str(), static_cast<off_t>(bytes)) == 0);
}

std::string packed_header(uint64_t index_len) {
  std::string h(rt::kPackedBundleMagic, 8);
  for (int i = 0; i < 8; ++i) h += static_cast<char>(index_len >> (8 * i));
  return h;
}

using Output = tessel_test::CommandOutput;
// Runs a shell command, stdout and stderr together.
inline Output run(const std::string& cmd) { return tessel_test::run_command(cmd); }

}  // namespace

TEST_CASE("a FIFO as the bundle path is refused without waiting for a writer") {
  TempDir t;
  const fs::path fifo = t.path / "bundle.tsb";
  make_fifo(fifo);
  const std::string e =
      within_deadline([&] { return bundle_error_of([&] { rt::Bundle::open(fifo); }); }, release_fifo(fifo));
  INFO(e);
  CHECK(contains(e, "bundle " + fifo.string() + ": is a FIFO, not a regular file"));
  // The plain reader, too.
  const std::string r = within_deadline(
      [&] { return rt::read_file_bytes(fifo) ? std::string("read") : std::string("refused"); }, release_fifo(fifo));
  CHECK(r == "refused");
}

TEST_CASE("a FIFO or a device as a file of a directory bundle is refused, naming the file") {
  TempDir t;
  const fs::path dir = t.path / "b";
  fs::create_directories(dir);
  SUBCASE("bundle.json is a FIFO") {
    make_fifo(dir / "bundle.json");
    const std::string e =
        within_deadline([&] { return bundle_error_of([&] { rt::Bundle::open(dir); }); }, release_fifo(dir / "bundle.json"));
    INFO(e);
    CHECK(contains(e, "bundle " + dir.string() + ": file 'bundle.json' is a FIFO, not a regular file"));
  }
  SUBCASE("bundle.json is /dev/zero") {
    fs::create_symlink("/dev/zero", dir / "bundle.json");
    CHECK(in_bounded_child([&] {
      return contains(bundle_error_of([&] { rt::Bundle::open(dir); }),
                      "file 'bundle.json' is a character device, not a regular file");
    }));
  }
  SUBCASE("an image is a FIFO") {
    rt::BundleManifest m = small_manifest();
    write(dir / "bundle.json", rt::manifest_to_json(m));
    const std::string image = m.kernels[0].variants[0].images[0].file;
    for (const auto& v : m.kernels[0].variants)
      if (v.images[0].file != image) write(dir / v.images[0].file, std::string(v.images[0].size, 'x'));
    make_fifo(dir / image);
    const std::string e =
        within_deadline([&] { return bundle_error_of([&] { rt::Bundle::open(dir); }); }, release_fifo(dir / image));
    INFO(e);
    CHECK(contains(e, "file '" + image + "' is a FIFO, not a regular file"));
    // BundleFiles::read is refused the same way, without blocking.
    rt::BundleFiles files = rt::BundleFiles::open(dir);
    const std::string r =
        within_deadline([&] { return bundle_error_of([&] { (void)files.read(image); }); }, release_fifo(dir / image));
    CHECK(contains(r, "file '" + image + "' is a FIFO, not a regular file"));
  }
}

TEST_CASE("files longer than they may be are refused before they are read") {
  TempDir t;
  SUBCASE("a single-file bundle past the limit") {
    const fs::path big = t.path / "big.tsb";
    make_sparse(big, packed_header(0), rt::kMaxBundleFileBytes + 1);
    // Refused from its size alone: the file is a GiB of hole after a valid header.
    const std::string e = bundle_error_of([&] { rt::Bundle::open(big); });
    INFO(e);
    CHECK(contains(e, "bundle " + big.string() + ": " + std::to_string(rt::kMaxBundleFileBytes + 1) +
                          " bytes, more than a bundle may hold (1024 MiB)"));
    CHECK_FALSE(rt::read_file_bytes(big).has_value());
  }
  SUBCASE("a directory file longer than the caller's limit (an image longer than bundle.json says)") {
    const fs::path dir = t.path / "b";
    fs::create_directories(dir);
    const uint64_t size = rt::kMaxBundleFileBytes + 1;
    make_sparse(dir / "k.ptx", "// ptx", size);
    rt::BundleFiles files = rt::BundleFiles::open(dir);
    const std::string e = bundle_error_of([&] { (void)files.read("k.ptx", 4096); });
    CHECK(contains(e, "file 'k.ptx' is " + std::to_string(size) + " bytes, more than the 4096 it may have"));
    CHECK(contains(bundle_error_of([&] { (void)files.read("k.ptx"); }),
                   "more than the " + std::to_string(rt::kMaxBundleFileBytes) + " it may have"));
  }
  SUBCASE("a packed bundle whose index claims more than the file holds") {
    write(t.path / "lying.tsb", packed_header(uint64_t{1} << 62) + "1 x\n");
    CHECK(contains(bundle_error_of([&] { rt::Bundle::open(t.path / "lying.tsb"); }),
                   "index runs past the end of the file"));
  }
}

// Before the fix the whole of /dev/zero was read before the header was looked at, until memory
// ran out (or the child's alarm fired).
TEST_CASE("/dev/zero as the bundle path is refused at once") {
  CHECK(in_bounded_child([] {
    return contains(bundle_error_of([] { rt::Bundle::open("/dev/zero"); }),
                    "bundle /dev/zero: is a character device, not a regular file");
  }));
}

TEST_CASE("tessel_production with /dev/zero or a FIFO exits 1 naming the path, under a time and memory bound") {
  if (!fs::exists(TESSEL_PRODUCTION_EXE)) {
    MESSAGE("not run here (not at its build path): " << TESSEL_PRODUCTION_EXE);
    return;
  }
  TempDir t;
  make_fifo(t.path / "fifo");
  // timeout and ulimit -v bound a regression: a hang or an endless read fails the checks below.
  for (const std::string& path : {std::string("/dev/zero"), (t.path / "fifo").string()}) {
    const std::string limit = tessel_test::kUnderAsan ? "" : "ulimit -v 4000000; ";
    const Output o = run(limit + "timeout -s KILL 30 '" + std::string(TESSEL_PRODUCTION_EXE) + "' '" + path + "'");
    INFO(o.text);
    CHECK(o.status == 1);
    CHECK(contains(o.text, "tessel_production: bundle " + path + ": is a "));
    CHECK(contains(o.text, ", not a regular file"));
  }
}
