// Bundle opening and BundleKernel launches: selection on the hot path, loading on first use.
#include "tessel/runtime/bundle.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "tessel/runtime/context.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/module.hpp"
#include "tessel/runtime/sha256.hpp"
#include "tessel/runtime/tensor_map.hpp"

namespace tessel::rt {

// ---- per-context, per-variant load state ----

struct BundleKernel::VariantState {
  std::atomic<CUfunction> fn{nullptr};  // published once the module is loaded
  int image = -1;                       // index into the variant's images; -1: nothing runs here
  unsigned threads = 0;
  unsigned programs_per_cta = 1;
  unsigned cluster_ctas = 1;  // the chosen image's
  const BundleConfig* config = nullptr;
  const std::vector<TensorMapRecipe>* maps = nullptr;  // the chosen image's; null when it has none
  unsigned shared_bytes = 0;
  std::optional<Module> module;
  LoadedVariant loaded;
};

// One context's view of the kernel: its device's sm and, per variant, the image chosen for that
// sm and the module loaded into this context (a CUfunction belongs to the context it was loaded in).
struct BundleKernel::ContextState {
  CUcontext ctx = nullptr;
  int device_sm = 0;
  std::unique_ptr<VariantState[]> states;  // per variant
  size_t variants = 0;

  ContextState(CUcontext c, size_t n) : ctx(c), states(new VariantState[n]), variants(n) {}
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;
  // The modules are unloaded in their own context (the thread's may be another, or none).
  ~ContextState() {
    bool any = false;
    for (size_t v = 0; states != nullptr && !any && v < variants; ++v) any = states[v].module.has_value();
    if (!any) return;
    try {
      ScopedContext scope(ctx);
      states.reset();
    } catch (...) {  // no usable driver, or the context is gone: the unloads below note their failures
    }
  }
};

BundleKernel::BundleKernel(const BundleFiles& files, const BundleKernelInfo& info) : files_(&files), info_(&info) {
  for (const auto& p : info.params) kinds_.push_back(p.kind);
  for (size_t c = 0; c < info.configs.size(); ++c) {
    if (info.configs[c].name == info.default_config) default_config_ = static_cast<int>(c);
    order_.push_back(variant_order(info, info.configs[c].name));
  }
  for (const auto& key : info.tuned.key) key_params_.push_back(info.param_index(key));
  auto config_index = [&](const std::string& name) {
    for (size_t c = 0; c < info.configs.size(); ++c)
      if (info.configs[c].name == name) return static_cast<int>(c);
    return default_config_;  // unreachable: validate() checked every rule's config
  };
  for (const auto& rule : info.tuned.rules) rule_config_.push_back(config_index(rule.config));
}

// What every context starts from, before an image is chosen for its device.
void BundleKernel::init_variant_states(VariantState* states) const {
  for (size_t v = 0; v < info_->variants.size(); ++v) {
    const BundleConfig* c = info_->find_config(info_->variants[v].config);
    states[v].config = c;
    states[v].threads = static_cast<unsigned>(c->threads_per_cta(false));  // set per image once one is chosen
    states[v].programs_per_cta = static_cast<unsigned>(c->programs_per_cta);
    states[v].shared_bytes = static_cast<unsigned>(info_->variants[v].shared_bytes);
  }
}

BundleKernel::~BundleKernel() {
  for (int i = 0; i < n_contexts_.load(std::memory_order_acquire); ++i)
    delete contexts_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
}

int64_t BundleKernel::meta(std::string_view name) const {
  if (auto v = default_config().meta_value(name)) return *v;
  throw BundleError(CUDA_ERROR_NOT_FOUND, fmt::format("bundle kernel '{}' has no meta-parameter '{}'", info_->name, name));
}

// ---- the hot path ----

int BundleKernel::config_index(const int64_t* ints) const {
  if (info_->tuned.empty()) return default_config_;
  std::array<int64_t, 32> key{};
  for (size_t i = 0; i < key_params_.size(); ++i) key[i] = ints[key_params_[i]];
  const int rule = matching_rule(info_->tuned, std::span<const int64_t>(key.data(), key_params_.size()));
  return rule >= 0 ? rule_config_[rule] : default_config_;
}

int BundleKernel::select(ArgFacts facts, const int64_t* ints, const ContextState* c) const {
  const int config = config_index(ints);
  for (uint16_t v : order_[config]) {
    if (c != nullptr && c->states[v].image < 0) continue;
    const BundleVariant& var = info_->variants[v];
    if (satisfies(facts, var.div16, var.equal1)) return v;
  }
  return -1;
}

BundleKernel::ContextState* BundleKernel::find_state(CUcontext ctx) const noexcept {
  const int n = n_contexts_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    ContextState* c = contexts_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
    if (c->ctx == ctx) return c;
  }
  return nullptr;
}

