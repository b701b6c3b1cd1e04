// PsLoadPoller: what each parameter server task of a training job holds and
// moves, for the chief's status page ("variables held, bytes/s").
//
// A thread of its own asks every ps task for its status (the worker
// service's GetStatus: variables and their bytes, tensor bytes sent and
// received) once per period, each call under a deadline of its own, and
// keeps the last answer. bytes/s is the change of sent + received bytes
// between two answers over the time between them; a task that restarted
// (its counts went down) starts its rate afresh. A task that does not
// answer keeps its last figures, with the call's error. Polling stops when the
// poller is destroyed (at most one call's deadline later). Thread-safe.
#ifndef DISTFLOW_TOOLS_TRAIN_PS_LOAD_POLLER_H_
#define DISTFLOW_TOOLS_TRAIN_PS_LOAD_POLLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace distflow {

struct PsLoad {
  int task = 0;
  bool polled = false;    // an answer or an error came back at least once
  bool answered = false;  // the last call was answered
  bool ever_answered = false;
  std::string error;  // the last call's error; empty when answered
  // From the last answer (kept while the task does not answer).
  int64_t variables = 0, variable_bytes = 0;
  int64_t bytes_sent = 0, bytes_received = 0;
  double bytes_per_second = -1;  // -1 until two answers in a row
};

class PsLoadPoller {
 public:
  struct Task {
    int task;
    std::string address;  // host:port
  };
  // Starts polling `tasks` of job `ps_job` every `period` (> 0).
  PsLoadPoller(std::string ps_job, std::vector<Task> tasks, absl::Duration period);
  ~PsLoadPoller();
  PsLoadPoller(const PsLoadPoller&) = delete;
  PsLoadPoller& operator=(const PsLoadPoller&) = delete;

  // One entry per task, in the order given.
  std::vector<PsLoad> loads() const;

 private:
  void Run();

  const std::string ps_job_;
  const std::vector<Task> tasks_;
  const absl::Duration period_;
  absl::Notification stop_;
  mutable absl::Mutex mu_;
  std::vector<PsLoad> loads_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_PS_LOAD_POLLER_H_
