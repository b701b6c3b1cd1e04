// LocalServers: a parameter-server cluster of `distflow server` processes on
// loopback, started from this program's own binary — `num_ps` tasks of the
// "ps" job and `num_workers` of the "worker" job. Each task binds a free
// port when first started and keeps it: a worker killed and restarted comes
// back at the same address, as a restarted machine of a real cluster does,
// with a new incarnation.
//
// The `train` and `demo` commands' local clusters and the benchmarks start
// their tasks here. Each task is started by SpawnServer
// (launcher/server_child.h), so any thread may start them; each runs in
// its own process group (a terminal's Ctrl-C reaches only this process) and
// is killed when the thread that started it ends (PR_SET_PDEATHSIG). Their
// stderr is kept in `log_path` when given, else discarded. Every wait is
// bounded. All methods are thread-safe; the destructor stops every task.
#ifndef DISTFLOW_TOOLS_LAUNCHER_LOCAL_SERVERS_H_
#define DISTFLOW_TOOLS_LAUNCHER_LOCAL_SERVERS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/cluster.pb.h"
#include "launcher/server_child.h"

namespace distflow {

class LocalServers {
 public:
  // Starts the tasks from `binary` (a `distflow` program). Unavailable
  // naming the task when one does not print its address within
  // kStartTimeout.
  static absl::StatusOr<std::unique_ptr<LocalServers>> Start(const std::string& binary, int num_ps,
                                                             int num_workers,
                                                             const std::string& log_path = "");
  ~LocalServers();
  LocalServers(const LocalServers&) = delete;
  LocalServers& operator=(const LocalServers&) = delete;

  // The "ps" and "worker" jobs with every task's address.
  ClusterDef cluster_def() const;

  struct TaskInfo {
    std::string job;
    int index = 0;
    pid_t pid = -1;  // -1 while not running
    int port = 0;
    std::string name() const;     // "/job:J/replica:0/task:T"
    std::string address() const;  // "127.0.0.1:PORT"
  };
  // Every task, ps tasks first, each job by index.
  std::vector<TaskInfo> tasks() const;
  // OK while every task runs (or was stopped by Kill); once one has exited,
  // been killed by someone else or been frozen (SIGSTOP, a debugger),
  // Unavailable naming the task, its pid and what happened — the same
  // status on every later call.
  absl::Status CheckTasks();
  // Kills every task (SIGKILL) and reaps it.
  void KillAll();
  int num_workers() const;

  // The tasks of `job` ("ps" or "worker").
  int num_tasks(const std::string& job) const;

  // Kills task `index` of `job` (SIGKILL) and reaps it. NotFound for an
  // unknown task; OK when it was not running.
  absl::Status Kill(const std::string& job, int index);
  // Starts task `index` of `job` again at its address; FailedPrecondition
  // while it runs, Unavailable when it does not come up.
  absl::Status Restart(const std::string& job, int index);
  // Sends `sig` (SIGSTOP, SIGCONT) to a running task; NotFound for an
  // unknown task, FailedPrecondition when it is not running.
  absl::Status Signal(const std::string& job, int index, int sig);
  // Asks every task to stop (SIGTERM), waits up to kStopGrace, then kills
  // what is left. Idempotent.
  void Stop();

  static constexpr absl::Duration kStartTimeout = absl::Seconds(30);
  static constexpr absl::Duration kStopGrace = absl::Seconds(5);

 private:
  struct Task {
    std::string job;
    int index = 0;
    int count = 0;  // tasks in the job
    int port = 0;   // 0 until first started
    pid_t pid = -1;
  };
  static std::string TaskName(const std::string& job, int index);

  LocalServers(std::string binary, std::string log_path)
      : binary_(std::move(binary)), log_path_(std::move(log_path)) {}
  // Starts `task` (at its port, or a free one) and records its pid and port.
  absl::Status StartLocked(Task& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Task* FindLocked(const std::string& job, int index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string binary_;
  const std::string log_path_;
  mutable absl::Mutex mu_;
  std::vector<Task> tasks_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_LAUNCHER_LOCAL_SERVERS_H_
