#include "distflow/training/partitioned_variable.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"

namespace distflow {

int NumShards(const TensorShape& shape, DataType dtype, int64_t min_shard_bytes, int max_shards) {
  if (min_shard_bytes <= 0 || max_shards <= 1 || shape.dims() == 0) return 1;
  const int64_t rows = shape.dim_size(0);
  const int64_t bytes = shape.num_elements() * DataTypeSize(dtype);
  const int64_t by_size = std::max<int64_t>(1, bytes / min_shard_bytes);
  return static_cast<int>(std::max<int64_t>(1, std::min({by_size, rows, int64_t{max_shards}})));
}

PartitionedVariable::PartitionedVariable(const Scope& scope, const std::string& name,
                                         const Input& initial_value, const TensorShape& shape,
                                         int num_shards) {
  if (!scope.ok()) return;
  const int64_t rows = shape.dims() == 0 ? 1 : shape.dim_size(0);
  if (num_shards < 1 || num_shards > rows || (shape.dims() == 0 && num_shards != 1)) {
    scope.UpdateStatus(errors::InvalidArgument("variable '", name, "' of shape ",
                                               shape.DebugString(), " cannot have ", num_shards,
                                               " shards"));
    return;
  }
  if (num_shards == 1) {
    shards_.emplace_back(scope.WithOpName(name), initial_value);
    return;
  }
  const Output value = ops::Identity(scope.WithOpName(name, "/initial_value"), initial_value);
  const int64_t base = rows / num_shards, extra = rows % num_shards;
  int64_t offset = 0;
  for (int i = 0; i < num_shards; ++i) {
    const int64_t shard_rows = base + (i < extra ? 1 : 0);
    Tensor begin(DT_INT64, TensorShape({shape.dims()}));
    Tensor size(DT_INT64, TensorShape({shape.dims()}));
    for (int d = 0; d < shape.dims(); ++d) {
      begin.flat<int64_t>()[d] = d == 0 ? offset : 0;
      size.flat<int64_t>()[d] = d == 0 ? shard_rows : -1;
    }
    const Scope s = scope.NewSubScope(absl::StrCat(name, "/split_", i));
    const Output part = ops::Slice(s, value, ops::Const(s, begin), ops::Const(s, size));
    shards_.emplace_back(scope.WithOpName(name, "/part_", i), part);
    offset += shard_rows;
  }
}

Output PartitionedVariable::Read(const Scope& scope) const {
  if (shards_.size() == 1) return shards_[0].Read(scope);
  OutputList reads;
  for (const Variable& shard : shards_) reads.push_back(shard.Read(scope));
  return ops::Concat(scope, reads, ops::Const(scope, 0));
}

}  // namespace distflow
