#include "distflow/distributed_runtime/deferred_cleanups.h"

#include <utility>

#include "distflow/core/timer.h"
#include "distflow/distributed_runtime/worker_interface.h"

namespace distflow {
namespace {

// A CleanupGraph call of its own, for ids no RunGraph took.
constexpr int64_t kCleanupGraphCallMs = 10000;

}  // namespace

struct DeferredCleanups::State {
  explicit State(std::shared_ptr<WorkerCache> cache) : worker_cache(std::move(cache)) {}
  const std::shared_ptr<WorkerCache> worker_cache;
  absl::Mutex mu;
  absl::flat_hash_map<std::string, std::vector<int64_t>> owed ABSL_GUARDED_BY(mu);
  bool flush_armed ABSL_GUARDED_BY(mu) = false;
};

DeferredCleanups::DeferredCleanups(std::shared_ptr<WorkerCache> worker_cache)
    : state_(std::make_shared<State>(std::move(worker_cache))) {}

// What is still owed goes out with the armed flush (it holds the state).
DeferredCleanups::~DeferredCleanups() = default;

void DeferredCleanups::Owe(const std::string& task, int64_t step_id) {
  std::vector<int64_t> now;
  bool arm = false;
  {
    absl::MutexLock lock(&state_->mu);
    std::vector<int64_t>& ids = state_->owed[task];
    ids.push_back(step_id);
    if (ids.size() >= kMaxOwed) now.swap(ids);
    if (!state_->flush_armed) arm = state_->flush_armed = true;
  }
  if (!now.empty()) SendCleanups(state_, task, std::move(now));
  if (arm) {
    Timer::Default()->Schedule(kFlushDelay, [state = state_] { FlushState(state); });
  }
}

std::vector<int64_t> DeferredCleanups::Take(const std::string& task) {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->owed.find(task);
  if (it == state_->owed.end()) return {};
  std::vector<int64_t> ids = std::move(it->second);
  state_->owed.erase(it);
  return ids;
}

void DeferredCleanups::Flush() { FlushState(state_); }

void DeferredCleanups::SendNow(const std::string& task, int64_t step_id) {
  SendCleanups(state_, task, {step_id});
}

void DeferredCleanups::FlushState(const std::shared_ptr<State>& state) {
  absl::flat_hash_map<std::string, std::vector<int64_t>> owed;
  {
    absl::MutexLock lock(&state->mu);
    owed.swap(state->owed);
    state->flush_armed = false;
  }
  for (auto& [task, ids] : owed) SendCleanups(state, task, std::move(ids));
}

void DeferredCleanups::SendCleanups(const std::shared_ptr<State>& state, const std::string& task,
                                    std::vector<int64_t> step_ids) {
  absl::StatusOr<WorkerInterface*> worker = state->worker_cache->GetWorker(task);
  if (!worker.ok()) return;  // a task gone from the cluster holds nothing for us
  for (int64_t step_id : step_ids) {
    struct Call {
      std::shared_ptr<State> state;  // keeps the worker cache for the reply
      CleanupGraphRequest req;
      CleanupGraphResponse resp;
      CallOptions opts;
    };
    auto call = std::make_shared<Call>();
    call->state = state;
    call->req.set_step_id(step_id);
    call->opts.set_timeout_ms(kCleanupGraphCallMs);
    (*worker)->CleanupGraphAsync(&call->req, &call->resp, &call->opts,
                                 [call](const absl::Status&) {});
  }
}

}  // namespace distflow
