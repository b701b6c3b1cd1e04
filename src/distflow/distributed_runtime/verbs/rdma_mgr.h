// RdmaMgr: the verbs channels of one task, one per remote task it fetches
// tensors from (made on first use) and one per remote task that fetches
// from it (made when that task asks, over GetRemoteAddress). A channel
// that fails is replaced by a new one on next use; a peer that restarted
// thus gets a fresh channel, never the dead one's buffers.
//
// Start-up of a channel to task T: this side registers its message and ack
// buffers, sends their addresses and its connection endpoint in
// GetRemoteAddress to T (over gRPC, through `exchange`), T makes its side
// and answers with its own, and both connect. The shared-memory provider
// serves tasks on this host; a task elsewhere needs the libibverbs
// provider and an RDMA device (FailedPrecondition otherwise, and the caller
// keeps using gRPC for that task).
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_RDMA_MGR_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_RDMA_MGR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/distributed_runtime/verbs/rdma_channel.h"
#include "distflow/distributed_runtime/verbs/verbs_provider.h"
#include "distflow/verbs.pb.h"

namespace distflow {

// Sends GetRemoteAddress to a remote task and waits for the answer, at most
// until `deadline`.
using RemoteAddressExchange = std::function<absl::Status(
    const GetRemoteAddressRequest& req, GetRemoteAddressResponse* resp, absl::Time deadline)>;

class RdmaMgr {
 public:
  struct Options {
    std::string local_task;
    // See RdmaChannel::Options.
    uint64_t max_tensor_buffer_bytes = uint64_t{1} << 32;
    // How long a channel's start-up may take.
    absl::Duration connect_timeout = absl::Seconds(10);
    TensorSource source;
    // See RdmaChannel::Options.
    std::function<void(std::function<void()>)> schedule;
  };

  // Unavailable when no provider can be made.
  static absl::StatusOr<std::unique_ptr<RdmaMgr>> Create(Options options);
  ~RdmaMgr();
  RdmaMgr(const RdmaMgr&) = delete;
  RdmaMgr& operator=(const RdmaMgr&) = delete;

  // The working channel to `remote_task`, made through `exchange` when
  // there is none. FailedPrecondition when the task is on another host and
  // this one has no RDMA device, or does not serve grpc+verbs (started
  // without it); Unavailable when start-up fails.
  absl::StatusOr<std::shared_ptr<RdmaChannel>> GetChannel(const std::string& remote_task,
                                                          const RemoteAddressExchange& exchange);

  // Serves a peer's GetRemoteAddress: makes the channel the peer will
  // fetch through and answers with this side's addresses.
  absl::Status HandleGetRemoteAddress(const GetRemoteAddressRequest& req,
                                      GetRemoteAddressResponse* resp);

  // Fails and closes every channel (their pending receives fail with
  // Unavailable); later calls fail. Channel threads have stopped when it
  // returns.
  void Shutdown();

  const std::string& local_task() const { return options_.local_task; }

 private:
  explicit RdmaMgr(Options options) : options_(std::move(options)) {}
  RdmaChannel::Options ChannelOptions(const std::string& remote_task) const;
  absl::Status ShutDownError() const;
  // Keeps a replaced channel alive: late callbacks of its connection and
  // of its producers may still reach it. Freed with the manager.
  void Retire(std::shared_ptr<RdmaChannel> channel) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::unique_ptr<VerbsProvider> shm_;
  std::unique_ptr<VerbsProvider> ibverbs_;  // null without a device
  absl::Mutex mu_;
  // One start-up at a time per remote task; a slow task does not hold up
  // channels to the others.
  absl::flat_hash_map<std::string, std::shared_ptr<absl::Mutex>> connecting_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<RdmaChannel>> outgoing_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<RdmaChannel>> incoming_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<RdmaChannel>> retired_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_RDMA_MGR_H_
