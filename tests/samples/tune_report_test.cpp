// The tuning report's pure parts: size parsing, ranking, throughput and roofline arithmetic, the
// table, the progress bar, results JSON round trip and the SVG picture (parsed back).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/report/report_json.hpp"
#include "tessel/report/report_progress.hpp"
#include "tessel/report/report_svg.hpp"
#include "tessel/report/report_table.hpp"
#include "tessel/samples/tunables.hpp"

using namespace tessel::samples;
using namespace tessel::samples::report;

namespace {

// A minimal XML reader: every element with its attributes and direct text, in document order.
// Throws on unbalanced or malformed tags, so parsing is the well-formedness check.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;
};

std::vector<Element> parse_xml(const std::string& s) {
  std::vector<Element> out;
  std::vector<size_t> open;  // indices into out
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '<') {
      size_t j = s.find('<', i);
      if (j == std::string::npos) j = s.size();
      if (!open.empty()) out[open.back()].text += s.substr(i, j - i);
      else if (s.find_first_not_of(" \n\t", i) < j) throw std::runtime_error("text outside the root element");
      i = j;
      continue;
    }
    size_t end = s.find('>', i);
    if (end == std::string::npos) throw std::runtime_error("unterminated tag");
    std::string tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.rfind("?xml", 0) == 0) continue;
    if (tag[0] == '/') {
      if (open.empty() || out[open.back()].name != tag.substr(1)) throw std::runtime_error("mismatched </" + tag + ">");
      open.pop_back();
      continue;
    }
    bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    Element e;
    size_t p = tag.find_first_of(" \n");
    e.name = tag.substr(0, p);
    while (p != std::string::npos && p < tag.size()) {
      p = tag.find_first_not_of(" \n", p);
      if (p == std::string::npos) break;
      size_t eq = tag.find('=', p);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"')
        throw std::runtime_error("malformed attribute in <" + tag + ">");
      size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) throw std::runtime_error("unterminated attribute in <" + tag + ">");
      std::string value = tag.substr(eq + 2, close - eq - 2);
      if (value.find('<') != std::string::npos) throw std::runtime_error("unescaped < in an attribute");
      if (!e.attrs.emplace(tag.substr(p, eq - p), value).second) throw std::runtime_error("attribute given twice");
      p = close + 1;
    }
    out.push_back(std::move(e));
    if (!self_closing) open.push_back(out.size() - 1);
  }
  if (!open.empty()) throw std::runtime_error("unclosed <" + out[open.back()].name + ">");
  return out;
}

std::vector<const Element*> with_class(const std::vector<Element>& els, const std::string& cls) {
  std::vector<const Element*> v;
  for (const auto& e : els)
    if (auto it = e.attrs.find("class"); it != e.attrs.end() && it->second == cls) v.push_back(&e);
  return v;
}

ConfigRow ok_row(std::string config, double median, double spread_ms = 0.01) {
  ConfigRow r;
  r.config = std::move(config);
  r.median_ms = median;
  r.min_ms = median - spread_ms;
  r.max_ms = median + spread_ms;
  r.reps = 20;
  return r;
}

ConfigRow failed_row(std::string config, std::string status, std::string reason) {
  ConfigRow r;
  r.config = std::move(config);
  r.status = std::move(status);
  r.reason = std::move(reason);
  return r;
}

