#include "fuzz_limits.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include "distflow/core/file_roots.h"
#include "distflow/core/memory_budget.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {
namespace fuzz {

const std::string& ScratchDir() {
  static const std::string* dir = [] {
    char scratch[] = "/tmp/distflow_fuzz_XXXXXX";
    if (mkdtemp(scratch) == nullptr) std::abort();
    // Removed when the fuzzer exits normally; a crash leaves it to inspect.
    std::atexit([] { std::filesystem::remove_all(ScratchDir()); });
    return new std::string(scratch);
  }();
  return *dir;
}

void SetFuzzLimits() {
  static const bool done = [] {
    SetMaxTensorBytes(kMaxTensorBytes);
    memory_budget::SetLimit(kMemoryBudgetBytes);
    SetMaxGraphNodes(kMaxGraphNodes);
    if (!SetAllowedFileRoots({ScratchDir()}).ok()) std::abort();
    return true;
  }();
  (void)done;
}

}  // namespace fuzz
}  // namespace distflow
