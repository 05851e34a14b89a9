// Atomic replacement of bundle directories (renameat2 exchange, with a two-rename fallback).
#include "bundle_publish.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>

#include <cerrno>
#include <system_error>

#include "cache_io.hpp"
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

fs::path make_temporary(const fs::path& out) {
  fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent);
  fs::path tmp = parent / fmt::format(".{}.tmp-{}", out.filename().string(), cache::io::unique_suffix());
  fs::create_directory(tmp);
  return tmp;
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
