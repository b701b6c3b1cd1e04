#include "distflow/distributed_runtime/rendezvous_mgr.h"

#include <optional>

#include "absl/cleanup/cleanup.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/transfer_stats.h"

namespace distflow {

RemoteRendezvous::RemoteRendezvous(std::string task_name, int64_t step_id, PushSetup push)
    : task_name_(std::move(task_name)), step_id_(step_id), push_(std::move(push)) {
  DF_CHECK(device_name::Parse(task_name_, &task_));
}

RemoteRendezvous::~RemoteRendezvous() {
  int64_t held = 0;
  for (const auto& [key, p] : pushed_) held += p.bytes;
  if (held > 0) push_.held->fetch_sub(held);
}

bool RemoteRendezvous::IsLocal(const ParsedDeviceName& d) const {
  return d.has_job && d.job == task_.job && d.has_task && d.task == task_.task &&
         (!d.has_replica || d.replica == task_.replica);
}

void RemoteRendezvous::Initialize(std::shared_ptr<WorkerCache> worker_cache) {
  std::vector<Deferred> deferred;
  {
    absl::MutexLock lock(&mu_);
    if (worker_cache_ != nullptr) return;
    worker_cache_ = std::move(worker_cache);
    deferred.swap(deferred_);
  }
  for (Deferred& d : deferred) RecvFromRemote(d.key, d.args, std::move(d.done));
}

absl::Status RemoteRendezvous::Send(const ParsedKey& key, const Args& args, const Tensor& value,
                                    bool is_dead) {
  if (!IsLocal(key.src)) {
    return errors::InvalidArgument("step ", step_id_, ": cannot send tensor '", key.edge_name,
                                   "' from device ", key.src_device, " on task ", task_name_);
  }
  bool taken = false;
  DF_RETURN_IF_ERROR(local_.Send(key, args, value, is_dead, &taken));
  // A receiver in another task that is not asking yet may get it now.
  if (!taken && push_.pusher != nullptr && !IsLocal(key.dst)) {
    const std::string task = TaskOfDevice(key.dst_device);
    if (push_.pusher->TryPush(task, step_id_, key.FullKey(), value, is_dead)) {
      CountTensorTransfer(true, TensorTransport::kSideChannel, task,
                          static_cast<int64_t>(value.TotalBytes()));
    }
  }
  return absl::OkStatus();
}

bool RemoteRendezvous::DeliverPushed(const std::string& key, const Tensor& value, bool is_dead,
                                     int64_t bytes) {
  if (!push_.accept) return false;
  std::shared_ptr<Race> race;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return false;
    auto it = asking_.find(key);
    if (it == asking_.end()) {
      return pushed_.try_emplace(key, Pushed{value, is_dead, bytes}).second;
    }
    race = std::move(it->second);
    asking_.erase(it);
  }
  if (race->Settle()) {
    if (race->args.cancellation_manager != nullptr) {
      race->args.cancellation_manager->TryDeregisterCallback(race->token);
    }
    ParsedKey parsed;
    if (ParseKey(key, &parsed).ok()) {
      CountTensorTransfer(false, TensorTransport::kSideChannel, TaskOfDevice(parsed.src_device),
                          static_cast<int64_t>(value.TotalBytes()));
    }
    race->done(absl::OkStatus(), Args(), race->args, value, is_dead);
  }
  return false;
}

void RemoteRendezvous::RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) {
  if (IsLocal(key.src)) {
    local_.RecvAsync(key, args, std::move(done));
    return;
  }
  absl::Status aborted;
  {
    absl::MutexLock lock(&mu_);
    aborted = status_;
    if (aborted.ok() && worker_cache_ == nullptr) {
      deferred_.push_back(Deferred{key, args, std::move(done)});
      return;
    }
  }
  if (!aborted.ok()) {
    done(aborted, Args(), args, Tensor(), false);
    return;
  }
  RecvFromRemote(key, args, std::move(done));
}

void RemoteRendezvous::RecvLocalAsync(const ParsedKey& key, const Args& args, DoneCallback done) {
  local_.RecvAsync(key, args, std::move(done));
}

