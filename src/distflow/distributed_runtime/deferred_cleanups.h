// DeferredCleanups: the CleanupGraph calls a master session owes its
// workers, sent with the next RunGraph to the same task instead of as calls
// of their own. A finished step's id is owed to every task that ran part of
// it; the next RunGraph to that task takes the ids (RunGraphRequest
// .cleanup_step_ids) and the worker drops those steps' rendezvous before it
// runs. Ids nobody takes within kFlushDelay go out as plain CleanupGraph
// calls, as do all of them on Flush() (a session's Close), so a worker never
// keeps a finished step's rendezvous for longer than that while its master
// lives. One step of a job that steps in a loop thus costs each remote
// worker one RPC (RunGraph) instead of two. Thread-safe; the pending ids
// and the flush outlive the session that made them.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_DEFERRED_CLEANUPS_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_DEFERRED_CLEANUPS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/distributed_runtime/worker_cache.h"

namespace distflow {

class DeferredCleanups {
 public:
  static constexpr absl::Duration kFlushDelay = absl::Milliseconds(100);
  // More ids than this owed to one task go out at once.
  static constexpr size_t kMaxOwed = 1024;

  explicit DeferredCleanups(std::shared_ptr<WorkerCache> worker_cache);
  ~DeferredCleanups();
  DeferredCleanups(const DeferredCleanups&) = delete;
  DeferredCleanups& operator=(const DeferredCleanups&) = delete;

  // Step `step_id` is over on every task; `task` still holds its rendezvous.
  void Owe(const std::string& task, int64_t step_id);
  // The ids owed to `task`, now the caller's to send (with a RunGraph).
  std::vector<int64_t> Take(const std::string& task);
  // Sends every owed id as CleanupGraph calls now (without waiting for them).
  void Flush();
  // Sends `task` a CleanupGraph for `step_id` now, owed or not (a failed
  // step's), without waiting for it.
  void SendNow(const std::string& task, int64_t step_id);

 private:
  struct State;
  static void FlushState(const std::shared_ptr<State>& state);
  static void SendCleanups(const std::shared_ptr<State>& state, const std::string& task,
                           std::vector<int64_t> step_ids);
  std::shared_ptr<State> state_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_DEFERRED_CLEANUPS_H_
