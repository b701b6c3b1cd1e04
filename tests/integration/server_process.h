// ServerProcess: a `distflow server` (or `distflow serve`) child process for
// integration tests. Start() starts DISTFLOW_BINARY through SpawnServer
// (tools/launcher/server_child.h, as the program's own launchers do), which
// waits for its "listening on HOST:PORT" line, and returns the process; the
// destructor ends it with SIGTERM. Not thread-safe.
#ifndef DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_
#define DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "launcher/server_child.h"

namespace distflow {

class ServerProcess {
 public:
  // Starts task `task` of `job` in `cluster` ("ps=127.0.0.1:0;worker=...");
  // null when it does not start or prints no address. With `stderr_path`,
  // the task's stderr goes to that file.
  static std::unique_ptr<ServerProcess> Start(const std::string& cluster, const std::string& job,
                                              int task, std::vector<std::string> extra = {},
                                              const std::string& stderr_path = "") {
    std::vector<std::string> args = {"server", "--cluster",         cluster, "--job", job,
                                     "--task", std::to_string(task)};
    args.insert(args.end(), extra.begin(), extra.end());
    return StartCommand(args, stderr_path);
  }

  // Runs DISTFLOW_BINARY with `args` (a subcommand that prints "listening on
  // HOST:PORT" first, such as `server` or `serve`); null when it does not
  // start or prints no address.
  static std::unique_ptr<ServerProcess> StartCommand(std::vector<std::string> args,
                                                     const std::string& stderr_path = "") {
    SpawnOptions options;
    options.stderr_path = stderr_path;
    // As a test always did: the child stays in the test's process group.
    options.own_group_and_die_with_parent = false;
    absl::StatusOr<ServerChild> child = SpawnServer(DISTFLOW_BINARY, args, options);
    if (!child.ok()) {
      std::fprintf(stderr, "%s\n", child.status().ToString().c_str());
      return nullptr;
    }
    auto p = std::unique_ptr<ServerProcess>(new ServerProcess);
    p->pid_ = child->pid;
    p->port_ = child->port;
    return p;
  }
  ~ServerProcess() { Kill(SIGTERM); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }
  // Stops the process with SIGSTOP and returns once every thread of it has
  // stopped (kill() returns before that, and a step started at once may
  // still be served).
  void Freeze() {
    if (pid_ <= 0) return;
    kill(pid_, SIGSTOP);
    int status = 0;
    if (waitpid(pid_, &status, WUNTRACED) == pid_ && !WIFSTOPPED(status)) pid_ = -1;  // it died
  }
  // Sends `sig` and reaps the process; returns its wait status. A stopped
  // process is continued first so that SIGTERM can end it.
  int Kill(int sig) {
    if (pid_ <= 0) return 0;
    kill(pid_, sig);
    kill(pid_, SIGCONT);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  ServerProcess() = default;
  pid_t pid_ = -1;
  int port_ = 0;
};

// One ps task and `num_workers` worker tasks, each a ServerProcess on a free
// loopback port (worker task w knows the worker job up to itself). A member
// is null when its server did not start; ok() says whether all did.
struct LocalPsCluster {
  std::unique_ptr<ServerProcess> ps;
  std::vector<std::unique_ptr<ServerProcess>> workers;

  static LocalPsCluster Start(int num_workers) {
    LocalPsCluster c;
    c.ps = ServerProcess::Start("ps=127.0.0.1:0", "ps", 0);
    std::string entries;
    for (int w = 0; w < num_workers; ++w) {
      absl::StrAppend(&entries, w ? "," : "", "127.0.0.1:0");
      c.workers.push_back(ServerProcess::Start("worker=" + entries, "worker", w));
    }
    return c;
  }
  bool ok() const {
    if (ps == nullptr) return false;
    for (const auto& w : workers) {
      if (w == nullptr) return false;
    }
    return true;
  }
  // The cluster as --cluster spells it, "ps=h:p;worker=h:p,h:p".
  // REQUIRES: ok().
  std::string Flag() const {
    std::string flag = absl::StrCat("ps=", ps->address(), ";worker=");
    for (size_t w = 0; w < workers.size(); ++w) {
      absl::StrAppend(&flag, w ? "," : "", workers[w]->address());
    }
    return flag;
  }
};

}  // namespace distflow

#endif  // DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_