BundleKernel::ContextState& BundleKernel::current_state() {
  CUcontext ctx = nullptr;
  check(Driver::get().api().CtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (ContextState* c = find_state(ctx)) [[likely]]  // never for a null ctx: no state has one
    return *c;
  return bind_context(ctx);
}

const BundleKernel::ContextState* BundleKernel::current_state_if_bound() const noexcept {
  const DriverApi* api = Driver::get().api_if_available();
  CUcontext ctx = nullptr;
  if (api == nullptr || api->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr) return nullptr;
  return find_state(ctx);
}

void BundleKernel::launch_packed(CUstream stream, Dim3 grid, const ParamKind* kinds, size_t n, ArgFacts facts,
                                 const int64_t* ints, void** params) {
  if (n != kinds_.size() || (n != 0 && std::memcmp(kinds, kinds_.data(), n * sizeof(ParamKind)) != 0)) [[unlikely]]
    throw_signature_mismatch(kinds, n);
  ContextState& c = current_state();
  const int v = select(facts, ints, &c);
  if (v < 0) [[unlikely]]
    throw_no_variant(c);
  VariantState& s = c.states[v];
  CUfunction fn = s.fn.load(std::memory_order_acquire);
  if (fn == nullptr) [[unlikely]]
    fn = load_variant(c, v);
  if (s.programs_per_cta != 1 || s.cluster_ctas != 1) [[unlikely]] {
    if (grid.x % (s.programs_per_cta * s.cluster_ctas) != 0) throw_grid_not_multiple(c, v, grid);
    grid.x /= s.programs_per_cta;
  }
  // Tensor maps after the arguments (an image whose producers copy by TMA), encoded for this
  // launch from its arguments: on the stack, as the arguments are.
  alignas(64) std::array<CUtensorMap, LaunchSpec::kMaxTensorMaps> maps;
  std::array<void*, 32 + LaunchSpec::kMaxTensorMaps + 1> with_maps;
  if (s.maps != nullptr) [[unlikely]] {
    for (size_t i = 0; i < n; ++i) with_maps[i] = params[i];
    for (size_t m = 0; m < s.maps->size(); ++m) {
      const TensorMapRecipe& recipe = (*s.maps)[m];
      const auto base = *static_cast<const CUdeviceptr*>(params[recipe.base_param]);
      encode_tensor_map(maps[m], recipe, std::span<const int64_t>(ints, n), base, info_->name);
      with_maps[n + m] = &maps[m];
    }
    with_maps[n + s.maps->size()] = nullptr;
    params = with_maps.data();
  }
  CUresult r = Driver::get().api().LaunchKernel(fn, grid.x, grid.y, grid.z, s.threads, 1, 1, s.shared_bytes, stream,
                                                params, nullptr);
  if (r != CUDA_SUCCESS) [[unlikely]]
    throw_launch_failed(r, c, v, grid);
}

// ---- slow paths: binding a context, loading variants, errors ----

// What a launch of `im` needs: its launch record (threads, tensor maps, cluster, shared memory).
void BundleKernel::use_image(VariantState& s, const BundleImage& im) {
  const LaunchSpec& l = im.launch;
  s.threads = static_cast<unsigned>(l.threads);
  s.programs_per_cta = static_cast<unsigned>(l.programs_per_cta);
  s.maps = l.tensor_maps.empty() ? nullptr : &l.tensor_maps;
  s.cluster_ctas = static_cast<unsigned>(l.cluster_ctas);
  s.shared_bytes = static_cast<unsigned>(l.shared_bytes);
}

// The first launch in `ctx` (the current context): its device's sm, and the image each variant
// runs there. Published for lock-free lookup once complete.
BundleKernel::ContextState& BundleKernel::bind_context(CUcontext ctx) {
  if (ctx == nullptr)
    throw BundleError(CUDA_ERROR_INVALID_CONTEXT,
                      fmt::format("bundle kernel '{}': no current CUDA context (create a tessel::rt::Context, or make "
                                  "one current with cuCtxSetCurrent, before launching)",
                                  info_->name));
  std::lock_guard lock(mu_);
  if (ContextState* c = find_state(ctx)) return *c;  // another thread bound it meanwhile
  const int n = n_contexts_.load(std::memory_order_relaxed);
  if (n == kMaxContexts)
    throw BundleError(CUDA_ERROR_NOT_SUPPORTED,
                      fmt::format("bundle kernel '{}': launched in a {}th CUDA context, but one bundle kernel serves "
                                  "at most {} contexts (open the bundle again for more)",
                                  info_->name, kMaxContexts + 1, kMaxContexts));
  const DriverApi& api = cu();
  CUdevice dev = 0;
  check(api.CtxGetDevice(&dev), "cuCtxGetDevice");
  int major = 0, minor = 0;
  check(api.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
  check(api.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
  auto c = std::make_unique<ContextState>(ctx, info_->variants.size());
  c->device_sm = major * 10 + minor;
  init_variant_states(c->states.get());
  for (size_t v = 0; v < info_->variants.size(); ++v) {
    VariantState& s = c->states[v];
    s.image = pick_image(info_->variants[v].images, c->device_sm);
    if (s.image >= 0) use_image(s, info_->variants[v].images[s.image]);
  }
  ContextState* published = c.release();
  contexts_[static_cast<size_t>(n)].store(published, std::memory_order_relaxed);
  n_contexts_.store(n + 1, std::memory_order_release);
  return *published;
}

namespace {

// Reads an image and checks it against the manifest before the driver sees it.
std::string read_checked(const BundleFiles& files, const BundleImage& im) {
  std::string bytes = files.read(im.file, im.size);  // a longer file is refused before it is read
  if (bytes.size() != im.size)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: file '{}' is {} bytes, bundle.json says {} (truncated or replaced)",
                                  files.origin(), im.file, bytes.size(), im.size));
  std::string sum = sha256_hex(bytes);
  if (sum != im.sha256)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: file '{}' is corrupt (sha256 {}, bundle.json says {})", files.origin(),
                                  im.file, sum, im.sha256));
  return bytes;
}

