// Interpreter: float math (unary functions against known values and IEEE special cases in
// f64/f32/f16/bf16; fma, min/max with NaN, comparisons, select).
#include <bit>
#include <optional>
#include <span>

#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"

using namespace interp_test;

namespace {

// Known values: f(x) at the exact binary value of x (every x below is an f32), computed with
// mpmath at 60 significant digits and stored as a double-double (hi: f(x) rounded to double,
// lo: f(x) - hi rounded to double), so each reference is good to about 2^-106 relative and
// owes nothing to the libm the interpreter calls. Generated once with, per function,
//   mp.mp.dps = 60; hi = float(f(x)); lo = float(f(x) - hi)
// (f: mp.exp, 2**x, mp.log, mp.log(x, 2), mp.sqrt, 1/mp.sqrt, mp.sin, mp.cos, mp.tanh,
// 1/(1 + mp.exp(-x)), mp.erf, mp.floor, mp.ceil).
struct KnownValue {
  double x, hi, lo;
};

const KnownValue kExp[] = {
    {-87.5, 9.982350930569248e-39, -5.412148383948367e-57},
    {-20.0, 2.061153622438558e-09, -4.19755767595054e-26},
    {-5.5, 0.004086771438464067, 3.9646859782158316e-19},
    {-1.0, 0.36787944117144233, -1.2428753672788363e-17},
    {-0.375, 0.6872892787909722, -3.7088003061371396e-17},
    {-0.0078125, 0.9922179382602435, -2.8192701381719798e-18},
    {0.0078125, 1.007843097206448, -6.872774751042842e-17},
    {0.10000000149011612, 1.1051709197224806, 2.101963733395903e-17},
    {0.5, 1.6487212707001282, -4.731568479435833e-17},
    {1.0, 2.718281828459045, 1.4456468917292502e-16},
    {2.5, 12.182493960703473, 2.0334002173348147e-16},
    {10.5, 36315.502674246636, 1.577797006387782e-12},
    {20.0, 485165195.4097903, 4.880277289790406e-10},
    {80.0, 5.54062238439351e+34, 2.1811937023229343e+18},
};
const KnownValue kExp2[] = {
    {-130.0, 7.346839692639297e-40, 0.0},
    {-24.5, 4.2146848510894035e-08, -2.8810779194393496e-24},
    {-3.0, 0.125, 0.0},
    {-0.75, 0.5946035575013605, 1.991007615732823e-17},
    {0.10000000149011612, 1.0717734636432956, -2.818896744788118e-17},
    {0.5, 1.4142135623730951, -9.667293313452913e-17},
    {1.25, 2.378414230005442, 7.964030462931292e-17},
    {7.5, 181.01933598375618, -1.237413544121973e-14},
    {10.0, 1024.0, 0.0},
    {100.0, 1.2676506002282294e+30, 0.0},
};
const KnownValue kLog[] = {
    {9.5367431640625e-07, -13.862943611198906, -1.9720152919197308e-17},
    {0.0078125, -4.852030263919617, -2.7335557943175664e-16},
    {0.10000000149011612, -2.3025850780928847, 1.0605332097861676e-16},
    {0.375, -0.9808292530117262, -4.9262074302888635e-17},
    {0.75, -0.2876820724517809, -2.607160616442564e-17},
    {0.99609375, -0.003913899321136329, -4.2808986230681256e-19},
    {1.00390625, 0.003898640415657323, 1.2541659038304973e-19},
    {1.5, 0.4054651081081644, -2.8811380259626426e-18},
    {2.0, 0.6931471805599453, 2.3190468138462996e-17},
    {3.0, 1.0986122886681098, -9.07129723500153e-17},
    {10.0, 2.302585092994046, -2.1707562233822494e-16},
    {1000.0, 6.907755278982137, 2.369515526854504e-16},
    {65280.0, 11.086440989637989, -3.4148458653537817e-16},
    {1.0000000150474662e+30, 69.07755280486883, 6.5330384361478214e-15},
};
const KnownValue kLog2[] = {
    {9.5367431640625e-07, -20.0, 0.0},
    {0.10000000149011612, -3.321928073389531, -3.9342225455318856e-17},
    {0.75, -0.4150374992788438, -5.224490061390109e-18},
    {0.99609375, -0.005646563141142063, 3.0176743119849426e-19},
    {1.5, 0.5849625007211562, -5.224490061390109e-18},
    {3.0, 1.584962500721156, 1.0579781240112554e-16},
    {10.0, 3.321928094887362, 1.661617516973592e-16},
    {1000.0, 9.965784284662087, 5.439604524201502e-17},
    {1.0000000150474662e+30, 99.65784286832978, -4.951026900138635e-15},
};
const KnownValue kSqrt[] = {
    {9.5367431640625e-07, 0.0009765625, 0.0},
    {0.10000000149011612, 0.3162277683729184, -9.165832921559682e-19},
    {0.25, 0.5, 0.0},
    {0.5, 0.7071067811865476, -4.833646656726457e-17},
    {2.0, 1.4142135623730951, -9.667293313452913e-17},
    {3.0, 1.7320508075688772, 1.0035084221806903e-16},
    {6.25, 2.5, 0.0},
    {10.0, 3.1622776601683795, -1.9078816970716603e-16},
    {1000.0, 31.622776601683793, 7.566535620287155e-16},
    {1.0000000150474662e+30, 1000000007523733.1, -0.043364935314324934},
};
const KnownValue kRsqrt[] = {
    {9.5367431640625e-07, 1024.0, 0.0},
    {0.10000000149011612, 3.162277636607575, -8.584653321719639e-17},
    {0.25, 2.0, 0.0},
    {0.5, 1.4142135623730951, -9.667293313452913e-17},
    {2.0, 0.7071067811865476, -4.833646656726457e-17},
    {3.0, 0.5773502691896257, 3.3450280739356345e-17},
    {4.0, 0.5, 0.0},
    {10.0, 0.31622776601683794, -7.976586724465037e-18},
    {1000.0, 0.03162277660168379, 1.977898889116388e-18},
};
const KnownValue kSin[] = {
    {-2.0, -0.9092974268256817, 1.4020906557816256e-17},
    {0.0078125, 0.0078124205273828315, -4.102755709382617e-19},
    {0.10000000149011612, 0.0998334181294999, -6.282854435941126e-18},
    {0.5, 0.479425538604203, -5.103969860556013e-18},
    {1.0, 0.8414709848078965, 1.776845092935536e-18},
    {1.5, 0.9974949866040544, -1.4558643538840918e-17},
    {3.0, 0.1411200080598672, 8.577269787017502e-18},
    {3.140625, 0.0009676534387822795, 6.480677570817388e-21},
    {10.0, -0.5440211108893698, -3.8949898668223557e-17},
    {30.0, -0.9880316240928618, 3.655935837727403e-17},
};
const KnownValue kCos[] = {
    {-2.0, -0.4161468365471424, 1.990596398957495e-17},
    {0.0078125, 0.9999694825770951, 5.427791428371788e-17},
    {0.10000000149011612, 0.9950041651292624, 7.03602868685074e-18},
    {0.5, 0.8775825618903728, -4.2623149864279997e-17},
    {1.0, 0.5403023058681398, -4.760954612604417e-17},
    {1.5, 0.0707372016677029, 3.683512075225569e-18},
    {1.5703125, 0.0004838267760202487, 1.0366074917108348e-20},
    {3.0, -0.9899924966004454, -4.2060261566099734e-17},
    {10.0, -0.8390715290764524, -1.4147119988953418e-17},
    {30.0, 0.15425144988758405, 3.980208666184612e-18},
};
const KnownValue kTanh[] = {
    {-1.0, -0.7615941559557649, -3.7090214482164924e-17},
    {0.0078125, 0.007812341058161014, 6.570221056747088e-20},
    {0.10000000149011612, 0.09966799610026955, 4.7876803590889225e-18},
    {0.5, 0.46211715726000974, 2.1916603238260928e-17},
    {0.875, 0.703905603936621, 1.126629865834986e-17},
    {2.0, 0.9640275800758169, -1.9413550547557176e-17},
    {5.0, 0.9999092042625951, 2.298523750966507e-17},
    {10.0, 0.9999999958776927, 3.693278996616596e-17},
    {20.0, 1.0, -8.496708510583178e-18},
};
const KnownValue kSigmoid[] = {
    {-80.0, 1.8048513878454153e-35, -1.2636603623764078e-51},
    {-20.0, 2.0611536181902037e-09, -1.573719952885692e-25},
    {-5.0, 0.0066928509242848554, 1.2155506224878793e-19},
    {-1.0, 0.2689414213699951, 1.679727399649845e-17},
    {0.10000000149011612, 0.5249791878505392, 3.4938707244219714e-17},
    {0.5, 0.6224593312018546, -2.855738705812305e-17},
    {1.0, 0.7310585786300049, -1.679727399649845e-17},
    {5.0, 0.9933071490757152, -1.2264619394086437e-17},
    {20.0, 0.9999999979388464, -3.704475624817485e-17},
};
const KnownValue kErf[] = {
    {-1.5, -0.9661051464753108, 3.3867031441680696e-17},
    {0.0078125, 0.008815282895179188, 3.189832538685032e-19},
    {0.10000000149011612, 0.11246291768297051, -3.100002684202315e-20},
    {0.25, 0.27632639016823696, -2.4227076221184163e-17},
    {0.5, 0.5204998778130465, 1.900077467916287e-17},
    {1.0, 0.8427007929497149, -2.4801011789118602e-17},
    {2.0, 0.9953222650189527, 2.20719858329765e-17},
    {3.0, 0.9999779095030014, 5.363397058636269e-17},
    {4.0, 0.9999999845827421, 1.44826531920025e-17},
    {6.0, 1.0, -2.1519736712498913e-17},
};
const KnownValue kFloor[] = {
    {-2.5, -3.0, 0.0},
    {-1.0, -1.0, 0.0},
    {-0.75, -1.0, 0.0},
    {0.25, 0.0, 0.0},
    {1.5, 1.0, 0.0},
    {2.0, 2.0, 0.0},
    {3.75, 3.0, 0.0},
    {-100.5, -101.0, 0.0},
    {8388607.5, 8388607.0, 0.0},
    {-8388607.5, -8388608.0, 0.0},
    {1.0000000150474662e+30, 1.0000000150474662e+30, 0.0},
};
const KnownValue kCeil[] = {
    {-2.5, -2.0, 0.0},
    {-1.0, -1.0, 0.0},
    {-0.375, 0.0, 0.0},
    {0.25, 1.0, 0.0},
    {1.5, 2.0, 0.0},
    {2.0, 2.0, 0.0},
    {3.75, 4.0, 0.0},
    {-100.5, -100.0, 0.0},
    {8388607.5, 8388608.0, 0.0},
    {-8388607.5, -8388607.0, 0.0},
    {1.0000000150474662e+30, 1.0000000150474662e+30, 0.0},
};

struct KnownTable {
  OpKind kind;
  std::span<const KnownValue> values;
  double f64_ulps;  // the bound for f64 results (f32, f16, bf16 must be correctly rounded)
};

// f64 bounds: the C library's exp, exp2, log, log2, sin and cos are within 1 ulp, tanh and erf
// within 2 (glibc's documented bounds); sqrt is correctly rounded; rsqrt = 1/sqrt and sigmoid = 1/(1 + exp(-x))
// round two and three times. floor and ceil are exact.
const KnownTable kTables[] = {
    {OpKind::Exp, kExp, 1},      {OpKind::Exp2, kExp2, 1},       {OpKind::Log, kLog, 1},
    {OpKind::Log2, kLog2, 1},    {OpKind::Sqrt, kSqrt, 0.5},     {OpKind::Rsqrt, kRsqrt, 1.5},
    {OpKind::Sin, kSin, 1},      {OpKind::Cos, kCos, 1},         {OpKind::Tanh, kTanh, 2},
    {OpKind::Sigmoid, kSigmoid, 2}, {OpKind::Erf, kErf, 2},      {OpKind::Floor, kFloor, 0},
    {OpKind::Ceil, kCeil, 0},
};

// A float format by its significand bits (with the implicit one), smallest normal exponent
// and largest finite value.
struct Format {
  Scalar s;
  int precision;
  int emin;
  double max;
};
constexpr Format kF64{Scalar::f64, 53, -1022, 1.7976931348623157e308};
constexpr Format kF32{Scalar::f32, 24, -126, 3.4028234663852886e38};
constexpr Format kF16{Scalar::f16, 11, -14, 65504.0};
constexpr Format kBF16{Scalar::bf16, 8, -126, 3.3895313892515355e38};

// The spacing of the format's values at |v| (the subnormal spacing below the normal range).
long double ulp_in(const Format& f, long double v) {
  int e = 0;
  if (v != 0) {
    std::frexp(std::fabs(v), &e);  // |v| = m 2^e, m in [0.5, 1)
    --e;
  }
  return std::ldexp(1.0L, std::max(e, f.emin) - f.precision + 1);
}

// |got - exact| in ulps of the format at the exact value; a value past the largest finite one
// by half an ulp or more must be an infinity of its sign (else the error is infinite).
double error_ulps(const Format& f, double got, const KnownValue& k) {
  const long double exact = static_cast<long double>(k.hi) + k.lo;
  const double inf = std::numeric_limits<double>::infinity();
  if (std::fabs(exact) >= f.max + ulp_in(f, f.max) / 2) return got == std::copysign(inf, k.hi) ? 0 : inf;
  if (!std::isfinite(got)) return inf;
  return static_cast<double>(std::fabs((static_cast<long double>(got) - k.hi) - k.lo) / ulp_in(f, exact));
}

// f16 and bf16 bits as values, decoded here (not by the interpreter's float_formats).
double f16_value(uint16_t b) {
  const int e = (b >> 10) & 0x1f, m = b & 0x3ff;
  const double mag = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? std::nan("") : INFINITY) : std::ldexp(1024 + m, e - 25);
  return (b & 0x8000) ? -mag : mag;
}
double bf16_value(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// The op over the table's inputs exactly representable in `f`, in format `f`: the outputs as
// doubles, with the inputs used. Inputs are encoded by the interpreter's converters and kept
// only where this file's decoder gives x back.
std::vector<std::pair<KnownValue, double>> run_table(OpKind kind, std::span<const KnownValue> table, const Format& f) {
  std::vector<KnownValue> used;
  std::vector<std::pair<KnownValue, double>> out;
  // (The GPU computes f64 erf with libdevice's __nv_erf, lowering/emit/lower_math.cpp:
  // test_interp_gpu compares it at the f64 bound.)
  Function fn("known");
  build_map_kernel(fn, {f.s}, f.s, [&](Builder& b, const std::vector<Value*>& v) { return b.value(kind, {v[0]}); }, 16);
  if (f.s == Scalar::f64 || f.s == Scalar::f32) {
    std::vector<double> x64;
    std::vector<float> x32;
    for (const auto& k : table) {
      used.push_back(k);
      x64.push_back(k.x);
      x32.push_back(static_cast<float>(k.x));  // exact: every table input is an f32
    }
    if (f.s == Scalar::f64) {
      auto r = run_map<double>(fn, std::vector<std::vector<double>>{x64}, 16);
      for (size_t i = 0; i < used.size(); ++i) out.push_back({used[i], r[i]});
    } else {
      auto r = run_map<float>(fn, std::vector<std::vector<float>>{x32}, 16);
      for (size_t i = 0; i < used.size(); ++i) out.push_back({used[i], r[i]});
    }
    return out;
  }
  auto encode = f.s == Scalar::f16 ? f16_from_double : bf16_from_double;
  auto decode = f.s == Scalar::f16 ? f16_value : bf16_value;
  std::vector<uint16_t> xh;
  for (const auto& k : table) {
    if (decode(encode(k.x)) != k.x) continue;  // not exactly representable in this format
    used.push_back(k);
    xh.push_back(encode(k.x));
  }
  auto r = run_map<uint16_t>(fn, std::vector<std::vector<uint16_t>>{xh}, 16);
  for (size_t i = 0; i < used.size(); ++i) out.push_back({used[i], decode(r[i])});
  return out;
}

}  // namespace

