// SVG line and roofline charts, and the terminal bar chart. Expected coordinates are derived in
// the comments from the layout in src/render/chart.cpp: a 900 x 520 canvas whose plot area spans
// x 80..860 (80..820 with a right axis) and y 80..420 (340 px tall, y grows downwards).
#include "trace/render/chart.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"

namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();
constexpr double k_inf = std::numeric_limits<double>::infinity();
constexpr std::int64_t k_gib = 1024LL * 1024 * 1024;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

bool starts_with_entity(const std::string& text, std::size_t at) {
  for (const char* entity : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
    if (text.compare(at, std::string(entity).size(), entity) == 0) return true;
  }
  return false;
}

/// A small well-formedness check: every start tag is closed by an end tag of the same name in
/// nesting order, there is one root element, and every '&' starts one of the five entities.
/// Returns "" when the document passes, else what is wrong.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> open;
  int roots = 0;
  std::size_t at = 0;
  while ((at = doc.find('<', at)) != std::string::npos) {
    const std::size_t end = doc.find('>', at);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = doc.substr(at + 1, end - at - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag";
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return "unexpected </" + name + ">";
      open.pop_back();
    } else {
      const std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
      if (open.empty()) ++roots;
      if (tag.back() != '/') open.push_back(name);
    }
    at = end + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  if (roots != 1) return "expected one root element, found " + std::to_string(roots);
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (doc[i] == '&' && !starts_with_entity(doc, i)) return "bare '&'";
  }
  return "";
}

bool mentions_nan_or_inf(const std::string& doc) {
  std::string lower = doc;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos;
}

void check_document(const std::string& doc) {
  CHECK(doc.rfind("<svg", 0) == 0);
  REQUIRE(doc.size() >= 7);
  CHECK(doc.substr(doc.size() - 7) == "</svg>\n");
  CHECK(xml_problem(doc) == "");
  CHECK_FALSE(mentions_nan_or_inf(doc));
}

trace::LineChart chart_of(std::vector<trace::ChartPoint> points, bool log_x = false) {
  trace::LineChart chart;
  chart.title = "test chart";
  chart.x_label = "x";
  chart.y_label = "y";
  chart.log_x = log_x;
  chart.series.push_back({"series", std::move(points), false});
  return chart;
}

std::string tick(const std::string& label) {
  return ">" + label + "</text>";
}

}  // namespace

TEST_CASE("chart: the tag-balance checker itself rejects broken documents", "[chart]") {
  CHECK(xml_problem("<svg><g></g><rect/></svg>\n") == "");
  CHECK(xml_problem("<svg><g></svg>") != "");
  CHECK(xml_problem("<svg></svg><svg></svg>") != "");
  CHECK(xml_problem("<svg><text>a & b</text></svg>") != "");
  CHECK(xml_problem("<svg><text>a < b</text></svg>") != "");
}

TEST_CASE("chart: the document frame", "[chart]") {
  const std::string svg = trace::render_line_chart_svg(chart_of({{1, 1}, {2, 4}}));
  check_document(svg);
  CHECK(svg.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("width=\"900\" height=\"520\"") != std::string::npos);
  CHECK(svg.find("<title>test chart</title>") != std::string::npos);
  CHECK(svg.find("fill=\"white\"") != std::string::npos);
  CHECK(svg.find("<polyline") != std::string::npos);
}

