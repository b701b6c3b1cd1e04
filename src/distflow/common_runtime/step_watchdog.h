// StepWatchdog: answers "why is my job stuck". While a step runs it waits
// in the background; once the step has run for the process's stuck-step
// threshold it logs (a "W" line on stderr) which Recv keys the step's
// rendezvous still waits for and which device should produce each, and
// again each time as long again has passed. Steps that finish in time cost
// one timer entry. DirectSession and the worker's RunGraph watch every
// step; the same list goes into the DeadlineExceeded of a step that hits
// its deadline. Thread-safe; the destructor stops the watching, and no
// line is logged after it returns.
#ifndef DISTFLOW_COMMON_RUNTIME_STEP_WATCHDOG_H_
#define DISTFLOW_COMMON_RUNTIME_STEP_WATCHDOG_H_

#include <memory>
#include <string>

#include "distflow/framework/rendezvous.h"

namespace distflow {

// The threshold of a process that sets none (seconds).
inline constexpr double kDefaultStuckStepWarnSeconds = 30;

// The process's threshold in seconds; 0 turns the watchdog off. Initially
// DISTFLOW_STUCK_STEP_WARN_SECONDS when it holds a number >= 0, else
// kDefaultStuckStepWarnSeconds.
double StuckStepWarnSeconds();
// A negative or non-finite value turns the watchdog off.
void SetStuckStepWarnSeconds(double seconds);

class StepWatchdog {
 public:
  // Watches the step `what` names ("step 12 on /job:worker/replica:0/task:1")
  // through `rendezvous`, which must outlive the watchdog. Does nothing when
  // the threshold is 0.
  StepWatchdog(std::string what, const Rendezvous* rendezvous);
  ~StepWatchdog();
  StepWatchdog(const StepWatchdog&) = delete;
  StepWatchdog& operator=(const StepWatchdog&) = delete;

 private:
  struct State;
  // Logs the step's waits and schedules the next report, unless stopped.
  static void Report(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_STEP_WATCHDOG_H_