TEST_CASE("every unary float op gives known values: f32, f16, bf16 correctly rounded, f64 within its bound") {
  // f32, f16 and bf16 results are the double result rounded once: within half an ulp of the
  // exact value plus the double's own error (at most 2^-50 relative, 2^-26 of an f32 ulp).
  const double rounded = 0.5 + 0x1p-20;
  for (const auto& t : kTables) {
    CAPTURE(name_of(t.kind));
    for (const Format& f : {kF64, kF32, kF16, kBF16}) {
      CAPTURE(name_of(f.s));
      const double bound = f.s == Scalar::f64 ? t.f64_ulps : rounded;
      auto results = run_table(t.kind, t.values, f);
      CHECK(results.size() >= 5u);  // the table reaches every format
      for (const auto& [k, got] : results) {
        CAPTURE(k.x);
        CAPTURE(got);
        CHECK(error_ulps(f, got, k) <= bound);
      }
    }
  }
}

TEST_CASE("unary float ops at IEEE special values: infinities, NaN, signed zeros, poles") {
  const double inf = INFINITY, nan = std::nan("");
  struct Special {
    OpKind kind;
    double x, want;  // want: compared bit for bit, any NaN for NaN
  };
  const Special cases[] = {
      {OpKind::Exp, -inf, 0.0},       {OpKind::Exp, inf, inf},        {OpKind::Exp, 0.0, 1.0},
      {OpKind::Exp, -0.0, 1.0},       {OpKind::Exp2, -inf, 0.0},      {OpKind::Exp2, 10.0, 1024.0},
      {OpKind::Log, 0.0, -inf},       {OpKind::Log, -0.0, -inf},      {OpKind::Log, 1.0, 0.0},
      {OpKind::Log, -1.0, nan},       {OpKind::Log, inf, inf},        {OpKind::Log2, 8.0, 3.0},
      {OpKind::Log2, 0x1p-20, -20.0}, {OpKind::Log2, -inf, nan},      {OpKind::Sqrt, -0.0, -0.0},
      {OpKind::Sqrt, -1.0, nan},      {OpKind::Sqrt, inf, inf},       {OpKind::Sqrt, 6.25, 2.5},
      {OpKind::Rsqrt, 0.0, inf},      {OpKind::Rsqrt, inf, 0.0},      {OpKind::Rsqrt, 0.25, 2.0},
      {OpKind::Sin, 0.0, 0.0},        {OpKind::Sin, -0.0, -0.0},      {OpKind::Sin, inf, nan},
      {OpKind::Cos, 0.0, 1.0},        {OpKind::Cos, -inf, nan},       {OpKind::Tanh, -0.0, -0.0},
      {OpKind::Tanh, inf, 1.0},       {OpKind::Tanh, -inf, -1.0},     {OpKind::Sigmoid, 0.0, 0.5},
      {OpKind::Sigmoid, inf, 1.0},    {OpKind::Sigmoid, -inf, 0.0},   {OpKind::Erf, -0.0, -0.0},
      {OpKind::Erf, inf, 1.0},        {OpKind::Erf, -inf, -1.0},      {OpKind::Floor, -0.0, -0.0},
      {OpKind::Floor, -0.5, -1.0},    {OpKind::Floor, inf, inf},      {OpKind::Ceil, -0.5, -0.0},
      {OpKind::Ceil, 0.5, 1.0},       {OpKind::Ceil, -inf, -inf},     {OpKind::Floor, nan, nan},
      {OpKind::Exp, nan, nan},        {OpKind::Tanh, nan, nan},       {OpKind::Erf, nan, nan},
  };
  for (const auto& c : cases) {
    CAPTURE(name_of(c.kind));
    CAPTURE(c.x);
    const KnownValue k{c.x, c.want, 0.0};
    for (const Format& f : {kF64, kF32}) {
      CAPTURE(name_of(f.s));
      auto r = run_table(c.kind, std::span<const KnownValue>(&k, 1), f);
      REQUIRE(r.size() == 1);
      const double got = r[0].second;
      if (std::isnan(c.want)) CHECK(std::isnan(got));
      else CHECK(std::bit_cast<uint64_t>(got) == std::bit_cast<uint64_t>(c.want));
    }
  }
}

