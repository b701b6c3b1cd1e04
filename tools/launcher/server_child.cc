#include "launcher/server_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
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

// "signal 19 (SIGSTOP)".
std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev == nullptr ? absl::StrCat("signal ", sig)
                           : absl::StrCat("signal ", sig, " (SIG", abbrev, ")");
}

}  // namespace

absl::StatusOr<ServerChild> SpawnServer(const std::string& binary,
                                        const std::vector<std::string>& args,
                                        const SpawnOptions& options) {
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> command = {binary};
  command.insert(command.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string what = absl::StrJoin(command, " ");
  int err_fd = -1;
  if (!options.stderr_path.empty()) {
    err_fd =
        open(options.stderr_path.c_str(),
             O_WRONLY | O_CREAT | O_CLOEXEC | (options.append_stderr ? O_APPEND : O_TRUNC), 0600);
    if (err_fd < 0) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat("cannot open '", options.stderr_path, "' for the stderr of ", what));
    }
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    if (err_fd >= 0) close(err_fd);
    return errors::Internal("pipe failed starting ", what);
  }
  const bool detach = options.own_group_and_die_with_parent;
  const pid_t pid = fork();
  if (pid == 0) {
    if (detach) {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
    }
    dup2(fds[1], STDOUT_FILENO);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (err_fd >= 0) close(err_fd);
  if (pid < 0) {
    close(fds[0]);
    return errors::Internal("fork failed starting ", what);
  }
  std::string line;
  const bool got = ReadLine(fds[0], options.start_timeout, &line);
  // A server prints nothing else on stdout; a later write would only fail,
  // not block.
  close(fds[0]);
  const size_t colon = line.rfind(':');
  int port = 0;
  if (!got || !absl::StartsWith(line, "listening on ") || colon == std::string::npos ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(colon + 1)), &port) || port <= 0) {
    // A child that exited says why; one still running is killed.
    int status = 0;
    const bool exited = ReapWithin(pid, absl::Milliseconds(200), &status);
    if (!exited) {
      kill(pid, SIGKILL);
      ReapWithin(pid, absl::Seconds(5));
    }
    std::string why = "it printed nothing";
    if (got) {
      why = absl::StrCat("it printed '", line.substr(0, 100), "'");
    } else if (exited) {
      why = absl::StrCat("it ", DescribeWaitStatus(status));
    }
    return errors::Unavailable("'", what, "' did not print its address within ",
                               absl::FormatDuration(options.start_timeout), " (", why, ")");
  }
  return ServerChild{pid, port};
}

bool ReapWithin(pid_t pid, absl::Duration timeout, int* status) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int s = 0;
    const pid_t r = waitpid(pid, &s, WNOHANG);
    if (r == pid) {
      if (status != nullptr) *status = s;
      return true;
    }
    if (r < 0 && errno == ECHILD) return true;
    if (absl::Now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string DescribeWaitStatus(int status) {
  if (WIFSTOPPED(status)) {
    return absl::StrCat("is frozen (stopped by ", SignalName(WSTOPSIG(status)), ")");
  }
  if (WIFSIGNALED(status)) return absl::StrCat("was killed by ", SignalName(WTERMSIG(status)));
  return absl::StrCat("exited with status ", WEXITSTATUS(status));
}

absl::StatusOr<std::string> SelfExecutable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return errors::Internal("cannot read /proc/self/exe to find the distflow program");
  return std::string(buf, n);
}

}  // namespace distflow
