// Bundle: ahead-of-time compiled kernels loaded from disk and launched with typed arguments.
#pragma once
#include <cuda.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessel/runtime/bundle_files.hpp"
#include "tessel/runtime/bundle_manifest.hpp"
#include "tessel/runtime/bundle_select.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::rt {

class Module;

namespace detail {
template <class T>
inline constexpr bool kDependentFalse = false;

// The parameter kind a launch argument of C++ type T passes.
template <class T>
constexpr ParamKind param_kind_of() {
  if constexpr (std::is_same_v<T, CUdeviceptr>) return ParamKind::Ptr;
  else if constexpr (std::is_same_v<T, int32_t>) return ParamKind::I32;
  else if constexpr (std::is_same_v<T, int64_t>) return ParamKind::I64;
  else if constexpr (std::is_same_v<T, float>) return ParamKind::F32;
  else if constexpr (std::is_same_v<T, double>) return ParamKind::F64;
  else {
    static_assert(kDependentFalse<T>,
                  "bundle launch arguments must be exactly CUdeviceptr (pointers), int32_t, int64_t, float or double "
                  "(cast others, e.g. static_cast<int64_t>(n))");
    return ParamKind::Ptr;
  }
}

template <class T>
constexpr int64_t int_value(T v) {
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) return v;
  else return 0;
}
}  // namespace detail

// One kernel of a bundle. Launches pick the config (tuned table, else the default), then the
// most specialised variant whose assumptions the arguments satisfy and whose image runs on the
// device, load that variant's module on first use (cubin for the device's sm preferred, PTX
// otherwise), and call cuLaunchKernel with the config's threads per CTA (32 * num_warps per
// program, plus the producer warpgroup when the image has one), the image's tensor maps (TMA
// copies; encoded from the arguments at each launch) passed after the arguments.
//
// Launches run in the CUDA context current on the calling thread, and may come from several
// threads and several contexts (one opened bundle serving every GPU of a process). Each context
// gets its own state on its first launch there: its device's sm, the image chosen per variant
// for it, and the modules, loaded once per (variant, context). A launch finds its context's
// state by cuCtxGetCurrent and a scan of at most kMaxContexts entries, without locks.
class BundleKernel {
 public:
  // The contexts one kernel serves; a launch in one more throws BundleError
  // (CUDA_ERROR_NOT_SUPPORTED). Open the bundle again to serve more.
  static constexpr int kMaxContexts = 16;

  BundleKernel(const BundleKernel&) = delete;
  BundleKernel& operator=(const BundleKernel&) = delete;
  ~BundleKernel();

  const BundleKernelInfo& info() const { return *info_; }
  const std::string& name() const { return info_->name; }
  // The default config, and one of its meta-parameters (e.g. meta("BLOCK") to size a grid);
  // BundleError (CUDA_ERROR_NOT_FOUND) when the kernel has no such meta-parameter.
  const BundleConfig& default_config() const { return info_->configs[default_config_]; }
  int64_t meta(std::string_view name) const;

  // Launches on `stream` (nullptr: the legacy default stream) over `grid` program ids. The
  // arguments' C++ types must be the parameters' kinds in order: CUdeviceptr for ptr, int32_t,
  // int64_t, float, double; a mismatch throws BundleError (CUDA_ERROR_INVALID_VALUE) naming the
  // parameter. Per launch: one compare of the argument kinds, the divisibility facts,
  // cuCtxGetCurrent and a scan of the bound contexts, a scan of at most a few variants and
  // cuLaunchKernel — no allocation, no locks and no strings. The first launch in a context (and
  // the first of each variant there) reads and checks the image and loads its module.
  // Driver failures throw CudaError; a bundle problem (corrupt image, nothing that runs on
  // this GPU) throws BundleError.
  template <class... A>
  void launch(CUstream stream, Dim3 grid, A... args) {
    static constexpr std::array<ParamKind, sizeof...(A)> kinds{detail::param_kind_of<A>()...};
    std::array<void*, sizeof...(A) + 1> params{static_cast<void*>(&args)..., nullptr};
    std::array<int64_t, sizeof...(A) + 1> ints{detail::int_value(args)..., 0};
    launch_packed(stream, grid, kinds.data(), kinds.size(), arg_facts(args...), ints.data(), params.data());
  }