// Synthetic results: a memory-bound add, chain5 fused and unfused, and a compute-heavy probe.
Results synthetic() {
  Results r;
  r.device = "GPU: Test Card <A&B> (sm_90, 132 SMs)";
  r.roofline = {3350, 51200};  // GB/s, GFLOP/s
  auto size = [](std::string label, double bytes, double flops, std::vector<ConfigRow> rows, std::string dflt) {
    SizeResult s;
    s.size = std::move(label);
    s.key = s.size + ";sig=f32,f32,f32";
    s.bytes = bytes;
    s.flops = flops;
    s.configs = std::move(rows);
    rank_rows(s.configs);
    s.best = s.best_row() ? s.best_row()->config : "";
    s.default_config = std::move(dflt);
    return s;
  };
  const std::string d = "BLOCK=1024 num_warps=4 num_stages=1";
  const double n1 = 1 << 20, n2 = 1 << 26;
  r.kernels.push_back({"add", "add", true,
                       {size("n=1048576", 12 * n1, n1, {ok_row(d, 0.0105), ok_row("BLOCK=2048 num_warps=8 num_stages=1", 0.0093)}, d),
                        size("n=67108864", 12 * n2, n2, {ok_row(d, 0.27), ok_row("BLOCK=2048 num_warps=8 num_stages=1", 0.25)}, d)}});
  r.kernels.push_back({"chain5", "chain5", true, {size("n=67108864", 12 * n2, 7 * n2, {ok_row(d, 0.26)}, d)}});
  r.kernels.push_back({"chain5_unfused", "chain5", false,
                       {size("n=67108864", 44 * n2, 7 * n2,
                             {ok_row(d, 0.95), failed_row("BLOCK=8192 num_warps=1 num_stages=1", "compile error", "too many registers")}, d)}});
  r.kernels.push_back({"roofline_fma", "roofline_fma", true, {size("n=16777216", 8.0 * (1 << 24), 1024.0 * (1 << 24), {ok_row(d, 0.4)}, d)}});
  return r;
}

}  // namespace

TEST_CASE("parse_sizes: lists, ROWSxCOLS, suffixes and powers of two") {
  auto s = parse_sizes("1000, 2^20,16M,4k", 1);
  REQUIRE(s.size() == 4);
  CHECK(s[0].dims == std::vector<int64_t>{1000});
  CHECK(s[1].dims == std::vector<int64_t>{1 << 20});
  CHECK(s[2].dims == std::vector<int64_t>{16 << 20});
  CHECK(s[3].dims == std::vector<int64_t>{4096});
  auto m = parse_sizes("8192x4096,3x1000003", 2);
  REQUIRE(m.size() == 2);
  CHECK(m[0].dims == std::vector<int64_t>{8192, 4096});
  CHECK(m[1].dims == std::vector<int64_t>{3, 1000003});
  CHECK(parse_sizes("1G", 1)[0].dims[0] == int64_t{1} << 30);
  CHECK(parse_sizes("2147483647", 1)[0].dims[0] == (int64_t{1} << 31) - 1);
}

