// Process-wide caps every fuzz target sets before its first input, so that a
// claimed size in an input is refused by the library's own limits rather
// than by libFuzzer's memory limit, and so that what a fuzzed graph does
// stays small and inside a scratch directory. Not thread-safe: call from
// LLVMFuzzerInitialize or the first LLVMFuzzerTestOneInput.
#ifndef DISTFLOW_FUZZ_FUZZ_LIMITS_H_
#define DISTFLOW_FUZZ_FUZZ_LIMITS_H_

#include <cstdint>
#include <string>

namespace distflow {
namespace fuzz {

// The largest tensor an input may make the library allocate.
inline constexpr int64_t kMaxTensorBytes = int64_t{16} << 20;
// The process's memory budget while fuzzing: tensors, decoded requests,
// feed copies and fetch encodings all count (core/memory_budget.h), so
// inputs reach the budget's refusals as well as its successes.
inline constexpr int64_t kMemoryBudgetBytes = int64_t{64} << 20;
// The most nodes a fuzzed graph may have.
inline constexpr int64_t kMaxGraphNodes = 256;
// How long one fuzzed step may run before it is cancelled.
inline constexpr int64_t kStepTimeoutMs = 2000;

// Sets the tensor and graph caps, and confines file-touching ops (SaveV2,
// RestoreV2) to a fresh scratch directory. Idempotent.
void SetFuzzLimits();
// The scratch directory SetFuzzLimits made (the only place ops may touch),
// removed at a normal exit.
const std::string& ScratchDir();

}  // namespace fuzz
}  // namespace distflow

#endif  // DISTFLOW_FUZZ_FUZZ_LIMITS_H_
