#include "distflow/core/memory_budget.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

absl::StatusOr<Reservation> Reservation::Make(int64_t bytes, const std::string& what) {
  if (bytes < 0) bytes = 0;
  bool over_budget;
  if (TryReserve(bytes, &over_budget)) return Reservation(bytes);
  if (!over_budget) return Reservation();
  return absl::ResourceExhaustedError(
      absl::StrCat(what, ": ", bytes, " more bytes do not fit in the process's memory budget of ",
                   Limit(), " bytes (", InUse(),
                   " in use; distflow server --memory-budget-mb, DISTFLOW_MEMORY_BUDGET_MB)"));
}

}  // namespace memory_budget
}  // namespace distflow
