#pragma once
/// Pictures: standalone SVG charts (`--plot FILE.svg`) and the terminal's bar chart of the
/// memory breakdown. Pure functions from plain data to text; the callers map the cost and memory
/// estimates onto these structs.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trace {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string name;                 ///< legend text
  std::vector<ChartPoint> points;   ///< drawn in order as a polyline with a marker per point
  bool right_axis = false;          ///< plotted against the right-hand y axis
};

/// A labelled point drawn on top of the series (e.g. "best: 64 users, 3,120 tok/s").
struct ChartMarker {
  ChartPoint at;
  std::string label;
  bool right_axis = false;
};

/// A horizontal dashed line across the plot (e.g. the --min-user-tps floor).
struct ChartThreshold {
  double y = 0;
  std::string label;
  bool right_axis = false;
};

struct LineChart {
  std::string title;
  std::string subtitle;  ///< one line under the title: model, card, assumptions
  std::string x_label;
  std::string y_label;        ///< left axis
  std::string y_right_label;  ///< right axis; empty when no series uses it
  bool log_x = false;         ///< log2-spaced ticks when the x values are powers of two
  std::vector<ChartSeries> series;
  std::vector<ChartMarker> markers;
  std::vector<ChartThreshold> thresholds;
};

/// A roofline: attainable FLOP/s = min(peak, bandwidth x arithmetic intensity), log-log, with the
/// model's operating points placed on it.
struct RooflinePoint {
  std::string label;           ///< "decode, 1 user", "prefill 2,048 tokens", "training step"
  double intensity = 0;        ///< FLOPs per byte moved from memory
  double flops_per_s = 0;      ///< attained (or bound) FLOP/s at that point
};

struct RooflineChart {
  std::string title;
  std::string subtitle;
  double peak_flops_per_s = 0;      ///< the compute roof
  std::string peak_label;           ///< "bf16 dense 989.5 TFLOP/s"
  double bandwidth_bytes_per_s = 0; ///< the slope of the memory roof
  std::vector<RooflinePoint> points;
};

/// A complete SVG document (starts with "<svg", ends with "</svg>\n"). Axes with "nice" ticks
/// and SI-suffixed labels (1k, 2.5M, 1.2T), a legend, every text XML-escaped. Empty series,
/// a single point, zero or equal values, NaN or infinite values (skipped) never crash and
/// never print "nan" or "inf".
std::string render_line_chart_svg(const LineChart& chart);
std::string render_roofline_svg(const RooflineChart& chart);

/// One bar per part: "weights      ██████████████▌        15.0 GiB  62%". Labels padded to the
/// longest, bars scaled to the largest part over `width` cells with eighth-block resolution,
/// the value formatted by format_bytes and the share of the sum. Parts of zero bytes are left
/// out; negative values count as zero. Returns "" for no parts.
std::string render_bar_chart(const std::vector<std::pair<std::string, std::int64_t>>& parts,
                             int width = 32);

}  // namespace trace
