// export.meta bytes -> a session bundle read as a SavedModel (its
// serving_signatures and serving_assets collections converted) -> loaded
// from a scratch bundle directory without a checkpoint (the graph imported
// into a session under the fuzz caps, then NotFound for the checkpoint).
// Errors are the expected outcome; a crash, sanitizer report or hang is what
// the fuzzer is looking for.
#include <cstdint>
#include <filesystem>
#include <string>

#include "distflow/core/env.h"
#include "distflow/saved_model/loader.h"
#include "distflow/saved_model/session_bundle.h"
#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  const std::string dir = fuzz::ScratchDir() + "/bundle";
  std::filesystem::create_directories(dir);
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!WriteStringToFileAtomic(dir + "/export.meta", bytes).ok()) return 0;
  absl::StatusOr<SavedModel> model = ReadSessionBundle(dir);
  if (!model.ok()) return 0;
  RunOptions run_options;
  run_options.set_timeout_in_ms(fuzz::kStepTimeoutMs);
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(2);
  SavedModelBundle bundle;
  LoadSavedModel(options, run_options, dir, {"serve"}, &bundle).IgnoreError();
  return 0;
}
