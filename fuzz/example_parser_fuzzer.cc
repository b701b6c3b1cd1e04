// Bytes -> a batch of serialized tf.Example records -> ParseExamples with a
// config that has every kind of feature: fixed-length dense float and string
// (one with a default, one required), variable-length dense int64, sparse
// int64 and string, ragged float with int32 splits. The first byte picks a
// scalar or a batch; the rest is split into records at 0xFF 0xFE pairs.
// On success the outputs must have the shapes the config implies.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "distflow/kernels/example_parser.h"
#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  if (size == 0) return 0;
  const bool scalar = data[0] & 1;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> records;
  size_t start = 0;
  for (size_t i = 0; i + 1 < rest.size(); ++i) {
    if (static_cast<uint8_t>(rest[i]) == 0xFF && static_cast<uint8_t>(rest[i + 1]) == 0xFE) {
      records.push_back(rest.substr(start, i - start));
      start = i + 2;
    }
  }
  records.push_back(rest.substr(start));
  if (scalar) records.resize(1);
  const int64_t n = static_cast<int64_t>(records.size());
  Tensor serialized(DT_STRING, scalar ? TensorShape() : TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) serialized.flat<std::string>()[i] = records[i];

  ExampleParserConfig config;
  config.dense.push_back(
      {"x", DT_FLOAT, PartialTensorShape({2}), Tensor::FromVector<float>({0.5f, 1.5f})});
  config.dense.push_back({"name", DT_STRING, PartialTensorShape({}), Tensor(DT_STRING, {0})});
  config.dense.push_back(
      {"ids", DT_INT64, PartialTensorShape({-1, 2}), Tensor::Scalar<int64_t>(-1)});
  config.sparse.push_back({"tags", DT_STRING});
  config.sparse.push_back({"counts", DT_INT64});
  config.ragged.push_back({"w", DT_FLOAT, DT_INT32});
  absl::StatusOr<ParsedExamples> parsed = ParseExamples(config, serialized, Tensor(DT_STRING, {0}));
  if (!parsed.ok()) return 0;
  const int batch_dims = scalar ? 0 : 1;
  const Tensor& x = parsed->dense_values[0];
  if (x.dims() != batch_dims + 1 || x.dim_size(batch_dims) != 2) std::abort();
  if (parsed->dense_values[2].dims() != batch_dims + 2) std::abort();
  for (size_t i = 0; i < parsed->sparse_indices.size(); ++i) {
    if (parsed->sparse_indices[i].dim_size(0) != parsed->sparse_values[i].dim_size(0)) std::abort();
  }
  const Tensor& splits = parsed->ragged_splits[0];
  if (splits.NumElements() != (scalar ? 2 : n + 1) ||
      splits.flat<int32_t>()[splits.NumElements() - 1] != parsed->ragged_values[0].NumElements()) {
    std::abort();
  }
  return 0;
}