Module load_image(const BundleImage& im, const std::string& bytes) {
  if (im.kind == ImageKind::Cubin) return Module::load_cubin(std::span<const char>(bytes.data(), bytes.size()));
  return Module::load_ptx(bytes);
}

}  // namespace

// Loads variant `v` into `c`'s context, the current one (c was found by it).
CUfunction BundleKernel::load_variant(ContextState& c, int v) {
  std::lock_guard lock(mu_);
  VariantState& s = c.states[v];
  if (CUfunction fn = s.fn.load(std::memory_order_relaxed)) return fn;
  const auto t0 = std::chrono::steady_clock::now();
  const BundleVariant& var = info_->variants[v];
  const BundleImage* im = &var.images[s.image];
  std::string note;
  std::optional<Module> module;
  try {
    module.emplace(load_image(*im, read_checked(*files_, *im)));
  } catch (const CudaError& e) {
    // A driver older than the toolkit that built the cubin rejects it; the PTX may still JIT.
    if (im->kind != ImageKind::Cubin) throw;
    std::vector<BundleImage> ptx_only;
    for (const auto& other : var.images)
      if (other.kind == ImageKind::Ptx) ptx_only.push_back(other);
    int p = pick_image(ptx_only, c.device_sm);
    if (p < 0) throw;
    note = fmt::format("cubin {} rejected by the driver ({}); using PTX", im->file, e.name());
    for (const auto& other : var.images)
      if (other.file == ptx_only[p].file) im = &other;
    module.emplace(load_image(*im, read_checked(*files_, *im)));
  }
  use_image(s, *im);  // the PTX of a rejected cubin may differ in producers and tensor maps
  rt::Function fn = module->get_function(var.entry);
  if (s.shared_bytes > 48 * 1024) fn.set_max_dynamic_shared(static_cast<int>(s.shared_bytes));
  s.module = std::move(module);
  s.loaded = LoadedVariant{var.name, im->file, im->kind, im->arch, std::move(note),
                           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
  s.fn.store(fn.handle(), std::memory_order_release);
  return fn.handle();
}

void BundleKernel::load_all() {
  ContextState& c = current_state();
  for (size_t v = 0; v < info_->variants.size(); ++v)
    if (c.states[v].image >= 0 && c.states[v].fn.load(std::memory_order_acquire) == nullptr)
      load_variant(c, static_cast<int>(v));
}

std::optional<BundleKernel::LoadedVariant> BundleKernel::loaded(size_t v) const {
  const ContextState* c = current_state_if_bound();
  if (c == nullptr || v >= info_->variants.size()) return std::nullopt;
  std::lock_guard lock(mu_);
  if (c->states[v].fn.load(std::memory_order_acquire) == nullptr) return std::nullopt;
  return c->states[v].loaded;
}

void BundleKernel::throw_signature_mismatch(const ParamKind* kinds, size_t n) const {
  auto sig = [](auto kind_at, size_t count) {
    std::string s;
    for (size_t i = 0; i < count; ++i) s += (i ? ", " : "") + std::string(param_kind_name(kind_at(i)));
    return s;
  };
  std::string expected = sig([&](size_t i) { return kinds_[i]; }, kinds_.size());
  std::string got = sig([&](size_t i) { return kinds[i]; }, n);
  std::string detail;
  if (n != kinds_.size()) {
    detail = fmt::format("{} arguments for {} parameters", n, kinds_.size());
  } else {
    for (size_t i = 0; i < n; ++i)
      if (kinds[i] != kinds_[i]) {
        detail = fmt::format("argument {} ('{}') is {}, the parameter is {}", i, info_->params[i].name,
                             param_kind_name(kinds[i]), param_kind_name(kinds_[i]));
        break;
      }
  }
  throw BundleError(CUDA_ERROR_INVALID_VALUE,
                    fmt::format("bundle kernel '{}': {} (called with ({}), signature is ({}); pass CUdeviceptr, "
                                "int32_t, int64_t, float, double)",
                                info_->name, detail, got, expected));
}

void BundleKernel::throw_no_variant(const ContextState& c) const {
  std::string have;
  for (size_t v = 0; v < info_->variants.size(); ++v) {
    std::string archs;
    for (const auto& im : info_->variants[v].images)
      archs += fmt::format("{}{} {}", archs.empty() ? "" : ", ", im.kind == ImageKind::Cubin ? "cubin" : "ptx", im.arch);
    have += fmt::format("{}{} ({})", have.empty() ? "" : "; ", info_->variants[v].name, archs);
  }
  throw BundleError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                    fmt::format("bundle kernel '{}': no variant runs on this GPU (sm_{}) for these arguments; the "
                                "bundle has: {}",
                                info_->name, c.device_sm, have));
}

