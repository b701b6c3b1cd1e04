// Starting one `distflow` server process (`distflow server`, `distflow
// serve`) as a child and learning its port: the one way every launcher of
// local servers — the `train` and `demo` commands' local clusters, the
// benchmarks and the integration tests — starts a task.
//
// SpawnServer forks and execs `binary` with `args`, reads the first line
// the child prints on stdout ("listening on HOST:PORT"), and returns the
// child's pid and port. Between fork and exec the child makes only
// async-signal-safe calls, so any thread may spawn. Every wait is bounded:
// a child that prints no address within `start_timeout` is killed and
// reaped, and the error names the command.
#ifndef DISTFLOW_TOOLS_LAUNCHER_SERVER_CHILD_H_
#define DISTFLOW_TOOLS_LAUNCHER_SERVER_CHILD_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace distflow {

struct SpawnOptions {
  // Where the child's stderr goes: empty keeps this process's stderr.
  std::string stderr_path;
  // Append to stderr_path (several children share one log) instead of
  // truncating it.
  bool append_stderr = false;
  // The child gets a process group of its own (a terminal's Ctrl-C reaches
  // only this process, which then stops its children) and is killed when
  // the thread that spawned it ends (PR_SET_PDEATHSIG), so none is left
  // behind even when this process is killed.
  bool own_group_and_die_with_parent = true;
  absl::Duration start_timeout = absl::Seconds(30);
};

struct ServerChild {
  pid_t pid = -1;
  int port = 0;
};

// Starts `binary args...` and waits for its "listening on HOST:PORT" line.
// Unavailable naming the command when it exits or prints no address in
// time; Internal when pipe or fork fails.
absl::StatusOr<ServerChild> SpawnServer(const std::string& binary,
                                        const std::vector<std::string>& args,
                                        const SpawnOptions& options = {});

// Waits for `pid` to exit, at most `timeout`; true when it was reaped (or
// is not this process's child). Stores its wait status in `status` if given.
bool ReapWithin(pid_t pid, absl::Duration timeout, int* status = nullptr);

// What a wait status says happened to a process: "was killed by signal 9
// (SIGKILL)", "exited with status 1", "is frozen (stopped by signal 19
// (SIGSTOP))".
std::string DescribeWaitStatus(int status);

// The path of the running program (/proc/self/exe).
absl::StatusOr<std::string> SelfExecutable();

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_LAUNCHER_SERVER_CHILD_H_
