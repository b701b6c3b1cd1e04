// .npy bytes -> Tensor. A file that parses must hold exactly the tensor's
// bytes after its header.
#include <cstdint>
#include <cstdlib>

#include "fuzz_limits.h"
#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Tensor> t = ParseNpy(bytes, "fuzz.npy");
  if (t.ok() && t->TotalBytes() > size) std::abort();
  return 0;
}
