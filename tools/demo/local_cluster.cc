#include "demo/local_cluster.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"

namespace distflow {
namespace {

// Runs in the child: serves task `job:index` on a free port, reports the
// port on `report_fd`, and exits on SIGTERM (or when the parent dies).
[[noreturn]] void ServeTask(const std::string& job, int index, int count, int report_fd) {
  // Its own process group, so a terminal's Ctrl-C (or a signal to the
  // parent's group) reaches only the parent, which then stops the cluster.
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  ServerDef def;
  JobDef* j = def.mutable_cluster()->add_job();
  j->set_name(job);
  for (int i = 0; i < count; ++i) (*j->mutable_tasks())[i] = "127.0.0.1:0";
  def.set_job_name(job);
  def.set_task_index(index);
  def.set_protocol("grpc");
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Create(def);
  int port = 0;
  if (server.ok() && (*server)->Start().ok()) port = (*server)->bound_port();
  const std::string line = absl::StrCat(port, "\n");
  if (write(report_fd, line.data(), line.size()) < 0) _exit(1);
  close(report_fd);
  if (port == 0) _exit(1);
  int sig = 0;
  sigwait(&stop, &sig);
  (*server)->Stop();
  server->reset();
  _exit(0);
}

// "signal 19 (SIGSTOP)".
std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev == nullptr ? absl::StrCat("signal ", sig)
                           : absl::StrCat("signal ", sig, " (SIG", abbrev, ")");
}

}  // namespace

std::string LocalCluster::Task::name() const {
  return absl::StrCat("/job:", job, "/replica:0/task:", index);
}

std::string LocalCluster::Task::address() const { return absl::StrCat("127.0.0.1:", port); }

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(int num_ps, int num_workers) {
  std::unique_ptr<LocalCluster> cluster(new LocalCluster);
  std::vector<std::pair<std::string, int>> specs;
  for (int i = 0; i < num_ps; ++i) specs.emplace_back("ps", i);
  for (int i = 0; i < num_workers; ++i) specs.emplace_back("worker", i);
  for (const auto& [job, index] : specs) {
    int fds[2];
    if (pipe(fds) != 0) return errors::Internal("pipe failed");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return errors::Internal("fork failed");
    if (pid == 0) {
      close(fds[0]);
      ServeTask(job, index, job == "ps" ? num_ps : num_workers, fds[1]);
    }
    close(fds[1]);
    {
      absl::MutexLock lock(&cluster->mu_);
      cluster->live_.push_back(true);
    }
    Task task;
    task.job = job;
    task.index = index;
    task.pid = pid;
    char buf[32] = {0};
    ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
    close(fds[0]);
    cluster->tasks_.push_back(task);
    if (n <= 0 ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(buf), &cluster->tasks_.back().port) ||
        cluster->tasks_.back().port == 0) {
      return errors::Unavailable("task ", task.name(), " failed to start a server");
    }
  }
  return cluster;
}

LocalCluster::~LocalCluster() { Stop(); }

const LocalCluster::Task& LocalCluster::worker(int i) const {
  for (const Task& t : tasks_) {
    if (t.job == "worker" && t.index == i) return t;
  }
  return tasks_.front();
}

ClusterDef LocalCluster::cluster_def() const {
  ClusterDef def;
  for (const Task& t : tasks_) {
    JobDef* job = nullptr;
    for (JobDef& j : *def.mutable_job()) {
      if (j.name() == t.job) job = &j;
    }
    if (job == nullptr) {
      job = def.add_job();
      job->set_name(t.job);
    }
    (*job->mutable_tasks())[t.index] = t.address();
  }
  return def;
}

absl::Status LocalCluster::PollLocked(size_t i) {
  if (!live_[i]) return absl::OkStatus();
  const Task& t = tasks_[i];
  int status = 0;
  const pid_t r = waitpid(t.pid, &status, WNOHANG | WUNTRACED);
  if (r != t.pid) return absl::OkStatus();
  if (WIFSTOPPED(status)) {
    return errors::Unavailable("task ", t.name(), " (pid ", t.pid, ") is frozen (stopped by ",
                               SignalName(WSTOPSIG(status)), ")");
  }
  live_[i] = false;
  if (WIFSIGNALED(status)) {
    return errors::Unavailable("task ", t.name(), " (pid ", t.pid, ") was killed by ",
                               SignalName(WTERMSIG(status)));
  }
  return errors::Unavailable("task ", t.name(), " (pid ", t.pid, ") exited with status ",
                             WEXITSTATUS(status));
}

absl::Status LocalCluster::CheckTasks() {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < tasks_.size() && failure_.ok(); ++i) failure_ = PollLocked(i);
  return failure_;
}

void LocalCluster::Kill() {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!live_[i]) continue;
    kill(tasks_[i].pid, SIGKILL);
    waitpid(tasks_[i].pid, nullptr, 0);
    live_[i] = false;
  }
}

void LocalCluster::Stop() {
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (!live_[i]) continue;
      kill(tasks_[i].pid, SIGTERM);
      kill(tasks_[i].pid, SIGCONT);
    }
    const absl::Time deadline = absl::Now() + kStopGrace;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      while (live_[i] && absl::Now() < deadline) {
        if (waitpid(tasks_[i].pid, nullptr, WNOHANG) == tasks_[i].pid) {
          live_[i] = false;
        } else {
          absl::SleepFor(absl::Milliseconds(10));
        }
      }
    }
  }
  Kill();
}

}  // namespace distflow
