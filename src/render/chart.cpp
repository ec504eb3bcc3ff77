// Pictures: SVG line and roofline charts, and the terminal's bar chart.
#include "trace/render/chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <numbers>
#include <string_view>

#include "trace/render/render.hpp"

namespace trace {
namespace {

// ---------------------------------------------------------------------------------------------
// Text and numbers

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// A coordinate for an attribute. Never "nan"/"inf" (they would make the SVG invalid), and
/// never "-0.00".
std::string coord(double v) {
  if (!std::isfinite(v) || std::fabs(v) < 0.005) v = 0;
  return fmt::format("{:.2f}", v);
}

/// "2.50" -> "2.5", "3.00" -> "3".
std::string trim_decimals(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

struct SiParts {
  std::string number;  ///< "2.5"
  std::string suffix;  ///< "k", "M", ... or "" below a thousand
};

/// Splits a value into a short number and a decimal SI suffix: 2500 -> {"2.5", "k"}.
SiParts si_parts(double value) {
  if (!std::isfinite(value)) return {"0", ""};
  const char* const sign = value < 0 ? "-" : "";
  double magnitude = std::fabs(value);
  if (magnitude < 1000) {
    // Below one the ticks are fractions (0.25, 0.001); three significant digits keep them short.
    const std::string text = magnitude < 1 && magnitude > 0
                                 ? fmt::format("{:.3g}", magnitude)
                                 : trim_decimals(fmt::format("{:.2f}", magnitude));
    // fmt, not `sign + text`: GCC 12 -O3 reports a false -Wrestrict on operator+(const char*,
    // std::string&&) (GCC bug 105329).
    if (text != "1000") return {fmt::format("{}{}", sign, text), ""};
  }
  static constexpr std::array<const char*, 6> suffixes = {"k", "M", "G", "T", "P", "E"};
  std::size_t index = 0;
  magnitude /= 1000;
  // Move up while the rounded number would read 1000 or more ("999.999k" -> "1M").
  while (index + 1 < suffixes.size() && std::round(magnitude * 100) / 100 >= 1000) {
    magnitude /= 1000;
    ++index;
  }
  return {fmt::format("{}{}", sign, trim_decimals(fmt::format("{:.2f}", magnitude))),
          suffixes[index]};
}

std::string si_label(double value) {
  const SiParts parts = si_parts(value);
  return parts.number + parts.suffix;
}

// ---------------------------------------------------------------------------------------------
// Axes

/// A data range [lo, hi] and its ticks; fraction() says how far along it a value lies, linearly
/// or by log.
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  std::vector<double> ticks;

  [[nodiscard]] double fraction(double v) const {
    if (log) return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return (v - lo) / (hi - lo);
  }
};

struct Range {
  double lo = 0;
  double hi = 0;
  bool empty = true;

  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = empty ? v : std::min(lo, v);
    hi = empty ? v : std::max(hi, v);
    empty = false;
  }
};

/// The 1, 2 or 5 x 10^k step that cuts `span` into about `target` intervals.
double nice_step(double span, int target) {
  const double raw = span / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  // The tolerance keeps 0.1 / 0.1 = 1.0000000000000002 a step of 1, not 2.
  const double normalized = raw / magnitude * (1 - 1e-9);
  if (normalized <= 1) return magnitude;
  if (normalized <= 2) return 2 * magnitude;
  if (normalized <= 5) return 5 * magnitude;
  return 10 * magnitude;
}

/// A linear axis over [lo, hi] rounded out to nice ticks. A zero-width range is padded so a single
/// point or equal values still get an axis.
Axis linear_axis(double lo, double hi) {
  if (hi - lo <= 0) {
    const double pad = lo != 0 ? std::fabs(lo) * 0.5 : 1.0;
    // Keep an axis anchored at zero on zero (the y axes start at 0).
    lo = lo == 0 ? 0 : lo - pad;
    hi = hi + pad;
  }
  const double step = nice_step(hi - lo, 5);
  Axis axis;
  axis.lo = std::floor(lo / step) * step;
  axis.hi = std::ceil(hi / step) * step;
  // Ticks by index, not by repeated addition, so 0.1 + 0.2 drift never drops the last tick.
  // Capped so absurd inputs (a span that overflows) cannot loop for ever.
  const auto count = std::clamp(std::lround((axis.hi - axis.lo) / step), 0L, 100L);
  for (long i = 0; i <= count; ++i) {
    const double tick = axis.lo + static_cast<double>(i) * step;
    axis.ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0 : tick);
  }
  return axis;
}

