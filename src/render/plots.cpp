#include "trace/render/plots.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace trace {

namespace {

std::string card_subtitle(const Report& report, const ServingPlan& plan) {
  return fmt::format("{} on {} x {}, {} in + {} out tokens, {} peak", report.model_id, plan.gpus,
                     plan.gpu, report.serving_request.context_in,
                     report.serving_request.context_out, plan.compute_dtype);
}

}  // namespace

LineChart serving_chart(const Report& report) {
  LineChart chart;
  chart.title = "Serving throughput vs concurrency";
  chart.x_label = "concurrent requests";
  chart.y_label = "total output tokens/s";
  chart.y_right_label = "tokens/s per user";
  chart.log_x = true;
  if (report.serving.empty() || !report.serving.front().blocker.empty()) {
    chart.subtitle = report.serving.empty() ? report.model_id : report.serving.front().blocker;
    return chart;
  }
  const ServingPlan& plan = report.serving.front();
  chart.subtitle = card_subtitle(report, plan);
  ChartSeries total{"total tokens/s (expected)", {}, false};
  ChartSeries total_bound{"total tokens/s (roofline bound)", {}, false};
  ChartSeries user{"tokens/s per user (expected)", {}, true};
  for (const ServingPoint& point : plan.points) {
    const double users = static_cast<double>(point.concurrency);
    total.points.push_back({users, point.total_tokens_per_s});
    total_bound.points.push_back({users, point.bound_total_tokens_per_s});
    user.points.push_back({users, point.user_tokens_per_s});
  }
  chart.series = {total, total_bound, user};
  if (plan.best) {
    chart.markers.push_back({{static_cast<double>(plan.best->concurrency),
                              plan.best->total_tokens_per_s},
                             fmt::format("best: {} users, {:.0f} tok/s", plan.best->concurrency,
                                         plan.best->total_tokens_per_s),
                             false});
  }
  if (report.serving_request.min_user_tps > 0) {
    chart.thresholds.push_back({report.serving_request.min_user_tps,
                                fmt::format("--min-user-tps {}", report.serving_request.min_user_tps),
                                true});
  }
  return chart;
}

RooflineChart roofline_chart(const Report& report) {
  RooflineChart chart;
  chart.title = "Roofline";
  if (report.serving.empty() || !report.serving.front().blocker.empty()) {
    chart.subtitle = report.model_id;
    return chart;
  }
  const ServingPlan& plan = report.serving.front();
  chart.subtitle = card_subtitle(report, plan);
  chart.peak_flops_per_s = plan.peak_flops_per_s;
  chart.peak_label = fmt::format("{} dense {:.1f} TFLOP/s", plan.compute_dtype,
                                 plan.peak_flops_per_s / 1e12);
  chart.bandwidth_bytes_per_s = plan.bandwidth_bytes_per_s;
  const auto on_roof = [&](const std::string& label, double flops, double bytes) {
    if (!(flops > 0) || !(bytes > 0)) return;
    const double intensity = flops / bytes;
    chart.points.push_back(
        {label, intensity, std::min(plan.peak_flops_per_s, plan.bandwidth_bytes_per_s * intensity)});
  };
  if (!plan.points.empty()) {
    const ServingPoint& one = plan.points.front();
    on_roof("decode, 1 user", one.flops_per_step, one.bytes_per_step);
    const ServingPoint& most = plan.points.back();
    if (most.concurrency > 1) {
      on_roof(fmt::format("decode, {} users", most.concurrency), most.flops_per_step,
              most.bytes_per_step);
    }
    // A prompt alone: its FLOPs over the weights it streams once (the first decode step's bytes
    // less that step's KV is close enough: the weights dominate).
    const double prompt = prefill_flops(report.model, report.parameters,
                                        report.serving_request.context_in) /
                          static_cast<double>(plan.gpus);
    on_roof(fmt::format("prefill {} tokens", report.serving_request.context_in), prompt,
            one.bytes_per_step);
  }
  return chart;
}

std::string plot_svg(const Report& report) {
  if (report.only_mode == "serve") return render_line_chart_svg(serving_chart(report));
  return render_roofline_svg(roofline_chart(report));
}

}  // namespace trace
