// Tracing: runs a kernel function once over symbolic parameters and returns its tile IR.
#pragma once
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tessel/ir/error.hpp"
#include "tessel/lang/params.hpp"
#include "tessel/lang/trace_context.hpp"

namespace tessel::lang {

struct TraceOptions {
  std::string name = "kernel";
  std::vector<std::string> param_names;  // default: arg0, arg1, ...
  std::vector<ir::ParamSpec> specs;      // per non-Meta parameter; default: none
};

namespace detail {
template <class A>
decltype(auto) trace_arg(TraceContext& ctx, const Meta& meta, const TraceOptions& opts, size_t& index) {
  if constexpr (MetaParam<A>) {
    return meta;
  } else {
    using P = std::remove_cvref_t<A>;
    size_t i = index++;
    std::string name = i < opts.param_names.size() ? opts.param_names[i] : "arg" + std::to_string(i);
    ir::ParamSpec spec = i < opts.specs.size() ? opts.specs[i] : ir::ParamSpec{};
    ir::Value* v = ctx.function().add_param(std::move(name), ParamTraits<P>::type(), spec);
    return P(ctx.wrap(v));
  }
}
}  // namespace detail

// Every parameter of a kernel function is a KernelParam (Ptr<T>, Int, Float, ...) or the
// Meta; the IR function has one parameter per KernelParam, in order.
template <class... A>
std::unique_ptr<ir::Function> trace(void (*fn)(A...), const Meta& meta, const TraceOptions& opts = {}) {
  static_assert(((KernelParam<A> || MetaParam<A>) && ...),
                "kernel parameters must be Ptr<T>, Int, Long, Float, Double or const Meta&");
  TraceContext ctx(opts.name);
  ctx.function().meta = meta.values();  // names the PTX entry of each variant
  size_t index = 0;
  // Braced initialisation evaluates left to right, so parameters are numbered in order.
  std::tuple<decltype(detail::trace_arg<A>(ctx, meta, opts, index))...> args{
      detail::trace_arg<A>(ctx, meta, opts, index)...};
  try {
    std::apply(fn, args);
  } catch (const std::exception& e) {
    // The DSL throws only tessel's errors; anything else came from the user's own code (a
    // std::runtime_error of theirs): their error, named by kernel, not a tessel bug.
    if (is_tessel_error(e)) throw;
    throw KernelError(opts.name, e.what());
  }
  ctx.rethrow_deferred();
  return ctx.take_function();
}

// The number of KernelParams of a kernel function (Meta excluded).
template <class... A>
constexpr size_t num_kernel_params(void (*)(A...)) {
  return (size_t{0} + ... + (MetaParam<A> ? 0 : 1));
}

}  // namespace tessel::lang
