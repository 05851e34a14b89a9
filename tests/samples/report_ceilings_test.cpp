// The report's tensor-core ceilings, size labels, shared config-time scale and structured JSON:
// results JSON in the new form (configs, keys and sizes as objects) round trip, the old form
// (tests/cli/tune_results.json) still reads, and malformed fields fail naming what is wrong.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/report/report_json.hpp"
#include "tessel/report/report_svg.hpp"
#include "tessel/report/report_table.hpp"

using namespace tessel::samples::report;

namespace {

ConfigRow ok(std::string config, double ms) {
  ConfigRow r;
  r.config = std::move(config);
  r.median_ms = ms;
  r.min_ms = ms * 0.98;
  r.max_ms = ms * 1.03;
  r.reps = 10;
  return r;
}

SizeResult size(std::string label, std::string key, double bytes, double flops, std::vector<ConfigRow> rows,
                std::string dflt) {
  SizeResult s;
  s.size = std::move(label);
  s.key = std::move(key);
  s.bytes = bytes;
  s.flops = flops;
  s.configs = std::move(rows);
  rank_rows(s.configs);
  s.best = s.best_row() ? s.best_row()->config : "";
  s.default_config = std::move(dflt);
  return s;
}

SizeResult matmul_size(int64_t n, double ms, const std::string& sig = "f16,f16,f16") {
  const std::string tile = "BLOCK_K=64 BLOCK_M=128 BLOCK_N=256 num_warps=8 num_stages=4";
  const std::string dflt = "BLOCK_K=32 BLOCK_M=64 BLOCK_N=64 num_warps=4 num_stages=1";
  const double d = static_cast<double>(n);
  return size(fmt::format("M={0},N={0},K={0}", n), fmt::format("M={0},N={0},K={0};sig={1}", n, sig), 6 * d * d,
              2 * d * d * d, {ok(tile, ms), ok(dflt, ms * 2.5)}, dflt);
}

// A device with f16, bf16 and tf32 tensor ceilings; add, matmul (f16) and matmul_f32 (tf32).
Results with_ceilings() {
  Results r;
  r.device = "GPU: Test Card (sm_90)";
  r.roofline = {4000, 60000, {{"f16", 700000}, {"bf16", 690000}, {"tf32", 350000}}};
  const std::string d = "BLOCK=1024 num_warps=4 num_stages=1";
  const double n1 = 1 << 20, n2 = 1 << 26;
  r.kernels.push_back({"add", "add", true,
                       {size("n=1048576", "n=1048576;sig=f32,f32,f32", 12 * n1, n1, {ok(d, 0.0105)}, d),
                        size("n=67108864", "n=67108864;sig=f32,f32,f32", 12 * n2, n2,
                             {ok(d, 0.27), ok("BLOCK=2048 num_warps=8 num_stages=1", 0.28)}, d)}});
  r.kernels.push_back({"matmul", "matmul", true, {matmul_size(1024, 0.006), matmul_size(4096, 0.25), matmul_size(8192, 1.9)}});
  r.kernels.push_back({"matmul_f32", "matmul_f32", true, {matmul_size(4096, 0.6, "f32,f32,f32")}});
  return r;
}

// Each <text ...class="CLS"...>TEXT</text> of the document.
std::vector<std::string> texts_of_class(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::string needle = "class=\"" + cls + "\"";
  for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) {
    const size_t open = svg.rfind('<', at);
    if (svg.compare(open, 5, "<text") != 0) continue;
    const size_t gt = svg.find('>', at), end = svg.find("</text>", gt);
    out.push_back(svg.substr(gt + 1, end - gt - 1));
  }
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& text) {
  try {
    results_from_json(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a matmul is measured against its dtype's tensor ceiling") {
  Results r = with_ceilings();
  const Roofline& roof = r.roofline;
  CHECK(roof.compute_for("f16") == 700000);
  CHECK(roof.compute_for("tf32") == 350000);
  CHECK(roof.compute_for("") == 60000);
  CHECK(roof.compute_for("i8") == 60000);  // not measured: the FMA roof
  CHECK(roof.ridge("f16") == doctest::Approx(175));
  CHECK(roof.attainable_gflops(1e4, "bf16") == 690000);
  CHECK(roof.attainable_gflops(10, "bf16") == 40000);  // bandwidth-bound below the ridge

  const SizeResult& mm = r.kernels[1].sizes[2];  // 8192^3 in 1.9 ms
  CHECK(dot_dtype_of(mm) == "f16");
  CHECK(dot_dtype_of(r.kernels[2].sizes[0]) == "tf32");
  CHECK(dot_dtype_of(r.kernels[0].sizes[0]).empty());
  SizeResult exact = r.kernels[2].sizes[0];
  exact.configs[0].config += " ALLOW_TF32=0";  // not canonical text, but the flag is what counts
  CHECK(dot_dtype_of(exact).empty());
  SizeResult marked = r.kernels[0].sizes[0];
  marked.dot_dtype = "bf16";  // an explicit dtype wins over the key
  CHECK(dot_dtype_of(marked) == "bf16");

  const double achieved = gflops(mm.flops, 1.9);
  CHECK(roofline_fraction(roof, mm.bytes, mm.flops, 1.9, "f16") == doctest::Approx(achieved / 700000));
  CHECK(roofline_fraction(roof, mm.bytes, mm.flops, 1.9) == doctest::Approx(achieved / 60000));
  const std::string table = format_table(mm, roof);
  CHECK(table.find(fmt::format("{:.1f}%", 100 * achieved / 700000)) != std::string::npos);
  CHECK(table.find(fmt::format("{:.1f}%", 100 * achieved / 60000)) == std::string::npos);
}

TEST_CASE("the SVG draws a tensor ceiling per dtype and labels points with their sizes") {
  Results r = with_ceilings();
  const std::string svg = render_svg(r);
  CHECK(svg.find("nan") == std::string::npos);
  for (const char* dt : {"f16", "bf16", "tf32"})
    CHECK(count(svg, fmt::format(R"(class="tensor-ceiling" data-dtype="{}")", dt)) == 1);
  CHECK(count(svg, "class=\"ceiling\"") == 1);  // the FMA roof stays
  // Every tensor ceiling is named with its measured value in the legend, and labelled at its
  // line where a label fits (here, each does).
  std::string ceiling_text, legend;
  for (const auto& t : texts_of_class(svg, "tensor-ceiling-label")) ceiling_text += t + "\n";
  for (const auto& t : texts_of_class(svg, "legend-note")) legend += t + "\n";
  for (const char* v : {"f16 tensor cores 700.0 TFLOP/s", "bf16 tensor cores 690.0 TFLOP/s", "tf32 tensor cores 350.0 TFLOP/s"})
    CHECK(ceiling_text.find(v) != std::string::npos);
  for (const char* v : {"f16 tensor: a dot, 700.0 TFLOP/s", "bf16 tensor: a dot, 690.0 TFLOP/s", "tf32 tensor: a dot, 350.0 TFLOP/s"})
    CHECK(legend.find(v) != std::string::npos);
  // Matmul points carry their dtype, and their tooltip the % of that roof.
  CHECK(count(svg, R"(data-kernel="matmul" data-size="M=8192,N=8192,K=8192" data-dtype="f16")") == 1);
  CHECK(count(svg, R"(data-kernel="matmul_f32" data-size="M=4096,N=4096,K=4096" data-dtype="tf32")") == 1);
  const double pct = 100 * gflops(2.0 * 8192 * 8192 * 8192, 1.9) / 700000;
  CHECK(svg.find(fmt::format("{:.0f}% of the f16 tensor-core roof", pct)) != std::string::npos);
  CHECK(svg.find("of the FMA roof") != std::string::npos);  // add
  // Size labels: the points here are apart, so each gets one.
  const auto sizes = texts_of_class(svg, "size-label");
  for (const char* s : {"1M", "64M", "1024^3", "4096^3", "8192^3"})
    CHECK(std::find(sizes.begin(), sizes.end(), s) != sizes.end());
  CHECK(sizes.size() == 6);
  CHECK(svg == render_svg(r));  // deterministic
}

TEST_CASE("config-time panels share one y scale") {
  Results r = with_ceilings();  // matmul's default is 2.5x its best: every panel goes to 3x
  const std::string svg = render_svg(r);
  std::vector<std::string> panels;
  for (size_t at = svg.find("class=\"kernel-panel\""); at != std::string::npos;
       at = svg.find("class=\"kernel-panel\"", at + 1))
    panels.push_back(svg.substr(at, svg.find("</g>", at) - at));
  REQUIRE(panels.size() == 3);
  for (const auto& p : panels) {
    CAPTURE(p.substr(0, 60));
    CHECK(p.find(">3x</text>") != std::string::npos);
  }
  CHECK(config_time_top(r.kernels) == 3.0);
  CHECK(config_time_top({r.kernels[0]}) == 1.1);  // add alone: 0.28 / 0.27
}

TEST_CASE("results JSON: configs, keys and sizes are objects, and round trip") {
  Results r = with_ceilings();
  r.kernels[0].sizes[0].configs.push_back(ConfigRow{"BLOCK=8192 num_warps=1 num_stages=1", "compile error", 0, 0, 0,
                                                    0, "too many registers"});
  const std::string text = results_to_json(r);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["format"] == 2);
  CHECK(j["roofline"]["tensor_gflops"]["bf16"] == 690000);
  const auto& add = j["kernels"][0]["sizes"][0];
  CHECK(add["size"] == nlohmann::json{{"n", 1048576}});
  CHECK(add["key"]["n"] == 1048576);
  CHECK(add["key"]["sig"] == nlohmann::json::array({"f32", "f32", "f32"}));
  CHECK(add["configs"][0]["config"]["meta"]["BLOCK"] == 1024);
  CHECK(add["configs"][0]["config"]["num_warps"] == 4);
  CHECK(add["configs"][0]["config"]["num_stages"] == 1);
  CHECK(add["best"]["meta"]["BLOCK"] == 1024);
  CHECK(add["dot_dtype"] == "");
  const auto& mm = j["kernels"][1]["sizes"][2];
  CHECK(mm["size"]["K"] == 8192);
  CHECK(mm["dot_dtype"] == "f16");
  CHECK(mm["configs"][0]["config"]["meta"]["BLOCK_N"] == 256);
  CHECK(text.find("\"BLOCK=") == std::string::npos);  // no config as text
  CHECK(text.find("M=8192") == std::string::npos);   // no key or size as text

  Results back = results_from_json(text);
  CHECK(back.roofline.tensor == r.roofline.tensor);
  REQUIRE(back.kernels.size() == r.kernels.size());
  for (size_t k = 0; k < r.kernels.size(); ++k)
    for (size_t s = 0; s < r.kernels[k].sizes.size(); ++s) {
      const SizeResult &a = r.kernels[k].sizes[s], &b = back.kernels[k].sizes[s];
      CHECK(a.size == b.size);
      CHECK(a.key == b.key);
      CHECK(a.best == b.best);
      CHECK(a.default_config == b.default_config);
      CHECK(dot_dtype_of(a) == b.dot_dtype);
      REQUIRE(a.configs.size() == b.configs.size());
      for (size_t c = 0; c < a.configs.size(); ++c) {
        CHECK(a.configs[c].config == b.configs[c].config);
        CHECK(a.configs[c].status == b.configs[c].status);
        CHECK(a.configs[c].median_ms == b.configs[c].median_ms);
        CHECK(a.configs[c].reason == b.configs[c].reason);
      }
    }
  CHECK(results_to_json(back) == text);
  // Options beyond num_warps / num_stages come back too.
  SizeResult& m = r.kernels[1].sizes[0];
  m.configs[0].config = "BLOCK_K=64 BLOCK_M=128 BLOCK_N=128 num_warps=4 num_stages=3 programs_per_cta=2 "
                        "warp_specialize=1 tma=1";
  CHECK(results_from_json(results_to_json(r)).kernels[1].sizes[0].configs[0].config == m.configs[0].config);
}

TEST_CASE("results JSON: the old form with configs and keys as text still reads") {
  // tests/data -> tests/cli/tune_results.json
  const auto file = std::filesystem::path(TESSEL_TEST_DATA_DIR).parent_path() / "cli" / "tune_results.json";
  const std::string old_text = read(file);
  REQUIRE(old_text.find("\"config\": \"BLOCK=") != std::string::npos);  // it is the old form
  Results r = results_from_json(old_text);
  REQUIRE(r.kernels.size() == 5);
  const SizeResult& s = r.kernels[0].sizes[0];
  CHECK(s.size == "n=1048576");
  CHECK(s.key == "n=1048576;sig=f32,f32,f32");
  CHECK(s.best == "BLOCK=2048 num_warps=8 num_stages=1");
  CHECK(s.configs[0].config == "BLOCK=2048 num_warps=8 num_stages=1");
  CHECK(s.configs[2].reason == "synthetic: too many registers");
  CHECK(r.kernels[3].sizes[0].size == "rows=8192,cols=4096");
  CHECK(r.roofline.tensor.empty());
  // Rewritten in the new form, it reads back to the same results.
  const std::string now = results_to_json(r);
  CHECK(now.find("\"config\": \"") == std::string::npos);
  CHECK(results_to_json(results_from_json(now)) == now);
}

TEST_CASE("results JSON: malformed structured fields fail with a message naming them") {
  auto doc = [](const std::string& config, const std::string& extra = "") {
    return fmt::format(R"({{{}"kernels": [{{"name": "add", "sizes": [{{"size": {{"n": 1024}}, "bytes": 1, "flops": 1,
        "configs": [{{"config": {}, "status": "ok", "median_ms": 1}}]}}]}}]}})",
                       extra, config);
  };
  CHECK(results_from_json(doc(R"({"meta": {"BLOCK": 64}, "num_warps": 2})")).kernels[0].sizes[0].configs[0].config ==
        "BLOCK=64 num_warps=2 num_stages=1");
  CHECK(error_of(doc(R"({"meta": {"BLOCK": 64}, "num_warps": 3})")).find("add n=1024: config") != std::string::npos);
  CHECK(error_of(doc(R"({"meta": {"BLOCK": 64}, "num_warps": 3})")).find("is not a valid config") != std::string::npos);
  CHECK(error_of(doc(R"({"meta": {"BLOCK": "big"}})")).find("non-integer 'BLOCK'") != std::string::npos);
  CHECK(error_of(doc(R"({"meta": [1]})")).find("'meta' that is not an object") != std::string::npos);
  CHECK(error_of(doc("42")).find("neither an object nor a string") != std::string::npos);
  CHECK(error_of(doc(R"("x")", R"("format": 3, )")).find("format 3 is not one this tessel reads") != std::string::npos);
  CHECK(error_of(R"({"kernels": [{"name": "a", "sizes": [{"size": 5, "bytes": 1, "flops": 1, "configs": []}]}]})")
            .find("size 5 is neither") != std::string::npos);
  CHECK(error_of(R"({"roofline": {"tensor_gflops": {"f16": "fast"}}, "kernels": []})")
            .find("roofline.tensor_gflops.f16 is not a number") != std::string::npos);
  CHECK(error_of(R"({"kernels": [{"name": "a", "sizes": [{"size": "n=1", "key": {"n": 1, "sig": "f32"},
      "bytes": 1, "flops": 1, "configs": []}]}]})")
            .find("'sig' that is not an array") != std::string::npos);
}

