#include "distflow/common_runtime/local_rendezvous.h"

#include <string>
#include <utility>
#include <vector>

#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// Drops a waiter's cancellation callback before its `done` runs, so the
// callback can never fire for an item that is already gone. Called without
// the table lock: a callback that is running needs that lock to finish.
void DeregisterWaiter(const Rendezvous::Args& recv_args, CancellationToken token) {
  if (recv_args.cancellation_manager != nullptr && token >= 0) {
    recv_args.cancellation_manager->DeregisterCallback(token);
  }
}

}  // namespace

LocalRendezvous::~LocalRendezvous() { StartAbort(errors::Aborted("The rendezvous was destroyed")); }

std::unique_ptr<LocalRendezvous::Item> LocalRendezvous::TakeLocked(
    const Rendezvous::ParsedKey& key) {
  auto it = table_.find(key.hash());
  if (it == table_.end()) return nullptr;
  std::unique_ptr<Item>* link = &it->second;
  while (*link != nullptr && (*link)->key != key.FullKey()) {
    link = &(*link)->next;
  }
  if (*link == nullptr) return nullptr;
  std::unique_ptr<Item> item = std::move(*link);
  *link = std::move(item->next);
  if (it->second == nullptr) table_.erase(it);
  return item;
}

void LocalRendezvous::InsertLocked(uint64_t hash, std::unique_ptr<Item> item) {
  std::unique_ptr<Item>* link = &table_[hash];
  while (*link != nullptr) link = &(*link)->next;
  *link = std::move(item);
}

absl::Status LocalRendezvous::Send(const Rendezvous::ParsedKey& key,
                                   const Rendezvous::Args& send_args, const Tensor& value,
                                   bool is_dead, bool* taken) {
  if (taken != nullptr) *taken = false;
  std::unique_ptr<Item> waiter;
  {
    absl::MutexLock l(&mu_);
    if (!status_.ok()) return status_;
    waiter = TakeLocked(key);
    if (waiter != nullptr && waiter->kind == Item::Kind::kValue) {
      InsertLocked(key.hash(), std::move(waiter));
      return errors::Aborted("Duplicate send of rendezvous key '", key.FullKey(), "'");
    }
    if (waiter == nullptr) {
      auto item = std::make_unique<Item>();
      item->kind = Item::Kind::kValue;
      item->key.assign(key.FullKey().data(), key.FullKey().size());
      item->send_args = send_args;
      item->value = value;
      item->is_dead = is_dead;
      InsertLocked(key.hash(), std::move(item));
      return absl::OkStatus();
    }
  }
  DeregisterWaiter(waiter->recv_args, waiter->token);
  if (taken != nullptr) *taken = true;
  waiter->done(absl::OkStatus(), send_args, waiter->recv_args, value, is_dead);
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const Rendezvous::ParsedKey& key, const Rendezvous::Args& recv_args,
                                Rendezvous::DoneCallback done) {
  std::unique_ptr<Item> sent;
  absl::Status failure;
  {
    absl::MutexLock l(&mu_);
    if (!status_.ok()) {
      failure = status_;
    } else {
      sent = TakeLocked(key);
      if (sent != nullptr && sent->kind == Item::Kind::kWaiter) {
        InsertLocked(key.hash(), std::move(sent));
        failure = errors::Aborted("Duplicate recv of rendezvous key '", key.FullKey(), "'");
      } else if (sent == nullptr) {
        CancellationManager* cm = recv_args.cancellation_manager;
        auto item = std::make_unique<Item>();
        item->kind = Item::Kind::kWaiter;
        item->key.assign(key.FullKey().data(), key.FullKey().size());
        item->recv_args = recv_args;
        if (cm != nullptr) {
          item->token = cm->get_cancellation_token();
          const uint64_t hash = key.hash();
          const CancellationToken token = item->token;
          // Registering under mu_ is safe: cancellation callbacks run
          // outside the manager's lock and only then take mu_.
          if (!cm->RegisterCallback(token,
                                    [this, hash, cm, token] { CancelRecv(hash, cm, token); })) {
            failure =
                errors::Cancelled("Receive of rendezvous key '", key.FullKey(), "' was cancelled");
          }
        }
        if (failure.ok()) {
          item->done = std::move(done);
          InsertLocked(key.hash(), std::move(item));
          return;
        }
      }
    }
  }
  if (!failure.ok()) {
    done(failure, Rendezvous::Args(), recv_args, Tensor(), false);
    return;
  }
  done(absl::OkStatus(), sent->send_args, recv_args, sent->value, sent->is_dead);
}

void LocalRendezvous::CancelRecv(uint64_t hash, CancellationManager* cm, CancellationToken token) {
  std::unique_ptr<Item> waiter;
  {
    absl::MutexLock l(&mu_);
    auto it = table_.find(hash);
    if (it == table_.end()) return;
    std::unique_ptr<Item>* link = &it->second;
    while (*link != nullptr && !((*link)->kind == Item::Kind::kWaiter && (*link)->token == token &&
                                 (*link)->recv_args.cancellation_manager == cm)) {
      link = &(*link)->next;
    }
    if (*link == nullptr) return;
    waiter = std::move(*link);
    *link = std::move(waiter->next);
    if (it->second == nullptr) table_.erase(it);
  }
  // This runs inside the manager's cancellation, so the callback is already
  // gone from it: no deregistration.
  waiter->done(errors::Cancelled("Receive of rendezvous key '", waiter->key, "' was cancelled"),
               Rendezvous::Args(), waiter->recv_args, Tensor(), false);
}

void LocalRendezvous::StartAbort(const absl::Status& status) {
  DF_CHECK(!status.ok());
  absl::flat_hash_map<uint64_t, std::unique_ptr<Item>> table;
  absl::Status abort_status;
  {
    absl::MutexLock l(&mu_);
    if (status_.ok()) status_ = status;
    abort_status = status_;
    std::swap(table, table_);
  }
  for (auto& [hash, head] : table) {
    for (std::unique_ptr<Item> item = std::move(head); item != nullptr;
         item = std::move(item->next)) {
      if (item->kind != Item::Kind::kWaiter) continue;
      DeregisterWaiter(item->recv_args, item->token);
      item->done(abort_status, Rendezvous::Args(), item->recv_args, Tensor(), false);
    }
  }
}

std::vector<std::string> LocalRendezvous::PendingReceives() const {
  std::vector<std::string> keys;
  absl::MutexLock l(&mu_);
  for (const auto& [hash, head] : table_) {
    for (const Item* item = head.get(); item != nullptr; item = item->next.get()) {
      if (item->kind == Item::Kind::kWaiter) keys.push_back(item->key);
    }
  }
  return keys;
}

absl::Status LocalRendezvous::status() const {
  absl::MutexLock l(&mu_);
  return status_;
}

}  // namespace distflow
