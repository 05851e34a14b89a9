// Atomic replacement of bundle directories (renameat2 exchange, with a two-rename fallback).
#include "bundle_publish.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>

#include <cerrno>
#include <system_error>

#include "cache/cache_io.hpp"
#include "tessel/ir/error.hpp"

namespace tessel::jit::bundle_publish {

void check_replaceable(const fs::path& out) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(out, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw CompileError({}, fmt::format("--out {} exists and is not a directory", out.string()));
  if (fs::exists(out / "bundle.json", ec) || fs::is_empty(out, ec)) return;
  throw CompileError({}, fmt::format("--out {} is a non-empty directory without bundle.json; refusing to replace it "
                                     "(choose a new or empty directory)",
                                     out.string()));
}

fs::path normalise_out(const fs::path& out) {
  // Only separators and "." go: ".." and symlinks are left to the file system, since dropping
  // "link/.." lexically would move the bundle somewhere else than the user's shell would.
  fs::path p = out;
  while (p.has_relative_path() && (p.filename().empty() || p.filename() == ".") && p.has_parent_path())
    p = p.parent_path();
  const fs::path name = p.filename();
  if (name.empty() || name == "." || name == "..")
    throw CompileError({}, fmt::format("--out '{}' names no directory a bundle can be written to (expected a "
                                       "directory name, e.g. kernels/)",
                                       out.string()));
  return p;
}

Staging make_temporary(const fs::path& out) {
  Staging s;
  fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  for (fs::path p = parent; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
    s.created = p;
    if (p == p.parent_path()) break;
  }
  fs::create_directories(parent);
  s.dir = parent / fmt::format(".{}.tmp-{}", out.filename().string(), cache::io::unique_suffix());
  try {
    fs::create_directory(s.dir);
  } catch (...) {
    discard(Staging{{}, s.created}, out);
    throw;
  }
  return s;
}

void discard(const Staging& staging, const fs::path& out) noexcept {
  std::error_code ec;
  if (!staging.dir.empty()) fs::remove_all(staging.dir, ec);
  if (staging.created.empty()) return;
  // fs::remove deletes a directory only when it is empty, so nothing another process put into
  // these parents meanwhile is lost.
  for (fs::path p = out.parent_path(); !p.empty(); p = p.parent_path()) {
    if (!fs::remove(p, ec) || p == staging.created) break;
  }
}

void publish(const fs::path& tmp, const fs::path& out) {
  cache::io::sync_dir(tmp);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(out, ec))) {
    fs::rename(tmp, out);  // throws filesystem_error (a system_error)
  } else if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);  // now the old bundle; a leftover is harmless
  } else if (errno == EINVAL || errno == ENOSYS) {
    // No exchange on this file system: move the old bundle aside first (a short window where
    // `out` is absent, never half-written).
    fs::path old = tmp;
    old += ".old";
    fs::rename(out, old);
    fs::rename(tmp, out);
    fs::remove_all(old, ec);
  } else {
    throw std::system_error(errno, std::generic_category(), fmt::format("renameat2 {} -> {}", tmp.string(), out.string()));
  }
  cache::io::sync_dir(out.has_parent_path() ? out.parent_path() : fs::path("."));
}

}  // namespace tessel::jit::bundle_publish