std::optional<RemoteRendezvous::Pushed> RemoteRendezvous::TakePushedLocked(absl::string_view key) {
  if (pushed_.empty()) return std::nullopt;
  auto it = pushed_.find(key);
  if (it == pushed_.end()) return std::nullopt;
  Pushed p = std::move(it->second);
  pushed_.erase(it);
  return p;
}

void RemoteRendezvous::ReceivePushed(absl::string_view src_device, const Pushed& pushed,
                                     const Args& args, const DoneCallback& done) {
  push_.held->fetch_sub(pushed.bytes);
  CountTensorTransfer(false, TensorTransport::kSideChannel, TaskOfDevice(src_device),
                      static_cast<int64_t>(pushed.value.TotalBytes()));
  done(absl::OkStatus(), Args(), args, pushed.value, pushed.is_dead);
}

void RemoteRendezvous::RecvFromRemote(const ParsedKey& key, const Args& args, DoneCallback done) {
  std::shared_ptr<WorkerCache> cache;
  auto opts = std::make_shared<CallOptions>();
  absl::Status aborted;
  std::optional<Pushed> pushed;
  {
    absl::MutexLock lock(&mu_);
    aborted = status_;
    cache = worker_cache_;
    if (aborted.ok()) {
      pushed = TakePushedLocked(key.FullKey());
      if (!pushed.has_value()) {
        active_calls_[opts.get()] = ActiveCall{opts, std::string(key.FullKey())};
      }
    }
  }
  if (!aborted.ok()) {
    done(aborted, Args(), args, Tensor(), false);
    return;
  }
  if (pushed.has_value()) {
    ReceivePushed(key.src_device, *pushed, args, done);
    return;
  }
  absl::StatusOr<WorkerInterface*> worker = cache->GetWorker(key.src_device);
  if (!worker.ok()) {
    {
      absl::MutexLock lock(&mu_);
      active_calls_.erase(opts.get());
    }
    done(worker.status(), Args(), args, Tensor(), false);
    return;
  }
  CancellationManager* cm = args.cancellation_manager;
  CancellationToken token = 0;
  if (cm != nullptr) {
    token = cm->get_cancellation_token();
    if (!cm->RegisterCallback(token, [opts] { opts->StartCancel(); })) {
      {
        absl::MutexLock lock(&mu_);
        active_calls_.erase(opts.get());
      }
      done(errors::Cancelled("RecvTensor of '", key.edge_name, "' cancelled"), Args(), args,
           Tensor(), false);
      return;
    }
  }
  // With pushes accepted, the receive asks and a push may answer first
  // (DeliverPushed): whichever settles the race runs `done`, and only it
  // touches the step's CancellationManager, which may be gone once `done`
  // has run.
  std::shared_ptr<Race> race;
  if (push_.accept) {
    race = std::make_shared<Race>();
    race->args = args;
    race->token = token;
    race->done = std::move(done);
    {
      absl::MutexLock lock(&mu_);
      pushed = TakePushedLocked(key.FullKey());  // it came meanwhile
      if (pushed.has_value()) {
        active_calls_.erase(opts.get());
      } else {
        asking_[std::string(key.FullKey())] = race;
      }
    }
    if (pushed.has_value()) {
      if (cm != nullptr) cm->TryDeregisterCallback(token);
      ReceivePushed(key.src_device, *pushed, args, race->done);
      return;
    }
  }
  struct Result {
    Tensor tensor;
    bool is_dead = false;
  };
  auto result = std::make_shared<Result>();
  Ref();
  RefPtr<RemoteRendezvous> self(this);
  (*worker)->RecvTensorAsync(
      step_id_, std::string(key.FullKey()), &result->tensor, &result->is_dead, opts.get(),
      [self, opts, result, cm, token, args, race, key = std::string(key.FullKey()),
       done = std::move(done)](const absl::Status& s) {
        const bool answered = race == nullptr || race->Settle();
        absl::Status status = s;
        {
          absl::MutexLock lock(&self->mu_);
          self->active_calls_.erase(opts.get());
          if (!self->status_.ok()) status = self->status_;
          if (race != nullptr) {
            auto it = self->asking_.find(key);
            if (it != self->asking_.end() && it->second == race) self->asking_.erase(it);
          }
        }
        // A push answered first: the step may be over, its
        // CancellationManager gone.
        if (!answered) return;
        if (cm != nullptr) cm->TryDeregisterCallback(token);
        const DoneCallback& finish = race != nullptr ? race->done : done;
        finish(status, Args(), args, status.ok() ? result->tensor : Tensor(),
               status.ok() && result->is_dead);
      });
}

