// A Prometheus histogram: cumulative counts of observations at or under
// each upper bound, their count and their sum. Thread-safe: any thread may
// Observe while another writes the histogram to a page.
#ifndef DISTFLOW_MONITORING_HISTOGRAM_H_
#define DISTFLOW_MONITORING_HISTOGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/monitoring/prometheus_text.h"

namespace distflow {

class Histogram {
 public:
  // `bounds`: increasing upper bounds; +Inf is implied.
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);
  int64_t count() const;
  double sum() const;

  // The family's samples (NAME_bucket{le=...}, NAME_sum, NAME_count), after
  // `labels`; the caller wrote the family's header.
  void WriteSamples(const std::string& name, const PrometheusLabels& labels,
                    PrometheusText* out) const;

 private:
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::vector<int64_t> counts_ ABSL_GUARDED_BY(mu_);  // per bucket, not cumulative
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_MONITORING_HISTOGRAM_H_