TEST_CASE("chart: every text is XML-escaped", "[chart]") {
  trace::LineChart chart = chart_of({{1, 1}, {2, 2}});
  chart.title = "a<b & c>\"d'";
  chart.subtitle = "sub <&>";
  chart.x_label = "x & more";
  chart.series[0].name = "<series>";
  chart.markers.push_back({{1, 1}, "best <1>", false});
  chart.thresholds.push_back({1.5, "floor & ceiling", false});
  const std::string svg = trace::render_line_chart_svg(chart);
  check_document(svg);
  CHECK(svg.find("<title>a&lt;b &amp; c&gt;&quot;d&apos;</title>") != std::string::npos);
  CHECK(svg.find("a<b") == std::string::npos);
  CHECK(svg.find("<series>") == std::string::npos);
  CHECK(svg.find("&lt;series&gt;") != std::string::npos);
  CHECK(svg.find("best &lt;1&gt;") != std::string::npos);
  CHECK(svg.find("floor &amp; ceiling") != std::string::npos);
  CHECK(svg.find("sub &lt;&amp;&gt;") != std::string::npos);

  trace::RooflineChart roof;
  roof.title = "<roof>";
  roof.peak_flops_per_s = 1e15;
  roof.peak_label = "peak & <more>";
  roof.bandwidth_bytes_per_s = 1e12;
  roof.points.push_back({"p \"1\"", 10, 1e13});
  const std::string roof_svg = trace::render_roofline_svg(roof);
  check_document(roof_svg);
  CHECK(roof_svg.find("<roof>") == std::string::npos);
  CHECK(roof_svg.find("peak &amp; &lt;more&gt;") != std::string::npos);
  CHECK(roof_svg.find("p &quot;1&quot;") != std::string::npos);
}

TEST_CASE("chart: NaN and infinite points are skipped", "[chart]") {
  trace::LineChart chart =
      chart_of({{1, 1}, {2, k_nan}, {k_inf, 3}, {4, -k_inf}, {k_nan, k_nan}, {3, 3}});
  chart.markers.push_back({{k_nan, 1}, "lost marker", false});
  chart.thresholds.push_back({k_inf, "lost threshold", false});
  const std::string svg = trace::render_line_chart_svg(chart);
  check_document(svg);
  // Two finite points, (1, 1) and (3, 3): two point circles of radius 3.
  CHECK(count(svg, "r=\"3.00\"") == 2);
  CHECK(svg.find("lost marker") == std::string::npos);
  CHECK(svg.find("lost threshold") == std::string::npos);
}

TEST_CASE("chart: an empty chart is a valid document saying no data", "[chart]") {
  trace::LineChart chart;
  chart.title = "nothing here";
  const std::string empty = trace::render_line_chart_svg(chart);
  check_document(empty);
  CHECK(empty.find("<title>nothing here</title>") != std::string::npos);
  CHECK(empty.find(">no data</text>") != std::string::npos);
  CHECK(empty.find("<polyline") == std::string::npos);

  // Series whose every point is unusable count as no data too.
  const std::string all_nan = trace::render_line_chart_svg(chart_of({{k_nan, 1}, {1, k_inf}}));
  check_document(all_nan);
  CHECK(all_nan.find(">no data</text>") != std::string::npos);

  // A chart with data does not say "no data".
  CHECK(trace::render_line_chart_svg(chart_of({{1, 1}})).find("no data") == std::string::npos);
}

TEST_CASE("chart: a single point gets a padded, non-degenerate axis", "[chart]") {
  const std::string svg = trace::render_line_chart_svg(chart_of({{5, 10}}));
  check_document(svg);
  // x: 5 alone is padded by half its size to [2.5, 7.5]; the nice step for a span of 5 in about
  // five intervals is 1, so the axis is [2, 8]. y: from 0 to 10, step 10/5 = 2, axis [0, 10].
  // The point: x = 80 + (5 - 2) / 6 * 780 = 470, y = 420 - 10 / 10 * 340 = 80.
  CHECK(svg.find("cx=\"470.00\" cy=\"80.00\" r=\"3.00\"") != std::string::npos);
  // x ticks 2, 3, ..., 8; the y ticks are even, so "3" and "7" can only be x ticks.
  CHECK(svg.find(tick("3")) != std::string::npos);
  CHECK(svg.find(tick("7")) != std::string::npos);
  // One point is no line.
  CHECK(svg.find("<polyline") == std::string::npos);
}