void RemoteRendezvous::StartAbort(const absl::Status& cause) {
  DF_CHECK(!cause.ok());
  // Every receive this releases, here or on a peer asking over RecvTensor,
  // fails with an echo of the cause, not a cause of its own.
  const absl::Status status = errors::MakeDerived(cause);
  local_.StartAbort(status);
  std::vector<Deferred> deferred;
  std::vector<std::shared_ptr<CallOptions>> calls;
  absl::flat_hash_map<std::string, Pushed> pushed;
  {
    absl::MutexLock lock(&mu_);
    if (status_.ok()) status_ = status;
    deferred.swap(deferred_);
    pushed.swap(pushed_);
    for (auto& [raw, call] : active_calls_) calls.push_back(call.opts);
  }
  int64_t held = 0;
  for (const auto& [key, p] : pushed) held += p.bytes;
  if (held > 0) push_.held->fetch_sub(held);
  // Outside the lock: a cancelled call's completion takes the lock.
  for (auto& c : calls) c->StartCancel();
  for (Deferred& d : deferred) d.done(status, Args(), d.args, Tensor(), false);
}

std::vector<std::string> RemoteRendezvous::PendingReceives() const {
  std::vector<std::string> keys;
  for (std::string& key : local_.PendingReceives()) {
    // A waiter for another task's device is a peer's RecvTensor: that
    // peer reports its own wait.
    ParsedKey parsed;
    if (ParseKey(key, &parsed).ok() && IsLocal(parsed.dst)) keys.push_back(std::move(key));
  }
  absl::MutexLock lock(&mu_);
  for (const Deferred& d : deferred_) keys.emplace_back(d.key.FullKey());
  for (const auto& [raw, call] : active_calls_) keys.push_back(call.key);
  return keys;
}

RendezvousMgr::RendezvousMgr(std::string task_name) : task_name_(std::move(task_name)) {}

RendezvousMgr::~RendezvousMgr() { CleanupAll(); }

RefPtr<RemoteRendezvous> RendezvousMgr::Find(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  unclaimed_.erase(step_id);
  auto& slot = table_[step_id];
  if (slot == nullptr) slot.reset(new RemoteRendezvous(task_name_, step_id, push_));
  return slot;
}

void RendezvousMgr::AbortExpired(const std::vector<RefPtr<RemoteRendezvous>>& expired) {
  for (const auto& r : expired) {
    r->StartAbort(errors::DeadlineExceeded("step ", r->step_id(), " was not run within ",
                                           absl::FormatDuration(kUnclaimedStepLifetime),
                                           " of the first receive or push for it"));
  }
}

absl::StatusOr<RefPtr<RemoteRendezvous>> RendezvousMgr::MakeUnclaimedLocked(
    int64_t step_id, int receives, std::vector<RefPtr<RemoteRendezvous>>* expired) {
  *expired = TakeExpiredLocked();
  if (unclaimed_.size() >= kMaxUnclaimedSteps) {
    return errors::ResourceExhausted("task ", task_name_, " holds receives for ", unclaimed_.size(),
                                     " steps it was never asked to run, the most it keeps; a "
                                     "receive for step ",
                                     step_id, " is refused");
  }
  RefPtr<RemoteRendezvous>& slot = table_[step_id];
  slot.reset(new RemoteRendezvous(task_name_, step_id, push_));
  unclaimed_[step_id] = Unclaimed{absl::Now(), receives};
  return slot;
}

absl::StatusOr<RefPtr<RemoteRendezvous>> RendezvousMgr::FindForReceive(int64_t step_id) {
  std::vector<RefPtr<RemoteRendezvous>> expired;
  absl::Cleanup abort_expired = [&expired] { AbortExpired(expired); };
  absl::MutexLock lock(&mu_);
  auto it = table_.find(step_id);
  if (it != table_.end()) {
    if (auto u = unclaimed_.find(step_id); u != unclaimed_.end()) ++u->second.receives;
    return it->second;
  }
  // A push can end a step while its receive's request is still on the way
  // to the producer: that request is answered at once.
  if (cleaned_.contains(step_id)) {
    return errors::Cancelled("step ", step_id, " was cleaned up on task ", task_name_);
  }
  return MakeUnclaimedLocked(step_id, 1, &expired);
}

