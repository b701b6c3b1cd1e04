#include "train/local_servers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

std::string TaskName(const std::string& job, int index) {
  return absl::StrCat("/job:", job, "/replica:0/task:", index);
}

// Reads one line from `fd` within `timeout`; false on timeout, EOF or error.
bool ReadLine(int fd, absl::Duration timeout, std::string* line) {
  const absl::Time deadline = absl::Now() + timeout;
  char c;
  while (true) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = read(fd, &c, 1);
    if (n <= 0) return false;
    if (c == '\n') return true;
    if (line->size() > 256) return false;
    line->push_back(c);
  }
}

// Waits for `pid` to exit, at most `timeout`; true when reaped.
bool ReapWithin(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (absl::Now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

absl::StatusOr<std::string> SelfExecutable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return errors::Internal("cannot read /proc/self/exe to find the distflow program");
  return std::string(buf, n);
}

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
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> entries;
  for (int i = 0; i < task.count; ++i) {
    entries.push_back(absl::StrCat("127.0.0.1:", i == task.index ? task.port : 0));
  }
  std::vector<std::string> args = {
      binary_, "server", "--cluster", absl::StrCat(task.job, "=", absl::StrJoin(entries, ",")),
      "--job", task.job, "--task",    std::to_string(task.index)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int err_fd = log_path_.empty()
                         ? open("/dev/null", O_WRONLY | O_CLOEXEC)
                         : open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    if (err_fd >= 0) close(err_fd);
    return errors::Internal("pipe failed starting ", TaskName(task.job, task.index));
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(fds[1], STDOUT_FILENO);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (err_fd >= 0) close(err_fd);
  if (pid < 0) {
    close(fds[0]);
    return errors::Internal("fork failed starting ", TaskName(task.job, task.index));
  }
  std::string line;
  const bool got = ReadLine(fds[0], kStartTimeout, &line);
  // The server prints nothing else on stdout; a later write would only
  // fail, not block.
  close(fds[0]);
  const size_t colon = line.rfind(':');
  int port = 0;
  if (!got || !absl::StartsWith(line, "listening on ") || colon == std::string::npos ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(colon + 1)), &port) || port <= 0) {
    kill(pid, SIGKILL);
    ReapWithin(pid, kStopGrace);
    return errors::Unavailable("task ", TaskName(task.job, task.index), " (", binary_,
                               " server) did not start",
                               task.port != 0 ? absl::StrCat(" on port ", task.port) : "");
  }
  task.pid = pid;
  task.port = port;
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
