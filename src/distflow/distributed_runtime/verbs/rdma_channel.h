// One verbs channel: the link between this task and one remote task over a
// provider connection, speaking the six messages of verbs.proto.
//
// Buffers. Each side has a message buffer and an ack buffer that the peer
// writes into, and per rendezvous key a tensor buffer on the consumer side
// that the producer writes into. A message is written into the peer's
// message buffer with immediate kMessageImm and holds that buffer (remote
// state busy) until the peer's ACK lands in our ack buffer (immediate
// kAckImm); messages wait in a queue meanwhile. A tensor is written with the
// consumer's buffer id as immediate: a header (a TENSOR_WRITE message) at
// offset 0 and the bytes at kPayloadOffset.
//
// Flow of one receive (consumer C, producer P):
//   C: TENSOR_REQUEST(key, step, buffer id)            -> P
//   P: when the tensor is produced, if C's buffer for the key is unknown or
//      too small: BUFFER_REQUEST(size)                  -> C
//   C: grows the buffer (refusing sizes above its maximum): BUFFER_RESPONSE
//   P: writes TENSOR_WRITE + bytes into C's buffer; C's buffer is busy
//   C: hands the bytes to the receiver — in place, the tensor keeps the
//      buffer — and sends BUFFER_IDLE with the region to write next (a
//      second one while the first is held): the buffer is idle again.
// The producer writes one tensor per key at a time, in the order they are
// produced; a receive that is cancelled still lets its write land (it is
// then dropped and the buffer made idle), so no buffer stays busy.
//
// Failures: a connection error, a malformed message or an unknown
// immediate fails the channel: every pending receive fails with a status
// naming the remote task, and the channel serves nothing more (the owner
// makes a new one). A tensor the producer cannot give (its step aborted)
// arrives as a TENSOR_WRITE carrying the error.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_RDMA_CHANNEL_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_RDMA_CHANNEL_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/distributed_runtime/verbs/verbs_provider.h"
#include "distflow/framework/tensor.h"
#include "distflow/verbs.pb.h"

namespace distflow {

// The producer side's way to a tensor: runs `done` once the tensor of `key`
// in step `step_id` is produced (or failed). RdmaMgr serves it from the
// rendezvous manager.
using TensorDone = std::function<void(const absl::Status&, const Tensor&, bool is_dead)>;
using TensorSource = std::function<void(int64_t step_id, const std::string& key, TensorDone done)>;

class RdmaChannel {
 public:
  // Immediate values: the two fixed buffers, then tensor buffer ids.
  static constexpr uint32_t kMessageImm = 0;
  static constexpr uint32_t kAckImm = 1;
  static constexpr uint32_t kFirstTensorImm = 2;
  // Where a tensor's bytes start in its buffer (page-aligned; the header
  // before it).
  static constexpr uint64_t kPayloadOffset = 4096;
  static constexpr size_t kMessageBufferBytes = 64 * 1024;

  struct Options {
    std::string local_task;
    std::string remote_task;
    // A BUFFER_REQUEST for more bytes (payload and header) is refused.
    uint64_t max_tensor_buffer_bytes = uint64_t{1} << 32;
    TensorSource source;
    // Runs a received tensor's callback; empty: on the channel's thread,
    // which waits for it (fine for callbacks that only hand the tensor on).
    std::function<void(std::function<void()>)> schedule;
  };

  // Registers the message and ack buffers and makes the connection.
  static absl::StatusOr<std::shared_ptr<RdmaChannel>> Create(VerbsProvider* provider,
                                                             Options options);
  ~RdmaChannel();
  RdmaChannel(const RdmaChannel&) = delete;
  RdmaChannel& operator=(const RdmaChannel&) = delete;

  // This side of the start-up exchange.
  void FillLocalAddress(GetRemoteAddressRequest* req) const;
  void FillLocalAddress(GetRemoteAddressResponse* resp) const;
  // Connects to the peer's side of the exchange and starts the channel.
  absl::Status Connect(const std::string& peer_endpoint, const RdmaRegion& peer_message_buffer,
                       const RdmaRegion& peer_ack_buffer, absl::Time deadline);

  // Fetches the tensor of `key` in step `step_id` from the remote task and
  // runs `done` once: through Options::schedule when the tensor (or its
  // producer's error) arrives, at once on the canceller's thread, or here
  // when the channel has failed. Returns an id for CancelRecv.
  uint64_t RecvTensor(int64_t step_id, const std::string& key, TensorDone done);
  // Fails the receive `id` with `status` at once, if it is still pending.
  void CancelRecv(uint64_t id, const absl::Status& status);