  // launch(), returning the error's CUresult instead of throwing (CUDA_SUCCESS when launched);
  // last_bundle_error() then says why. For C-style callers such as exported launchers.
  template <class... A>
  CUresult try_launch(CUstream stream, Dim3 grid, A... args) noexcept {
    try {
      launch(stream, grid, args...);
      return CUDA_SUCCESS;
    } catch (...) {
      return record_current_exception();
    }
  }

  // The variant (index into info().variants) a launch with these arguments runs: among the
  // variants whose image runs on the current context's device once a launch there bound it,
  // else (no driver, no current context, or none bound yet) among all; -1 when none. Needs no
  // GPU.
  template <class... A>
  int variant_for(const A&... args) const {
    std::array<int64_t, sizeof...(A) + 1> ints{detail::int_value(args)..., 0};
    return select(arg_facts(args...), ints.data(), current_state_if_bound());
  }

  // The config a launch with these arguments uses (the tuned table's choice for its key
  // arguments, else the default): what to size the grid by when configs differ in BLOCK.
  template <class... A>
  const BundleConfig& config_for(const A&... args) const {
    std::array<int64_t, sizeof...(A) + 1> ints{detail::int_value(args)..., 0};
    return info_->configs[config_index(ints.data())];
  }

  // Loads, into the current context, the module of every variant that runs on its device now,
  // so no launch there pays for it later. Other contexts load on their own first launches.
  void load_all();

  // What a loaded variant runs in the current context; nullopt until the variant is loaded there
  // (or with no current context).
  struct LoadedVariant {
    std::string variant;
    std::string file;     // the image loaded
    ImageKind kind = ImageKind::Cubin;
    std::string arch;
    std::string note;     // e.g. why a cubin was rejected and PTX used instead
    double load_ms = 0;   // reading, checking and loading the image
  };
  std::optional<LoadedVariant> loaded(size_t variant) const;

 private:
  friend class Bundle;
  BundleKernel(const BundleFiles& files, const BundleKernelInfo& info);

  void launch_packed(CUstream stream, Dim3 grid, const ParamKind* kinds, size_t n, ArgFacts facts,
                     const int64_t* ints, void** params);
  int config_index(const int64_t* ints) const;
  struct VariantState;
  struct ContextState;
  // `c` null: no context bound, choose among all variants.
  int select(ArgFacts facts, const int64_t* ints, const ContextState* c) const;
  // The current context's state, bound on its first launch there (throws without a context).
  ContextState& current_state();
  // The current context's state if one is bound; null otherwise (no driver, no context). Never throws.
  const ContextState* current_state_if_bound() const noexcept;
  ContextState* find_state(CUcontext ctx) const noexcept;
  ContextState& bind_context(CUcontext ctx);
  void init_variant_states(VariantState* states) const;
  static void use_image(VariantState& s, const BundleImage& im);
  CUfunction load_variant(ContextState& c, int v);
  [[noreturn]] void throw_signature_mismatch(const ParamKind* kinds, size_t n) const;
  [[noreturn]] void throw_no_variant(const ContextState& c) const;
  [[noreturn]] void throw_launch_failed(CUresult r, const ContextState& c, int v, Dim3 grid) const;
  [[noreturn]] void throw_grid_not_multiple(const ContextState& c, int v, Dim3 grid) const;
  static CUresult record_current_exception() noexcept;

