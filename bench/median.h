// The median of a sample, for every benchmark program (those that link no
// distflow library too).
#ifndef DISTFLOW_BENCH_MEDIAN_H_
#define DISTFLOW_BENCH_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace distflow {
namespace bench {

// REQUIRES: !v.empty().
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace bench
}  // namespace distflow

#endif  // DISTFLOW_BENCH_MEDIAN_H_