TEST_CASE("chart: all-zero values still give a y axis", "[chart]") {
  const std::string svg = trace::render_line_chart_svg(chart_of({{1, 0}, {2, 0}, {3, 0}}));
  check_document(svg);
  // y: [0, 0] is padded to [0, 1]; step 1/5 = 0.2, ticks 0, 0.2, ..., 1. Zero sits on the bottom
  // edge: y = 420 for all three points.
  CHECK(svg.find(tick("0.2")) != std::string::npos);
  CHECK(svg.find(tick("1")) != std::string::npos);
  CHECK(count(svg, "cy=\"420.00\" r=\"3.00\"") == 3);
}

TEST_CASE("chart: nice ticks with SI labels", "[chart]") {
  // y up to 2,500: 2500 / 5 = 500 is already nice; ticks 0, 500, 1k, 1.5k, 2k, 2.5k.
  const std::string thousands = trace::render_line_chart_svg(chart_of({{1, 100}, {2, 2500}}));
  for (const char* label : {"0", "500", "1k", "1.5k", "2k", "2.5k"}) {
    CHECK(thousands.find(tick(label)) != std::string::npos);
  }
  CHECK(thousands.find(tick("3k")) == std::string::npos);

  // y up to 1.2e9: 1.2e9 / 5 = 2.4e8 rounds up to the 5 x 10^8 step: 0, 500M, 1G, 1.5G.
  const std::string giga = trace::render_line_chart_svg(chart_of({{1, 1e8}, {2, 1.2e9}}));
  for (const char* label : {"500M", "1G", "1.5G"})
    CHECK(giga.find(tick(label)) != std::string::npos);

  // y up to 3e12: 6e11 per interval rounds up to 1e12: 0, 1T, 2T, 3T.
  const std::string tera = trace::render_line_chart_svg(chart_of({{1, 1e12}, {2, 3e12}}));
  for (const char* label : {"1T", "2T", "3T"}) CHECK(tera.find(tick(label)) != std::string::npos);
}

TEST_CASE("chart: y axes start at zero unless the data are negative", "[chart]") {
  // 50..100 positive: the axis runs from 0 (step 100/5 = 20: 0, 20, ..., 100).
  const std::string positive = trace::render_line_chart_svg(chart_of({{1, 50}, {2, 100}}));
  CHECK(positive.find(tick("0")) != std::string::npos);
  CHECK(positive.find(tick("20")) != std::string::npos);

  // -30..20: span 50, step 10; ticks -30 .. 20.
  const std::string negative = trace::render_line_chart_svg(chart_of({{1, -30}, {2, 20}}));
  check_document(negative);
  CHECK(negative.find(tick("-30")) != std::string::npos);
  CHECK(negative.find(tick("20")) != std::string::npos);
  CHECK(negative.find(tick("-40")) == std::string::npos);
}

TEST_CASE("chart: a log x axis skips x <= 0 and ticks powers of two", "[chart]") {
  const std::string svg = trace::render_line_chart_svg(
      chart_of({{0, 100}, {-4, 200}, {1, 100}, {4, 200}, {16, 300}}, true));
  check_document(svg);
  // Three positive x values survive: 1, 4, 16.
  CHECK(count(svg, "r=\"3.00\"") == 3);
  // All are powers of two: ticks 1, 2, 4, 8, 16 (8 is no data point, only a tick). y ticks are
  // 0, 100, 200, 300 (step 300/5 = 60 rounds up to 100), so "8" can only be an x tick.
  CHECK(svg.find(tick("8")) != std::string::npos);
  CHECK(svg.find(tick("2")) != std::string::npos);
  // x = 4 is two of the four doublings from 1 to 16: 80 + 0.5 * 780 = 470; y = 200 of 300:
  // 420 - 340 * 2 / 3 = 193.33.
  CHECK(svg.find("cx=\"470.00\" cy=\"193.33\"") != std::string::npos);

  // Not powers of two: decade ticks 1, 10, 100, 1k around 3..300.
  const std::string decades = trace::render_line_chart_svg(chart_of({{3, 100}, {300, 200}}, true));
  check_document(decades);
  for (const char* label : {"1", "10", "100", "1k"}) {
    CHECK(decades.find(tick(label)) != std::string::npos);
  }

  // Only non-positive x on a log axis: no data.
  const std::string none = trace::render_line_chart_svg(chart_of({{0, 1}, {-2, 3}}, true));
  check_document(none);
  CHECK(none.find(">no data</text>") != std::string::npos);
}

