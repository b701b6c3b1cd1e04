// A cluster of `distflow` server tasks as child processes on loopback, for
// examples and tests. Each task binds a free port; the children are started
// by fork() before the caller creates any thread, and each one dies with its
// parent (PR_SET_PDEATHSIG), so none is left behind even when the parent is
// killed. Stop() (or the destructor) terminates them. Not thread-safe.
#ifndef DISTFLOW_TOOLS_DEMO_LOCAL_CLUSTER_H_
#define DISTFLOW_TOOLS_DEMO_LOCAL_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/cluster.pb.h"

namespace distflow {

class LocalCluster {
 public:
  struct Task {
    std::string job;
    int index = 0;
    pid_t pid = -1;
    int port = 0;
    std::string name() const;     // "/job:J/replica:0/task:T"
    std::string address() const;  // "127.0.0.1:PORT"
  };

  // Starts `num_ps` "ps" tasks and `num_workers` "worker" tasks.
  // REQUIRES: the calling process has no threads yet besides this one.
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Start(int num_ps, int num_workers);
  ~LocalCluster();

  const std::vector<Task>& tasks() const { return tasks_; }
  const Task& worker(int i) const;
  ClusterDef cluster_def() const;
  // Sends SIGTERM to every task and reaps them.
  void Stop();

 private:
  LocalCluster() = default;
  std::vector<Task> tasks_;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_DEMO_LOCAL_CLUSTER_H_
