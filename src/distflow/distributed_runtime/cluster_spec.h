// The tasks of a cluster and how a server learns which one it is: from
// `--cluster "ps=h:p;worker=h:p,h:p" --job worker --task 0` flags or from the
// TF_CONFIG JSON ({"cluster": {"ps": ["h:p"], ...}, "task": {"type", "index"}}).
// Values are immutable after parsing; safe to share between threads.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_CLUSTER_SPEC_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_CLUSTER_SPEC_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/cluster.pb.h"
#include "distflow/tensorflow_server.pb.h"

namespace distflow {

class ClusterSpec {
 public:
  ClusterSpec() = default;
  // InvalidArgument naming the job or address when malformed (empty job,
  // address without a port, duplicate job).
  static absl::StatusOr<ClusterSpec> FromClusterDef(const ClusterDef& def);
  // "ps=127.0.0.1:2222;worker=127.0.0.1:2223,127.0.0.1:2224".
  static absl::StatusOr<ClusterSpec> FromFlag(absl::string_view flag);

  const ClusterDef& def() const { return def_; }
  std::vector<std::string> jobs() const;
  // Task indices of a job in increasing order; empty for an unknown job.
  std::vector<int> TaskIndices(absl::string_view job) const;
  int NumTasks(absl::string_view job) const;
  // "host:port" of /job:J/task:T; NotFound naming the task when absent.
  absl::StatusOr<std::string> TaskAddress(absl::string_view job, int task) const;
  // Every task as "/job:J/replica:0/task:T", sorted.
  std::vector<std::string> TaskNames() const;
  // Replaces the address of an existing task (a server that bound port 0
  // learns its real port after the spec was made). NotFound when absent.
  absl::Status SetTaskAddress(absl::string_view job, int task, const std::string& address);

 private:
  ClusterDef def_;
};

// Parses TF_CONFIG into a ServerDef (cluster, job_name, task_index).
absl::StatusOr<ServerDef> ServerDefFromTfConfig(absl::string_view json);

// Builds a ServerDef from the --cluster/--job/--task flags, checking the task
// exists in the cluster.
absl::StatusOr<ServerDef> MakeServerDef(absl::string_view cluster_flag, absl::string_view job,
                                        int task);

// Splits "host:port"; InvalidArgument on a missing or non-numeric port.
absl::Status SplitHostPort(absl::string_view address, std::string* host, int* port);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_CLUSTER_SPEC_H_