TEST_CASE("f32 unary ops on random inputs are correctly rounded against long double libm") {
  // long double functions are separate implementations from the double ones the interpreter
  // calls; an f32 result must lie within half an f32 ulp of the long double value (plus 2^-20).
  struct Case {
    OpKind kind;
    long double (*ref)(long double);
    float lo, hi;
  };
  const Case cases[] = {
      {OpKind::Exp, [](long double x) { return std::exp(x); }, -80, 80},
      {OpKind::Exp2, [](long double x) { return std::exp2(x); }, -120, 120},
      {OpKind::Log, [](long double x) { return std::log(x); }, 1e-6f, 1e6f},
      {OpKind::Log2, [](long double x) { return std::log2(x); }, 1e-6f, 1e6f},
      {OpKind::Sqrt, [](long double x) { return std::sqrt(x); }, 0, 1e6f},
      {OpKind::Rsqrt, [](long double x) { return 1.0L / std::sqrt(x); }, 1e-3f, 1e6f},
      {OpKind::Sin, [](long double x) { return std::sin(x); }, -10, 10},
      {OpKind::Cos, [](long double x) { return std::cos(x); }, -10, 10},
      {OpKind::Tanh, [](long double x) { return std::tanh(x); }, -6, 6},
      {OpKind::Sigmoid, [](long double x) { return 1.0L / (1.0L + std::exp(-x)); }, -20, 20},
      {OpKind::Erf, [](long double x) { return std::erf(x); }, -4, 4},
      {OpKind::Floor, [](long double x) { return std::floor(x); }, -1e3f, 1e3f},
      {OpKind::Ceil, [](long double x) { return std::ceil(x); }, -1e3f, 1e3f},
  };
  std::mt19937 rng(2024);
  const int64_t n = 777;
  for (const auto& c : cases) {
    CAPTURE(name_of(c.kind));
    Function f("unary");
    build_map_kernel(f, {Scalar::f32}, Scalar::f32,
                     [&](Builder& b, const std::vector<Value*>& v) { return b.value(c.kind, {v[0]}); }, 128);
    std::uniform_real_distribution<float> dist(c.lo, c.hi);
    std::vector<float> x(n);
    for (auto& e : x) e = dist(rng);
    std::vector<float> out = run_map<float>(f, std::vector<std::vector<float>>{x}, 128);
    int64_t far = 0;
    for (int64_t i = 0; i < n; ++i) {
      const long double want = c.ref(x[i]);
      far += !(std::fabs(out[i] - want) <= (0.5L + 0x1p-20L) * ulp_in(kF32, want));
    }
    CHECK(far == 0);
  }
}

