#include "distflow/monitoring/histogram.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace distflow {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  // The first bound at or over the value; past the last: the +Inf bucket.
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  absl::MutexLock l(&mu_);
  ++counts_[bucket];
  ++count_;
  sum_ += value;
}

int64_t Histogram::count() const {
  absl::MutexLock l(&mu_);
  return count_;
}

double Histogram::sum() const {
  absl::MutexLock l(&mu_);
  return sum_;
}

void Histogram::WriteSamples(const std::string& name, const PrometheusLabels& labels,
                             PrometheusText* out) const {
  absl::MutexLock l(&mu_);
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    PrometheusLabels with_le = labels;
    with_le.emplace_back("le", i < bounds_.size() ? absl::StrCat(bounds_[i]) : "+Inf");
    out->Sample(absl::StrCat(name, "_bucket"), with_le, static_cast<double>(cumulative));
  }
  out->Sample(absl::StrCat(name, "_sum"), labels, sum_);
  out->Sample(absl::StrCat(name, "_count"), labels, static_cast<double>(count_));
}

}  // namespace distflow
