// Generating the typed C++ launchers of a bundle (a header over tessel::rt::Bundle only).
#include "tessel/jit/bundle_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "tessel/ir/error.hpp"

#ifdef TESSEL_HAS_LOWERING
#include "launcher_header.hpp"
#include "tessel/runtime/bundle.hpp"
#endif

namespace tessel::jit {

#ifdef TESSEL_HAS_LOWERING

namespace {

constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "final", "override",
    "import", "module", "main"};

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  if (s.starts_with("__") || (s.size() > 1 && s[0] == '_' && s[1] >= 'A' && s[1] <= 'Z')) return false;  // reserved
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) == std::end(kKeywords);
}

void require_identifier(std::string_view s, std::string_view what) {
  if (!is_identifier(s))
    throw CompileError({}, fmt::format("export --header: {} '{}' is not usable as a C++ identifier", what, s));
}

std::string_view cpp_type(rt::ParamKind k) {
  switch (k) {
    case rt::ParamKind::Ptr: return "CUdeviceptr";
    case rt::ParamKind::I32: return "int32_t";
    case rt::ParamKind::I64: return "int64_t";
    case rt::ParamKind::F32: return "float";
    case rt::ParamKind::F64: return "double";
  }
  return "?";
}

// A C++ string literal for arbitrary text (descriptions, signatures).
std::string literal(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Comment text stays on one line and cannot close anything.
std::string one_line(std::string_view s) {
  std::string out(s);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

std::string kernel_launcher(const rt::BundleKernelInfo& k, size_t index) {
  // The launcher's own names (its leading parameters and its local), which a kernel parameter may
  // not take. (The local once was `k`: attention's K pointer clashed.)
  static constexpr std::array<std::string_view, 5> kReserved = {"stream", "grid_x", "grid_y", "grid_z",
                                                                 "tessel_bundle_kernel"};
  require_identifier(k.name, "kernel name");
  std::string args;
  for (const auto& p : k.params) {
    require_identifier(p.name, fmt::format("kernel '{}' parameter", k.name));
    if (std::find(kReserved.begin(), kReserved.end(), p.name) != kReserved.end())
      throw CompileError({}, fmt::format("export --header: kernel '{}' parameter '{}' clashes with a name of its "
                                         "launcher (stream, grid_x, grid_y, grid_z, tessel_bundle_kernel)",
                                         k.name, p.name));
    args += fmt::format(", {}", p.name);
  }
  const rt::BundleConfig& c = *k.find_config(k.default_config);
  std::string meta, constants, variants;
  for (const auto& [name, v] : c.meta) {
    meta += fmt::format("{}{}={}", meta.empty() ? "" : ", ", name, v);
    if (is_identifier(name)) constants += fmt::format("inline constexpr int64_t {}_{} = {};\n", k.name, name, v);
  }
  for (const auto& v : k.variants) variants += fmt::format("{}{}", variants.empty() ? "" : ", ", v.name);
  std::string out;
  out += fmt::format("// ---- {}: {}\n", k.name, one_line(k.description));
  out += fmt::format("// Parameters: {}\n", rt::signature_string(k));
  // The launch itself goes through BundleKernel, which sizes the CTA from the launch record of
  // the image it picks (producer warps where compiled: 4 / programs_per_cta per program); the
  // comment says what the config asks for.
  // num_warps (the threads), then every other option that is not its default, a flag by name.
  std::string options = fmt::format("num_warps={}", c.num_warps);
  const CompileOptions opts = options_of(c);
  for (const OptionInfo& o : option_table()) {
    const int64_t v = option_value(opts, o.name);
    if (o.name == "num_warps" || v == o.default_value) continue;
    options += o.is_flag ? fmt::format(", {}", o.name) : fmt::format(", {}={}", o.name, v);
  }
  out += fmt::format("// Default config: {}{}{} ({} threads per program{}); variants: {}.\n", meta,
                     meta.empty() ? "" : ", ", options, c.threads_per_cta(c.warp_specialize) / c.programs_per_cta,
                     c.warp_specialize ? " where the image has the producer warps" : "", variants);
  out += constants;
  // The declaration, wrapped at 100 columns with continuation lines under the first parameter.
  const std::string head = fmt::format("inline CUresult {}_kernel(", k.name);
  std::vector<std::string> decls{"CUstream stream", "unsigned grid_x", "unsigned grid_y", "unsigned grid_z"};
  for (const auto& p : k.params) decls.push_back(fmt::format("{} {}", cpp_type(p.kind), p.name));
  std::string line = head;
  for (size_t i = 0; i < decls.size(); ++i) {
    std::string piece = decls[i] + (i + 1 < decls.size() ? "," : ") noexcept {");
    if (line.size() > head.size() && line.size() + 1 + piece.size() > 100) {
      out += line + "\n";
      line = std::string(head.size(), ' ');
    } else if (line.size() > head.size()) {
      line += ' ';
    }
    line += piece;
  }
  out += line + "\n";
  out += fmt::format("  tessel::rt::BundleKernel* tessel_bundle_kernel = detail::state().kernels[{}];\n", index);
  out += "  if (tessel_bundle_kernel == nullptr) return detail::not_open();\n";
  out += fmt::format("  return tessel_bundle_kernel->try_launch(stream, tessel::rt::Dim3{{grid_x, grid_y, grid_z}}{});\n",
                     args);
  out += "}\n\n";
  return out;
}

}  // namespace

std::string launcher_header_text(const rt::BundleManifest& m, std::string_view ns) {
  require_identifier(ns, "namespace");
  std::string names, name_list, signatures, launchers;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const auto& k = m.kernels[i];
    launchers += kernel_launcher(k, i);
    names += fmt::format("{}{}", i ? ", " : "", literal(k.name));
    name_list += fmt::format("{}{}", i ? ", " : "", k.name);
    signatures += fmt::format("    {},\n", literal(rt::signature_string(k)));
  }
  std::string h;
  h += fmt::format("// Typed launchers for a tessel bundle of kernels {}.\n", name_list);
  h += fmt::format("// Generated by `tessel export` (tessel {}); do not edit. Include it and link tessel::runtime\n",
                   m.tessel_version);
  h += "// only: open_bundle(path) (or open_bundle(bytes, size)) loads the bundle exported with this header; each <kernel>_kernel()\n"
       "// launches on `stream` (nullptr: the default stream) over grid_x * grid_y * grid_z programs\n"
       "// (what the kernel's program_id(0..2) ranges over; a 1-D kernel over n elements with meta-parameter\n"
       "// BLOCK takes grid_x = (n + <kernel>_BLOCK - 1) / <kernel>_BLOCK), with arguments typed as the\n"
       "// kernel's parameters, and returns CUDA_SUCCESS or the error's CUresult (last_error() says why).\n"
       "// A CUDA context must be current (tessel::rt::Context, or cuCtxSetCurrent) when launching.\n";
  h += "#pragma once\n#include <cuda.h>\n\n#include <cstddef>\n#include <cstdint>\n#include <exception>\n#include <memory>\n"
       "#include <span>\n\n"
       "#include \"tessel/runtime/bundle.hpp\"\n\n";
  h += fmt::format("namespace {} {{\n\n", ns);
  h += "namespace detail {\n";
  h += fmt::format("inline constexpr int kKernels = {};\n", m.kernels.size());
  h += fmt::format("inline constexpr const char* kNames[kKernels] = {{{}}};\n", names);
  h += fmt::format("inline constexpr const char* kSignatures[kKernels] = {{\n{}}};\n", signatures);
  h += "struct State {\n"
       "  std::unique_ptr<tessel::rt::Bundle> bundle;\n"
       "  tessel::rt::BundleKernel* kernels[kKernels] = {};\n"
       "};\n"
       "inline State& state() {\n"
       "  static State s;\n"
       "  return s;\n"
       "}\n";
  h += fmt::format(
      "inline CUresult not_open() noexcept {{\n"
      "  return tessel::rt::record_bundle_error(CUDA_ERROR_NOT_INITIALIZED,\n"
      "                                         \"no tessel bundle is open: call {}::open_bundle(path) first\");\n"
      "}}\n",
      ns);
  h += "// Makes `bundle` the one the launchers use, after checking that every kernel is present with\n"
       "// the parameters this header was generated for.\n"
       "inline CUresult adopt(std::unique_ptr<tessel::rt::Bundle> bundle) {\n"
       "  State next;\n"
       "  for (int i = 0; i < kKernels; ++i) next.kernels[i] = &bundle->kernel(kNames[i], kSignatures[i]);\n"
       "  next.bundle = std::move(bundle);\n"
       "  state() = std::move(next);\n"
       "  return CUDA_SUCCESS;\n"
       "}\n";
  h += "}  // namespace detail\n\n";
  h += "// Opens the bundle at `path` (a directory or a single-file bundle) for the launchers below,\n"
       "// replacing any bundle opened before (not while launches from it are in flight). Checks that\n"
       "// every kernel is present with the parameters this header was generated for.\n"
       "inline CUresult open_bundle(const char* path) noexcept {\n"
       "  try {\n"
       "    return detail::adopt(std::make_unique<tessel::rt::Bundle>(tessel::rt::Bundle::open(path)));\n"
       "  } catch (const std::exception& e) {\n"
       "    return tessel::rt::record_bundle_error(e);\n"
       "  }\n"
       "}\n\n"
       "// The same from a single-file bundle's bytes (`tessel export --pack`, e.g. embedded in the\n"
       "// program), read in place: they must stay valid and unchanged while the bundle is open.\n"
       "inline CUresult open_bundle(const unsigned char* data, size_t size) noexcept {\n"
       "  try {\n"
       "    return detail::adopt(std::make_unique<tessel::rt::Bundle>(\n"
       "        tessel::rt::Bundle::open_borrowed(std::span<const unsigned char>(data, size), \"<memory>\")));\n"
       "  } catch (const std::exception& e) {\n"
       "    return tessel::rt::record_bundle_error(e);\n"
       "  }\n"
       "}\n\n"
       "// Unloads the bundle; launchers return CUDA_ERROR_NOT_INITIALIZED until open_bundle again.\n"
       "inline void close_bundle() noexcept { detail::state() = detail::State{}; }\n\n"
       "// The open bundle (nullptr when none), e.g. for bundle()->kernel(\"name\").load_all().\n"
       "inline tessel::rt::Bundle* bundle() noexcept { return detail::state().bundle.get(); }\n\n"
       "// Why the last failed call on this thread failed.\n"
       "inline const char* last_error() noexcept { return tessel::rt::last_bundle_error(); }\n\n";
  h += launchers;
  h += fmt::format("}}  // namespace {}\n", ns);
  return h;
}

std::string launcher_header(const std::filesystem::path& bundle, std::string_view ns) {
  return launcher_header_text(rt::Bundle::open(bundle).manifest(), ns);
}

#else

std::string launcher_header(const std::filesystem::path&, std::string_view) {
  throw std::runtime_error("this build of tessel has no LLVM lowering (configured with TESSEL_WITH_LLVM=OFF)");
}

#endif

}  // namespace tessel::jit
