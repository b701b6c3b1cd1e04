#include "distflow/core/memory_budget.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "distflow/core/checked_math.h"

namespace distflow {
namespace memory_budget {
namespace {

int64_t LimitFromEnvironment() {
  const char* env = std::getenv("DISTFLOW_MEMORY_BUDGET_MB");
  int64_t mb;
  int64_t bytes;
  if (env == nullptr || !absl::SimpleAtoi(env, &mb) || mb <= 0 ||
      !MultiplyWithoutOverflow<int64_t>(mb, int64_t{1} << 20, &bytes)) {
    return 0;
  }
  return bytes;
}

}  // namespace

namespace internal {

std::atomic<int64_t>& LimitCell() {
  static std::atomic<int64_t> cell(LimitFromEnvironment());
  return cell;
}

std::atomic<int64_t>& InUseCell() {
  static std::atomic<int64_t> cell(0);
  return cell;
}

}  // namespace internal

void SetLimit(int64_t bytes) {
  internal::LimitCell().store(bytes < 0 ? 0 : bytes, std::memory_order_relaxed);
}

}  // namespace memory_budget
}  // namespace distflow
