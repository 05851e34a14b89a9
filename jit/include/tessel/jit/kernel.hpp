// Kernel: a traced C++ kernel function, compiled per (meta, specialisation, options), launched.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
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

// The launch form of host argument H for kernel parameter P (checked at compile time).
template <class P, class H>
RawArg to_raw(const H& h) {
  using E = typename P::element;
  if constexpr (lang::ParamTraits<P>::kind == lang::ParamKind::Pointer) {
    if constexpr (IsArray<H>::value) {
      static_assert(std::is_same_v<typename E::host, typename std::remove_cvref_t<decltype(h.download())>::value_type>,
                    "kernel argument: Array element type does not match the Ptr<T> parameter");
      return RawArg::pointer(h.address());
    } else if constexpr (IsDevicePtr<H>::value) {
      static_assert(std::is_same_v<H, DevicePtr<typename E::host>>,
                    "kernel argument: DevicePtr element type does not match the Ptr<T> parameter");
      return RawArg::pointer(h.addr);
    } else {
      static_assert(IsArray<H>::value, "kernel argument: a Ptr<T> parameter takes an Array<T> or a DevicePtr<T>");
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

// The bytes of an argument's buffer when the launcher knows them (an Array), else 0.
template <class H>
size_t arg_bytes(const H& h) {
  if constexpr (IsArray<H>::value) return h.bytes();
  else return 0;
}

// A reader appending argument h's values to a vector, when it is an Array of numbers (which
// must outlive the reader); null otherwise.
template <class H>
std::function<void(std::vector<double>&)> output_reader(const H& h) {
  if constexpr (IsArray<H>::value) {
    using T = typename std::remove_cvref_t<decltype(h.download())>::value_type;
    if constexpr (std::is_arithmetic_v<T>) {
      return [&h](std::vector<double>& out) {
        for (const T& v : h.download()) out.push_back(static_cast<double>(v));
      };
    }
  }
  return nullptr;
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
    lang::TraceOptions opts{name_, param_names_, std::move(specs)};
    return finish_ir(lang::trace(fn_, effective_meta(meta), opts));
  }

  // Launches on Device::current(); host arguments are checked against the signature.
  template <class... H>
  void operator()(Grid grid, const Meta& meta, const H&... args) {
    launch(grid, meta, CompileOptions{}, args...);
  }

  template <class... H>
  void launch(Grid grid, const Meta& meta, const CompileOptions& opts, const H&... args) {
    static_assert(sizeof...(H) == kNumParams, "wrong number of kernel arguments");
    std::array<RawArg, kNumParams> raw = pack(std::make_index_sequence<kNumParams>{}, args...);
    variant(meta, opts, detail::spec_bits(raw.data(), raw.size())).launch(grid, raw);
  }

  // The compiled variant for these meta-parameters, options and specialisation bits. Safe to
  // call from several threads; compiling happens outside the lock, so the autotuner's workers
  // compile different configs in parallel.
  Executable& variant(const Meta& meta, const CompileOptions& opts, uint64_t specs) {
    {
      std::lock_guard lock(mu_);
      if (Executable* e = find_variant(meta, opts, specs)) return *e;
    }
    auto f = build_ir(meta, detail::specs_from_bits(specs, kNumParams));
    auto exe = Device::current().compile(std::shared_ptr<const ir::Function>(std::move(f)), opts);
    std::lock_guard lock(mu_);
    if (Executable* e = find_variant(meta, opts, specs)) return *e;  // another thread was first
    variants_.push_back({meta, opts, specs, exe});
    return *exe;
  }

  // The variant of a tuning config; std::runtime_error when the autotuning prunes what it
  // compiled to (spills).
  Executable& variant(const tune::Config& c, uint64_t specs) {
    Executable& e = variant(c.meta, c.opts, specs);
    if (tuning_) tune::detail::check_resources(tuning_->spec, e);
    return e;
  }

  // A tuning problem for these arguments (which must outlive it): compile and launch per config
  // with grid_fn(effective meta) as the grid, the key for the arguments' values, reset restoring
  // Autotune::restore buffers (saved now), output reading Autotune::outputs, poison filling them
  // with 0xFF bytes, and reference calling Autotune::reference on the arguments read back then.
  // bytes and flops are left for the caller. CompileError when the kernel has no autotune.
  template <class G, class... H>
  tune::Problem make_problem(G grid_fn, const H&... args) {
    static_assert(sizeof...(H) == kNumParams, "wrong number of kernel arguments");
    Tuning& t = tuning();
    const std::array<RawArg, kNumParams> raw = pack(std::make_index_sequence<kNumParams>{}, args...);
    const uint64_t specs = detail::spec_bits(raw.data(), raw.size());
    tune::Problem p;
    p.kernel = name_;
    p.key = key_string(t, raw);
    p.compile = [this, specs](const tune::Config& c) { variant(c, specs); };
    p.launch = [this, specs, raw, grid_fn](const tune::Config& c) {
      variant(c, specs).launch(grid_fn(effective_meta(c.meta)), raw);
    };
    if (!t.restore_index.empty()) {
      const std::array<size_t, kNumParams> bytes{detail::arg_bytes(args)...};
      auto saved = std::make_shared<tune::detail::SavedBuffers>();
      for (size_t i : t.restore_index) {
        if (bytes[i] == 0)
          throw CompileError({}, "kernel '" + name_ + "': restore parameter '" + param_names_[i] +
                                     "' must be passed as an Array (its size is needed)");
        saved->save(raw[i].addr, bytes[i]);
      }
      p.reset = [saved] { saved->restore(); };
    }
    if (!t.output_index.empty()) {
      const std::array<std::function<void(std::vector<double>&)>, kNumParams> readers{detail::output_reader(args)...};
      std::vector<std::function<void(std::vector<double>&)>> used;
      for (size_t i : t.output_index) {
        if (!readers[i])
          throw CompileError({}, "kernel '" + name_ + "': outputs parameter '" + param_names_[i] +
                                     "' must be passed as an Array of numbers (to be read back)");
        used.push_back(readers[i]);
      }
      p.output = [used] {
        std::vector<double> out;
        for (const auto& r : used) r(out);
        return out;
      };
      const std::array<size_t, kNumParams> bytes{detail::arg_bytes(args)...};
      std::vector<std::pair<uint64_t, size_t>> buffers;
      for (size_t i : t.output_index) buffers.emplace_back(raw[i].addr, bytes[i]);
      p.poison = [buffers] {
        for (const auto& [addr, size] : buffers) Device::current().fill_bytes(addr, 0xFF, size);
      };
      p.rtol = t.spec.rtol;
      p.atol = t.spec.atol;
      if (t.spec.reference) {
        std::vector<std::string> names(kNumParams);
        for (size_t i = 0; i < kNumParams; ++i)
          names[i] = i < param_names_.size() ? param_names_[i] : "arg" + std::to_string(i);
        // Outputs that are not restored are poisoned before the reference reads them, as before
        // every checked run: their earlier contents mean nothing (and may never have been written).
        std::vector<std::pair<uint64_t, size_t>> scratch;
        for (size_t i : t.output_index)
          if (std::find(t.restore_index.begin(), t.restore_index.end(), i) == t.restore_index.end())
            scratch.emplace_back(raw[i].addr, bytes[i]);
        p.reference = [readers, raw, names, scratch, ref = t.spec.reference] {
          for (const auto& [addr, size] : scratch) Device::current().fill_bytes(addr, 0xFF, size);
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
          return tune::Expected{ref(h), {}};
        };
      }
    }
    return p;
  }

  // Launches with the config tuned for these arguments' key: the one chosen earlier in this
  // process, else the Database's for this device, else (on the GPU, TESSEL_AUTOTUNE not 0) the
  // result of tuning now, else the first config. grid_fn(meta) gives the grid for a config's
  // effective meta-parameters. Returns the config launched. Thread-safe; one key is tuned once.
  template <class G, class... H>
  const tune::Config& launch_tuned(G&& grid_fn, const H&... args) {
    static_assert(sizeof...(H) == kNumParams, "wrong number of kernel arguments");
    Tuning& t = tuning();
    const std::array<RawArg, kNumParams> raw = pack(std::make_index_sequence<kNumParams>{}, args...);
    const uint64_t specs = detail::spec_bits(raw.data(), raw.size());
    std::vector<int64_t> buckets(t.key_index.size());
    for (size_t i = 0; i < buckets.size(); ++i)
      buckets[i] = tune::KeySpec::bucket_value(t.spec.key.params[i].bucket, raw[t.key_index[i]].i);
    const Choice* choice = nullptr;
    {
      std::lock_guard lock(t.mu);
      if (auto it = t.choices.find(buckets); it != t.choices.end()) choice = &it->second;
    }
    if (!choice) {
      std::lock_guard tuning_lock(t.tune_mu);  // one tuning at a time: a key is tuned once
      {
        std::lock_guard lock(t.mu);
        if (auto it = t.choices.find(buckets); it != t.choices.end()) choice = &it->second;
      }
      if (!choice) {
        tune::Config c = tune::detail::choose_config(name_, key_string(t, raw), t.spec,
                                                     [&] { return make_problem(grid_fn, args...); });
        Meta m = effective_meta(c.meta);
        std::lock_guard lock(t.mu);
        choice = &t.choices.emplace(buckets, Choice{std::move(c), std::move(m)}).first->second;
      }
    }
    variant(choice->config, specs).launch(grid_fn(choice->meta), raw);
    return choice->config;
  }

 private:
  template <size_t... I, class... H>
  static std::array<RawArg, kNumParams> pack(std::index_sequence<I...>, const H&... args) {
    using Params = std::tuple<A...>;
    return {detail::to_raw<std::remove_cvref_t<std::tuple_element_t<I, Params>>>(args)...};
  }

  struct Variant {
    Meta meta;
    CompileOptions opts;
    uint64_t specs;
    std::shared_ptr<Executable> exe;
  };
  // A config chosen for a key, with its effective meta-parameters (the grid function's input).
  struct Choice {
    tune::Config config;
    Meta meta;
  };
  // The autotuning state: the declaration, its parameters resolved, the choices made.
  struct Tuning {
    tune::Autotune spec;
    std::vector<size_t> key_index, restore_index, output_index;  // parameter positions
    std::string signature;                          // made on first use, under mu
    std::mutex mu;                                  // choices, signature
    std::mutex tune_mu;                             // held while choosing a config
    std::map<std::vector<int64_t>, Choice> choices;  // bucketed key values; nodes are stable
  };

  Executable* find_variant(const Meta& meta, const CompileOptions& opts, uint64_t specs) {
    for (auto& v : variants_)
      if (v.specs == specs && v.opts == opts && v.meta == meta) return v.exe.get();
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

  std::string key_string(Tuning& t, const std::array<RawArg, kNumParams>& raw) {
    std::vector<int64_t> values;
    for (size_t i : t.key_index) values.push_back(raw[i].i);
    std::string sig;
    {
      std::lock_guard lock(t.mu);
      if (t.signature.empty()) t.signature = tune::signature_of(*build_ir({}));
      sig = t.signature;
    }
    return t.spec.key.key_string(values, sig);
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
