// The generated launcher header's text, from a bundle manifest held in memory.
#pragma once
#include <string>
#include <string_view>

#include "tessel/runtime/bundle_manifest.hpp"

namespace tessel::jit {

// See launcher_header() in tessel/jit/bundle_writer.hpp; CompileError for unusable names.
std::string launcher_header_text(const rt::BundleManifest& m, std::string_view ns);

}  // namespace tessel::jit
