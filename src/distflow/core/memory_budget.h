// The process's budget for tensor memory: a cap on the bytes all live tensor
// buffers hold together, so a process refuses a step's allocation with
// ResourceExhausted instead of being killed by the kernel's OOM killer.
// Tensor buffers reserve their bytes when allocated and release them when
// freed; with no budget (the default) nothing is counted, and with one each
// reservation is one relaxed atomic add (and a subtract when it does not
// fit). Memory gRPC or a caller owns (external buffers) is not counted. The
// budget starts as DISTFLOW_MEMORY_BUDGET_MB MiB when that holds a number
// > 0. All functions are thread-safe.
#ifndef DISTFLOW_CORE_MEMORY_BUDGET_H_
#define DISTFLOW_CORE_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace distflow {
namespace memory_budget {

namespace internal {
std::atomic<int64_t>& LimitCell();
std::atomic<int64_t>& InUseCell();
}  // namespace internal

// The budget in bytes; 0 when there is none.
inline int64_t Limit() { return internal::LimitCell().load(std::memory_order_relaxed); }
// Sets the budget (0 or less: none). Buffers already live stay counted
// iff they were counted when allocated.
void SetLimit(int64_t bytes);
// Bytes reserved by live buffers allocated while a budget was set.
inline int64_t InUse() { return internal::InUseCell().load(std::memory_order_relaxed); }

// Reserves `bytes` (>= 0). True iff there is a budget and the reservation
// fits in it; the caller then owes one Release(bytes). False with nothing
// reserved when there is no budget (*over_budget = false) or when it does
// not fit (*over_budget = true).
inline bool TryReserve(int64_t bytes, bool* over_budget) {
  const int64_t limit = Limit();
  *over_budget = false;
  if (limit <= 0) return false;
  if (bytes <= limit) {
    const int64_t before = internal::InUseCell().fetch_add(bytes, std::memory_order_relaxed);
    if (before <= limit - bytes) return true;
    internal::InUseCell().fetch_sub(bytes, std::memory_order_relaxed);
  }
  *over_budget = true;
  return false;
}
inline void Release(int64_t bytes) {
  internal::InUseCell().fetch_sub(bytes, std::memory_order_relaxed);
}

// Bytes held in the budget for something that is not a tensor buffer: a
// decoded request, a response being encoded, a copy of a feed. Released
// when the reservation is destroyed (or moved from and reassigned). Empty,
// holding nothing, when there is no budget.
class Reservation {
 public:
  Reservation() = default;
  // Reserves `bytes` (clamped to >= 0). ResourceExhausted naming `what`,
  // the bytes and the budget when they do not fit; an empty reservation
  // when there is no budget.
  static absl::StatusOr<Reservation> Make(int64_t bytes, const std::string& what);
  Reservation(Reservation&& other) noexcept : bytes_(other.bytes_) { other.bytes_ = 0; }
  Reservation& operator=(Reservation&& other) noexcept {
    if (this != &other) {
      Reset();
      bytes_ = other.bytes_;
      other.bytes_ = 0;
    }
    return *this;
  }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() { Reset(); }

  // Releases what is held.
  void Reset() {
    if (bytes_ > 0) Release(bytes_);
    bytes_ = 0;
  }
  int64_t bytes() const { return bytes_; }

 private:
  explicit Reservation(int64_t bytes) : bytes_(bytes) {}
  int64_t bytes_ = 0;
};

}  // namespace memory_budget
}  // namespace distflow

#endif  // DISTFLOW_CORE_MEMORY_BUDGET_H_
