// ServerProcess: a `distflow server` (or `distflow serve`) child process for
// integration tests. Start() forks and execs DISTFLOW_BINARY, waits for its
// "listening on HOST:PORT" line, and returns the process; the destructor
// ends it with SIGTERM. Not thread-safe.
#ifndef DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_
#define DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

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
    int fds[2];
    if (pipe(fds) != 0) return nullptr;
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      if (!stderr_path.empty()) {
        const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err >= 0) dup2(err, STDERR_FILENO);
      }
      close(fds[0]);
      close(fds[1]);
      args.insert(args.begin(), DISTFLOW_BINARY);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(DISTFLOW_BINARY, argv.data());
      _exit(127);
    }
    close(fds[1]);
    auto p = std::unique_ptr<ServerProcess>(new ServerProcess);
    p->pid_ = pid;
    FILE* f = fdopen(fds[0], "r");
    char line[256] = {0};
    const bool got_line = fgets(line, sizeof(line), f) != nullptr;
    fclose(f);
    std::string s(line);
    const size_t colon = s.rfind(':');
    if (!got_line || !absl::StartsWith(s, "listening on ") || colon == std::string::npos ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(s.substr(colon + 1)), &p->port_)) {
      return nullptr;  // the destructor ends the child
    }
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
