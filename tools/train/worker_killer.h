// WorkerKiller: shows failover during training by killing a random worker
// of a LocalServers cluster every `period` (the first after half a period)
// and starting it again at the same address after `downtime` — a crash and
// a reboot. Runs on a thread of
// its own from construction until destruction (which waits at most one
// restart). kills() counts the workers killed. Thread-safe.
#ifndef DISTFLOW_TOOLS_TRAIN_WORKER_KILLER_H_
#define DISTFLOW_TOOLS_TRAIN_WORKER_KILLER_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "train/local_servers.h"

namespace distflow {

class WorkerKiller {
 public:
  // REQUIRES: `servers` outlives this object; period > 0.
  WorkerKiller(LocalServers* servers, absl::Duration period, uint64_t seed,
               absl::Duration downtime = absl::Milliseconds(500));
  ~WorkerKiller();
  WorkerKiller(const WorkerKiller&) = delete;
  WorkerKiller& operator=(const WorkerKiller&) = delete;

  int64_t kills() const { return kills_.load(std::memory_order_relaxed); }

 private:
  void Loop(uint64_t seed);

  LocalServers* const servers_;
  const absl::Duration period_, downtime_;
  std::atomic<int64_t> kills_{0};
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_WORKER_KILLER_H_
