// Publishing a bundle directory: one atomic swap of a fully written temporary directory.
#pragma once
#include <filesystem>

namespace tessel::jit::bundle_publish {

namespace fs = std::filesystem;

// Throws CompileError unless `out` may be (re)placed by a bundle: absent, an empty directory, or
// a directory holding a bundle.json. Refusing anything else keeps a mistyped --out from
// deleting a user's directory.
void check_replaceable(const fs::path& out);

// A fresh, empty directory next to `out` (same file system, so the final rename is atomic).
fs::path make_temporary(const fs::path& out);

// Makes the complete directory `tmp` appear at `out`: rename() when `out` is absent, otherwise an
// atomic exchange (renameat2 RENAME_EXCHANGE) and removal of the old bundle, so a reader that
// opens `out` meanwhile sees either the old bundle or the new one. Throws std::system_error.
void publish(const fs::path& tmp, const fs::path& out);

}  // namespace tessel::jit::bundle_publish
