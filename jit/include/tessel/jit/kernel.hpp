// Kernel: a traced C++ kernel function, compiled per (meta, specialisation, options), launched.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tessel/jit/build_ir.hpp"
#include "tessel/jit/device.hpp"
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

  // The compiled variant for these meta-parameters, options and specialisation bits.
  Executable& variant(const Meta& meta, const CompileOptions& opts, uint64_t specs) {
    std::lock_guard lock(mu_);
    for (auto& v : variants_)
      if (v.specs == specs && v.opts == opts && v.meta == meta) return *v.exe;
    auto f = build_ir(meta, detail::specs_from_bits(specs, kNumParams));
    auto exe = Device::current().compile(std::shared_ptr<const ir::Function>(std::move(f)), opts);
    variants_.push_back({meta, opts, specs, exe});
    return *exe;
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
  std::string name_;
  Fn fn_;
  std::vector<std::string> param_names_;
  Meta defaults_;
  std::mutex mu_;
  std::vector<Variant> variants_;
};

template <class... A>
Kernel(std::string, void (*)(A...), std::vector<std::string> = {}, Meta = {}) -> Kernel<A...>;

}  // namespace tessel::jit
