#include "distflow/common_runtime/step_watchdog.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/core/logging.h"
#include "distflow/core/timer.h"

namespace distflow {
namespace {

// Longer thresholds are as good as none, and absl::Seconds stays exact.
constexpr double kMaxWarnSeconds = 365.0 * 24 * 3600;

double DefaultWarnSeconds() {
  double v;
  const char* env = std::getenv("DISTFLOW_STUCK_STEP_WARN_SECONDS");
  if (env != nullptr && absl::SimpleAtod(env, &v) && std::isfinite(v) && v >= 0) {
    return std::min(v, kMaxWarnSeconds);
  }
  return kDefaultStuckStepWarnSeconds;
}

std::atomic<double>& WarnSecondsCell() {
  static std::atomic<double> cell(DefaultWarnSeconds());
  return cell;
}

}  // namespace

double StuckStepWarnSeconds() { return WarnSecondsCell().load(std::memory_order_relaxed); }

void SetStuckStepWarnSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  WarnSecondsCell().store(std::min(seconds, kMaxWarnSeconds), std::memory_order_relaxed);
}

struct StepWatchdog::State {
  std::string what;
  const Rendezvous* rendezvous = nullptr;
  absl::Duration period;
  absl::Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
  Timer::Id timer ABSL_GUARDED_BY(mu) = 0;
  int reports ABSL_GUARDED_BY(mu) = 0;
};

StepWatchdog::StepWatchdog(std::string what, const Rendezvous* rendezvous) {
  const double seconds = StuckStepWarnSeconds();
  if (seconds <= 0) return;
  state_ = std::make_shared<State>();
  state_->what = std::move(what);
  state_->rendezvous = rendezvous;
  state_->period = absl::Seconds(seconds);
  absl::MutexLock lock(&state_->mu);
  state_->timer =
      Timer::Default()->Schedule(state_->period, [state = std::weak_ptr<State>(state_)] {
        if (std::shared_ptr<State> s = state.lock()) Report(s);
      });
}

StepWatchdog::~StepWatchdog() {
  if (state_ == nullptr) return;
  // A report already running finishes under the lock; later ones see
  // `stopped`.
  absl::MutexLock lock(&state_->mu);
  state_->stopped = true;
  Timer::Default()->Cancel(state_->timer);
}

void StepWatchdog::Report(const std::shared_ptr<State>& state) {
  // Under the lock: once the destructor has taken it, the rendezvous is
  // never touched again.
  absl::MutexLock lock(&state->mu);
  if (state->stopped) return;
  const std::string waits = DescribePendingReceives(state->rendezvous->PendingReceives());
  ++state->reports;
  internal::LogLine(
      'W', absl::StrCat(state->what, " has run for ",
                        absl::FormatDuration(state->period * state->reports), ", ", waits));
  state->timer = Timer::Default()->Schedule(state->period, [weak = std::weak_ptr<State>(state)] {
    if (std::shared_ptr<State> s = weak.lock()) Report(s);
  });
}

}  // namespace distflow
