#include "launcher/local_servers.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"

namespace distflow {

std::string LocalServers::TaskName(const std::string& job, int index) {
  return absl::StrCat("/job:", job, "/replica:0/task:", index);
}

std::string LocalServers::TaskInfo::name() const { return TaskName(job, index); }

std::string LocalServers::TaskInfo::address() const { return absl::StrCat("127.0.0.1:", port); }

absl::StatusOr<std::unique_ptr<LocalServers>> LocalServers::Start(const std::string& binary,
                                                                  int num_ps, int num_workers,
                                                                  const std::string& log_path) {
  if (num_ps < 1 || num_workers < 1) {
    return errors::InvalidArgument("a local cluster needs at least one ps and one worker, got ",
                                   num_ps, " ps and ", num_workers, " workers");
  }
  std::unique_ptr<LocalServers> servers(new LocalServers(binary, log_path));
  absl::MutexLock l(&servers->mu_);
  for (int i = 0; i < num_ps; ++i) servers->tasks_.push_back(Task{"ps", i, num_ps});
  for (int i = 0; i < num_workers; ++i) servers->tasks_.push_back(Task{"worker", i, num_workers});
  for (Task& t : servers->tasks_) DF_RETURN_IF_ERROR(servers->StartLocked(t));
  return servers;
}

LocalServers::~LocalServers() { Stop(); }

absl::Status LocalServers::StartLocked(Task& task) {
  std::vector<std::string> entries;
  for (int i = 0; i < task.count; ++i) {
    entries.push_back(absl::StrCat("127.0.0.1:", i == task.index ? task.port : 0));
  }
  SpawnOptions options;
  options.stderr_path = log_path_.empty() ? "/dev/null" : log_path_;
  options.append_stderr = true;
  options.start_timeout = kStartTimeout;
  absl::StatusOr<ServerChild> child =
      SpawnServer(binary_,
                  {"server", "--cluster", absl::StrCat(task.job, "=", absl::StrJoin(entries, ",")),
                   "--job", task.job, "--task", std::to_string(task.index)},
                  options);
  if (!child.ok()) {
    return errors::Unavailable("task ", TaskName(task.job, task.index), " did not start",
                               task.port != 0 ? absl::StrCat(" on port ", task.port) : "", ": ",
                               child.status().message());
  }
  task.pid = child->pid;
  task.port = child->port;
  return absl::OkStatus();
}

ClusterDef LocalServers::cluster_def() const {
  absl::MutexLock l(&mu_);
  ClusterDef def;
  for (const char* name : {"ps", "worker"}) {
    JobDef* job = def.add_job();
    job->set_name(name);
    for (const Task& t : tasks_) {
      if (t.job == name) (*job->mutable_tasks())[t.index] = absl::StrCat("127.0.0.1:", t.port);
    }
  }
  return def;
}

std::vector<LocalServers::TaskInfo> LocalServers::tasks() const {
  absl::MutexLock l(&mu_);
  std::vector<TaskInfo> infos;
  for (const Task& t : tasks_) infos.push_back(TaskInfo{t.job, t.index, t.pid, t.port});
  return infos;
}

absl::Status LocalServers::CheckTasks() {
  absl::MutexLock l(&mu_);
  for (Task& t : tasks_) {
    if (!failure_.ok()) break;
    if (t.pid <= 0) continue;
    int status = 0;
    if (waitpid(t.pid, &status, WNOHANG | WUNTRACED) != t.pid) continue;
    failure_ = errors::Unavailable("task ", TaskName(t.job, t.index), " (pid ", t.pid, ") ",
                                   DescribeWaitStatus(status));
    if (!WIFSTOPPED(status)) t.pid = -1;
  }
  return failure_;
}

void LocalServers::KillAll() {
  absl::MutexLock l(&mu_);
  for (Task& t : tasks_) {
    if (t.pid <= 0) continue;
    kill(t.pid, SIGKILL);
    ReapWithin(t.pid, kStopGrace);
    t.pid = -1;
  }
}

int LocalServers::num_workers() const { return num_tasks("worker"); }

int LocalServers::num_tasks(const std::string& job) const {
  absl::MutexLock l(&mu_);
  int n = 0;
  for (const Task& t : tasks_) n += t.job == job ? 1 : 0;
  return n;
}

LocalServers::Task* LocalServers::FindLocked(const std::string& job, int index) {
  for (Task& t : tasks_) {
    if (t.job == job && t.index == index) return &t;
  }
  return nullptr;
}

absl::Status LocalServers::Kill(const std::string& job, int index) {
  absl::MutexLock l(&mu_);
  Task* t = FindLocked(job, index);
  if (t == nullptr) return errors::NotFound("no local task ", TaskName(job, index));
  if (t->pid <= 0) return absl::OkStatus();
  kill(t->pid, SIGKILL);
  ReapWithin(t->pid, kStopGrace);
  t->pid = -1;
  return absl::OkStatus();
}

absl::Status LocalServers::Restart(const std::string& job, int index) {
  absl::MutexLock l(&mu_);
  Task* t = FindLocked(job, index);
  if (t == nullptr) return errors::NotFound("no local task ", TaskName(job, index));
  if (t->pid > 0) {
    return errors::FailedPrecondition("task ", TaskName(job, index), " is running (pid ", t->pid,
                                      ")");
  }
  return StartLocked(*t);
}

absl::Status LocalServers::Signal(const std::string& job, int index, int sig) {
  absl::MutexLock l(&mu_);
  Task* t = FindLocked(job, index);
  if (t == nullptr) return errors::NotFound("no local task ", TaskName(job, index));
  if (t->pid <= 0) {
    return errors::FailedPrecondition("task ", TaskName(job, index), " is not running");
  }
  kill(t->pid, sig);
  return absl::OkStatus();
}

void LocalServers::Stop() {
  absl::MutexLock l(&mu_);
  for (const Task& t : tasks_) {
    if (t.pid <= 0) continue;
    kill(t.pid, SIGTERM);
    kill(t.pid, SIGCONT);  // a frozen task must run to stop
  }
  const absl::Time deadline = absl::Now() + kStopGrace;
  for (Task& t : tasks_) {
    if (t.pid <= 0) continue;
    if (!ReapWithin(t.pid, std::max(deadline - absl::Now(), absl::ZeroDuration()))) {
      kill(t.pid, SIGKILL);
      ReapWithin(t.pid, kStopGrace);
    }
    t.pid = -1;
  }
}

}  // namespace distflow