void BundleKernel::throw_grid_not_multiple(const ContextState& c, int v, Dim3 grid) const {
  const VariantState& s = c.states[v];
  const std::string why = s.cluster_ctas == 1
                              ? fmt::format("runs {} programs per CTA", s.programs_per_cta)
                              : fmt::format("runs {} program(s) per CTA in clusters of {} CTAs (a multicast load)",
                                            s.programs_per_cta, s.cluster_ctas);
  throw BundleError(CUDA_ERROR_INVALID_VALUE,
                    fmt::format("bundle kernel '{}' variant '{}' {}: its grid's x ({}) must be a multiple of {}",
                                info_->name, info_->variants[v].name, why, grid.x,
                                s.programs_per_cta * s.cluster_ctas));
}

void BundleKernel::throw_launch_failed(CUresult r, const ContextState& c, int v, Dim3 grid) const {
  throw CudaError(r, "cuLaunchKernel",
                  fmt::format("bundle kernel '{}' variant '{}', grid ({}, {}, {}), block ({}, 1, 1), {} bytes shared",
                              info_->name, info_->variants[v].name, grid.x, grid.y, grid.z, c.states[v].threads,
                              c.states[v].shared_bytes));
}

// ---- C-style error reporting ----

namespace {
thread_local std::string g_last_error;
}

const char* last_bundle_error() noexcept { return g_last_error.c_str(); }