bool is_power_of_two(double v) {
  const double exponent = std::log2(v);
  return std::fabs(exponent - std::round(exponent)) < 1e-9;
}

/// A log axis over positive [lo, hi] with ticks at the powers of `base`; at most about ten ticks
/// (a wide range labels every second or third power).
Axis log_axis(double lo, double hi, double base) {
  // Absurd values (an overflowed 1e308 * 10) would overflow the int exponents below.
  lo = std::clamp(lo, 1e-300, 1e300);
  hi = std::clamp(hi, 1e-300, 1e300);
  auto lo_exp = static_cast<int>(std::floor(std::log(lo) / std::log(base) + 1e-9));
  auto hi_exp = static_cast<int>(std::ceil(std::log(hi) / std::log(base) - 1e-9));
  if (hi_exp <= lo_exp) {
    --lo_exp;
    ++hi_exp;
  }
  Axis axis;
  axis.log = true;
  axis.lo = std::pow(base, lo_exp);
  axis.hi = std::pow(base, hi_exp);
  const int stride = (hi_exp - lo_exp + 9) / 10;
  for (int e = lo_exp; e <= hi_exp; e += stride) axis.ticks.push_back(std::pow(base, e));
  return axis;
}

/// The x axis of a line chart: log2 ticks when every x is a power of two, else log10.
Axis log_x_axis(const std::vector<double>& xs) {
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  const bool powers_of_two = std::all_of(xs.begin(), xs.end(), is_power_of_two);
  return log_axis(*lo, *hi, powers_of_two ? 2.0 : 10.0);
}

// ---------------------------------------------------------------------------------------------
// SVG canvas

constexpr double k_width = 900;
constexpr double k_height = 520;

/// The pixel rectangle the data are drawn into.
struct PlotArea {
  double left = 80;
  double right = k_width - 40;
  double top = 80;
  double bottom = k_height - 100;

  [[nodiscard]] double x(const Axis& axis, double v) const {
    return left + axis.fraction(v) * (right - left);
  }
  [[nodiscard]] double y(const Axis& axis, double v) const {
    return bottom - axis.fraction(v) * (bottom - top);
  }
};

constexpr std::array<const char*, 8> k_palette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};
constexpr const char* k_highlight = "#d62728";
constexpr const char* k_grid = "#e0e0e0";
constexpr const char* k_ink = "#333333";

const char* series_colour(std::size_t index) {
  return k_palette[index % k_palette.size()];
}

class Svg {
 public:
  explicit Svg(std::string_view title) {
    append(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n",
        k_width, k_height);
    append("<title>{}</title>\n", xml_escape(title));
    append("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", k_width,
           k_height);
  }

  template <typename... Args>
  void append(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(text_), format, std::forward<Args>(args)...);
  }

  void line(double x1, double y1, double x2, double y2, std::string_view stroke,
            std::string_view extra = "") {
    append("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"{}/>\n", coord(x1),
           coord(y1), coord(x2), coord(y2), stroke, extra);
  }

  /// Text at (x, y); `attributes` are fixed strings from this file, the content is escaped.
  void text(double x, double y, std::string_view content, std::string_view attributes = "") {
    append("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", coord(x), coord(y), attributes,
           xml_escape(content));
  }

  void circle(double x, double y, double r, std::string_view attributes) {
    append("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {}/>\n", coord(x), coord(y), coord(r), attributes);
  }

  void polyline(const std::vector<std::pair<double, double>>& pixels, std::string_view stroke,
                int stroke_width, std::string_view extra = "") {
    append("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} points=\"", stroke,
           stroke_width, extra);
    for (std::size_t i = 0; i < pixels.size(); ++i) {
      append("{}{},{}", i == 0 ? "" : " ", coord(pixels[i].first), coord(pixels[i].second));
    }
    append("\"/>\n");
  }

  void open_group(std::string_view css_class) { append("<g class=\"{}\">\n", css_class); }
  void close_group() { append("</g>\n"); }

  std::string finish() && {
    text_ += "</svg>\n";
    return std::move(text_);
  }

 private:
  std::string text_;
};

