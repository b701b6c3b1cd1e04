// Prometheus' text exposition format (version 0.0.4), written one metric
// family at a time:
//
//   PrometheusText t;
//   t.Family("distflow_closures_total", "counter", "Closures by what became of them.");
//   t.Sample("distflow_closures_total", {{"state", "done"}}, 42);
//   std::string page = t.text();
//
// Names must match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
// [a-zA-Z_][a-zA-Z0-9_]*; a bad one is a programming error, so it is
// replaced by "invalid_name" rather than producing a page Prometheus
// refuses. Label values and help texts are escaped as the format says.
// Not thread-safe: one writer per scrape.
#ifndef DISTFLOW_MONITORING_PROMETHEUS_TEXT_H_
#define DISTFLOW_MONITORING_PROMETHEUS_TEXT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace distflow {

using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  // Starts a family: its # HELP and # TYPE lines. `type` is counter,
  // gauge, histogram or untyped.
  void Family(absl::string_view name, absl::string_view type, absl::string_view help);
  // One sample line; NaN and infinities as Prometheus spells them.
  void Sample(absl::string_view name, const PrometheusLabels& labels, double value);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// The content type of a page in this format.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace distflow

#endif  // DISTFLOW_MONITORING_PROMETHEUS_TEXT_H_
