#include "distflow/serving/serving_metrics.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace distflow {
namespace {

const std::vector<double>& LatencyBounds() {
  static const std::vector<double> bounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                             0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                             1,      2.5,     5,      10,    30};
  return bounds;
}

const std::vector<double>& BatchBounds() {
  static const std::vector<double> bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  return bounds;
}

}  // namespace

std::string ServingMetrics::Key(const PrometheusLabels& labels) {
  std::string key;
  for (const auto& [name, value] : labels) absl::StrAppend(&key, value.size(), ":", value, "|");
  return key;
}

void ServingMetrics::Add(std::map<std::string, Series>* family, PrometheusLabels labels,
                         double delta) {
  Series& s = (*family)[Key(labels)];
  if (s.labels.empty()) s.labels = std::move(labels);
  s.value += delta;
}

Histogram* ServingMetrics::FindHistogram(std::map<std::string, HistogramSeries>* family,
                                         PrometheusLabels labels,
                                         const std::vector<double>& bounds) {
  HistogramSeries& s = (*family)[Key(labels)];
  if (s.histogram == nullptr) {
    s.labels = std::move(labels);
    s.histogram = std::make_unique<Histogram>(bounds);
  }
  return s.histogram.get();
}

void ServingMetrics::RecordRequest(const std::string& model, const std::string& signature,
                                   const std::string& method, absl::StatusCode code,
                                   double seconds) {
  Histogram* latency;
  {
    absl::MutexLock lock(&mu_);
    Add(&requests_,
        {{"model", model},
         {"signature", signature},
         {"method", method},
         {"code", absl::StatusCodeToString(code)}},
        1);
    if (code != absl::StatusCode::kOk) {
      Add(&errors_, {{"model", model}, {"signature", signature}, {"method", method}}, 1);
    }
    latency =
        FindHistogram(&latency_, {{"model", model}, {"signature", signature}, {"method", method}},
                      LatencyBounds());
  }
  latency->Observe(seconds);
}

void ServingMetrics::RecordBatch(const std::string& model, const std::string& signature,
                                 int64_t rows) {
  Histogram* h;
  {
    absl::MutexLock lock(&mu_);
    h = FindHistogram(&batch_size_, {{"model", model}, {"signature", signature}}, BatchBounds());
  }
  h->Observe(static_cast<double>(rows));
}

void ServingMetrics::RecordLoad(const std::string& model, bool ok) {
  absl::MutexLock lock(&mu_);
  Add(&loads_, {{"model", model}, {"result", ok ? "success" : "failure"}}, 1);
}

void ServingMetrics::RecordUnload(const std::string& model) {
  absl::MutexLock lock(&mu_);
  Add(&unloads_, {{"model", model}}, 1);
}

void ServingMetrics::SetVersionStates(const std::string& model,
                                      const std::map<std::string, int64_t>& states) {
  absl::MutexLock lock(&mu_);
  for (auto& [key, series] : versions_) {
    if (series.labels[0].second == model) series.value = 0;
  }
  for (const auto& [state, n] : states) {
    versions_[Key({{"model", model}, {"state", state}})] = {{{"model", model}, {"state", state}},
                                                            static_cast<double>(n)};
  }
}

std::string ServingMetrics::Render() const {
  PrometheusText t;
  absl::MutexLock lock(&mu_);
  auto counters = [&](const char* name, const char* type, const char* help,
                      const std::map<std::string, Series>& family) {
    t.Family(name, type, help);
    for (const auto& [key, s] : family) t.Sample(name, s.labels, s.value);
  };
  auto histograms = [&](const char* name, const char* help,
                        const std::map<std::string, HistogramSeries>& family) {
    t.Family(name, "histogram", help);
    for (const auto& [key, s] : family) s.histogram->WriteSamples(name, s.labels, &t);
  };
  counters("distflow_serving_requests_total", "counter",
           "REST requests by model, signature, method and status code.", requests_);
  counters("distflow_serving_request_errors_total", "counter",
           "REST requests that failed, by model, signature and method.", errors_);
  histograms("distflow_serving_request_latency_seconds",
             "Time from a request's arrival to its answer, by model, signature and method.",
             latency_);
  histograms("distflow_serving_batch_size", "Rows per batched session call.", batch_size_);
  counters("distflow_serving_model_loads_total", "counter",
           "Model versions loaded, by model and result.", loads_);
  counters("distflow_serving_model_unloads_total", "counter",
           "Model versions taken out of service, by model.", unloads_);
  counters("distflow_serving_model_versions", "gauge",
           "Versions of each model by state (LOADING, AVAILABLE, END).", versions_);
  return t.text();
}

}  // namespace distflow