void draw_headings(Svg& svg, const std::string& title, const std::string& subtitle) {
  svg.text(k_width / 2, 30, title, " text-anchor=\"middle\" font-size=\"18\" font-weight=\"bold\"");
  if (!subtitle.empty()) {
    svg.text(k_width / 2, 52, subtitle, " text-anchor=\"middle\" fill=\"#555555\"");
  }
}

void draw_no_data(Svg& svg) {
  svg.text(k_width / 2, k_height / 2, "no data",
           " text-anchor=\"middle\" font-size=\"16\" fill=\"#888888\"");
}

void draw_frame(Svg& svg, const PlotArea& area) {
  svg.append("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>\n",
             coord(area.left), coord(area.top), coord(area.right - area.left),
             coord(area.bottom - area.top), k_ink);
}

void draw_x_axis(Svg& svg, const PlotArea& area, const Axis& axis, const std::string& label) {
  svg.open_group("x-axis");
  for (const double tick : axis.ticks) {
    const double x = area.x(axis, tick);
    svg.line(x, area.top, x, area.bottom, k_grid);
    svg.line(x, area.bottom, x, area.bottom + 5, k_ink);
    svg.text(x, area.bottom + 20, si_label(tick), " text-anchor=\"middle\"");
  }
  svg.text((area.left + area.right) / 2, area.bottom + 45, label, " text-anchor=\"middle\"");
  svg.close_group();
}

enum class Side { left, right };

/// A y axis on either side; gridlines for the left one only (two grids would be unreadable).
void draw_y_axis(Svg& svg, const PlotArea& area, const Axis& axis, const std::string& label,
                 Side side) {
  const bool left = side == Side::left;
  svg.open_group(left ? "y-axis" : "y-right-axis");
  const double edge = left ? area.left : area.right;
  const double outward = left ? -1 : 1;
  for (const double tick : axis.ticks) {
    const double y = area.y(axis, tick);
    if (left) svg.line(area.left, y, area.right, y, k_grid);
    svg.line(edge, y, edge + 5 * outward, y, k_ink);
    svg.text(edge + 8 * outward, y + 4, si_label(tick),
             left ? " text-anchor=\"end\"" : " text-anchor=\"start\"");
  }
  const double label_x = edge + 62 * outward;
  const double label_y = (area.top + area.bottom) / 2;
  svg.text(label_x, label_y, label,
           fmt::format(" text-anchor=\"middle\" transform=\"rotate({} {} {})\"", left ? -90 : 90,
                       coord(label_x), coord(label_y)));
  svg.close_group();
}

// ---------------------------------------------------------------------------------------------
// Line chart

/// The points of one series that can be drawn: finite, and positive x on a log axis.
std::vector<ChartPoint> drawable_points(const std::vector<ChartPoint>& points, bool log_x) {
  std::vector<ChartPoint> kept;
  for (const ChartPoint& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    if (log_x && p.x <= 0) continue;
    kept.push_back(p);
  }
  return kept;
}

struct LineLayout {
  PlotArea area;
  Axis x;
  Axis y_left;
  std::optional<Axis> y_right;

  [[nodiscard]] const Axis& y_for(bool right_axis) const {
    return right_axis && y_right ? *y_right : y_left;
  }
};

