// export_bundle: trace, lower and assemble every (kernel, variant, arch), then publish the bundle.
#include "tessel/jit/bundle_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "tessel/ir/error.hpp"

#ifdef TESSEL_HAS_LOWERING
#include "bundle_publish.hpp"
#include "bundle_tuned.hpp"
#include "cache/cache_io.hpp"
#include "launcher_header.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/bundle_files.hpp"
#include "tessel/runtime/bundle_manifest.hpp"
#include "tessel/runtime/ptxas.hpp"
#include "tessel/runtime/sha256.hpp"
#include "tessel/jit/tune/database.hpp"
#endif

namespace tessel::jit {

#ifdef TESSEL_HAS_LOWERING

namespace {

namespace fs = std::filesystem;

// A kernel parameter as a bundle passes it; CompileError for types the launch ABI lacks.
rt::BundleParam bundle_param(const KernelEntry& e, const ir::Function& f, size_t i) {
  const ir::DType d = f.body.args[i]->type.dtype;
  rt::BundleParam p;
  p.name = f.params[i].name;
  if (d.ptr) {
    p.kind = rt::ParamKind::Ptr;
    p.element = std::string(ir::name_of(d.scalar));
    return p;
  }
  switch (d.scalar) {
    case ir::Scalar::i32: p.kind = rt::ParamKind::I32; return p;
    case ir::Scalar::i64: p.kind = rt::ParamKind::I64; return p;
    case ir::Scalar::f32: p.kind = rt::ParamKind::F32; return p;
    case ir::Scalar::f64: p.kind = rt::ParamKind::F64; return p;
    default:
      throw CompileError({}, fmt::format("kernel '{}': parameter '{}' is {}; bundles pass pointers, i32, i64, f32 "
                                         "and f64 only",
                                         e.name, p.name, d.str()));
  }
}

// The kernel's meta-parameters: its defaults with the overrides it has.
Meta meta_for(const KernelEntry& e, const Meta& overrides) {
  Meta m = e.defaults;
  for (const auto& [name, v] : overrides.values())
    if (e.defaults.has(name)) m.set(name, v);
  return m;
}

void check_options(std::span<const KernelEntry* const> kernels, const ExportOptions& opts) {
  if (kernels.empty()) throw CompileError({}, "export: no kernels given");
  if (opts.archs.empty()) throw CompileError({}, "export: no target architectures given");
  for (const auto& arch : opts.archs) {
    try {
      (void)lowering::Target::parse(arch);
    } catch (const std::invalid_argument&) {
      throw CompileError({}, fmt::format("export: unknown architecture '{}' ({})", arch,
                                         lowering::known_targets_text()));
    }
  }
  for (const auto& [name, v] : opts.meta.values()) {
    bool used = false;
    for (const KernelEntry* e : kernels) used = used || e->defaults.has(name);
    if (!used) throw CompileError({}, fmt::format("export: no exported kernel has a meta-parameter '{}'", name));
  }
  for (size_t i = 0; i < kernels.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (kernels[i]->name == kernels[j]->name)
        throw CompileError({}, fmt::format("export: kernel '{}' is given twice", kernels[i]->name));
  if (opts.variants.empty()) throw CompileError({}, "export: no variants given");
  // A unit-stride name must be an integer parameter of some exported kernel ("n: i32").
  for (const ExportVariant& v : opts.variants)
    for (const std::string& one : v.ones) {
      bool found = false;
      for (const KernelEntry* e : kernels)
        for (const std::string& p : e->params)
          found = found || p == one + ": i32" || p == one + ": i64";
      if (!found)
        throw CompileError({}, fmt::format("export: variant '{}' assumes '{}' equal to 1, but no exported kernel has "
                                           "an integer parameter of that name",
                                           v.name, one));
    }
}

// Writes one image into the bundle directory and describes it for bundle.json.
rt::BundleImage write_image(const fs::path& dir, std::string file, rt::ImageKind kind, std::string arch,
                            std::string_view bytes, ExportResult& r) {
  cache::io::write_synced(dir / file, bytes);
  r.files.push_back(file);
  (kind == rt::ImageKind::Cubin ? r.cubin_files : r.ptx_files)++;
  return rt::BundleImage{kind, std::move(arch), std::move(file), bytes.size(), rt::sha256_hex(bytes), {}};
}

// The bundle configs of `e` with the compile options of each: its tuning configs (over the
// defaults and opts.meta) when it is tunable, else one "default" from opts.
std::vector<std::pair<rt::BundleConfig, tune::Config>> bundle_configs(const KernelEntry& e, const ExportOptions& opts) {
  std::vector<std::pair<rt::BundleConfig, tune::Config>> out;
  auto add = [&](std::string name, const Meta& meta, const CompileOptions& co) {
    rt::BundleConfig c;
    c.name = std::move(name);
    c.meta = meta.values();  // Meta keeps them sorted by name
    set_options(c, co);
    out.push_back({std::move(c), tune::Config{meta, co}});
  };
  if (e.configs.empty()) {
    add("default", meta_for(e, opts.meta), opts.compile);
    return out;
  }
  for (const tune::Config& tc : e.configs) {
    Meta m = meta_for(e, opts.meta);
    for (const auto& [k, v] : tc.meta.values()) m.set(k, v);
    add(bundle_tuned::config_name(tc), m, tc.opts);
  }
  return out;
}

// One image's compilation. A config with producer warps (warp_specialize, and tma: TMA copies
// whose tensor maps the runtime encodes at each launch) gets them where the lowering can build
// them: on sm_90a, for a variant whose facts make the K loop's loads 16-byte aligned. Elsewhere
// (another target, the generic variant) the image is the same tile without producer warps, so
// that every launch of the config still finds a variant. The image's launch record says which
// (Compiled::launch.producer_warps).
lowering::Compiled compile_image(const ir::Function& f, lowering::Options lo, const CompileOptions& co) {
  if (co.warp_specialize && lo.target.has_wgmma()) {
    lo.warp_specialize = true;
    lo.tma = co.tma;
    lo.consumer_registers = co.consumer_registers;
    try {
      return lowering::compile(f, lo);
    } catch (const CompileError&) {
      // No K loop the producers can copy for these facts: the plain tile below.
    }
    lo.warp_specialize = lo.tma = false;
    lo.consumer_registers = 0;
  }
  return lowering::compile(f, lo);
}

rt::BundleKernelInfo compile_kernel(const KernelEntry& e, const ExportOptions& opts, const fs::path& dir,
                                    const std::string& ptxas, const tune::Database& db, ExportResult& r) {
  rt::BundleKernelInfo k;
  k.name = e.name;
  k.description = e.description;
  const auto configs = bundle_configs(e, opts);
  auto generic = e.build_ir(configs.front().second.meta, {});
  for (size_t i = 0; i < generic->params.size(); ++i) k.params.push_back(bundle_param(e, *generic, i));
  for (const auto& [bc, tc] : configs) k.configs.push_back(bc);
  k.default_config = k.configs.front().name;
  r.configs += static_cast<int>(configs.size());
  if (!e.configs.empty()) {
    std::vector<std::string> names;
    for (const auto& c : k.configs) names.push_back(c.name);
    const std::string device = bundle_tuned::pick_device(e, db, opts.tune_device);
    k.tuned = bundle_tuned::tuned_table(e, names, tune::signature_of(*generic), db, device);
    r.tuned_rules += static_cast<int>(k.tuned.rules.size());
  }

  for (const auto& [config, tc] : configs) {
    for (const ExportVariant& want : opts.variants) {
      std::vector<ir::ParamSpec> specs(k.params.size());
      uint32_t div16 = 0, equal1 = 0;
      for (size_t i = 0; i < k.params.size(); ++i) {
        const bool one = rt::can_equal1(k.params[i].kind) &&
                         std::find(want.ones.begin(), want.ones.end(), k.params[i].name) != want.ones.end();
        if (one) {
          specs[i].equal1 = true;
          equal1 |= uint32_t{1} << i;
        } else if (want.aligned && rt::can_div16(k.params[i].kind)) {
          specs[i].div16 = true;
          div16 |= uint32_t{1} << i;
        }
      }
      if (want.aligned && div16 == 0) continue;  // nothing to assume: the same code as the generic variant
      if (!want.ones.empty() && equal1 == 0) continue;  // none of its ones here: another variant's code
      auto f = e.build_ir(tc.meta, specs);
      rt::BundleVariant v;
      // An untuned kernel keeps the plain variant names; a tuned one's name its config.
      v.name = e.configs.empty() ? want.name : config.name + "." + want.name;
      v.config = config.name;
      v.div16 = div16;
      v.equal1 = equal1;
      for (const auto& arch : opts.archs) {
        lowering::Options lo;
        static_cast<CompileOptions&>(lo) = tc.opts;
        lo.warp_specialize = lo.tma = false;  // compile_image turns them on where they can build
        lo.consumer_registers = 0;
        lo.target = lowering::Target::parse(arch);
        const lowering::Compiled c = compile_image(*f, lo, tc.opts);
        TESSEL_ASSERT(v.entry.empty() || v.entry == c.launch.symbol, "a variant's entry symbol depends on the arch");
        v.entry = c.launch.symbol;  // named for the variant (lowering::entry_symbol): what profilers show
        v.shared_bytes = std::max(v.shared_bytes, c.launch.shared_bytes);
        const std::string stem = fmt::format("{}.{}.{}", e.name, v.name, lo.target.arch());
        // ptxas makes cubins for any arch; without it the driver can link for its own GPU only.
        std::optional<Cubin> cubin;
        if (opts.cubins)
          cubin = ptxas.empty() ? driver_cubin(c.ptx, lo.target.arch()) : ptxas_cubin(c.ptx, lo.target.arch());
        if (cubin) {
          v.images.push_back(write_image(dir, stem + ".cubin", rt::ImageKind::Cubin, lo.target.arch(),
                                         std::string_view(cubin->image.data(), cubin->image.size()), r));
          r.cubin_tool = cubin->tool == "ptxas" ? "ptxas " + ptxas : cubin->tool;
        }
        v.images.push_back(write_image(dir, stem + ".ptx", rt::ImageKind::Ptx, lo.target.arch(), c.ptx, r));
        for (size_t i = v.images.size() - (cubin ? 2 : 1); i < v.images.size(); ++i) v.images[i].launch = c.launch;
      }
      k.variants.push_back(std::move(v));
      ++r.variants;
    }
  }
  return k;
}

// Writes `text` to `path` through a temporary file in the same directory and a rename.
void write_file_atomically(const fs::path& path, std::string_view text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp-" + cache::io::unique_suffix();
  cache::io::write_synced(tmp, text);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp);
    throw std::system_error(ec, "rename to " + path.string());
  }
}

}  // namespace

