#include "graph_runner.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "distflow/common_runtime/direct_session.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor_shape.h"
#include "fuzz_limits.h"

namespace distflow {
namespace fuzz {
namespace {

constexpr int kMaxSingleFetches = 4;

// A small tensor for a Placeholder: its dtype, its shape with unknown
// dimensions (and an unknown rank) made 1. Nothing when the attrs are bad.
bool MakeFeed(const NodeDef& def, Tensor* out) {
  DataType dtype;
  if (!GetNodeAttr(AttrSlice(def), "dtype", &dtype).ok()) return false;
  std::vector<int64_t> dims;
  PartialTensorShape partial;
  if (GetNodeAttr(AttrSlice(def), "shape", &partial).ok() && !partial.unknown_rank()) {
    for (int64_t d : partial.dim_sizes()) dims.push_back(d < 0 ? 1 : d);
  }
  TensorShape shape;
  if (!TensorShape::BuildTensorShape(dims, &shape).ok()) return false;
  if (!Tensor::Allocate(dtype, shape, out).ok()) return false;
  if (dtype != DT_STRING && out->TotalBytes() > 0) {
    std::memset(out->raw_data(), 0, out->TotalBytes());
  }
  return true;
}

}  // namespace

void ImportAndRun(const GraphDef& graph_def) {
  SetFuzzLimits();
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(2);
  absl::StatusOr<std::unique_ptr<Session>> session = NewDirectSession(options);
  if (!session.ok() || !(*session)->Create(graph_def).ok()) return;

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> targets;
  std::vector<std::string> fetches;
  for (const NodeDef& def : graph_def.node()) {
    if (def.op() == "Placeholder") {
      Tensor value;
      if (MakeFeed(def, &value)) feeds.emplace_back(def.name() + ":0", std::move(value));
      continue;
    }
    targets.push_back(def.name());
    if (static_cast<int>(fetches.size()) < kMaxSingleFetches) fetches.push_back(def.name() + ":0");
  }
  RunOptions run_options;
  run_options.set_timeout_in_ms(kStepTimeoutMs);
  std::vector<Tensor> outputs;
  (*session)->Run(run_options, feeds, {}, targets, &outputs, nullptr).IgnoreError();
  for (const std::string& fetch : fetches) {
    (*session)->Run(run_options, feeds, {fetch}, {}, &outputs, nullptr).IgnoreError();
  }
}

}  // namespace fuzz
}  // namespace distflow
