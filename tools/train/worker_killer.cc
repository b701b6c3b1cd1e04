#include "train/worker_killer.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "distflow/core/logging.h"

namespace distflow {

WorkerKiller::WorkerKiller(LocalServers* servers, absl::Duration period, uint64_t seed,
                           absl::Duration downtime)
    : servers_(servers), period_(period), downtime_(downtime) {
  thread_ = std::thread([this, seed] { Loop(seed); });
}

WorkerKiller::~WorkerKiller() {
  stop_.Notify();
  thread_.join();
}

void WorkerKiller::Loop(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, servers_->num_workers() - 1);
  // The first kill comes after half a period, so that a run a little
  // longer than the period still shows a failure and a recovery.
  absl::Duration wait = period_ / 2;
  while (!stop_.WaitForNotificationWithTimeout(wait)) {
    wait = period_;
    const int worker = pick(rng);
    if (!servers_->KillWorker(worker).ok()) continue;
    kills_.fetch_add(1, std::memory_order_relaxed);
    stop_.WaitForNotificationWithTimeout(downtime_);
    // A worker that does not come back is tried again at the next period;
    // the coordinator keeps polling it meanwhile.
    absl::Status s = servers_->RestartWorker(worker);
    if (!s.ok()) {
      internal::LogLine('W', absl::StrCat("could not restart worker ", worker, ": ", s.ToString()));
    }
  }
}

}  // namespace distflow