/// A y axis from 0 (or the lowest negative value) to the highest value.
Axis y_axis_over(const Range& values) {
  const double lo = values.empty ? 0 : std::min(0.0, values.lo);
  const double hi = values.empty ? 1 : std::max(0.0, values.hi);
  return linear_axis(lo, hi);
}

std::optional<LineLayout> layout_line_chart(const LineChart& chart,
                                            const std::vector<std::vector<ChartPoint>>& kept) {
  std::vector<double> xs;
  Range left_values;
  Range right_values;
  bool uses_right = false;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const bool right = chart.series[i].right_axis;
    uses_right = uses_right || right;
    for (const ChartPoint& p : kept[i]) {
      xs.push_back(p.x);
      (right ? right_values : left_values).add(p.y);
    }
  }
  if (xs.empty()) return std::nullopt;
  // Markers and thresholds widen the ranges so they are never drawn outside the plot.
  for (const ChartMarker& m : chart.markers) {
    if (!std::isfinite(m.at.x) || !std::isfinite(m.at.y) || (chart.log_x && m.at.x <= 0)) continue;
    xs.push_back(m.at.x);
    (m.right_axis && uses_right ? right_values : left_values).add(m.at.y);
  }
  for (const ChartThreshold& t : chart.thresholds) {
    (t.right_axis && uses_right ? right_values : left_values).add(t.y);
  }

  LineLayout layout;
  if (uses_right) layout.area.right = k_width - 80;
  if (chart.log_x) {
    layout.x = log_x_axis(xs);
  } else {
    const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    layout.x = linear_axis(*lo, *hi);
  }
  layout.y_left = y_axis_over(left_values);
  if (uses_right) layout.y_right = y_axis_over(right_values);
  return layout;
}

void draw_series(Svg& svg, const LineLayout& layout, const std::vector<ChartPoint>& points,
                 bool right_axis, const char* colour) {
  const Axis& y_axis = layout.y_for(right_axis);
  std::vector<std::pair<double, double>> pixels;
  for (const ChartPoint& p : points) {
    pixels.emplace_back(layout.area.x(layout.x, p.x), layout.area.y(y_axis, p.y));
  }
  if (pixels.size() > 1) svg.polyline(pixels, colour, 2);
  for (const auto& [x, y] : pixels) {
    svg.circle(x, y, 3, fmt::format("fill=\"{}\"", colour));
  }
}

void draw_thresholds(Svg& svg, const LineLayout& layout, const LineChart& chart) {
  for (const ChartThreshold& t : chart.thresholds) {
    if (!std::isfinite(t.y)) continue;
    const double y = layout.area.y(layout.y_for(t.right_axis), t.y);
    svg.line(layout.area.left, y, layout.area.right, y, k_highlight,
             " stroke-dasharray=\"6 4\" class=\"threshold\"");
    svg.text(layout.area.right - 4, y - 4, t.label,
             fmt::format(" text-anchor=\"end\" fill=\"{}\"", k_highlight));
  }
}

void draw_markers(Svg& svg, const LineLayout& layout, const LineChart& chart) {
  for (const ChartMarker& m : chart.markers) {
    if (!std::isfinite(m.at.x) || !std::isfinite(m.at.y) || (chart.log_x && m.at.x <= 0)) continue;
    const double x = layout.area.x(layout.x, m.at.x);
    const double y = layout.area.y(layout.y_for(m.right_axis), m.at.y);
    svg.circle(x, y, 7,
               fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2\" class=\"marker\"",
                           k_highlight));
    // Labels in the right half go to the left of the point so they stay inside the picture.
    const bool flip = x > (layout.area.left + layout.area.right) / 2;
    svg.text(x + (flip ? -10 : 10), y - 10, m.label,
             flip ? " text-anchor=\"end\" font-weight=\"bold\"" : " font-weight=\"bold\"");
  }
}

