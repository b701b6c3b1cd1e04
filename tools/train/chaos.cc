#include "train/chaos.h"

#include <signal.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

namespace {

constexpr absl::Duration kDefaultKillDowntime = absl::Milliseconds(500);
constexpr absl::Duration kDefaultPartition = absl::Seconds(3);
constexpr absl::Duration kShortestPeriod = absl::Milliseconds(100);

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text, absl::string_view part) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration() || d > absl::Hours(24)) {
    return errors::InvalidArgument("--chaos: '", part,
                                   "' needs a duration with a unit in (0, 24h] ",
                                   "(e.g. 500ms, 5s, 1m), got '", text, "'");
  }
  return d;
}

const char* JobOf(ChaosFault::Kind kind) {
  return kind == ChaosFault::Kind::kKillPs ? "ps" : "worker";
}

}  // namespace

absl::StatusOr<std::vector<ChaosFault>> ParseChaosSpec(const std::string& spec) {
  std::vector<ChaosFault> faults;
  for (absl::string_view part : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    const size_t colon = part.find(':');
    if (colon == absl::string_view::npos) {
      return errors::InvalidArgument("--chaos: '", part,
                                     "' is not FAULT:EVERY[/LASTING] (e.g. kill-worker:5s)");
    }
    const absl::string_view name = part.substr(0, colon);
    ChaosFault f;
    if (name == "kill-worker") {
      f.kind = ChaosFault::Kind::kKillWorker;
      f.lasting = kDefaultKillDowntime;
    } else if (name == "kill-ps") {
      f.kind = ChaosFault::Kind::kKillPs;
      f.lasting = kDefaultKillDowntime;
    } else if (name == "partition-worker") {
      f.kind = ChaosFault::Kind::kPartitionWorker;
      f.lasting = kDefaultPartition;
    } else {
      return errors::InvalidArgument("--chaos: unknown fault '", name,
                                     "' (kill-worker, kill-ps or partition-worker)");
    }
    absl::string_view times = part.substr(colon + 1);
    const size_t slash = times.find('/');
    DF_ASSIGN_OR_RETURN(f.every, ParseDuration(times.substr(0, slash), part));
    if (slash != absl::string_view::npos) {
      DF_ASSIGN_OR_RETURN(f.lasting, ParseDuration(times.substr(slash + 1), part));
    }
    if (f.every < kShortestPeriod) {
      return errors::InvalidArgument("--chaos: '", part, "' strikes more often than every ",
                                     absl::FormatDuration(kShortestPeriod));
    }
    if (f.lasting >= f.every) {
      return errors::InvalidArgument("--chaos: in '", part,
                                     "' the fault must last less than its period");
    }
    faults.push_back(f);
  }
  if (faults.empty()) return errors::InvalidArgument("--chaos: no fault given");
  return faults;
}

bool KillsPs(const std::vector<ChaosFault>& faults) {
  for (const ChaosFault& f : faults) {
    if (f.kind == ChaosFault::Kind::kKillPs) return true;
  }
  return false;
}

Chaos::Chaos(LocalServers* servers, std::vector<ChaosFault> faults, uint64_t seed)
    : servers_(servers), spec_(std::move(faults)) {
  for (size_t i = 0; i < spec_.size(); ++i) {
    threads_.emplace_back([this, i, seed] { Loop(spec_[i], seed + i); });
  }
}

Chaos::~Chaos() {
  stop_.Notify();
  for (std::thread& t : threads_) t.join();
}

void Chaos::Loop(const ChaosFault& fault, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::string job = JobOf(fault.kind);
  const int tasks = servers_->num_tasks(job);
  if (tasks == 0) return;
  std::uniform_int_distribution<int> pick(0, tasks - 1);
  absl::Duration wait = fault.every / 2;
  while (!stop_.WaitForNotificationWithTimeout(wait)) {
    wait = fault.every;
    const int task = pick(rng);
    const std::string name = absl::StrCat("/job:", job, "/replica:0/task:", task);
    if (fault.kind == ChaosFault::Kind::kPartitionWorker) {
      if (!servers_->Signal(job, task, SIGSTOP).ok()) continue;
      faults_.fetch_add(1, std::memory_order_relaxed);
      internal::LogLine(
          'W', absl::StrCat("chaos: cut off ", name, " for ", absl::FormatDuration(fault.lasting)));
      stop_.WaitForNotificationWithTimeout(fault.lasting);
      servers_->Signal(job, task, SIGCONT).IgnoreError();
      continue;
    }
    if (!servers_->Kill(job, task).ok()) continue;
    faults_.fetch_add(1, std::memory_order_relaxed);
    internal::LogLine('W', absl::StrCat("chaos: killed ", name, "; it starts again in ",
                                        absl::FormatDuration(fault.lasting)));
    stop_.WaitForNotificationWithTimeout(fault.lasting);
    // A task that does not come back is tried again at the next strike;
    // the coordinator keeps polling it meanwhile.
    absl::Status s = servers_->Restart(job, task);
    if (!s.ok())
      internal::LogLine('W', absl::StrCat("chaos: could not restart ", name, ": ", s.ToString()));
  }
}

}  // namespace distflow