TEST_CASE("format_ceilings names every measured ceiling on one line") {
  Results r = with_ceilings();
  CHECK(format_ceilings(r.roofline) ==
        "bandwidth 4000 GB/s, compute 60 TFLOP/s, tensor cores f16 700 bf16 690 tf32 350 TFLOP/s");
  r.roofline.tensor.clear();
  CHECK(format_ceilings(r.roofline) == "bandwidth 4000 GB/s, compute 60 TFLOP/s");
}

TEST_CASE("a crowded roofline's point, size, fusion and ceiling labels never overlap") {
  Results r = with_ceilings();
  // Twelve kernels of eight nearby sizes each: far more labels than room.
  for (int k = 0; k < 12; ++k) {
    KernelResult kr{fmt::format("kernel{}", k), fmt::format("g{}", k % 4), k % 3 != 2, {}};
    for (int s = 0; s < 8; ++s) {
      const double n = 1e6 * (1 + s * 0.3);
      kr.sizes.push_back(size(fmt::format("n={}", static_cast<int64_t>(n)), "", 12 * n, (1 + k * 0.2) * n,
                              {ok("BLOCK=1024 num_warps=4 num_stages=1", 0.01 * (1 + s * 0.25) * (1 + 0.05 * k))},
                              "BLOCK=1024 num_warps=4 num_stages=1"));
    }
    r.kernels.push_back(std::move(kr));
  }
  const std::string svg = render_svg(r);
  // The boxes LabelPlacer assumes for 11 px text: 6.2 px a character, 12 px tall.
  struct B {
    double x0, y0, x1, y1;
    std::string text;
  };
  std::vector<B> boxes;
  for (const char* cls : {"point-label", "size-label", "fusion-label", "tensor-ceiling-label"}) {
    const std::string needle = std::string("class=\"") + cls + "\"";
    for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) {
      const size_t open = svg.rfind("<text", at), gt = svg.find('>', at);
      const std::string tag = svg.substr(open, gt - open);
      auto attr = [&](const std::string& name) {
        const size_t p = tag.find(" " + name + "=\"") + name.size() + 3;
        return tag.substr(p, tag.find('"', p) - p);
      };
      const std::string text = svg.substr(gt + 1, svg.find("</text>", gt) - gt - 1);
      const double w = 6.2 * static_cast<double>(text.size()), x = std::stod(attr("x")), y = std::stod(attr("y"));
      const std::string anchor = attr("text-anchor");
      const double x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
      boxes.push_back({x0, y - 9, x0 + w, y + 3, text});
    }
  }
  CHECK(boxes.size() > 20);
  CHECK(count(svg, "class=\"size-label\"") < 12 * 8 + 5);  // crowded: some were left out
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      const B &a = boxes[i], &b = boxes[j];
      CAPTURE(a.text);
      CAPTURE(b.text);
      // 0.1 px of slack for the coordinates' one decimal
      CHECK_FALSE((a.x0 + 0.1 < b.x1 && b.x0 + 0.1 < a.x1 && a.y0 + 0.1 < b.y1 && b.y0 + 0.1 < a.y1));
    }
}
