// Chaos: `distflow train --chaos SPEC` on the local launcher — faults
// injected into a LocalServers cluster while it trains, so anyone can watch
// the job survive them.
//
// SPEC is a comma-separated list of FAULT:EVERY[/LASTING], durations with a
// unit (500ms, 5s, 1m):
//   kill-worker:5s          every 5 s a random worker is killed (SIGKILL)
//                           and started again at its address 500 ms later
//   kill-ps:20s/2s          every 20 s a random ps task likewise, back after
//                           2 s, empty: the job restores it from its last
//                           checkpoint (needs --checkpoint-dir)
//   partition-worker:15s/3s every 15 s a random worker stops answering for
//                           3 s. On one host the cut is a frozen process
//                           (SIGSTOP, then SIGCONT): its peers' calls get no
//                           answer, as through a partition.
// Each fault's first strike comes after half its period, so a run a little
// longer than the period still shows one. Each fault runs on a thread of
// its own from construction until destruction, which waits at most one
// LASTING. faults() counts the strikes. Thread-safe.
#ifndef DISTFLOW_TOOLS_TRAIN_CHAOS_H_
#define DISTFLOW_TOOLS_TRAIN_CHAOS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "launcher/local_servers.h"

namespace distflow {

struct ChaosFault {
  enum class Kind { kKillWorker, kKillPs, kPartitionWorker };
  Kind kind = Kind::kKillWorker;
  absl::Duration every;
  absl::Duration lasting;  // downtime of a kill, length of a partition
};

// Parses SPEC as above. InvalidArgument naming the part that is wrong: an
// unknown fault, a missing or bad duration, a period under 100 ms, a
// lasting not shorter than its period.
absl::StatusOr<std::vector<ChaosFault>> ParseChaosSpec(const std::string& spec);

// True iff one of `faults` kills a ps task.
bool KillsPs(const std::vector<ChaosFault>& faults);

class Chaos {
 public:
  // REQUIRES: `servers` outlives this object.
  Chaos(LocalServers* servers, std::vector<ChaosFault> faults, uint64_t seed);
  ~Chaos();
  Chaos(const Chaos&) = delete;
  Chaos& operator=(const Chaos&) = delete;

  int64_t faults() const { return faults_.load(std::memory_order_relaxed); }

 private:
  void Loop(const ChaosFault& fault, uint64_t seed);

  LocalServers* const servers_;
  const std::vector<ChaosFault> spec_;
  std::atomic<int64_t> faults_{0};
  absl::Notification stop_;
  std::vector<std::thread> threads_;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_CHAOS_H_
