#include "interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

struct Running {
  absl::Mutex mu;
  absl::flat_hash_map<Session*, int> sessions ABSL_GUARDED_BY(mu);  // steps in flight each
};

Running& Sessions() {
  static Running* running = new Running;
  return *running;
}

void CancelAll() {
  Running& r = Sessions();
  absl::MutexLock l(&r.mu);
  // A session that cannot cancel (Unimplemented) lets its step finish.
  for (const auto& [session, steps] : r.sessions) session->CancelRunningSteps().IgnoreError();
}

// The pipe's write end, with a thread reading the other end for the life
// of the process; -1 when no pipe could be made.
int WakeupFd() {
  static const int fd = [] {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    // Python's handler must never block on a full pipe.
    if (fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK) != 0) return -1;
    std::thread([read_fd = fds[0]] {
      unsigned char signals[64];
      for (;;) {
        const ssize_t n = read(read_fd, signals, sizeof(signals));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        for (ssize_t i = 0; i < n; ++i) {
          if (signals[i] == SIGINT) {
            CancelAll();
            break;
          }
        }
      }
    }).detach();
    return fds[1];
  }();
  return fd;
}

}  // namespace

RunningStep::RunningStep(Session* session) : session_(session) {
  Running& r = Sessions();
  absl::MutexLock l(&r.mu);
  ++r.sessions[session_];
}

RunningStep::~RunningStep() {
  Running& r = Sessions();
  absl::MutexLock l(&r.mu);
  if (--r.sessions[session_] == 0) r.sessions.erase(session_);
}

void RegisterInterrupt(py::module_& m) {
  m.def("interrupt_fd", [] { return WakeupFd(); });
}

}  // namespace python
}  // namespace distflow