  const BundleFiles* files_;
  const BundleKernelInfo* info_;
  std::vector<ParamKind> kinds_;
  int default_config_ = 0;
  std::vector<int> key_params_;                // tuned key: parameter indices
  std::vector<int> rule_config_;               // tuned rule -> config index
  std::vector<std::vector<uint16_t>> order_;   // per config: variants to try, most specialised first
  // Per context, in binding order: contexts_[0, n_contexts_) are published (written before the
  // count, with release) and never change or go away until the kernel does.
  std::array<std::atomic<ContextState*>, kMaxContexts> contexts_{};
  std::atomic<int> n_contexts_{0};
  mutable std::mutex mu_;                      // guards binding and loading (the slow paths)
};

// A bundle opened from a directory, a single packed file, or the packed form's bytes in memory.
// Opening reads and validates bundle.json and checks that every image file is present with its
// recorded size; image contents are read and checked against their SHA-256 when a variant is
// first loaded (or all at once by verify()). Nothing here needs a GPU until the first launch.
// A bundle from memory gets exactly the checks of one from a file: only where the bytes come
// from differs.
class Bundle {
 public:
  // BundleError (with what() naming the path and the problem) when the bundle is unusable.
  static Bundle open(const std::filesystem::path& path);

  // The single-file form (`tessel export --pack`, a .tsb) already in memory: embedded in the
  // program (`#embed`, `xxd -i`, `.incbin`, `ld -r -b binary`), received or mapped. `origin`
  // names it in messages and origin(). BundleError naming the origin and the problem when the
  // bytes are not an intact bundle (truncated, wrong header, damaged index or bundle.json); a
  // damaged image is found, as in a file, by verify() or when its variant is first loaded.
  //
  // open() copies the bytes, so the span need only be valid during the call. open_borrowed()
  // does not copy: the bytes must stay valid and unchanged for the Bundle's whole life (and its
  // kernels', which read images from them on first launch) — the case of an array with static
  // storage duration, or a mapping the caller keeps. Borrowing saves a copy of the whole bundle
  // (tens of MB for many kernels and archs); when in doubt, copy.
  //
  // std::byte and unsigned char spans both work: `unsigned char data[] = {...}` (xxd, #embed)
  // converts on its own; a std::string or char buffer goes through std::as_bytes(std::span(s)).
  static Bundle open(std::span<const std::byte> bytes, std::string origin = "<memory>");
  static Bundle open(std::span<const unsigned char> bytes, std::string origin = "<memory>") {
    return open(std::as_bytes(bytes), std::move(origin));
  }
  static Bundle open_borrowed(std::span<const std::byte> bytes, std::string origin = "<memory>");
  static Bundle open_borrowed(std::span<const unsigned char> bytes, std::string origin = "<memory>") {
    return open_borrowed(std::as_bytes(bytes), std::move(origin));
  }

  Bundle(Bundle&&) noexcept;
  Bundle& operator=(Bundle&&) noexcept;
  ~Bundle();

  const BundleManifest& manifest() const;
  const std::string& origin() const;
  bool packed() const;

  // The kernel, or BundleError (CUDA_ERROR_NOT_FOUND) listing the bundle's kernels.
  BundleKernel& kernel(std::string_view name);
  BundleKernel* find(std::string_view name);
  // The kernel, also checking that its signature_string() is `expected_signature`; BundleError
  // (CUDA_ERROR_INVALID_VALUE) naming both when it differs (a launcher made for another bundle).
  BundleKernel& kernel(std::string_view name, std::string_view expected_signature);

  // Reads every image and checks its size and SHA-256; BundleError on the first mismatch.
  void verify() const;

 private:
  struct State;
  explicit Bundle(std::unique_ptr<State> s);
  static Bundle from_files(BundleFiles files);
  std::unique_ptr<State> s_;
};

// The message of the last error a try_launch on this thread returned ("" when none).
const char* last_bundle_error() noexcept;
// The CUresult of an exception thrown by the bundle API (CudaError's and BundleError's own
// codes, CUDA_ERROR_UNKNOWN otherwise), recording its message for last_bundle_error().
CUresult record_bundle_error(const std::exception& e) noexcept;
// Records `message` for last_bundle_error() and returns `code`.
CUresult record_bundle_error(CUresult code, const char* message) noexcept;

}  // namespace tessel::rt