/// One row under the x label: a colour swatch and the name of each series.
void draw_legend(Svg& svg, const LineChart& chart, bool has_right_axis) {
  svg.open_group("legend");
  double x = 80;
  const double y = k_height - 18;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const std::string name = has_right_axis && s.right_axis ? s.name + " (right axis)" : s.name;
    svg.line(x, y - 4, x + 20, y - 4, series_colour(i), " stroke-width=\"3\"");
    svg.text(x + 26, y, name);
    // About 7 px per character at 12 px sans-serif.
    x += 26 + 7.0 * static_cast<double>(name.size()) + 24;
  }
  svg.close_group();
}

// ---------------------------------------------------------------------------------------------
// Roofline

/// "3.35 TB/s".
std::string bandwidth_label(double bytes_per_s) {
  const SiParts parts = si_parts(bytes_per_s);
  return fmt::format("{} {}B/s", parts.number, parts.suffix);
}

bool positive(double v) {
  return std::isfinite(v) && v > 0;
}

void draw_roof(Svg& svg, const PlotArea& area, const Axis& x, const Axis& y,
               const RooflineChart& chart) {
  const double peak = chart.peak_flops_per_s;
  const double bandwidth = chart.bandwidth_bytes_per_s;
  const double ridge = peak / bandwidth;
  // The roof is straight in log-log on either side of the ridge: three points draw it exactly.
  const double x0 = area.x(x, x.lo);
  const double y0 = area.y(y, bandwidth * x.lo);
  const double xr = area.x(x, ridge);
  const double yr = area.y(y, peak);
  const double x1 = area.x(x, x.hi);
  svg.polyline({{x0, y0}, {xr, yr}, {x1, yr}}, k_ink, 3, " class=\"roof\"");

  svg.text(x1 - 4, yr - 8, chart.peak_label, " text-anchor=\"end\" font-weight=\"bold\"");
  const double angle = std::atan2(yr - y0, xr - x0) * 180 / std::numbers::pi;
  const double mid_x = (x0 + xr) / 2;
  const double mid_y = (y0 + yr) / 2;
  svg.text(
      mid_x, mid_y - 8, bandwidth_label(bandwidth),
      fmt::format(" text-anchor=\"middle\" font-weight=\"bold\" transform=\"rotate({} {} {})\"",
                  coord(angle), coord(mid_x), coord(mid_y)));

  svg.circle(xr, yr, 5, fmt::format("fill=\"{}\" class=\"ridge\"", k_ink));
  // Left of the ridge at the roof's height lies above the memory roof: no point can be there.
  svg.text(xr - 10, yr + 4, fmt::format("ridge {} FLOP/byte", si_label(ridge)),
           " text-anchor=\"end\"");
}

void draw_roofline_points(Svg& svg, const PlotArea& area, const Axis& x, const Axis& y,
                          const std::vector<RooflinePoint>& points) {
  std::size_t colour = 0;
  for (const RooflinePoint& p : points) {
    if (!positive(p.intensity) || !positive(p.flops_per_s)) continue;
    const double px = area.x(x, p.intensity);
    const double py = area.y(y, p.flops_per_s);
    const char* fill = series_colour(colour++);
    svg.circle(px, py, 5, fmt::format("fill=\"{}\" class=\"point\"", fill));
    svg.text(px + 8, py + 4, p.label, fmt::format(" fill=\"{}\"", fill));
  }
}

// ---------------------------------------------------------------------------------------------
// Bar chart

/// Code points, not bytes, so UTF-8 labels line up.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

/// `eighths` eighths of a cell as full blocks and one partial block (U+258F is 1/8, U+2589 7/8).
std::string bar_cells(long long eighths, int width) {
  static constexpr std::array<const char*, 8> partial = {"",       "\u258F", "\u258E", "\u258D",
                                                         "\u258C", "\u258B", "\u258A", "\u2589"};
  std::string bar;
  const long long full = eighths / 8;
  for (long long i = 0; i < full; ++i) bar += "\u2588";
  const long long remainder = eighths % 8;
  bar += partial[static_cast<std::size_t>(remainder)];
  const long long used = full + (remainder > 0 ? 1 : 0);
  bar.append(static_cast<std::size_t>(std::max(0LL, width - used)), ' ');
  return bar;
}

}  // namespace

