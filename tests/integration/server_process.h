// A `distflow server` child process for integration tests: started with a
// cluster spec whose own entry binds port 0, it reports its port; the
// destructor stops it with SIGTERM and reaps it. Not thread-safe.
#ifndef DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_
#define DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_

#include <signal.h>
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

// A `distflow server` child process.
class ServerProcess {
 public:
  // Starts the task and waits for its "listening on HOST:PORT" line.
  static std::unique_ptr<ServerProcess> Start(const std::string& cluster, const std::string& job,
                                              int task, std::vector<std::string> extra = {}) {
    int fds[2];
    if (pipe(fds) != 0) return nullptr;
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      const std::string task_str = std::to_string(task);
      std::vector<std::string> args = {DISTFLOW_BINARY, "server", "--cluster", cluster,
                                       "--job",         job,      "--task",    task_str};
      args.insert(args.end(), extra.begin(), extra.end());
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
    if (fgets(line, sizeof(line), f) == nullptr) {
      fclose(f);
      return nullptr;
    }
    fclose(f);
    std::string s(line);
    const size_t colon = s.rfind(':');
    if (!absl::StartsWith(s, "listening on ") || colon == std::string::npos ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(s.substr(colon + 1)), &p->port_)) {
      return nullptr;
    }
    return p;
  }
  ~ServerProcess() { Kill(SIGTERM); }

  int port() const { return port_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  void Signal(int sig) { kill(pid_, sig); }
  // Sends `sig` and reaps the process; returns its wait status.
  int Kill(int sig) {
    if (pid_ <= 0) return 0;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_TESTS_INTEGRATION_SERVER_PROCESS_H_
