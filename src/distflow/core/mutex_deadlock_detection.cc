// Abseil as the system packages build it (without NDEBUG) checks every
// Mutex acquisition for lock-order cycles in one process-wide graph behind
// a global lock: about 40 ns more per nested acquisition, and a point of
// contention between every thread of the runtime. Builds of distflow with
// NDEBUG turn the check off when the library loads; builds with assertions
// keep it.
#include "absl/synchronization/mutex.h"

namespace distflow {
namespace {

#ifdef NDEBUG
[[maybe_unused]] const bool kDeadlockDetectionOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();
#endif

}  // namespace
}  // namespace distflow