std::string render_line_chart_svg(const LineChart& chart) {
  Svg svg(chart.title);
  draw_headings(svg, chart.title, chart.subtitle);
  std::vector<std::vector<ChartPoint>> kept;
  for (const ChartSeries& s : chart.series) kept.push_back(drawable_points(s.points, chart.log_x));
  const std::optional<LineLayout> layout = layout_line_chart(chart, kept);
  if (!layout) {
    draw_no_data(svg);
    return std::move(svg).finish();
  }
  draw_x_axis(svg, layout->area, layout->x, chart.x_label);
  draw_y_axis(svg, layout->area, layout->y_left, chart.y_label, Side::left);
  if (layout->y_right) {
    draw_y_axis(svg, layout->area, *layout->y_right, chart.y_right_label, Side::right);
  }
  draw_frame(svg, layout->area);
  draw_thresholds(svg, *layout, chart);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    draw_series(svg, *layout, kept[i], chart.series[i].right_axis, series_colour(i));
  }
  draw_markers(svg, *layout, chart);
  draw_legend(svg, chart, layout->y_right.has_value());
  return std::move(svg).finish();
}

std::string render_roofline_svg(const RooflineChart& chart) {
  Svg svg(chart.title);
  draw_headings(svg, chart.title, chart.subtitle);
  const double peak = chart.peak_flops_per_s;
  const double bandwidth = chart.bandwidth_bytes_per_s;
  if (!positive(peak) || !positive(bandwidth) || !positive(peak / bandwidth)) {
    draw_no_data(svg);
    return std::move(svg).finish();
  }
  // x covers the ridge and every point's intensity, y the roof and every point.
  Range intensity;
  Range flops;
  intensity.add(peak / bandwidth);
  flops.add(peak);
  for (const RooflinePoint& p : chart.points) {
    if (!positive(p.intensity) || !positive(p.flops_per_s)) continue;
    intensity.add(p.intensity);
    flops.add(p.flops_per_s);
  }
  // A decade of margin each side of the intensities; the roof's low end sets the lowest y.
  const Axis x = log_axis(intensity.lo / 10, intensity.hi * 10, 10);
  if (positive(bandwidth * x.lo)) flops.add(bandwidth * x.lo);
  const Axis y = log_axis(flops.lo, flops.hi * 2, 10);

  const PlotArea area;
  draw_x_axis(svg, area, x, "arithmetic intensity (FLOP/byte)");
  draw_y_axis(svg, area, y, "FLOP/s", Side::left);
  draw_frame(svg, area);
  draw_roof(svg, area, x, y, chart);
  draw_roofline_points(svg, area, x, y, chart.points);
  return std::move(svg).finish();
}

std::string render_bar_chart(const std::vector<std::pair<std::string, std::int64_t>>& parts,
                             int width) {
  width = std::max(width, 1);
  std::int64_t largest = 0;
  double sum = 0;  // a double: a sum of int64 parts may overflow
  std::size_t label_width = 0;
  for (const auto& [label, bytes] : parts) {
    if (bytes <= 0) continue;
    largest = std::max(largest, bytes);
    sum += static_cast<double>(bytes);
    label_width = std::max(label_width, display_width(label));
  }
  if (largest == 0) return "";

  std::string out;
  for (const auto& [label, bytes] : parts) {
    if (bytes <= 0) continue;
    const double share = static_cast<double>(bytes) / static_cast<double>(largest);
    // Round to the nearest eighth, but a non-zero part always shows at least one eighth.
    const long long eighths = std::max(1LL, std::llround(share * width * 8));
    const long long percent = std::llround(static_cast<double>(bytes) / sum * 100);
    out += label;
    out.append(label_width - display_width(label) + 1, ' ');
    out += bar_cells(eighths, width);
    out += fmt::format("  {}  {}%\n", format_bytes(bytes), percent);
  }
  return out;
}

}  // namespace trace
