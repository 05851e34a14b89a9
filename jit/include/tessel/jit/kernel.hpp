// Kernel: a traced C++ kernel function, compiled per (meta, specialisation, options), launched.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <stdexcept>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tessel/ir/error.hpp"
#include "tessel/jit/build_ir.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/pointer_argument.hpp"
#include "tessel/jit/stream.hpp"
#include "tessel/jit/tune/autotune.hpp"
#include "tessel/lang/trace.hpp"

namespace tessel::jit {

using lang::Meta;

namespace detail {
template <class T>
struct IsArray : std::false_type {};
template <class T>
struct IsArray<Array<T>> : std::true_type {};
template <class T>
struct IsDevicePtr : std::false_type {};
template <class T>
struct IsDevicePtr<DevicePtr<T>> : std::true_type {};

// Where the arguments of one launch go, for the checks made while packing them.
struct PackContext {
  std::string_view kernel;
  const std::vector<std::string>* names;
  const Device* device;  // null: not checked (tuning problems, whose device is current)
  PointerCheck check(size_t index, ir::Scalar scalar, size_t elem_bytes) const {
    PointerCheck c;
    c.kernel = kernel;
    c.param = index < names->size() ? std::string_view((*names)[index]) : std::string_view();
    c.index = index;
    c.scalar = scalar;
    c.elem_bytes = elem_bytes;
    c.device = device;
    return c;
  }
};

// std::invalid_argument: an Array of one device passed to a launch on another.
[[noreturn]] void throw_array_on_other_device(const PointerCheck& c, const Device& array_device);

// The launch form of host argument H for kernel parameter P (checked at compile time; for
// arrays and PointerArgument types also at launch, against the launch's device).
template <class P, class H>
RawArg to_raw(const H& h, const PackContext& ctx, size_t index) {
  using E = typename P::element;
  if constexpr (lang::ParamTraits<P>::kind == lang::ParamKind::Pointer) {
    if constexpr (IsArray<H>::value) {
      static_assert(std::is_same_v<typename E::host, typename std::remove_cvref_t<decltype(h.download())>::value_type>,
                    "kernel argument: Array element type does not match the Ptr<T> parameter");
      if (ctx.device && &h.device() != ctx.device) [[unlikely]]
        throw_array_on_other_device(ctx.check(index, E::scalar, sizeof(typename E::host)), h.device());
      return RawArg::pointer(h.address());
    } else if constexpr (IsDevicePtr<H>::value) {
      static_assert(std::is_same_v<H, DevicePtr<typename E::host>>,
                    "kernel argument: DevicePtr element type does not match the Ptr<T> parameter");
      return RawArg::pointer(h.addr);
    } else if constexpr (HasPointerArgument<H>) {
      return RawArg::pointer(PointerArgument<H>::address(h, ctx.check(index, E::scalar, sizeof(typename E::host))));
    } else {
      static_assert(IsArray<H>::value,
                    "kernel argument: a Ptr<T> parameter takes an Array<T>, a DevicePtr<T> or a type with a "
                    "PointerArgument specialisation (DLTensor*: include tessel/jit/dlpack.hpp)");
      return {};
    }
  } else if constexpr (lang::ParamTraits<P>::kind == lang::ParamKind::Int) {
    static_assert(std::is_integral_v<H>, "kernel argument: an integer parameter (Int, Long) takes an integral value");
    if constexpr (std::is_same_v<E, lang::i32> && (sizeof(H) > 4 || std::is_same_v<H, uint32_t>)) {
      if (h > static_cast<H>(INT32_MAX) || (std::is_signed_v<H> && static_cast<int64_t>(h) < INT32_MIN)) [[unlikely]]
        throw std::out_of_range("kernel argument " + std::to_string(static_cast<int64_t>(h)) +
                                " does not fit the i32 parameter (declare it Long)");
    }
    return RawArg::integer(static_cast<int64_t>(h));
  } else {
    static_assert(std::is_arithmetic_v<H>, "kernel argument: a Float/Double parameter takes an arithmetic value");
    return RawArg::floating(static_cast<double>(h));
  }
}

// Triton's specialisation: 2 bits per argument (bit 0: divisible by 16, bit 1: equals 1).
inline uint64_t spec_bits(const RawArg* args, size_t n) {
  uint64_t bits = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t b = 0;
    if (args[i].kind == RawArg::Pointer) b = (args[i].addr % 16 == 0) ? 1 : 0;
    else if (args[i].kind == RawArg::Int) b = (args[i].i % 16 == 0 ? 1 : 0) | (args[i].i == 1 ? 2 : 0);
    bits |= b << (2 * i);
  }
  return bits;
}

std::vector<ir::ParamSpec> specs_from_bits(uint64_t bits, size_t n);

// What the autotuner needs of a pointer argument: its element type, and its element count when
// the launcher knows it (an Array; a DevicePtr's count comes from Autotune::output_sizes).
struct PtrArgInfo {
  bool pointer = false, sized = false;
  ir::Scalar scalar = ir::Scalar::f32;
  size_t elem_bytes = 0, count = 0;
  size_t bytes() const { return count * elem_bytes; }
};
template <class P, class H>
PtrArgInfo ptr_arg_info(const H& h) {
  PtrArgInfo a;
  if constexpr (lang::ParamTraits<P>::kind == lang::ParamKind::Pointer) {
    using E = typename P::element;
    a.pointer = true;
    a.scalar = E::scalar;
    a.elem_bytes = sizeof(typename E::host);
    if constexpr (IsArray<H>::value) {
      a.sized = true;
      a.count = h.size();
    }
  }
  return a;
}

// A reader appending the `a.count` elements at `addr` to a vector as numbers (f16/bf16 decoded).
inline std::function<void(std::vector<double>&)> output_reader(uint64_t addr, const PtrArgInfo& a) {
  return [addr, a](std::vector<double>& out) {
    std::vector<unsigned char> bytes(a.bytes());
    if (!bytes.empty()) Device::current().download(bytes.data(), addr, bytes.size());
    tune::append_as_doubles(a.scalar, bytes.data(), a.count, out);
  };
}

// A reader of the elements at tune::check_positions(a.count, max) only, read back in chunks of at
// most 64 MiB (host memory stays bounded however large the output is).
inline std::function<void(std::vector<double>&)> sampled_output_reader(uint64_t addr, const PtrArgInfo& a, size_t max) {
  if (max == 0 || a.count <= max) return output_reader(addr, a);
  return [addr, a, max](std::vector<double>& out) {
    const std::vector<size_t> pos = tune::check_positions(a.count, max);
    const size_t chunk = std::max<size_t>(1, (size_t{64} << 20) / a.elem_bytes);
    std::vector<unsigned char> bytes;
    size_t next = 0;
    for (size_t lo = 0; lo < a.count && next < pos.size(); lo += chunk) {
      const size_t hi = std::min(a.count, lo + chunk);
      if (pos[next] >= hi) continue;
      bytes.resize((hi - lo) * a.elem_bytes);
      Device::current().download(bytes.data(), addr + lo * a.elem_bytes, bytes.size());
      for (; next < pos.size() && pos[next] < hi; ++next)
        tune::append_as_doubles(a.scalar, bytes.data() + (pos[next] - lo) * a.elem_bytes, 1, out);
    }
  };
}

// The values of a full reference (every output's elements, concatenated) at the positions the
// sampled readers read: `counts` are the outputs' element counts. A reference of another length is
// returned as it is (the tuner reports the mismatch).
inline std::vector<double> sampled_reference(std::vector<double> full, const std::vector<size_t>& counts, size_t max) {
  size_t total = 0;
  for (size_t c : counts) total += c;
  if (full.size() != total) return full;
  std::vector<double> out;
  size_t base = 0;
  for (size_t c : counts) {
    for (size_t p : tune::check_positions(c, max)) out.push_back(full[base + p]);
    base += c;
  }
  return out;
}
}  // namespace detail