ExportResult export_bundle(std::span<const KernelEntry* const> kernels, const fs::path& out_arg,
                           const ExportOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(kernels, opts);
  const fs::path out = bundle_publish::normalise_out(out_arg);  // "kernels/" is the directory kernels
  bundle_publish::check_replaceable(out);
  ExportResult r;
  r.dir = out;
  const std::string ptxas = opts.cubins ? rt::find_ptxas() : std::string();

  // The tuning database, read once and only when a kernel is tunable.
  tune::Database db;
  if (std::any_of(kernels.begin(), kernels.end(), [](const KernelEntry* e) { return !e->configs.empty(); }))
    db = tune::Database::load(opts.tune_db.empty() ? tune::Database::default_path() : opts.tune_db);

  rt::BundleManifest m;
  m.tessel_version = cache::tessel_version();
  std::string header;
  const bundle_publish::Staging staging = bundle_publish::make_temporary(out);
  const fs::path& tmp = staging.dir;
  try {
    for (const KernelEntry* e : kernels) {
      m.kernels.push_back(compile_kernel(*e, opts, tmp, ptxas, db, r));
      ++r.kernels;
    }
    rt::validate(m, out.string());
    // The header is made before publishing, so a name it cannot use leaves `out` untouched.
    if (!opts.header.empty()) header = launcher_header_text(m, opts.header_namespace);
    cache::io::write_synced(tmp / rt::kBundleManifestFile, rt::manifest_to_json(m));
    r.files.push_back(rt::kBundleManifestFile);
    bundle_publish::publish(tmp, out);
  } catch (...) {
    bundle_publish::discard(staging, out);
    throw;
  }
  if (!opts.header.empty()) write_file_atomically(opts.header, header);
  if (!opts.pack.empty()) rt::pack_bundle(out, opts.pack);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

#else

ExportResult export_bundle(std::span<const KernelEntry* const>, const std::filesystem::path&, const ExportOptions&) {
  throw std::runtime_error("this build of tessel has no LLVM lowering (configured with TESSEL_WITH_LLVM=OFF): it "
                           "cannot export bundles");
}

#endif

}  // namespace tessel::jit