TEST_CASE("chart: the right axis appears only when a series uses it", "[chart]") {
  trace::LineChart chart = chart_of({{1, 10}, {2, 20}});
  chart.y_right_label = "per user";
  const std::string left_only = trace::render_line_chart_svg(chart);
  CHECK(left_only.find("y-right-axis") == std::string::npos);
  CHECK(left_only.find(">per user</text>") == std::string::npos);

  chart.series.push_back({"right series", {{1, 0.5}, {2, 0.25}}, true});
  const std::string both = trace::render_line_chart_svg(chart);
  check_document(both);
  CHECK(both.find("class=\"y-right-axis\"") != std::string::npos);
  CHECK(both.find(">per user</text>") != std::string::npos);
  CHECK(both.find("right series (right axis)") != std::string::npos);
  // The right scale is its own: 0.5 / 5 = 0.1 per tick, so 0.1 .. 0.5 are labels; the left
  // axis (0..20, step 20/5 = 4 rounds up to 5) has none of them.
  CHECK(both.find(tick("0.1")) != std::string::npos);
  CHECK(both.find(tick("0.5")) != std::string::npos);
  // Two series, two colours.
  CHECK(both.find("stroke=\"#1f77b4\"") != std::string::npos);
  CHECK(both.find("stroke=\"#ff7f0e\"") != std::string::npos);
}

TEST_CASE("chart: markers and thresholds", "[chart]") {
  trace::LineChart chart = chart_of({{1, 10}, {2, 20}});
  chart.markers.push_back({{2, 20}, "best: 2 users", false});
  chart.thresholds.push_back({100, "floor", false});
  const std::string svg = trace::render_line_chart_svg(chart);
  check_document(svg);
  CHECK(svg.find("best: 2 users") != std::string::npos);
  CHECK(svg.find("class=\"marker\"") != std::string::npos);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  CHECK(svg.find(">floor</text>") != std::string::npos);
  // The threshold at 100 widens the y axis from 20 to 100 (step 20): it is the top edge, y = 80,
  // drawn across the plot from x 80 to 860.
  CHECK(svg.find(tick("100")) != std::string::npos);
  CHECK(svg.find("<line x1=\"80.00\" y1=\"80.00\" x2=\"860.00\" y2=\"80.00\" stroke=\"#d62728\" "
                 "stroke-dasharray") != std::string::npos);
}

TEST_CASE("chart: roofline ridge point and roofs", "[chart]") {
  trace::RooflineChart roof;
  roof.title = "roofline";
  roof.peak_flops_per_s = 1e15;
  roof.peak_label = "bf16 1 PFLOP/s";
  roof.bandwidth_bytes_per_s = 1e12;
  roof.points = {{"decode", 1, 1e12},
                 {"prefill", 1e4, 5e14},
                 {"broken", -1, 1e12},
                 {"nan", k_nan, 1e12},
                 {"zero", 10, 0}};
  const std::string svg = trace::render_roofline_svg(roof);
  check_document(svg);
  // Ridge at peak / bandwidth = 1e15 / 1e12 = 1000 FLOP/byte.
  CHECK(svg.find("ridge 1k FLOP/byte") != std::string::npos);
  // x covers the intensities 1, 1000, 1e4 with a decade each side: 10^-1 .. 10^5, six decades;
  // the ridge (10^3) lies 4/6 along: x = 80 + 780 * 4 / 6 = 600.
  // y covers the roof's low end 1e12 * 0.1 = 1e11 up to twice the highest value (2e15), rounded
  // out to decades 10^11 .. 10^16; the peak 10^15 is 4/5 up: y = 420 - 340 * 4 / 5 = 148.
  CHECK(svg.find("cx=\"600.00\" cy=\"148.00\" r=\"5.00\" fill=\"#333333\" class=\"ridge\"") !=
        std::string::npos);
  CHECK(svg.find(">bf16 1 PFLOP/s</text>") != std::string::npos);
  CHECK(svg.find(">1 TB/s</text>") != std::string::npos);
  CHECK(svg.find("class=\"roof\"") != std::string::npos);
  // Two valid points; the others are skipped with their labels.
  CHECK(count(svg, "class=\"point\"") == 2);
  CHECK(svg.find(">decode</text>") != std::string::npos);
  CHECK(svg.find("broken") == std::string::npos);
  CHECK(svg.find(">zero</text>") == std::string::npos);
  // Log ticks are SI labelled decades: 0.1 .. 100k on x, 100G .. 10P on y.
  for (const char* label : {"0.1", "1k", "100k", "100G", "1P", "10P"}) {
    CHECK(svg.find(tick(label)) != std::string::npos);
  }
}

