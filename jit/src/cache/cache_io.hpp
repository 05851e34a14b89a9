// File primitives for the disk cache: synced writes, whole-file reads, unique names, one-time reports.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tessel::jit::cache::io {

namespace fs = std::filesystem;

// Creates `p` (which must not exist), writes all of `bytes` and fsyncs it, so a later rename of
// its directory publishes complete data even across a crash. Throws std::system_error.
void write_synced(const fs::path& p, std::string_view bytes);
// The same without the fsync, for scratch files.
void write_new(const fs::path& p, std::string_view bytes);
// Writes `bytes` to `p` through a temporary file renamed over it (readers see old or new), not
// synced: for statistics and dumps. Returns false on any failure; never throws.
bool replace_file(const fs::path& p, std::string_view bytes);
// Why a read found no bytes: the file is absent, is something other than a regular file (a FIFO,
// a symbolic link, a directory), or is there but could not be read (permissions, an I/O error):
// callers must not treat the last as damage, since nothing about the bytes is known.
struct ReadFailure {
  enum Kind { Missing, NotRegular, Unreadable } kind = Missing;
  int error = 0;  // errno for Unreadable
  std::string str(const std::string& name) const;  // "kernel.ptx missing", "kernel.ptx unreadable (Permission denied)"
};

// An open directory. Reads through it stay inside that directory even if it is renamed meanwhile,
// so an entry read this way is one entry, never a mix of an old and a new one.
class Dir {
 public:
  // nullopt when `p` cannot be opened as a directory; `why` (when given) says whether it is absent.
  static std::optional<Dir> open(const fs::path& p, ReadFailure* why = nullptr);
  ~Dir();
  Dir(Dir&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Dir& operator=(Dir&&) = delete;
  Dir(const Dir&) = delete;
  // The whole file `name` in this directory, or nullopt (with the reason in `why`) when it cannot be read.
  std::optional<std::string> read(const std::string& name, ReadFailure* why = nullptr) const;
  // Whether `p` still names this directory (not renamed away or replaced).
  bool still_at(const fs::path& p) const;

 private:
  explicit Dir(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Adds one to the decimal counter in file `p` (created at 0) and returns the new value; 0 on any
// failure. Rewritten in place, not renamed: it is a statistic, cheap beats exact under races.
uint64_t bump_counter(const fs::path& p);
// The counter's value (0 when absent or garbled).
uint64_t read_counter(const fs::path& p);

// The whole file, or nullopt (with the reason in `why`) when it cannot be read.
std::optional<std::string> read(const fs::path& p, ReadFailure* why = nullptr);
// fsync on a directory, so a rename into it is durable. Best effort.
void sync_dir(const fs::path& p);
// A name unique among processes and threads: "<pid>.<16 random hex>".
std::string unique_suffix();
// A warning through tessel's log (rt::log_once: the sink, or "tessel: <message>" on stderr), the
// first time `id` is reported in this process.
void report_once(const std::string& id, const std::string& message);

}  // namespace tessel::jit::cache::io
