#pragma once
/// The report's pictures as chart data (render/chart.hpp draws them): serving throughput and
/// per-user speed against concurrency, and the model's operating points on the first card's
/// roofline.
#include "trace/render/chart.hpp"
#include "trace/report/report.hpp"

namespace trace {

/// Total tokens/s (left axis) and tokens/s per user (right axis) against concurrency on the
/// first serving card, expected and bound, with the best point and the --min-user-tps floor.
LineChart serving_chart(const Report& report);
/// The first serving card's roofline with decode at one user, decode at the memory cap, and a
/// prompt's prefill placed on it.
RooflineChart roofline_chart(const Report& report);
/// The SVG `--plot` writes: the serving chart with --mode serve, else the roofline.
std::string plot_svg(const Report& report);

}  // namespace trace
