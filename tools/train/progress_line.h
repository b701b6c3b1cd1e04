// The training progress line of `distflow train`, as Keras users expect it:
// the epoch and its step out of the epoch's steps, elapsed time and ETA for
// the run, examples/s, the window's loss and accuracy, the loss's running
// mean over the epoch, and whatever the caller appends (workers up).
//
// On a terminal the line is rewritten in place ("\r", with a progress bar)
// and ends when the epoch does or another line must be printed (Break);
// on a pipe or file each report is a line of its own:
//
//   epoch 1/2 step 300/938: 25123 examples/s, loss 0.5432, accuracy 0.8100,
//   mean loss 0.6120, elapsed 3.1 s, ETA 6.7 s, workers up 2/2
//
// Not thread-safe: the trainer's thread reports.
#ifndef DISTFLOW_TOOLS_TRAIN_PROGRESS_LINE_H_
#define DISTFLOW_TOOLS_TRAIN_PROGRESS_LINE_H_

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "fashion_mnist/trainer.h"

namespace distflow {

class ProgressLine {
 public:
  // `steps_per_epoch` >= 1. `terminal`: rewrite the line in place.
  ProgressLine(std::ostream& out, bool terminal, int64_t epochs, int64_t steps_per_epoch);

  // The run resumed from `prefix` with `epoch` epochs done: printed at once,
  // and the ETA counts only the steps this run does.
  void Resumed(const std::string& prefix, int64_t epoch);
  // One progress report; `extra` ("workers up 2/2") goes at the end.
  void Update(const fashion_mnist::TrainProgress& p, const std::string& extra = "");
  // Ends a line left open in place (before another line is printed).
  void Break();

  // The text of the report, without the bar (for tests).
  std::string Format(const fashion_mnist::TrainProgress& p, const std::string& extra);

 private:
  std::ostream& out_;
  const bool terminal_;
  const int64_t epochs_;
  const int64_t steps_per_epoch_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int64_t start_step_ = 0;  // the global step this run started at
  bool open_ = false;       // a line is being rewritten in place
  // The running mean of the loss over the current epoch.
  int64_t mean_epoch_ = 0;
  int64_t last_step_ = -1;
  double loss_sum_ = 0;
  int64_t loss_steps_ = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_PROGRESS_LINE_H_
