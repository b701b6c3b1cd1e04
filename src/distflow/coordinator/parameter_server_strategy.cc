#include "distflow/coordinator/parameter_server_strategy.h"

#include <utility>

#include "distflow/training/device_setter.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"

namespace distflow {

namespace {
constexpr char kPsJob[] = "ps";
constexpr char kWorkerJob[] = "worker";
}  // namespace

absl::StatusOr<ParameterServerStrategy> ParameterServerStrategy::FromClusterDef(
    const ClusterDef& cluster) {
  DF_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::FromClusterDef(cluster));
  ParameterServerStrategy s;
  for (const JobDef& job : spec.def().job()) {
    if (job.name() == kPsJob || job.name() == kWorkerJob) *s.cluster_.add_job() = job;
  }
  s.num_ps_ = spec.NumTasks(kPsJob);
  s.num_workers_ = spec.NumTasks(kWorkerJob);
  if (s.num_ps_ == 0 || s.num_workers_ == 0) {
    return errors::InvalidArgument(
        "parameter-server training needs a 'ps' job and a 'worker' job with tasks; the cluster has ",
        s.num_ps_, " ps and ", s.num_workers_, " worker tasks");
  }
  // Round-robin placement names ps tasks 0..num_ps-1.
  const std::vector<int> ps_tasks = spec.TaskIndices(kPsJob);
  if (ps_tasks.back() != s.num_ps_ - 1) {
    return errors::InvalidArgument("the ps tasks must be numbered 0 to ", s.num_ps_ - 1);
  }
  return s;
}

absl::StatusOr<ParameterServerStrategy> ParameterServerStrategy::FromFlag(
    absl::string_view cluster_flag) {
  DF_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::FromFlag(cluster_flag));
  return FromClusterDef(spec.def());
}

absl::StatusOr<ParameterServerStrategy> ParameterServerStrategy::FromTfConfig(
    absl::string_view json) {
  DF_ASSIGN_OR_RETURN(ServerDef def, ServerDefFromTfConfig(json));
  return FromClusterDef(def.cluster());
}

Scope ParameterServerStrategy::VariableScope(const Scope& scope) const {
  return ReplicaDeviceSetter(scope, num_ps_, /*worker_device=*/"", kPsJob);
}

ParameterServerStrategy ParameterServerStrategy::WithMinShardBytes(int64_t bytes) const {
  ParameterServerStrategy s = *this;
  s.min_shard_bytes_ = bytes;
  return s;
}

CoordinatorOptions ParameterServerStrategy::MakeCoordinatorOptions() const {
  CoordinatorOptions o;
  o.cluster = cluster_;
  o.ps_job = kPsJob;
  o.worker_job = kWorkerJob;
  return o;
}

}  // namespace distflow
