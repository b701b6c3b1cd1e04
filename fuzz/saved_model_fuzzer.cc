// saved_model.pb bytes -> a SavedModel -> LoadSavedModel from a scratch
// export directory (each tag set's graph imported into a session under the
// fuzz caps, its assets fed, its init op run; there are no variables to
// restore) -> each signature run once with its inputs fed small zero tensors
// of their dtype. Errors are the expected outcome for most inputs; a crash,
// sanitizer report or hang is what the fuzzer is looking for.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/env.h"
#include "distflow/saved_model/loader.h"
#include "distflow/saved_model/reader.h"
#include "fuzz_limits.h"

namespace {

constexpr int kMaxMetaGraphs = 2;
constexpr int kMaxSignatures = 4;

// Zeros of the input's dtype and shape, unknown dims (and rank) made 1.
bool MakeFeed(const distflow::TensorInfo& info, distflow::Tensor* out) {
  using namespace distflow;
  std::vector<int64_t> dims;
  if (!info.tensor_shape().unknown_rank()) {
    for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size() < 0 ? 1 : d.size());
  }
  TensorShape shape;
  if (!TensorShape::BuildTensorShape(dims, &shape).ok()) return false;
  if (!Tensor::Allocate(info.dtype(), shape, out).ok()) return false;
  if (info.dtype() != DT_STRING && out->TotalBytes() > 0) {
    std::memset(out->raw_data(), 0, out->TotalBytes());
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<SavedModel> model = ParseSavedModel(bytes, "fuzz/saved_model.pb");
  if (!model.ok()) return 0;
  const std::string dir = fuzz::ScratchDir() + "/export";
  std::filesystem::create_directories(dir);
  if (!WriteStringToFileAtomic(dir + "/saved_model.pb", bytes).ok()) return 0;
  RunOptions run_options;
  run_options.set_timeout_in_ms(fuzz::kStepTimeoutMs);
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(2);
  for (int m = 0; m < model->meta_graphs_size() && m < kMaxMetaGraphs; ++m) {
    const auto& tags = model->meta_graphs(m).meta_info_def().tags();
    SavedModelBundle bundle;
    if (!LoadSavedModel(options, run_options, dir, {tags.begin(), tags.end()}, &bundle).ok()) {
      continue;
    }
    int runs = 0;
    for (const auto& [key, sig] : bundle.meta_graph_def.signature_def()) {
      if (++runs > kMaxSignatures) break;
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (const auto& [k, info] : sig.inputs()) {
        Tensor t;
        if (MakeFeed(info, &t)) feeds.emplace_back(info.name(), std::move(t));
      }
      std::vector<std::string> fetches;
      for (const auto& [k, info] : sig.outputs()) fetches.push_back(info.name());
      std::vector<Tensor> outputs;
      bundle.session->Run(run_options, feeds, fetches, {}, &outputs, nullptr).IgnoreError();
    }
  }
  return 0;
}
