// What `distflow serve` counts, and its Prometheus page
// (/monitoring/prometheus/metrics):
//   distflow_serving_requests_total{model,signature,method,code}   counter
//   distflow_serving_request_errors_total{model,signature,method}  counter
//   distflow_serving_request_latency_seconds{model,signature,method} histogram
//   distflow_serving_batch_size{model,signature}                    histogram (rows)
//   distflow_serving_model_loads_total{model,result}                counter (success|failure)
//   distflow_serving_model_unloads_total{model}                     counter
//   distflow_serving_model_versions{model,state}                    gauge
// Label values are names the server resolved (a configured model, a
// signature it has); a request that named none records "" there, so a
// stranger's made-up names never add series.
//
// Thread-safe.
#ifndef DISTFLOW_SERVING_SERVING_METRICS_H_
#define DISTFLOW_SERVING_SERVING_METRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/monitoring/histogram.h"

namespace distflow {

class ServingMetrics {
 public:
  void RecordRequest(const std::string& model, const std::string& signature,
                     const std::string& method, absl::StatusCode code, double seconds);
  void RecordBatch(const std::string& model, const std::string& signature, int64_t rows);
  void RecordLoad(const std::string& model, bool ok);
  void RecordUnload(const std::string& model);
  // The number of versions of `model` in each state ("AVAILABLE", ...).
  void SetVersionStates(const std::string& model, const std::map<std::string, int64_t>& states);

  // The page, in Prometheus' text format.
  std::string Render() const;

 private:
  struct Series {
    PrometheusLabels labels;
    double value = 0;
  };
  struct HistogramSeries {
    PrometheusLabels labels;
    std::unique_ptr<Histogram> histogram;
  };
  static std::string Key(const PrometheusLabels& labels);
  void Add(std::map<std::string, Series>* family, PrometheusLabels labels, double delta)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Histogram* FindHistogram(std::map<std::string, HistogramSeries>* family, PrometheusLabels labels,
                           const std::vector<double>& bounds) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Series> requests_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Series> errors_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, HistogramSeries> latency_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, HistogramSeries> batch_size_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Series> loads_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Series> unloads_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Series> versions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_SERVING_SERVING_METRICS_H_
