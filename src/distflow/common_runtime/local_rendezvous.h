// LocalRendezvous: the in-memory table behind every rendezvous of a step.
// Items are keyed by the hash of the parsed key (full keys tell collisions
// apart). An item is either a sent value waiting for its receiver or a
// receiver waiting for its value; when the other side arrives the item is
// removed and the receiver's callback runs on the arriving thread, outside
// the table lock. Send never blocks. A second Send, or a second RecvAsync, of
// a key whose first one is still pending is Aborted. StartAbort fails every
// waiter and every later call with its status (the first status wins).
// It is the buffering half of IntraProcessRendezvous and of the remote
// rendezvous, not a Rendezvous itself. All methods are thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_LOCAL_RENDEZVOUS_H_
#define DISTFLOW_COMMON_RUNTIME_LOCAL_RENDEZVOUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/rendezvous.h"

namespace distflow {

class LocalRendezvous {
 public:
  LocalRendezvous() = default;
  // Receivers still waiting are failed with Aborted.
  ~LocalRendezvous();
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  // Same contracts as Rendezvous::Send / RecvAsync / StartAbort. Send sets
  // *taken (may be null) to whether a waiting receiver took the value.
  absl::Status Send(const Rendezvous::ParsedKey& key, const Rendezvous::Args& send_args,
                    const Tensor& value, bool is_dead, bool* taken = nullptr);
  void RecvAsync(const Rendezvous::ParsedKey& key, const Rendezvous::Args& recv_args,
                 Rendezvous::DoneCallback done);
  void StartAbort(const absl::Status& status);

  // The keys of the receivers waiting for a value, in no particular order.
  std::vector<std::string> PendingReceives() const;

  // OK until StartAbort, then the abort status.
  absl::Status status() const;

 private:
  // A sent value waiting for its receiver, or a receiver waiting for its
  // value.
  struct Item {
    enum class Kind { kValue, kWaiter };
    Kind kind;
    std::string key;
    // kValue: what the sender left.
    Rendezvous::Args send_args;
    Tensor value;
    bool is_dead = false;
    // kWaiter: who is waiting.
    Rendezvous::Args recv_args;
    Rendezvous::DoneCallback done;
    CancellationToken token = -1;
    // The next item whose key has the same hash.
    std::unique_ptr<Item> next;
  };

  // Removes and returns the item of `key` in its bucket chain, or nullptr.
  std::unique_ptr<Item> TakeLocked(const Rendezvous::ParsedKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends `item` to the chain of its hash.
  void InsertLocked(uint64_t hash, std::unique_ptr<Item> item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Called by a cancellation callback: fails the waiting receiver of `key`
  // registered under (`cm`, `token`) when it is still waiting.
  void CancelRecv(uint64_t hash, CancellationManager* cm, CancellationToken token);

  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::unique_ptr<Item>> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_LOCAL_RENDEZVOUS_H_