TEST_CASE("f32 binary arithmetic rounds to f32 after each op") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-50.f, 50.f);
  const int64_t n = 513;
  std::vector<float> x(n), y(n);
  for (auto& e : x) e = dist(rng);
  for (auto& e : y) e = dist(rng);
  y[3] = 0.0f;  // x / 0 -> inf, fmod(x, 0) -> NaN
  const std::pair<OpKind, float (*)(float, float)> ops[] = {
      {OpKind::Add, [](float a, float b) { return a + b; }},
      {OpKind::Sub, [](float a, float b) { return a - b; }},
      {OpKind::Mul, [](float a, float b) { return a * b; }},
      {OpKind::Div, [](float a, float b) { return a / b; }},
      {OpKind::Rem, [](float a, float b) { return std::fmod(a, b); }},
      {OpKind::Min, [](float a, float b) { return std::fmin(a, b); }},
      {OpKind::Max, [](float a, float b) { return std::fmax(a, b); }},
  };
  for (const auto& [k, ref] : ops) {
    CAPTURE(name_of(k));
    Function f("bin");
    build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                     [k = k](Builder& b, const std::vector<Value*>& v) { return bin(b, k, v[0], v[1]); }, 64);
    std::vector<float> out = run_map<float>(f, std::vector<std::vector<float>>{x, y}, 64);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float want = ref(x[i], y[i]);
      bad += !(out[i] == want || (std::isnan(out[i]) && std::isnan(want)));
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("min and max propagate NaN; comparisons with NaN are false except cmp_ne") {
  const float nan = std::nanf("");
  std::vector<float> x = {nan, 1.0f, nan, -2.0f, 3.0f};
  std::vector<float> y = {1.0f, nan, nan, 5.0f, 3.0f};
  auto run_bin = [&](OpKind k) {
    Function f("nan");
    build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                     [k](Builder& b, const std::vector<Value*>& v) { return bin(b, k, v[0], v[1]); }, 8);
    return run_map<float>(f, std::vector<std::vector<float>>{x, y}, 8);
  };
  auto mn = run_bin(OpKind::Min), mx = run_bin(OpKind::Max);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::isnan(mn[i]));
    CHECK(std::isnan(mx[i]));
  }
  CHECK(mn[3] == -2.0f);
  CHECK(mx[3] == 5.0f);

  const std::pair<OpKind, bool (*)(float, float)> cmps[] = {
      {OpKind::CmpEq, [](float a, float b) { return a == b; }}, {OpKind::CmpNe, [](float a, float b) { return a != b; }},
      {OpKind::CmpLt, [](float a, float b) { return a < b; }},  {OpKind::CmpLe, [](float a, float b) { return a <= b; }},
      {OpKind::CmpGt, [](float a, float b) { return a > b; }},  {OpKind::CmpGe, [](float a, float b) { return a >= b; }},
  };
  for (const auto& [k, ref] : cmps) {
    CAPTURE(name_of(k));
    Function f("cmp");
    // store select(cmp, 1.0, -1.0) so the i1 result is visible as a float
    build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                     [k = k](Builder& b, const std::vector<Value*>& v) {
                       Type t = v[0]->type;
                       return b.value(OpKind::Select, {bin(b, k, v[0], v[1]), b.const_float(1.0, t),
                                                       b.const_float(-1.0, t)});
                     },
                     8);
    auto out = run_map<float>(f, std::vector<std::vector<float>>{x, y}, 8);
    for (size_t i = 0; i < x.size(); ++i) CHECK(out[i] == (ref(x[i], y[i]) ? 1.0f : -1.0f));
  }
}

