// ParameterServerStrategy: the cluster a coordinator trains on and where its
// variables live (as tf.distribute's ParameterServerStrategy). The cluster comes from
// a ClusterDef, the `--cluster "ps=h:p;worker=h:p,h:p"` flag or the chief's
// TF_CONFIG; only its "ps" and "worker" jobs are kept (the chief is the
// process holding the coordinator and serves nothing).
//
// Variables built in VariableScope() go to the ps tasks round-robin in
// creation order, ops colocated with them follow them, and every other op
// stays unplaced so that it runs on whichever worker runs the closure.
// MaxShards() and min_shard_bytes() configure partitioned_variable.h's
// NumShards so that a large variable is split over the ps tasks.
//
// A strategy is an immutable value; safe to share between threads.
#ifndef DISTFLOW_COORDINATOR_PARAMETER_SERVER_STRATEGY_H_
#define DISTFLOW_COORDINATOR_PARAMETER_SERVER_STRATEGY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/cc/scope.h"
#include "distflow/cluster.pb.h"
#include "distflow/coordinator/cluster_coordinator.h"

namespace distflow {

class ParameterServerStrategy {
 public:
  // InvalidArgument naming what is wrong when the cluster has no ps task, no
  // worker task, or a malformed address.
  static absl::StatusOr<ParameterServerStrategy> FromClusterDef(const ClusterDef& cluster);
  static absl::StatusOr<ParameterServerStrategy> FromFlag(absl::string_view cluster_flag);
  // TF_CONFIG's JSON, as the chief sees it.
  static absl::StatusOr<ParameterServerStrategy> FromTfConfig(absl::string_view json);

  // The ps and worker jobs.
  const ClusterDef& cluster() const { return cluster_; }
  int num_ps() const { return num_ps_; }
  int num_workers() const { return num_workers_; }

  // `scope` with the placement rule above.
  Scope VariableScope(const Scope& scope) const;

  // Variables of at least two shards' worth of bytes are split (0: never).
  int64_t min_shard_bytes() const { return min_shard_bytes_; }
  ParameterServerStrategy WithMinShardBytes(int64_t bytes) const;
  // At most one shard per ps task.
  int MaxShards() const { return num_ps_; }

  // Coordinator options for this cluster (the other fields at their
  // defaults).
  CoordinatorOptions MakeCoordinatorOptions() const;

 private:
  ParameterServerStrategy() = default;

  ClusterDef cluster_;
  int num_ps_ = 0;
  int num_workers_ = 0;
  int64_t min_shard_bytes_ = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_PARAMETER_SERVER_STRATEGY_H_