  // Fails the channel with `status` (pending receives get it) and closes
  // its connection. Idempotent: the first status stays.
  void Close(const absl::Status& status) { Fail(status); }

  // OK while the channel works; the error that failed it after.
  absl::Status status() const;
  const std::string& remote_task() const { return options_.remote_task; }
  // Tensor buffers this side holds as consumer, and how many of them are
  // busy (a write is due) — for tests and diagnostics.
  int NumTensorBuffers() const;
  int NumBusyTensorBuffers() const;

 private:
  struct Pending {
    uint64_t id;
    TensorDone done;
  };
  // Consumer side: the buffer the producer writes the tensor of `key` into.
  struct RxBuffer {
    uint32_t id = 0;
    std::string key;
    std::shared_ptr<MemoryRegion> region;           // advertised to the producer
    std::shared_ptr<MemoryRegion> spare;            // the previous one, maybe lent
    int64_t writes_due = 0;                         // requests not yet written
    absl::flat_hash_map<int64_t, Pending> pending;  // by step
  };
  // A tensor produced for the consumer, waiting for its turn to be written.
  struct Item {
    int64_t step_id = 0;
    absl::Status status;
    Tensor tensor;
    bool is_dead = false;
    std::string proto_payload;  // non-numeric tensors, as a TensorProto
    std::string header;         // the TENSOR_WRITE head, kPayloadOffset bytes
  };
  // Producer side: where the tensors of `key` go.
  struct TxBuffer {
    std::string key;
    uint32_t remote_id = 0;
    std::shared_ptr<RemoteRegion> remote;
    // The consumer alternates between two buffers while it holds received
    // tensors in place: the other one stays attached.
    std::shared_ptr<RemoteRegion> previous;
    bool remote_idle = true;
    bool awaiting_response = false;
    std::deque<Item> ready;
  };

  RdmaChannel(VerbsProvider* provider, Options options);
  void OnCompletion(const Completion& c);
  void OnMessage();
  void OnTensorWrite(uint32_t buffer_id);
  void HandleTensorRequest(const RdmaMessage& m);
  void HandleBufferRequest(const RdmaMessage& m);
  void HandleBufferResponse(const RdmaMessage& m);
  void HandleBufferIdle(const RdmaMessage& m);
  void Enqueue(RdmaMessage m);
  void SendNextMessage();
  void SendAck();
  void PumpTx(const std::string& key);
  void Fail(const absl::Status& status);
  absl::Status Malformed(const std::string& what) const;

  VerbsProvider* const provider_;
  const Options options_;
  std::unique_ptr<VerbsConnection> conn_;
  std::unique_ptr<MemoryRegion> rx_message_, rx_ack_, tx_message_, tx_ack_;
  std::unique_ptr<RemoteRegion> remote_message_, remote_ack_;
  size_t ack_bytes_ = 0;
  // What a producer's callback, which may come after the channel is gone,
  // reaches it through: callbacks hold the lock shared while they use the
  // channel; the destructor takes it exclusively and clears `channel`.
  struct Liveness {
    absl::Mutex mu;
    RdmaChannel* channel ABSL_GUARDED_BY(mu) = nullptr;
  };
  std::shared_ptr<Liveness> liveness_;

  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  // The message buffer: local busy while our write is in flight, remote
  // busy until the peer's ACK.
  bool message_local_busy_ ABSL_GUARDED_BY(mu_) = false;
  bool message_remote_busy_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<RdmaMessage> outgoing_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::unique_ptr<RxBuffer>> rx_by_key_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, RxBuffer*> rx_by_id_ ABSL_GUARDED_BY(mu_);
  uint32_t next_rx_id_ ABSL_GUARDED_BY(mu_) = kFirstTensorImm;
  uint64_t next_recv_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Pending receives by id, for CancelRecv: (key, step).
  absl::flat_hash_map<uint64_t, std::pair<std::string, int64_t>> recv_index_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::unique_ptr<TxBuffer>> tx_by_key_ ABSL_GUARDED_BY(mu_);
  // Tensors whose write is in flight, kept alive until it completes.
  absl::flat_hash_map<uint64_t, std::unique_ptr<Item>> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t next_wr_id_ ABSL_GUARDED_BY(mu_) = 16;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_RDMA_CHANNEL_H_
