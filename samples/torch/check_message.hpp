// TESSEL_TORCH_CHECK: TORCH_CHECK with its message built here from strings, integers, doubles,
// sizes and devices, without an iostream. A message built by TORCH_CHECK's own c10::str streams
// numbers through std::ostream inside this library; on a toolchain that links parts of
// libstdc++ into the library (seen on the device image's GCC 13, whose build put
// std::basic_ostream::_M_insert<long> in the .so) that stream crashed on the first number.
#pragma once
#include <c10/core/Device.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace tessel::torch_ext {

inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, std::string_view v) { s += v; }
template <class T>
  requires std::is_integral_v<T>
void append(std::string& s, T v) {
  s += std::to_string(v);
}
inline void append(std::string& s, double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  s += b;
}
inline void append(std::string& s, c10::IntArrayRef v) {  // "[4, 8]", as torch prints sizes
  s += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  s += ']';
}
inline void append(std::string& s, const c10::Device& d) { s += d.str(); }

template <class... A>
std::string message(const A&... a) {
  std::string s;
  (append(s, a), ...);
  return s;
}

}  // namespace tessel::torch_ext

#define TESSEL_TORCH_CHECK(cond, ...) TORCH_CHECK(cond, ::tessel::torch_ext::message(__VA_ARGS__))
