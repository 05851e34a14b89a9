// Publishing a bundle directory: one atomic swap of a fully written temporary directory.
#pragma once
#include <filesystem>

namespace tessel::jit::bundle_publish {

namespace fs = std::filesystem;

// Throws CompileError unless `out` may be (re)placed by a bundle: absent, an empty directory, or
// a directory holding a bundle.json. Refusing anything else keeps a mistyped --out from
// deleting a user's directory.
void check_replaceable(const fs::path& out);

// `out` as the directory to publish: trailing separators and "." components dropped, so
// "kernels/" and "kernels/." name the directory kernels (not a directory inside it). Throws
// CompileError when nothing is left to name (".", "..", "/", ""): a bundle cannot replace those.
fs::path normalise_out(const fs::path& out);

// A fresh, empty staging directory next to `out` (same file system, so the final rename is
// atomic). `created` is the outermost parent of `out` that make_temporary had to create (empty
// when every parent existed), so that a failed export can remove it again.
struct Staging {
  fs::path dir;
  fs::path created;
};
Staging make_temporary(const fs::path& out);

// Removes the staging directory and, while they are empty, the parents make_temporary created:
// a failed export leaves nothing behind. Never throws.
void discard(const Staging& staging, const fs::path& out) noexcept;

// Makes the complete directory `tmp` appear at `out`: rename() when `out` is absent, otherwise an
// atomic exchange (renameat2 RENAME_EXCHANGE) and removal of the old bundle, so a reader that
// opens `out` meanwhile sees either the old bundle or the new one. Throws std::system_error.
void publish(const fs::path& tmp, const fs::path& out);

}  // namespace tessel::jit::bundle_publish
