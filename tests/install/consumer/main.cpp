// A user program built against an installed tessel: vector add, checked.
#include <tessel/tessel.hpp>
#include <cstdio>
using namespace tessel::lang;
void add_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}
int main() {
  tessel::jit::Kernel k{"add", &add_kernel};
  std::vector<float> a(1000, 1.5f), b(1000, 2.0f);
  tessel::jit::Array<float> x(a), y(b), o(1000);
  k(tessel::jit::Grid{tessel::jit::cdiv(1000, 256)}, Meta{{"BLOCK", 256}}, x, y, o, 1000);
  auto r = o.download();
  std::printf("%s %g on %s\n", r[999] == 3.5f ? "ok" : "WRONG", r[999], tessel::jit::Device::current().describe().c_str());
  return r[999] == 3.5f ? 0 : 1;
}