template <class... A>
class Kernel {
 public:
  using Fn = void (*)(A...);
  static constexpr size_t kNumParams = (size_t{0} + ... + (lang::MetaParam<A> ? 0 : 1));
  static_assert(kNumParams <= 32, "at most 32 kernel parameters");
  static_assert(((lang::KernelParam<A> || lang::MetaParam<A>) && ...),
                "kernel parameters must be Ptr<T>, Int, Long, Float, Double or const Meta&");
  static_assert(kNumParams + 1 >= sizeof...(A) && (sizeof...(A) == kNumParams ||
                                                   lang::MetaParam<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A..., void>>>),
                "the Meta parameter, if any, must be the kernel's last parameter");

  Kernel(std::string name, Fn fn, std::vector<std::string> param_names = {}, Meta defaults = {})
      : name_(std::move(name)), fn_(fn), param_names_(std::move(param_names)), defaults_(std::move(defaults)) {}
  // A tunable kernel: see autotune().
  Kernel(std::string name, Fn fn, std::vector<std::string> param_names, Meta defaults, tune::Autotune at)
      : Kernel(std::move(name), fn, std::move(param_names), std::move(defaults)) {
    autotune(std::move(at));
  }

  // Declares the kernel's configs and tuning key, for launch_tuned. CompileError when there are
  // no configs, a config is given twice, or a key or restore name is not an integer (key) or
  // pointer (restore) parameter of the kernel. Not to be called while launches are under way.
  Kernel& autotune(tune::Autotune at) {
    auto t = std::make_unique<Tuning>();
    if (at.configs.empty()) throw CompileError({}, "kernel '" + name_ + "': autotune needs at least one config");
    for (size_t i = 0; i < at.configs.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (at.configs[i] == at.configs[j])
          throw CompileError({}, "kernel '" + name_ + "': autotune config '" + at.configs[i].str() + "' is given twice");
    for (const tune::KeyParam& k : at.key.params) t->key_index.push_back(param_index(k.name, lang::ParamKind::Int, "key"));
    for (const std::string& r : at.restore) t->restore_index.push_back(param_index(r, lang::ParamKind::Pointer, "restore"));
    for (const std::string& o : at.outputs) t->output_index.push_back(param_index(o, lang::ParamKind::Pointer, "outputs"));
    if (at.reference && at.outputs.empty())
      throw CompileError({}, "kernel '" + name_ + "': an autotune reference needs outputs (the parameters it gives "
                                                  "the values of)");
    t->spec = std::move(at);
    std::lock_guard lock(mu_);
    tuning_ = std::move(t);
    return *this;
  }
  // The declared autotuning, or null.
  const tune::Autotune* autotune_spec() const { return tuning_ ? &tuning_->spec : nullptr; }

  const std::string& name() const { return name_; }
  const Meta& defaults() const { return defaults_; }
  const std::vector<std::string>& param_names() const { return param_names_; }

  // `meta` over the defaults: the meta-parameters a launch or trace actually uses.
  Meta effective_meta(const Meta& meta) const {
    Meta m = defaults_;
    for (const auto& [k, v] : meta.values()) m.set(k, v);
    return m;
  }

  // Traces and runs the IR passes (no backend involved).
  std::unique_ptr<ir::Function> build_ir(const Meta& meta, std::vector<ir::ParamSpec> specs = {}) const {
    return finish_ir(trace_ir(meta, std::move(specs)));
  }
  // Traces only: the IR as recorded, before verification and the passes (what a listing of the
  // signature needs, without TESSEL_DUMP_IR's per-pass dumps).
  std::unique_ptr<ir::Function> trace_ir(const Meta& meta, std::vector<ir::ParamSpec> specs = {}) const {
    lang::TraceOptions opts{name_, param_names_, std::move(specs)};
    return lang::trace(fn_, effective_meta(meta), opts);
  }

  // Launches on the calling thread's current device and its current stream there (the legacy
  // default stream unless set: Device::set_current_stream, StreamGuard); host arguments are
  // checked against the signature.
  template <class... H>
    requires(sizeof...(H) == 0 || !std::is_convertible_v<const std::tuple_element_t<0, std::tuple<H..., int>>&, LaunchOptions>)
  void operator()(Grid grid, const Meta& meta, const H&... args) {
    launch(grid, meta, CompileOptions{}, LaunchOptions{}, args...);
  }
  // The same on a stream or device: k(grid, meta, stream, args...) with a CUstream /
  // cudaStream_t / jit::Stream, or LaunchOptions{device, stream}.
  template <class... H>
  void operator()(Grid grid, const Meta& meta, const LaunchOptions& where, const H&... args) {
    launch(grid, meta, CompileOptions{}, where, args...);
  }

  template <class... H>
    requires(sizeof...(H) == 0 || !std::is_convertible_v<const std::tuple_element_t<0, std::tuple<H..., int>>&, LaunchOptions>)
  void launch(Grid grid, const Meta& meta, const CompileOptions& opts, const H&... args) {
    launch(grid, meta, opts, LaunchOptions{}, args...);
  }
  template <class... H>
  void launch(Grid grid, const Meta& meta, const LaunchOptions& where, const H&... args) {
    launch(grid, meta, CompileOptions{}, where, args...);
  }
  // The general form: compile options select the variant, launch options where it runs. The
  // first launch of a variant on a device compiles it (once per architecture in the process,
  // from the disk cache when it holds it) and loads it there; later ones only launch, so they
  // may be captured into a CUDA graph.
  template <class... H>
  void launch(Grid grid, const Meta& meta, const CompileOptions& opts, const LaunchOptions& where, const H&... args) {
    static_assert(sizeof...(H) == kNumParams, "wrong number of kernel arguments");
    Device& dev = where.device ? *where.device : Device::current();
    const StreamRef stream = where.stream_set ? where.stream : Device::current_stream(dev);
    const detail::PackContext ctx{name_, &param_names_, &dev};
    std::array<RawArg, kNumParams> raw = pack(ctx, std::make_index_sequence<kNumParams>{}, args...);
    variant(meta, opts, detail::spec_bits(raw.data(), raw.size()), dev).launch(grid, raw, stream);
  }

  // The compiled variant for these meta-parameters, options and specialisation bits on `dev`.
  // Safe to call from several threads: each variant is compiled and loaded once per device
  // (others asking for it meanwhile wait for that compile), and compiling happens outside the
  // kernel's lock, so the autotuner's workers compile different configs in parallel.
  Executable& variant(const Meta& meta, const CompileOptions& opts, uint64_t specs, Device& dev = Device::current()) {
    std::shared_ptr<Pending> pending;
    std::shared_future<std::shared_ptr<Executable>> wait;
    {
      std::lock_guard lock(mu_);
      if (Variant* v = find_variant(meta, opts, specs, dev)) {
        if (v->exe) return *v->exe;
        wait = v->pending->ready;  // another thread compiles it
      } else {
        pending = std::make_shared<Pending>();
        pending->ready = pending->promise.get_future().share();
        variants_.push_back({meta, opts, specs, &dev, nullptr, pending});
      }
    }
    if (!pending) return *wait.get();  // rethrows that compile's error
    std::shared_ptr<Executable> exe;
    try {
      exe = dev.compile(std::shared_ptr<const ir::Function>(build_ir(meta, detail::specs_from_bits(specs, kNumParams))), opts);
    } catch (...) {
      pending->promise.set_exception(std::current_exception());
      std::lock_guard lock(mu_);  // forgotten: a later launch tries again
      std::erase_if(variants_, [&](const Variant& v) { return v.pending == pending; });
      throw;
    }
    {
      std::lock_guard lock(mu_);
      find_variant(meta, opts, specs, dev)->exe = exe;
    }
    pending->promise.set_value(exe);
    return *exe;
  }

  // The variant of a tuning config; tune::ConfigPruned when the autotuning prunes what it
  // compiled to (spills, Autotune::prune_spills).
  Executable& variant(const tune::Config& c, uint64_t specs) {
    Executable& e = variant(c.meta, c.opts, specs);
    if (tuning_) tune::detail::check_resources(tuning_->spec, e);
    return e;
  }

  // A tuning problem for these arguments (which must outlive it): compile and launch per config
  // with grid_fn(effective meta) as the grid, the key for the arguments' values, reset restoring
  // Autotune::restore buffers (saved now), output reading Autotune::outputs (as numbers: f16 and
  // bf16 decoded), poison filling them with 0xFF bytes, reference calling Autotune::reference on
  // the arguments read back then, and rtol/atol from Autotune (unset: the outputs' dtype default,
  // tune::default_tolerance). bytes and flops are left for the caller. CompileError when the
  // kernel has no autotune, or `fixed` names a meta-parameter a config sets.
  template <class G, class... H>
    requires(!std::is_convertible_v<G, const Meta&>)
  tune::Problem make_problem(G grid_fn, const H&... args) {
    return make_problem(Meta{}, std::move(grid_fn), args...);
  }
  // The same with meta-parameters fixed beside the tuned ones (see launch_tuned).
  template <class G, class... H>
  tune::Problem make_problem(const Meta& fixed, G grid_fn, const H&... args) {
    static_assert(sizeof...(H) == kNumParams, "wrong number of kernel arguments");
    Tuning& t = tuning();
    check_fixed(t, fixed);
    const std::array<RawArg, kNumParams> raw = pack(detail::PackContext{name_, &param_names_, &Device::current()}, std::make_index_sequence<kNumParams>{}, args...);
    const std::array<detail::PtrArgInfo, kNumParams> ptrs = ptr_infos(std::make_index_sequence<kNumParams>{}, args...);
    return problem_for(t, fixed, raw, ptrs, std::function<Grid(const Meta&)>(std::move(grid_fn)));
  }

  // Launches, on the calling thread's current device and stream, with the config tuned for these
  // arguments' key (tuning, when it happens, synchronises the device: tune before a CUDA graph
  // capture, not during one): the one chosen earlier in this process for this device, else the
  // Database's for this device, else (on the GPU, TESSEL_AUTOTUNE not 0) the result of tuning
  // now, else the first config the prune keeps. grid_fn(meta) gives the grid for a config's
  // effective meta-parameters. Returns the config launched. Thread-safe; one key is tuned once
  // per device.
  template <class G, class... H>
    requires(!std::is_convertible_v<G, const Meta&> && !std::is_convertible_v<G, LaunchOptions>)
  const tune::Config& launch_tuned(G&& grid_fn, const H&... args) {
    return launch_tuned_choice(LaunchOptions{}, Meta{}, grid_fn, args...).config;
  }
  // The same with meta-parameters fixed beside the tuned ones (a dtype switch, an activation, a
  // size the caller decides): each config's meta is merged over `fixed`, the fixed values are
  // part of the tuning key (";fixed=ACT=1" after the signature), and a config that sets a fixed
  // parameter is a CompileError.
  template <class G, class... H>
  const tune::Config& launch_tuned(const Meta& fixed, G&& grid_fn, const H&... args) {
    return launch_tuned_choice(LaunchOptions{}, fixed, grid_fn, args...).config;
  }
  // The same on a stream or device (k.launch_tuned(stream, grid_fn, args...)): tuning, when it
  // happens, runs on that device; the launch goes to that stream.
  template <class G, class... H>
    requires(!std::is_convertible_v<G, const Meta&>)
  const tune::Config& launch_tuned(const LaunchOptions& where, G&& grid_fn, const H&... args) {
    return launch_tuned_choice(where, Meta{}, grid_fn, args...).config;
  }
  template <class G, class... H>
  const tune::Config& launch_tuned(const LaunchOptions& where, const Meta& fixed, G&& grid_fn, const H&... args) {
    return launch_tuned_choice(where, fixed, grid_fn, args...).config;
  }
  // launch_tuned that also says what it chose: the config, its measured median time and whether
  // it was tuned now, read from the database or is the untuned fallback (tune::TuneChoice).
  template <class G, class... H>
    requires(!std::is_convertible_v<G, const Meta&> && !std::is_convertible_v<G, LaunchOptions>)
  const tune::TuneChoice& launch_tuned_choice(G&& grid_fn, const H&... args) {
    return launch_tuned_choice(LaunchOptions{}, Meta{}, grid_fn, args...);
  }
  template <class G, class... H>
  const tune::TuneChoice& launch_tuned_choice(const Meta& fixed, G&& grid_fn, const H&... args) {
    return launch_tuned_choice(LaunchOptions{}, fixed, grid_fn, args...);
  }
  template <class G, class... H>
  const tune::TuneChoice& launch_tuned_choice(const LaunchOptions& where, const Meta& fixed, G&& grid_fn,
                                              const H&... args) {
    static_assert(sizeof...(H) == kNumParams, "wrong number of kernel arguments");
    std::optional<DeviceGuard> on;  // tuning and launching on the asked device
    if (where.device) on.emplace(*where.device);
    Device& dev = Device::current();
    const StreamRef stream = where.stream_set ? where.stream : Device::current_stream(dev);
    Tuning& t = tuning();
    if (!fixed.values().empty()) check_fixed(t, fixed);
    const std::array<RawArg, kNumParams> raw =
        pack(detail::PackContext{name_, &param_names_, &dev}, std::make_index_sequence<kNumParams>{}, args...);
    const uint64_t specs = detail::spec_bits(raw.data(), raw.size());
    ChoiceKey ck{&dev, std::vector<int64_t>(t.key_index.size()), fixed.values()};
    for (size_t i = 0; i < t.key_index.size(); ++i)
      std::get<1>(ck)[i] = tune::KeySpec::bucket_value(t.spec.key.params[i].bucket, raw[t.key_index[i]].i);
    const Choice* choice = nullptr;
    {
      std::lock_guard lock(t.mu);
      if (auto it = t.choices.find(ck); it != t.choices.end()) choice = &it->second;
    }
    if (!choice) {
      std::lock_guard tuning_lock(t.tune_mu);  // one tuning at a time: a key is tuned once
      {
        std::lock_guard lock(t.mu);
        if (auto it = t.choices.find(ck); it != t.choices.end()) choice = &it->second;
      }
      if (!choice) {
        const std::array<detail::PtrArgInfo, kNumParams> ptrs =
            ptr_infos(std::make_index_sequence<kNumParams>{}, args...);
        const tune::ProblemInfo info = problem_info(t, fixed, raw, ptrs);
        tune::TuneChoice c = tune::detail::choose_config(t.spec, info, [&] {
          return problem_for(t, fixed, raw, ptrs, std::function<Grid(const Meta&)>(grid_fn));
        });
        Meta merged = merge(fixed, c.config.meta);
        Meta m = effective_meta(merged);
        std::lock_guard lock(t.mu);
        choice = &t.choices.emplace(ck, Choice{std::move(c), std::move(merged), std::move(m)}).first->second;
      }
    }
    Executable& e = variant(choice->merged, choice->choice.config.opts, specs, dev);
    tune::detail::check_resources(t.spec, e);
    e.launch(grid_fn(choice->meta), raw, stream);
    return choice->choice;
  }

 private:
  template <size_t... I, class... H>
  static std::array<RawArg, kNumParams> pack(const detail::PackContext& ctx, std::index_sequence<I...>, const H&... args) {
    using Params = std::tuple<A...>;
    return {detail::to_raw<std::remove_cvref_t<std::tuple_element_t<I, Params>>>(args, ctx, I)...};
  }

  // A variant being compiled: what the threads that also want it wait for.
  struct Pending {
    std::promise<std::shared_ptr<Executable>> promise;
    std::shared_future<std::shared_ptr<Executable>> ready;
  };
  struct Variant {
    Meta meta;
    CompileOptions opts;
    uint64_t specs;
    const Device* device;
    std::shared_ptr<Executable> exe;  // null while pending
    std::shared_ptr<Pending> pending;
  };
  // A config chosen for a key, with its meta over the fixed ones (what is compiled) and its
  // effective meta-parameters (the grid function's input).
  struct Choice {
    tune::TuneChoice choice;
    Meta merged, meta;
  };
  // The device (another GPU may be another kind), bucketed key values and launch_tuned's fixed
  // meta-parameters.
  using ChoiceKey =
      std::tuple<const Device*, std::vector<int64_t>, std::vector<std::pair<std::string, int64_t>>>;
  // The autotuning state: the declaration, its parameters resolved, the choices made.
  struct Tuning {
    tune::Autotune spec;
    std::vector<size_t> key_index, restore_index, output_index;  // parameter positions
    std::string signature;                          // made on first use, under mu
    std::mutex mu;                                  // choices, signature
    std::mutex tune_mu;                             // held while choosing a config
    std::map<ChoiceKey, Choice> choices;            // nodes are stable
  };

  Variant* find_variant(const Meta& meta, const CompileOptions& opts, uint64_t specs, const Device& dev) {
    for (auto& v : variants_)
      if (v.device == &dev && v.specs == specs && v.opts == opts && v.meta == meta) return &v;
    return nullptr;
  }

  Tuning& tuning() {
    if (!tuning_) throw CompileError({}, "kernel '" + name_ + "' has no autotune configs (see Kernel::autotune)");
    return *tuning_;
  }

  // The position of parameter `name`, which must be of `kind`.
  size_t param_index(const std::string& name, lang::ParamKind kind, const char* what) const {
    static constexpr std::array<lang::ParamKind, kNumParams> kinds = param_kinds(std::make_index_sequence<kNumParams>{});
    for (size_t i = 0; i < param_names_.size() && i < kNumParams; ++i)
      if (param_names_[i] == name) {
        if (kinds[i] != kind)
          throw CompileError({}, "kernel '" + name_ + "': autotune " + what + " parameter '" + name + "' must be " +
                                     (kind == lang::ParamKind::Int ? "an integer (Int, Long)" : "a pointer (Ptr<T>)"));
        return i;
      }
    std::string known;
    for (const auto& n : param_names_) known += (known.empty() ? "" : ", ") + n;
    throw CompileError({}, "kernel '" + name_ + "': autotune " + what + " '" + name + "' is not a parameter (" +
                               (known.empty() ? std::string("no parameter names given") : known) + ")");
  }
  template <size_t... I>
  static constexpr std::array<lang::ParamKind, kNumParams> param_kinds(std::index_sequence<I...>) {
    using Params = std::tuple<A...>;
    return {lang::ParamTraits<std::remove_cvref_t<std::tuple_element_t<I, Params>>>::kind...};
  }

  std::string key_string(Tuning& t, const std::array<RawArg, kNumParams>& raw, const Meta& fixed) {
    std::vector<int64_t> values;
    for (size_t i : t.key_index) values.push_back(raw[i].i);
    std::string sig;
    {
      std::lock_guard lock(t.mu);
      if (t.signature.empty()) t.signature = tune::signature_of(*build_ir({}));
      sig = t.signature;
    }
    std::string key = t.spec.key.key_string(values, sig);
    // Fixed meta-parameters select another kernel: another key (bundles do not export such keys).
    if (!fixed.values().empty()) key += ";fixed=" + fixed.str();
    return key;
  }

  // `over` set over `base`.
  static Meta merge(const Meta& base, const Meta& over) {
    Meta m = base;
    for (const auto& [k, v] : over.values()) m.set(k, v);
    return m;
  }

  // CompileError when a config sets a meta-parameter that `fixed` fixes.
  void check_fixed(const Tuning& t, const Meta& fixed) const {
    for (const auto& [name, v] : fixed.values())
      for (const tune::Config& c : t.spec.configs)
        if (c.meta.has(name))
          throw CompileError({}, "kernel '" + name_ + "': launch_tuned fixes meta-parameter '" + name +
                                     "', which autotune config '" + c.str() +
                                     "' also sets (a meta-parameter is either tuned or fixed)");
  }

  template <size_t... I, class... H>
  static std::array<detail::PtrArgInfo, kNumParams> ptr_infos(std::index_sequence<I...>, const H&... args) {
    using Params = std::tuple<A...>;
    return {detail::ptr_arg_info<std::remove_cvref_t<std::tuple_element_t<I, Params>>>(args)...};
  }

  std::string param_name(size_t i) const {
    return i < param_names_.size() ? param_names_[i] : "arg" + std::to_string(i);
  }

  // What Autotune::prune and output_sizes see of these arguments.
  tune::ProblemInfo problem_info(Tuning& t, const Meta& fixed, const std::array<RawArg, kNumParams>& raw,
                                 const std::array<detail::PtrArgInfo, kNumParams>& ptrs) {
    tune::ProblemInfo info;
    info.set_kernel(name_, key_string(t, raw, fixed));
    for (size_t i = 0; i < t.key_index.size(); ++i)
      info.add_key(t.spec.key.params[i].name,
                   tune::KeySpec::bucket_value(t.spec.key.params[i].bucket, raw[t.key_index[i]].i));
    for (size_t i = 0; i < kNumParams; ++i) {
      if (raw[i].kind == RawArg::Int) info.add_integer(param_name(i), raw[i].i);
      if (ptrs[i].sized) info.add_size(param_name(i), ptrs[i].count);
    }
    info.set_fixed(fixed);
    return info;
  }

  tune::Problem problem_for(Tuning& t, const Meta& fixed, const std::array<RawArg, kNumParams>& raw,
                            std::array<detail::PtrArgInfo, kNumParams> ptrs, std::function<Grid(const Meta&)> grid_fn) {
    const uint64_t specs = detail::spec_bits(raw.data(), raw.size());
    const tune::ProblemInfo info = problem_info(t, fixed, raw, ptrs);
    tune::Problem p;
    p.kernel = name_;
    p.key = info.key_string();
    if (t.spec.prune) p.keep = [&prune = t.spec.prune, info](const tune::Config& c) { return prune(c, info); };
    p.compile = [this, specs, fixed](const tune::Config& c) { variant(tune::Config{merge(fixed, c.meta), c.opts}, specs); };
    p.launch = [this, specs, raw, grid_fn, fixed](const tune::Config& c) {
      const Meta m = merge(fixed, c.meta);
      variant(tune::Config{m, c.opts}, specs).launch(grid_fn(effective_meta(m)), raw);
    };
    if (!t.restore_index.empty()) {
      auto saved = std::make_shared<tune::detail::SavedBuffers>();
      for (size_t i : t.restore_index) {
        if (!ptrs[i].sized)
          throw CompileError({}, "kernel '" + name_ + "': restore parameter '" + param_names_[i] +
                                     "' must be passed as an Array (its size is needed)");
        saved->save(raw[i].addr, ptrs[i].bytes());
      }
      p.reset = [saved] { saved->restore(); };
    }
    if (!t.output_index.empty()) {
      // DevicePtr outputs take their element count from Autotune::output_sizes.
      for (const auto& [name, size_fn] : t.spec.output_sizes)
        for (size_t i : t.output_index)
          if (param_names_[i] == name && !ptrs[i].sized) {
            ptrs[i].count = size_fn(info);
            ptrs[i].sized = true;
          }
      std::array<std::function<void(std::vector<double>&)>, kNumParams> readers;
      std::array<std::function<void(std::vector<double>&)>, kNumParams> checked;  // sampled (outputs)
      for (size_t i = 0; i < kNumParams; ++i)
        if (ptrs[i].sized) {
          readers[i] = detail::output_reader(raw[i].addr, ptrs[i]);
          checked[i] = detail::sampled_output_reader(raw[i].addr, ptrs[i], t.spec.check_elements);
        }
      std::vector<std::function<void(std::vector<double>&)>> used;
      std::vector<size_t> output_counts;
      // Every output is poisoned (0xFF bytes) before a checked run; those that are not restored
      // also before the host reference reads them: their earlier contents mean nothing (and may
      // never have been written).
      std::vector<std::pair<uint64_t, size_t>> buffers, unrestored;
      auto poison = [](const std::vector<std::pair<uint64_t, size_t>>& bs) {
        for (const auto& [addr, size] : bs) Device::current().fill_bytes(addr, 0xFF, size);
      };
      tune::Tolerance tol{0, 0};
      for (size_t i : t.output_index) {
        if (!readers[i])
          throw CompileError({}, "kernel '" + name_ + "': outputs parameter '" + param_names_[i] +
                                     "' must be passed as an Array, or as a DevicePtr with a size in "
                                     "Autotune::output_sizes (to be read back)");
        used.push_back(checked[i]);
        output_counts.push_back(ptrs[i].count);
        buffers.emplace_back(raw[i].addr, ptrs[i].bytes());
        if (std::find(t.restore_index.begin(), t.restore_index.end(), i) == t.restore_index.end())
          unrestored.push_back(buffers.back());
        const tune::Tolerance d = tune::default_tolerance(ptrs[i].scalar);
        tol.rtol = std::max(tol.rtol, d.rtol);
        tol.atol = std::max(tol.atol, d.atol);
      }
      p.output = [used] {
        std::vector<double> out;
        for (const auto& r : used) r(out);
        return out;
      };
      p.poison = [buffers, poison] { poison(buffers); };
      p.rtol = t.spec.rtol.value_or(tol.rtol);
      p.atol = t.spec.atol.value_or(tol.atol);
      if (t.spec.reference) {
        std::vector<std::string> names(kNumParams);
        for (size_t i = 0; i < kNumParams; ++i) names[i] = param_name(i);
        p.reference = [readers, raw, names, unrestored, poison, ref = t.spec.reference, output_counts,
                       max = t.spec.check_elements] {
          poison(unrestored);
          tune::HostArgs h;
          for (size_t i = 0; i < kNumParams; ++i) {
            if (raw[i].kind == RawArg::Pointer) {
              std::optional<std::vector<double>> values;
              if (readers[i]) readers[i](values.emplace());
              h.add_array(names[i], std::move(values));
            } else if (raw[i].kind == RawArg::Int) {
              h.add_integer(names[i], raw[i].i);
            } else {
              h.add_floating(names[i], raw[i].f);
            }
          }
          return tune::Expected{detail::sampled_reference(ref(h), output_counts, max), {}};
        };
      }
    }
    return p;
  }

  std::string name_;
  Fn fn_;
  std::vector<std::string> param_names_;
  Meta defaults_;
  std::mutex mu_;
  std::vector<Variant> variants_;
  std::unique_ptr<Tuning> tuning_;
};

template <class... A>
Kernel(std::string, void (*)(A...), std::vector<std::string> = {}, Meta = {}) -> Kernel<A...>;
template <class... A>
Kernel(std::string, void (*)(A...), std::vector<std::string>, Meta, tune::Autotune) -> Kernel<A...>;

}  // namespace tessel::jit