TEST_CASE("f32 fma rounds once") {
  // a*b+c where rounding a*b first loses the answer: (1+2^-12)^2 - (1+2^-11) = 2^-24.
  std::vector<float> a = {1.0f + 0x1p-12f, 3.0f, -1.5f};
  std::vector<float> b = {1.0f + 0x1p-12f, 0.1f, 2.25f};
  std::vector<float> c = {-(1.0f + 0x1p-11f), -0.3f, 7.0f};
  Function f("fma");
  build_map_kernel(f, {Scalar::f32, Scalar::f32, Scalar::f32}, Scalar::f32,
                   [](Builder& bb, const std::vector<Value*>& v) { return bb.value(OpKind::Fma, {v[0], v[1], v[2]}); },
                   4);
  auto out = run_map<float>(f, std::vector<std::vector<float>>{a, b, c}, 4);
  CHECK(out[0] == 0x1p-24f);
  for (int i = 0; i < 3; ++i) CHECK(out[i] == std::fma(a[i], b[i], c[i]));
}

TEST_CASE("f16 and bf16 arithmetic round to their format after every op") {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> dist(-300.0, 300.0);
  for (Scalar s : {Scalar::f16, Scalar::bf16}) {
    CAPTURE(name_of(s));
    auto to_bits = s == Scalar::f16 ? f16_from_double : bf16_from_double;
    auto from_bits = s == Scalar::f16 ? f16_to_double : bf16_to_double;
    std::vector<uint16_t> x(300), y(300);
    for (auto& e : x) e = to_bits(dist(rng));
    for (auto& e : y) e = to_bits(dist(rng) / 64);
    // (x * y + x) / y: three roundings, each to the format
    Function f("half");
    build_map_kernel(f, {s, s}, s,
                     [](Builder& b, const std::vector<Value*>& v) {
                       return bin(b, OpKind::Div, bin(b, OpKind::Add, bin(b, OpKind::Mul, v[0], v[1]), v[0]), v[1]);
                     },
                     128);
    auto out = run_map<uint16_t>(f, std::vector<std::vector<uint16_t>>{x, y}, 128);
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double a = from_bits(x[i]), b = from_bits(y[i]);
      double p = from_bits(to_bits(a * b));
      double q = from_bits(to_bits(p + a));
      bad += out[i] != to_bits(q / b);
    }
    CHECK(bad == 0);
  }
}
