// A cluster of `distflow` server tasks as child processes on loopback, for
// examples and tests. Each task binds a free port; the children are started
// by fork() before the caller creates any thread, and each one dies with its
// parent (PR_SET_PDEATHSIG), so none is left behind even when the parent is
// killed. CheckTasks() tells a task that died or was frozen (SIGSTOP) from
// one that serves; Stop() (or the destructor) terminates them all, frozen
// ones included, in bounded time. Start is not thread-safe; the other
// methods are.
#ifndef DISTFLOW_TOOLS_DEMO_LOCAL_CLUSTER_H_
#define DISTFLOW_TOOLS_DEMO_LOCAL_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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

  // The tasks as started (pids stay as they were when Start returned).
  const std::vector<Task>& tasks() const { return tasks_; }
  const Task& worker(int i) const;
  ClusterDef cluster_def() const;
  // OK while every task runs; once one has exited, been killed or been
  // stopped (SIGSTOP, a debugger), Unavailable naming the task, its pid and
  // what happened — the same status on every later call.
  absl::Status CheckTasks();
  // Kills every task (SIGKILL) and reaps it.
  void Kill();
  // Asks every task to stop (SIGTERM, and SIGCONT so a frozen one can),
  // waits up to kStopGrace for them, then kills what is left; reaps all.
  void Stop();

  static constexpr absl::Duration kStopGrace = absl::Seconds(5);

 private:
  LocalCluster() = default;
  // Reaps `task` when it has exited, or notes that it is stopped; the
  // failure it shows, or OK.
  absl::Status PollLocked(size_t task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<Task> tasks_;
  absl::Mutex mu_;
  // Per task: still to be reaped.
  std::vector<bool> live_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_DEMO_LOCAL_CLUSTER_H_
