// The producer's end of side channel pushes (side_channel_wire.h): sends a
// small value a step produced to the task that will receive it, before that
// task asks, so the receive needs no request round trip.
//
// A push is only a head start (rendezvous_mgr.h): whatever is not pushed is
// asked for as before. So TryPush never waits. It sends nothing when it does
// not know where the receiving task's side channel listens (Learn teaches
// it: a receiver's hello names its port), when the value is larger than
// `max_tensor_bytes` or its encoding than kSideChannelMaxPush, when the
// connection to the task is still being made or busy with another push, or
// when the socket cannot take the whole push at once. A connection that
// took part of a push, failed, or was closed by the receiver is closed and
// made again by a later push. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_PUSHER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_PUSHER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "distflow/distributed_runtime/rendezvous_mgr.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class SideChannelPusher : public TensorPusher {
 public:
  struct Options {
    // The token a hello carries (empty: the cluster has none).
    std::string token;
    // Larger values are not pushed.
    uint64_t max_tensor_bytes = 16 << 10;
  };

  explicit SideChannelPusher(Options options);
  // Closes every connection.
  ~SideChannelPusher() override;
  SideChannelPusher(const SideChannelPusher&) = delete;
  SideChannelPusher& operator=(const SideChannelPusher&) = delete;

  // `task` ("/job:J/replica:R/task:T") listens at host:port (host numeric,
  // as a connection's peer address is). A new address replaces the old one
  // and its connection.
  void Learn(const std::string& task, const std::string& host, int port);

  bool TryPush(const std::string& task, int64_t step_id, absl::string_view key, const Tensor& value,
               bool is_dead) override;

  // Pushes sent in full since construction.
  int64_t pushes_sent() const { return pushes_sent_.load(); }

 private:
  // The way to one task: its address and the connection pushes go on.
  struct Route {
    absl::Mutex mu;  // held by the push using the connection
    std::string host;
    int port = 0;
    int fd = -1;             // ABSL_GUARDED_BY(mu)
    bool connected = false;  // the connection is made (not in progress)
    bool greeted = false;    // its hello is sent
  };
  // Starts a connection to the route's address without waiting, or sees
  // whether one in progress is made; true once it is.
  static bool Connect(Route* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu);
  static void Close(Route* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu);

  const Options options_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Route>> routes_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> pushes_sent_{0};
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_PUSHER_H_