void RendezvousMgr::SetPush(PushSetup push) {
  absl::MutexLock lock(&mu_);
  push_ = std::move(push);
}

int64_t RendezvousMgr::PushedBytesHeld() const {
  absl::MutexLock lock(&mu_);
  return push_.held->load();
}

bool RendezvousMgr::DeliverPushed(int64_t step_id, const std::string& key, const Tensor& value,
                                  bool is_dead) {
  const int64_t bytes = static_cast<int64_t>(value.TotalBytes());
  std::shared_ptr<std::atomic<int64_t>> held;
  RefPtr<RemoteRendezvous> r;
  std::vector<RefPtr<RemoteRendezvous>> expired;
  absl::Cleanup abort_expired = [&expired] { AbortExpired(expired); };
  {
    absl::MutexLock lock(&mu_);
    if (!push_.accept) return false;
    held = push_.held;
    if (held->fetch_add(bytes) + bytes <= kMaxPushedBytes) {
      if (auto it = table_.find(step_id); it != table_.end()) {
        r = it->second;
      } else if (!cleaned_.contains(step_id)) {
        // Unclaimed with no receive: it lives until its RunGraph claims it
        // or it expires. A step cleaned up already is not made anew.
        absl::StatusOr<RefPtr<RemoteRendezvous>> made = MakeUnclaimedLocked(step_id, 0, &expired);
        if (made.ok()) r = *std::move(made);
      }
    }
  }
  if (r != nullptr && r->DeliverPushed(key, value, is_dead, bytes)) return true;
  held->fetch_sub(bytes);
  return false;
}

void RendezvousMgr::EndReceive(int64_t step_id) {
  RefPtr<RemoteRendezvous> dropped;
  {
    absl::MutexLock lock(&mu_);
    auto u = unclaimed_.find(step_id);
    if (u == unclaimed_.end() || --u->second.receives > 0) return;
    unclaimed_.erase(u);
    auto it = table_.find(step_id);
    if (it == table_.end()) return;
    dropped = std::move(it->second);
    table_.erase(it);
  }
  dropped->StartAbort(errors::Cancelled("step ", step_id, " was never run here"));
}

std::vector<RefPtr<RemoteRendezvous>> RendezvousMgr::TakeExpiredLocked() {
  std::vector<RefPtr<RemoteRendezvous>> expired;
  const absl::Time oldest = absl::Now() - kUnclaimedStepLifetime;
  for (auto u = unclaimed_.begin(); u != unclaimed_.end();) {
    if (u->second.created >= oldest) {
      ++u;
      continue;
    }
    auto it = table_.find(u->first);
    if (it != table_.end()) {
      expired.push_back(std::move(it->second));
      table_.erase(it);
    }
    unclaimed_.erase(u++);
  }
  return expired;
}

void RendezvousMgr::Cleanup(int64_t step_id) {
  RefPtr<RemoteRendezvous> r;
  {
    absl::MutexLock lock(&mu_);
    // A receive or push that comes after its step ended must not make the
    // step anew: nothing would ever answer or take it.
    if (cleaned_.insert(step_id).second) {
      cleaned_order_.push_back(step_id);
      if (cleaned_order_.size() > kRememberedCleanups) {
        cleaned_.erase(cleaned_order_.front());
        cleaned_order_.pop_front();
      }
    }
    auto it = table_.find(step_id);
    if (it == table_.end()) return;
    r = std::move(it->second);
    table_.erase(it);
    unclaimed_.erase(step_id);
  }
  r->StartAbort(errors::Cancelled("step ", step_id, " was cleaned up"));
}

size_t RendezvousMgr::NumSteps() const {
  absl::MutexLock lock(&mu_);
  return table_.size();
}

void RendezvousMgr::CleanupAll() {
  absl::flat_hash_map<int64_t, RefPtr<RemoteRendezvous>> table;
  {
    absl::MutexLock lock(&mu_);
    table.swap(table_);
    unclaimed_.clear();
  }
  for (auto& [id, r] : table) r->StartAbort(errors::Cancelled("step ", id, " was cleaned up"));
}

}  // namespace distflow
