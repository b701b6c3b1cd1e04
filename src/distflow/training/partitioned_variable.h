// PartitionedVariable: one logical variable stored as shards along its
// first dimension, each shard a Variable of its own (TensorFlow's
// PartitionedVariable with a min-size partitioner). Under a
// ReplicaDeviceSetter the shards go to the parameter servers round-robin,
// so a large weight spreads its memory, reads and updates over several ps
// tasks. Read() concatenates the shards where the value is used; gradients
// flow back through the concatenation to each shard, and an optimizer
// updates each shard on its own task.
//
// Shard i of "name" is the variable "name/part_i" and holds rows
// [offset_i, offset_i + rows_i) of the initial value; a single shard is the
// plain variable "name" (what an unpartitioned model checkpoints). A
// PartitionedVariable is a cheap value referring to nodes of the scope's
// graph; not thread-safe, like Scope.
#ifndef DISTFLOW_TRAINING_PARTITIONED_VARIABLE_H_
#define DISTFLOW_TRAINING_PARTITIONED_VARIABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "distflow/cc/scope.h"
#include "distflow/training/variable.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"

namespace distflow {

// How many shards a variable of `shape` and `dtype` gets: as many as keep
// every shard at least `min_shard_bytes` large, at most `max_shards` and at
// most the first dimension (TensorFlow's min_max_variable_partitioner).
// 1 when min_shard_bytes <= 0, max_shards <= 1 or the shape is a scalar.
int NumShards(const TensorShape& shape, DataType dtype, int64_t min_shard_bytes, int max_shards);

class PartitionedVariable {
 public:
  PartitionedVariable() = default;
  // The variable `name` holding `initial_value` (of fully known `shape`),
  // split into `num_shards` shards of near-equal row counts (the first ones
  // one row larger), created in `scope`. InvalidArgument in the scope when
  // num_shards is not in [1, shape.dim_size(0)] (scalars: exactly 1).
  PartitionedVariable(const Scope& scope, const std::string& name, const Input& initial_value,
                      const TensorShape& shape, int num_shards);

  const std::vector<Variable>& shards() const { return shards_; }
  // The whole value: the concatenation of every shard's ReadVariableOp
  // (built in `scope`, each read colocated with its shard).
  Output Read(const Scope& scope) const;

 private:
  std::vector<Variable> shards_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_PARTITIONED_VARIABLE_H_