TEST_CASE("parse_sizes rejects malformed text with a reason") {
  auto reason = [](const char* text, size_t dims) {
    try {
      parse_sizes(text, dims);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(reason("", 1).find("empty") != std::string::npos);
  CHECK(reason("1M,,2M", 1).find("empty") != std::string::npos);
  CHECK(reason("12ab", 1).find("not an integer") != std::string::npos);
  CHECK(reason("0", 1).find("outside") != std::string::npos);
  CHECK(reason("-5", 1).find("outside") != std::string::npos);
  CHECK(reason("4G", 1).find("larger than 2^31") != std::string::npos);
  CHECK(reason("3^4", 1).find("powers of 2") != std::string::npos);
  CHECK(reason("8192x4096", 1).find("one number") != std::string::npos);
  CHECK(reason("4096", 2).find("2 dimensions") != std::string::npos);
}

TEST_CASE("rank_rows: ok by median, ties by config text, failures last in their order") {
  std::vector<ConfigRow> rows{failed_row("c", "pruned", "p"), ok_row("b", 2.0), ok_row("z", 1.0),
                              failed_row("a", "compile error", "x"), ok_row("a", 2.0)};
  rank_rows(rows);
  std::vector<std::string> order;
  for (const auto& r : rows) order.push_back(r.config + ":" + r.status);
  CHECK(order == std::vector<std::string>{"z:ok", "a:ok", "b:ok", "c:pruned", "a:compile error"});
}

TEST_CASE("throughput and roofline fraction") {
  CHECK(gbs(12e9, 1000) == doctest::Approx(12));
  CHECK(gflops(5e9, 2) == doctest::Approx(2500));
  CHECK(gbs(1, 0) == 0);
  Roofline roof{2000, 40000};
  CHECK(roof.ridge() == doctest::Approx(20));
  CHECK(roof.attainable_gflops(1) == doctest::Approx(2000));
  CHECK(roof.attainable_gflops(100) == doctest::Approx(40000));
  // memory-bound: 1e9 bytes, 1e8 flops in 1 ms -> 100 GFLOP/s of 200 attainable
  CHECK(roofline_fraction(roof, 1e9, 1e8, 1) == doctest::Approx(0.5));
  // compute-bound: 1e6 bytes, 2e10 flops in 1 ms -> 20000 of 40000
  CHECK(roofline_fraction(roof, 1e6, 2e10, 1) == doctest::Approx(0.5));
  // no flops (a copy): the fraction of the bandwidth
  CHECK(roofline_fraction(roof, 1.5e9, 0, 1) == doctest::Approx(0.75));
  CHECK(roofline_fraction(Roofline{}, 1e9, 1e8, 1) == 0);
}

TEST_CASE("format_table ranks, marks the winner and the default, and gives reasons") {
  Results r = synthetic();
  const SizeResult& s = r.kernels[2].sizes[0];  // chain5_unfused: one ok, one compile error
  std::string t = format_table(s, r.roofline);
  CHECK(t.find("rank") != std::string::npos);
  CHECK(t.find("GB/s") != std::string::npos);
  CHECK(t.find("compile error: too many registers") != std::string::npos);
  CHECK(t.find("*   1  BLOCK=1024") != std::string::npos);
  // 44 * 2^26 bytes in 0.95 ms
  CHECK(t.find(fmt::format("{:.1f}", gbs(44.0 * (1 << 26), 0.95))) != std::string::npos);
  const SizeResult& a = r.kernels[0].sizes[0];
  std::string ta = format_table(a, r.roofline);
  size_t winner = ta.find("*   1  BLOCK=2048"), dflt = ta.find("d   2  BLOCK=1024");
  CHECK(winner != std::string::npos);
  CHECK(dflt != std::string::npos);
  CHECK(winner < dflt);
  CHECK(format_ms(0.0105) == "10.5 us");
  CHECK(format_ms(250) == "250 ms");
}

TEST_CASE("progress_bar fills in proportion") {
  CHECK(progress_bar("add n=1", 0, 8, 8, "") == "add n=1 [--------]   0/8");
  CHECK(progress_bar("add n=1", 4, 8, 8, "BLOCK=512") == "add n=1 [####----]   4/8  BLOCK=512");
  CHECK(progress_bar("x", 8, 8, 4, "") == "x [####]   8/8");
}

TEST_CASE("results JSON round trip keeps every field") {
  Results r = synthetic();
  std::string text = results_to_json(r);
  CHECK(text.find("\"roofline_fraction\"") != std::string::npos);
  Results back = results_from_json(text);
  CHECK(back.device == r.device);
  CHECK(back.roofline.bandwidth_gbs == r.roofline.bandwidth_gbs);
  REQUIRE(back.kernels.size() == r.kernels.size());
  for (size_t k = 0; k < r.kernels.size(); ++k) {
    CHECK(back.kernels[k].name == r.kernels[k].name);
    CHECK(back.kernels[k].fused == r.kernels[k].fused);
    REQUIRE(back.kernels[k].sizes.size() == r.kernels[k].sizes.size());
    for (size_t s = 0; s < r.kernels[k].sizes.size(); ++s) {
      const auto &a = r.kernels[k].sizes[s], &b = back.kernels[k].sizes[s];
      CHECK(a.bytes == b.bytes);
      CHECK(a.flops == b.flops);
      CHECK(a.best == b.best);
      REQUIRE(a.configs.size() == b.configs.size());
      for (size_t c = 0; c < a.configs.size(); ++c) {
        CHECK(a.configs[c].config == b.configs[c].config);
        CHECK(a.configs[c].status == b.configs[c].status);
        CHECK(a.configs[c].median_ms == b.configs[c].median_ms);
        CHECK(a.configs[c].reason == b.configs[c].reason);
      }
    }
  }
  CHECK(results_to_json(back) == text);
  CHECK_THROWS_AS(results_from_json("{\"kernels\": [{\"name\": \"x\"}]}"), std::runtime_error);
  CHECK_THROWS_AS(results_from_json("{\"kernels\": 3}"), std::runtime_error);
  CHECK_THROWS_AS(results_from_json("not json"), std::runtime_error);
}

TEST_CASE("merge_results replaces a kernel's size and keeps the rest") {
  Results a = synthetic(), b;
  b.device = a.device;
  SizeResult s = a.kernels[0].sizes[1];
  s.configs = {ok_row("BLOCK=512 num_warps=4 num_stages=1", 0.2)};
  s.best = s.configs[0].config;
  b.kernels.push_back({"add", "add", true, {s}});
  SizeResult small = a.kernels[0].sizes[0];
  small.size = "n=1024";
  small.bytes = 12 * 1024;
  b.kernels.push_back({"softmax", "softmax", true, {small}});
  merge_results(a, b);
  REQUIRE(a.kernels.size() == 5);
  CHECK(a.kernels[0].sizes.size() == 2);
  CHECK(a.kernels[0].sizes[1].best == "BLOCK=512 num_warps=4 num_stages=1");
  CHECK(a.kernels[0].sizes[0].best == "BLOCK=2048 num_warps=8 num_stages=1");
  CHECK(a.kernels[4].name == "softmax");
  CHECK(a.roofline.compute_gflops == 51200);  // b had none: kept
}

TEST_CASE("log scale: decades and mapping") {
  auto [lo, hi] = LogScale::decade_range(0.03, 420);
  CHECK(lo == doctest::Approx(0.01));
  CHECK(hi == doctest::Approx(1000));
  LogScale s(lo, hi, 100, 600);
  CHECK(s(0.01) == doctest::Approx(100));
  CHECK(s(1000) == doctest::Approx(600));
  CHECK(s(1) == doctest::Approx(100 + 500.0 * 2 / 5));
  CHECK(s.decades().size() == 6);
  auto [l2, h2] = LogScale::decade_range(10, 10);
  CHECK(l2 == doctest::Approx(1));
  CHECK(h2 == doctest::Approx(100));
  CHECK(tick_label(0.01) == "0.01");
  CHECK(tick_label(10000) == "10k");
  CHECK(tick_label(1e6) == "1M");
  CHECK(xml_escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
}

TEST_CASE("the report SVG is well-formed and places kernels on the roofline") {
  Results r = synthetic();
  std::string svg = render_svg(r);
  std::vector<Element> els;
  REQUIRE_NOTHROW(els = parse_xml(svg));
  REQUIRE(!els.empty());
  CHECK(els[0].name == "svg");
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("Test Card &lt;A&amp;B&gt;") != std::string::npos);

  // One roofline point per kernel and size (all have flops here).
  auto points = with_class(els, "point");
  REQUIRE(points.size() == 5);
  std::map<std::string, std::pair<double, double>> at;  // "kernel size" -> (cx, cy)
  for (const auto* p : points)
    at[p->attrs.at("data-kernel") + " " + p->attrs.at("data-size")] = {std::stod(p->attrs.at("cx")),
                                                                      std::stod(p->attrs.at("cy"))};
  // Higher intensity -> further right; faster -> higher (smaller y).
  CHECK(at["roofline_fma n=16777216"].first > at["chain5 n=67108864"].first);
  CHECK(at["chain5 n=67108864"].first > at["add n=67108864"].first);
  CHECK(at["chain5 n=67108864"].first > at["chain5_unfused n=67108864"].first);
  CHECK(at["chain5 n=67108864"].second < at["chain5_unfused n=67108864"].second);
  // Fused and unfused share a colour; the unfused one is hollow.
  auto colour_of = [&](const std::string& k) {
    for (const auto* p : points)
      if (p->attrs.at("data-kernel") == k) return p->attrs.at("stroke");
    return std::string();
  };
  CHECK(colour_of("chain5") == colour_of("chain5_unfused"));
  CHECK(colour_of("chain5") != colour_of("add"));
  for (const auto* p : points)
    if (p->attrs.at("data-kernel") == "chain5_unfused") CHECK(p->attrs.at("fill") == "white");

  // The arrow from the unfused chain to the fused kernel, labelled with the speedup.
  auto arrows = with_class(els, "fusion-arrow");
  REQUIRE(arrows.size() == 1);
  CHECK(std::stod(arrows[0]->attrs.at("x1")) == doctest::Approx(at["chain5_unfused n=67108864"].first).epsilon(0.01));
  CHECK(std::stod(arrows[0]->attrs.at("x2")) == doctest::Approx(at["chain5 n=67108864"].first).epsilon(0.01));
  auto labels = with_class(els, "fusion-label");
  REQUIRE(labels.size() == 1);
  CHECK(labels[0]->text.find("fused (3.7x)") != std::string::npos);  // 0.95 / 0.26 = 3.65

  // Ceilings: the measured values are printed; the roof bends at the ridge.
  auto ceiling_labels = with_class(els, "ceiling-label");
  REQUIRE(ceiling_labels.size() == 2);
  CHECK(ceiling_labels[0]->text.find("51.2 TFLOP/s") != std::string::npos);
  CHECK(ceiling_labels[1]->text.find("3350 GB/s") != std::string::npos);
  auto ceilings = with_class(els, "ceiling");
  REQUIRE(ceilings.size() == 1);
  CHECK(std::count(ceilings[0]->attrs.at("points").begin(), ceilings[0]->attrs.at("points").end(), ',') == 3);

  // Axis ticks: decades of intensity and GFLOP/s covering every point and the ridge (15.3).
  std::vector<std::string> xticks, yticks;
  for (const auto* t : with_class(els, "xtick")) xticks.push_back(t->text);
  for (const auto* t : with_class(els, "ytick")) yticks.push_back(t->text);
  for (const char* v : {"0.01", "0.1", "1", "10", "100", "1k"})
    CHECK(std::find(xticks.begin(), xticks.end(), v) != xticks.end());
  for (const char* v : {"10", "100", "1k", "10k", "100k"})
    CHECK(std::find(yticks.begin(), yticks.end(), v) != yticks.end());

  // Config-time panels: one per kernel, one best per size, the other ok configs grey dots.
  CHECK(with_class(els, "kernel-panel").size() == 4);
  CHECK(with_class(els, "config").size() == 2);  // the ok configs that did not win
  CHECK(with_class(els, "best").size() == 5);
  CHECK(with_class(els, "default").size() == 5);
  CHECK(svg == render_svg(r));  // deterministic
}

TEST_CASE("the report SVG without a roofline or without data is still well-formed") {
  Results r = synthetic();
  r.roofline = {};
  std::string svg = render_svg(r);
  std::vector<Element> els;
  REQUIRE_NOTHROW(els = parse_xml(svg));
  CHECK(with_class(els, "ceiling").empty());
  CHECK(with_class(els, "point").size() == 5);
  Results empty;
  REQUIRE_NOTHROW(els = parse_xml(render_svg(empty)));
  CHECK(with_class(els, "point").empty());
}