TEST_CASE("chart: roofline bandwidth label", "[chart]") {
  trace::RooflineChart roof;
  roof.peak_flops_per_s = 989.5e12;
  roof.bandwidth_bytes_per_s = 3.35e12;
  const std::string svg = trace::render_roofline_svg(roof);
  check_document(svg);
  // 3.35e12 B/s = 3.35 TB/s; ridge 989.5e12 / 3.35e12 = 295.37 FLOP/byte.
  CHECK(svg.find(">3.35 TB/s</text>") != std::string::npos);
  CHECK(svg.find("ridge 295.37 FLOP/byte") != std::string::npos);
}

TEST_CASE("chart: roofline without a peak or bandwidth says no data", "[chart]") {
  for (const auto& [peak, bandwidth] : std::vector<std::pair<double, double>>{
           {0, 1e12}, {1e15, 0}, {k_nan, 1e12}, {1e15, -1}, {k_inf, 1e12}}) {
    trace::RooflineChart roof;
    roof.title = "empty roof";
    roof.peak_flops_per_s = peak;
    roof.bandwidth_bytes_per_s = bandwidth;
    roof.points.push_back({"p", 10, 1e12});
    const std::string svg = trace::render_roofline_svg(roof);
    check_document(svg);
    CHECK(svg.find(">no data</text>") != std::string::npos);
    CHECK(svg.find("class=\"roof\"") == std::string::npos);
  }
}

TEST_CASE("chart: bar chart of two parts", "[chart]") {
  // weights 16 GiB is the largest: 8 full cells. kv 8 GiB is half of it: 4 cells and 4 spaces of
  // padding. Labels pad to "weights" (7) plus one space. Shares of 24 GiB: 16/24 = 66.7% -> 67%,
  // 8/24 = 33.3% -> 33%. format_bytes prints GiB with two decimals.
  const std::string full = "\u2588";
  std::string weights_bar;
  for (int i = 0; i < 8; ++i) weights_bar += full;
  std::string kv_bar;
  for (int i = 0; i < 4; ++i) kv_bar += full;
  const std::string expected = "weights " + weights_bar + "  16.00 GiB  67%\n" + "kv      " +
                               kv_bar + "      8.00 GiB  33%\n";
  CHECK(trace::render_bar_chart({{"weights", 16 * k_gib}, {"kv", 8 * k_gib}}, 8) == expected);
}

