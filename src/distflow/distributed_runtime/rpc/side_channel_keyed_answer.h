// One keyed receive's answer on the producer's end of the tensor side
// channel (side_channel_server.h). The keyed source answers on whatever
// thread makes the tensor, and the reply goes to the receiver from that
// thread, as much of it as the socket takes at once: a receive that waited
// for its tensor costs no wake-up of the connection's thread. A reply whose
// tensor follows it (64 KiB or more), the rest of one the socket did not
// take, and an error are handed back to the connection's thread (its wake
// eventfd is signalled), which finishes them and may wait.
//
// Guarantees: the reply is written once, in order, and no byte of it after
// Abandon() returns (the connection may then close); `served` counts a
// tensor's reply before its first byte goes; Done() never waits on the
// socket. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_KEYED_ANSWER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_KEYED_ANSWER_H_

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/core/event_fd.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"

namespace distflow {

class KeyedAnswer {
 public:
  enum class State {
    kWaiting,     // the source has not answered
    kSent,        // the whole reply went from the source's thread
    kHandedBack,  // the connection's thread finishes it: status(), SendRest()
    kBroken,      // the connection failed as the reply went
  };

  // `fd` is the connection's socket (non-blocking): it stays open until
  // Abandon() or a settled state. `wake` is what the connection's thread
  // polls; an answer signals it last thing, possibly after the connection
  // has gone, which its shared ownership makes harmless.
  KeyedAnswer(int fd, std::shared_ptr<EventFd> wake, std::atomic<int64_t>* served)
      : fd_(fd), wake_(std::move(wake)), served_(served) {}
  KeyedAnswer(const KeyedAnswer&) = delete;
  KeyedAnswer& operator=(const KeyedAnswer&) = delete;

  // The source's; it stays valid as long as this answer.
  CancellationManager* cm() { return &cm_; }

  // The keyed source's answer (SideChannelServer::KeyedDone): the
  // RecvTensorResponse bytes and the tensor whose bytes follow them, or an
  // error. Runs once, on any thread.
  void Done(const absl::Status& status, grpc::ByteBuffer reply, Tensor follows)
      ABSL_LOCKS_EXCLUDED(mu_);

  State state() ABSL_LOCKS_EXCLUDED(mu_);
  // Once handed back: the source's error, or OK when the rest of a reply
  // is to go (SendRest).
  absl::Status status() ABSL_LOCKS_EXCLUDED(mu_);
  // Sends what is left of a handed-back reply, dropping the receiver when
  // no byte moves for `stall`; false when the connection failed.
  bool SendRest(absl::Duration stall) ABSL_LOCKS_EXCLUDED(mu_);
  // The connection gives up on the receive: the source is cancelled, and
  // nothing is written once this returns.
  void Abandon() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Lays out the reply's pieces in the order they go; false when the
  // response's bytes cannot be read.
  bool Lay(grpc::ByteBuffer reply, Tensor follows) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the source's answer and writes what it can; true when the
  // connection's thread must look at the new state.
  bool Settle(const absl::Status& status, grpc::ByteBuffer reply, Tensor follows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int fd_;
  const std::shared_ptr<EventFd> wake_;
  std::atomic<int64_t>* const served_;
  CancellationManager cm_;
  absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kWaiting;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::array<char, kSideChannelReplyHeaderBytes> head_ ABSL_GUARDED_BY(mu_){};
  std::vector<grpc::Slice> slices_ ABSL_GUARDED_BY(mu_);
  Tensor follows_ ABSL_GUARDED_BY(mu_);
  WirePieces pieces_ ABSL_GUARDED_BY(mu_);
  size_t sent_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_KEYED_ANSWER_H_
