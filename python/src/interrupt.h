// Ctrl-C during Session.run cancels the step. Python's own SIGINT handler
// only sets a flag that the interpreter reads once the run returns, so the
// package (session.py) points signal.set_wakeup_fd at a pipe of ours:
// Python's C-level handler writes each signal's number there, and a thread
// of ours reading the pipe calls CancelRunningSteps on every session with a
// step in flight (a RunningStep). The run returns Cancelled; PySession::Run
// then lets Python raise KeyboardInterrupt. Thread-safe.
#ifndef DISTFLOW_PYTHON_INTERRUPT_H_
#define DISTFLOW_PYTHON_INTERRUPT_H_

#include <pybind11/pybind11.h>

#include "distflow/common_runtime/session.h"

namespace distflow {
namespace python {

// While alive, a SIGINT cancels `session`'s running steps.
class RunningStep {
 public:
  explicit RunningStep(Session* session);
  ~RunningStep();
  RunningStep(const RunningStep&) = delete;
  RunningStep& operator=(const RunningStep&) = delete;

 private:
  Session* const session_;
};

// interrupt_fd(): the pipe's non-blocking write end, for set_wakeup_fd (the
// watcher thread starts on the first call).
void RegisterInterrupt(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_INTERRUPT_H_