TEST_CASE("chart: bar chart eighth blocks", "[chart]") {
  // 1/16 of the largest at width 8 is half a cell: 4 eighths, U+258C, then 7 spaces.
  // Shares: 16/17 = 94.1% -> 94%, 1/17 = 5.9% -> 6%.
  const std::string eight_full = "\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588";
  CHECK(trace::render_bar_chart({{"big", 16 * k_gib}, {"half", k_gib}}, 8) ==
        "big  " + eight_full + "  16.00 GiB  94%\n" + "half \u258C" + std::string(7, ' ') +
            "  1.00 GiB  6%\n");

  // 7/64 of the largest at width 8 is 7/8 of a cell: U+2589. Share 7/71 = 9.9% -> 10%.
  const std::string seven = trace::render_bar_chart({{"a", 64}, {"b", 7}}, 8);
  CHECK(seven.find("b \u2589" + std::string(7, ' ') + "  7 B  10%\n") != std::string::npos);

  // 1/8 of a cell: a part 1/64 of the largest: U+258F.
  const std::string eighth = trace::render_bar_chart({{"a", 64}, {"b", 1}}, 8);
  CHECK(eighth.find("b \u258F" + std::string(7, ' ') + "  1 B  2%\n") != std::string::npos);

  // 1 + 3/4 cells: 14/64 of the largest at width 8 = 1.75 cells: a full block, then U+258A.
  const std::string quarter = trace::render_bar_chart({{"a", 64}, {"b", 14}}, 8);
  CHECK(quarter.find("b \u2588\u258A" + std::string(6, ' ')) != std::string::npos);
}

TEST_CASE("chart: bar chart edge cases", "[chart]") {
  CHECK(trace::render_bar_chart({}) == "");
  CHECK(trace::render_bar_chart({{"a", 0}, {"b", -5}}) == "");
  // Zero and negative parts are left out (and do not widen the label column); c is the only
  // part: the whole bar and 100%.
  CHECK(trace::render_bar_chart({{"zero part", 0}, {"negative", -5}, {"c", 10}}, 2) ==
        "c \u2588\u2588  10 B  100%\n");
  // A width below one is one cell.
  CHECK(trace::render_bar_chart({{"a", 10}}, 0) == "a \u2588  10 B  100%\n");
  CHECK(trace::render_bar_chart({{"a", 10}}, -3) == "a \u2588  10 B  100%\n");
  // A tiny part still shows one eighth: 1 of 1,000,000 at width 8 rounds to 0 eighths.
  const std::string tiny = trace::render_bar_chart({{"a", 1'000'000}, {"b", 1}}, 8);
  CHECK(tiny.find("b \u258F") != std::string::npos);
  CHECK(tiny.find("  0%\n") != std::string::npos);
}

TEST_CASE("chart: bar chart sums beyond int64 without overflow", "[chart]") {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::string bars = trace::render_bar_chart({{"a", max}, {"b", max}, {"c", max}}, 4);
  // Three equal parts: each 1/3 of the sum, 33%, each a full four-cell bar.
  CHECK(count(bars, "  33%\n") == 3);
  CHECK(count(bars, "\u2588\u2588\u2588\u2588 ") == 3);
  CHECK(bars.find('-') == std::string::npos);
}

TEST_CASE("chart: bar labels pad by characters, not bytes", "[chart]") {
  // "µs" is two characters in three bytes; "abc" is three: "µs" gets two spaces, "abc" one.
  const std::string bars = trace::render_bar_chart({{"\u00B5s", 10}, {"abc", 10}}, 1);
  CHECK(bars == "\u00B5s  \u2588  10 B  50%\nabc \u2588  10 B  50%\n");
}

TEST_CASE("chart: absurd magnitudes stay valid documents", "[chart]") {
  // Values near the double limit overflow spans and decade margins; the output must stay valid.
  const std::string line =
      trace::render_line_chart_svg(chart_of({{-1e308, -1e308}, {1e308, 1e308}}));
  check_document(line);
  const std::string log = trace::render_line_chart_svg(chart_of({{1e-320, 1}, {1e308, 2}}, true));
  check_document(log);
  trace::RooflineChart roof;
  roof.peak_flops_per_s = 1e15;
  roof.bandwidth_bytes_per_s = 1e12;
  roof.points = {{"huge", 1e308, 1e308}, {"tiny", 1e-310, 1e-310}};
  check_document(trace::render_roofline_svg(roof));
}