CUresult record_bundle_error(const std::exception& e) noexcept {
  try {
    g_last_error = e.what();
  } catch (...) {
    // Out of memory while recording: the code still goes back.
  }
  if (auto* b = dynamic_cast<const BundleError*>(&e)) return b->code();
  if (auto* c = dynamic_cast<const CudaError*>(&e)) return c->code();
  return CUDA_ERROR_UNKNOWN;
}

CUresult record_bundle_error(CUresult code, const char* message) noexcept {
  try {
    g_last_error = message;
  } catch (...) {
  }
  return code;
}

CUresult BundleKernel::record_current_exception() noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return record_bundle_error(e);
  } catch (...) {
    g_last_error = "unknown exception";
    return CUDA_ERROR_UNKNOWN;
  }
}

// ---- Bundle ----

struct Bundle::State {
  BundleFiles files;
  BundleManifest manifest;
  std::vector<std::unique_ptr<BundleKernel>> kernels;  // one per manifest kernel, same order
};

Bundle::Bundle(std::unique_ptr<State> s) : s_(std::move(s)) {}
Bundle::Bundle(Bundle&&) noexcept = default;
Bundle& Bundle::operator=(Bundle&&) noexcept = default;
Bundle::~Bundle() = default;

Bundle Bundle::open(const std::filesystem::path& path) { return from_files(BundleFiles::open(path)); }

Bundle Bundle::open(std::span<const std::byte> bytes, std::string origin) {
  return from_files(BundleFiles::from_bytes(bytes, std::move(origin), BundleFiles::Copy::Yes));
}

Bundle Bundle::open_borrowed(std::span<const std::byte> bytes, std::string origin) {
  return from_files(BundleFiles::from_bytes(bytes, std::move(origin), BundleFiles::Copy::No));
}

// Every form passes through here: the same manifest validation and size checks for all.
Bundle Bundle::from_files(BundleFiles files) {
  auto s = std::make_unique<State>(State{std::move(files), {}, {}});
  s->manifest = manifest_from_json(s->files.read(kBundleManifestFile, kMaxBundleManifestBytes), s->files.origin());
  for (const auto& k : s->manifest.kernels)
    for (const auto& v : k.variants)
      for (const auto& im : v.images) {
        auto size = s->files.size(im.file);
        if (!size)
          throw BundleError(CUDA_ERROR_FILE_NOT_FOUND,
                            fmt::format("bundle {}: file '{}' (kernel '{}', variant '{}') is missing",
                                        s->files.origin(), im.file, k.name, v.name));
        if (*size != im.size)
          throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                            fmt::format("bundle {}: file '{}' is {} bytes, bundle.json says {} (truncated or replaced)",
                                        s->files.origin(), im.file, *size, im.size));
      }
  for (const auto& k : s->manifest.kernels)
    s->kernels.push_back(std::unique_ptr<BundleKernel>(new BundleKernel(s->files, k)));
  return Bundle(std::move(s));
}

const BundleManifest& Bundle::manifest() const { return s_->manifest; }
const std::string& Bundle::origin() const { return s_->files.origin(); }
bool Bundle::packed() const { return s_->files.packed(); }

BundleKernel* Bundle::find(std::string_view name) {
  for (auto& k : s_->kernels)
    if (k->name() == name) return k.get();
  return nullptr;
}

BundleKernel& Bundle::kernel(std::string_view name) {
  if (BundleKernel* k = find(name)) return *k;
  std::string names;
  for (const auto& k : s_->manifest.kernels) names += (names.empty() ? "" : ", ") + k.name;
  throw BundleError(CUDA_ERROR_NOT_FOUND,
                    fmt::format("bundle {}: no kernel '{}' (it has: {})", s_->files.origin(), name, names));
}

BundleKernel& Bundle::kernel(std::string_view name, std::string_view expected_signature) {
  BundleKernel& k = kernel(name);
  std::string actual = signature_string(k.info());
  if (actual != expected_signature)
    throw BundleError(CUDA_ERROR_INVALID_VALUE,
                      fmt::format("bundle {}: kernel '{}' takes ({}), but the launcher was generated for ({}); "
                                  "regenerate the header from this bundle or open the bundle it was made with",
                                  s_->files.origin(), name, actual, expected_signature));
  return k;
}

void Bundle::verify() const {
  for (const auto& k : s_->manifest.kernels)
    for (const auto& v : k.variants)
      for (const auto& im : v.images) read_checked(s_->files, im);
}

}  // namespace tessel::rt
