#include "distflow/distributed_runtime/verbs/rdma_channel.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/transfer_stats.h"
#include "distflow/framework/tensor_proto.h"

namespace distflow {
namespace {

constexpr uint64_t kMessageWr = 1;
constexpr uint64_t kAckWr = 2;
constexpr size_t kAckBufferBytes = 4096;
// Receives posted up front; one more is posted for each one consumed.
constexpr int kRecvDepth = 256;
// How long a completion that arrives before Connect finishes may wait.
constexpr absl::Duration kConnectWait = absl::Seconds(30);
// A rendezvous key longer than this does not fit a message.
constexpr size_t kMaxKeyBytes = 16 * 1024;

RdmaRegion ToProto(const RemoteRegionInfo& info) {
  RdmaRegion r;
  r.set_addr(info.addr);
  r.set_rkey(info.rkey);
  r.set_size(info.size);
  return r;
}

RemoteRegionInfo FromProto(const RdmaRegion& r) {
  return RemoteRegionInfo{r.addr(), r.rkey(), r.size()};
}

bool SameRegion(const RemoteRegionInfo& a, const RemoteRegionInfo& b) {
  return a.addr == b.addr && a.rkey == b.rkey && a.size == b.size;
}

// A message as it sits in a buffer: its length (4 bytes), then its bytes.
// False when it does not fit in `cap` bytes.
bool WriteFramed(const RdmaMessage& m, char* dst, size_t cap, size_t* written) {
  const size_t n = m.ByteSizeLong();
  if (n + 4 > cap) return false;
  const uint32_t len = static_cast<uint32_t>(n);
  std::memcpy(dst, &len, 4);
  m.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(dst + 4));
  *written = n + 4;
  return true;
}

bool ReadFramed(const char* src, size_t cap, RdmaMessage* m) {
  uint32_t len;
  if (cap < 4) return false;
  std::memcpy(&len, src, 4);
  return len <= cap - 4 && m->ParseFromArray(src + 4, static_cast<int>(len));
}

}  // namespace

RdmaChannel::RdmaChannel(VerbsProvider* provider, Options options)
    : provider_(provider), options_(std::move(options)) {}

absl::StatusOr<std::shared_ptr<RdmaChannel>> RdmaChannel::Create(VerbsProvider* provider,
                                                                 Options options) {
  std::shared_ptr<RdmaChannel> ch(new RdmaChannel(provider, std::move(options)));
  ch->liveness_ = std::make_shared<Liveness>();
  {
    absl::MutexLock lock(&ch->liveness_->mu);
    ch->liveness_->channel = ch.get();
  }
  DF_ASSIGN_OR_RETURN(ch->rx_message_, provider->RegisterMemory(kMessageBufferBytes));
  DF_ASSIGN_OR_RETURN(ch->tx_message_, provider->RegisterMemory(kMessageBufferBytes));
  DF_ASSIGN_OR_RETURN(ch->rx_ack_, provider->RegisterMemory(kAckBufferBytes));
  DF_ASSIGN_OR_RETURN(ch->tx_ack_, provider->RegisterMemory(kAckBufferBytes));
  RdmaMessage ack;
  ack.set_type(RDMA_MESSAGE_ACK);
  WriteFramed(ack, ch->tx_ack_->data(), ch->tx_ack_->size(), &ch->ack_bytes_);
  RdmaChannel* raw = ch.get();
  DF_ASSIGN_OR_RETURN(
      ch->conn_, provider->CreateConnection([raw](const Completion& c) { raw->OnCompletion(c); }));
  return ch;
}

RdmaChannel::~RdmaChannel() {
  if (liveness_ != nullptr) {
    absl::WriterMutexLock lock(&liveness_->mu);
    liveness_->channel = nullptr;
  }
  Fail(errors::Cancelled("verbs channel to ", options_.remote_task, " was closed"));
  // Before any other member goes: this waits for the connection's thread,
  // which may still be inside one of our handlers.
  conn_.reset();
}

void RdmaChannel::FillLocalAddress(GetRemoteAddressRequest* req) const {
  req->set_source_task(options_.local_task);
  req->set_provider(provider_->name());
  req->set_endpoint(conn_->endpoint());
  *req->mutable_message_buffer() = ToProto(rx_message_->info());
  *req->mutable_ack_buffer() = ToProto(rx_ack_->info());
}

void RdmaChannel::FillLocalAddress(GetRemoteAddressResponse* resp) const {
  resp->set_provider(provider_->name());
  resp->set_endpoint(conn_->endpoint());
  *resp->mutable_message_buffer() = ToProto(rx_message_->info());
  *resp->mutable_ack_buffer() = ToProto(rx_ack_->info());
}

absl::Status RdmaChannel::Connect(const std::string& peer_endpoint,
                                  const RdmaRegion& peer_message_buffer,
                                  const RdmaRegion& peer_ack_buffer, absl::Time deadline) {
  auto connect = [&]() -> absl::Status {
    DF_RETURN_IF_ERROR(conn_->Connect(peer_endpoint, deadline));
    DF_ASSIGN_OR_RETURN(remote_message_, conn_->AttachRemote(FromProto(peer_message_buffer)));
    DF_ASSIGN_OR_RETURN(remote_ack_, conn_->AttachRemote(FromProto(peer_ack_buffer)));
    if (remote_message_->info().size < kMessageBufferBytes) {
      return errors::InvalidArgument("the peer's message buffer has ", remote_message_->info().size,
                                     " bytes, fewer than ", kMessageBufferBytes);
    }
    return conn_->PostRecv(kRecvDepth);
  };
  absl::Status s = connect();
  if (!s.ok()) {
    s = errors::Unavailable("cannot connect the verbs channel from ", options_.local_task, " to ",
                            options_.remote_task, ": ", s.message());
    Fail(s);
    return s;
  }
  absl::MutexLock lock(&mu_);
  connected_ = true;
  return absl::OkStatus();
}

absl::Status RdmaChannel::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

int RdmaChannel::NumTensorBuffers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(rx_by_key_.size());
}

int RdmaChannel::NumBusyTensorBuffers() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [key, rx] : rx_by_key_) n += rx->writes_due > 0 ? 1 : 0;
  return n;
}

absl::Status RdmaChannel::Malformed(const std::string& what) const {
  return errors::DataLoss("malformed verbs message from ", options_.remote_task, ": ", what);
}

uint64_t RdmaChannel::RecvTensor(int64_t step_id, const std::string& key, TensorDone done) {
  absl::Status error;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) {
      error = status_;
    } else if (key.empty() || key.size() > kMaxKeyBytes) {
      error = errors::InvalidArgument("rendezvous key of ", key.size(), " bytes cannot be sent to ",
                                      options_.remote_task);
    } else {
      std::unique_ptr<RxBuffer>& rx = rx_by_key_[key];
      if (rx == nullptr) {
        rx = std::make_unique<RxBuffer>();
        rx->id = next_rx_id_++;
        rx->key = key;
        rx_by_id_[rx->id] = rx.get();
      }
      if (rx->pending.contains(step_id)) {
        error = errors::FailedPrecondition("step ", step_id, " already receives '", key, "' from ",
                                           options_.remote_task);
      } else {
        id = next_recv_id_++;
        rx->pending[step_id] = Pending{id, std::move(done)};
        ++rx->writes_due;
        recv_index_[id] = {key, step_id};
        RdmaMessage m;
        m.set_type(RDMA_MESSAGE_TENSOR_REQUEST);
        m.set_key(key);
        m.set_step_id(step_id);
        m.set_buffer_id(rx->id);
        outgoing_.push_back(std::move(m));
      }
    }
  }
  if (!error.ok()) {
    done(error, Tensor(), false);
    return 0;
  }
  SendNextMessage();
  return id;
}

void RdmaChannel::CancelRecv(uint64_t id, const absl::Status& status) {
  TensorDone done;
  {
    absl::MutexLock lock(&mu_);
    auto it = recv_index_.find(id);
    if (it == recv_index_.end()) return;
    RxBuffer* rx = rx_by_key_[it->second.first].get();
    auto p = rx->pending.find(it->second.second);
    done = std::move(p->second.done);
    rx->pending.erase(p);
    recv_index_.erase(it);
    // The write stays due: when it lands it is dropped and the buffer
    // made idle again.
  }
  done(status, Tensor(), false);
}

void RdmaChannel::OnCompletion(const Completion& c) {
  switch (c.kind) {
    case Completion::Kind::kError:
      Fail(errors::Unavailable("verbs channel from ", options_.local_task, " to ",
                               options_.remote_task, " failed: ", c.status.message()));
      return;
    case Completion::Kind::kWriteDone:
      if (c.wr_id == kMessageWr) {
        {
          absl::MutexLock lock(&mu_);
          message_local_busy_ = false;
        }
        SendNextMessage();
      } else if (c.wr_id != kAckWr) {
        absl::MutexLock lock(&mu_);
        in_flight_.erase(c.wr_id);
      }
      return;
    case Completion::Kind::kRecvImm:
      break;
  }
  {
    // A peer that connected first may write before Connect returned here.
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return connected_ || !status_.ok(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), kConnectWait) || !status_.ok()) return;
  }
  absl::Status s = conn_->PostRecv(1);
  if (!s.ok()) {
    Fail(s);
    return;
  }
  if (c.imm == kMessageImm) {
    OnMessage();
  } else if (c.imm == kAckImm) {
    {
      absl::MutexLock lock(&mu_);
      message_remote_busy_ = false;
    }
    SendNextMessage();
  } else {
    OnTensorWrite(c.imm);
  }
}

void RdmaChannel::OnMessage() {
  RdmaMessage m;
  if (!ReadFramed(rx_message_->data(), rx_message_->size(), &m)) {
    Fail(Malformed("the message buffer does not hold a message"));
    return;
  }
  // The message is copied out, so the peer may reuse its buffer; the ACK
  // saying so goes after handling, which keeps it off the path of a tensor
  // that is ready (its write goes first).
  switch (m.type()) {
    case RDMA_MESSAGE_TENSOR_REQUEST:
      HandleTensorRequest(m);
      break;
    case RDMA_MESSAGE_BUFFER_REQUEST:
      HandleBufferRequest(m);
      break;
    case RDMA_MESSAGE_BUFFER_RESPONSE:
      HandleBufferResponse(m);
      break;
    case RDMA_MESSAGE_BUFFER_IDLE:
      HandleBufferIdle(m);
      break;
    default:
      Fail(Malformed(
          absl::StrCat("message type ", static_cast<int>(m.type()), " in the message buffer")));
      return;
  }
  SendAck();
}

void RdmaChannel::HandleTensorRequest(const RdmaMessage& m) {
  if (m.key().empty() || m.buffer_id() < kFirstTensorImm) {
    Fail(Malformed(absl::StrCat("TENSOR_REQUEST for '", m.key(), "' into buffer ", m.buffer_id())));
    return;
  }
  {
    absl::ReleasableMutexLock lock(&mu_);
    std::unique_ptr<TxBuffer>& tx = tx_by_key_[m.key()];
    if (tx == nullptr) {
      tx = std::make_unique<TxBuffer>();
      tx->key = m.key();
      tx->remote_id = m.buffer_id();
    } else if (tx->remote_id != m.buffer_id()) {
      const uint32_t earlier = tx->remote_id;
      lock.Release();
      Fail(Malformed(absl::StrCat("TENSOR_REQUEST for '", m.key(), "' names buffer ", m.buffer_id(),
                                  ", earlier ", earlier)));
      return;
    }
  }
  std::shared_ptr<Liveness> liveness = liveness_;
  const std::string key = m.key();
  const int64_t step_id = m.step_id();
  options_.source(step_id, key,
                  [liveness, key, step_id](const absl::Status& s, const Tensor& t, bool is_dead) {
                    absl::ReaderMutexLock alive(&liveness->mu);
                    RdmaChannel* self = liveness->channel;
                    if (self == nullptr) return;
                    Item item;
                    item.step_id = step_id;
                    item.status = s;
                    item.is_dead = is_dead;
                    if (s.ok() && !is_dead) {
                      item.tensor = t;
                      if (DataTypeSize(t.dtype()) == 0) {
                        TensorProto proto;
                        TensorToProto(t, &proto);
                        item.proto_payload = proto.SerializeAsString();
                      }
                    }
                    {
                      absl::MutexLock lock(&self->mu_);
                      auto it = self->tx_by_key_.find(key);
                      if (!self->status_.ok() || it == self->tx_by_key_.end()) return;
                      it->second->ready.push_back(std::move(item));
                    }
                    self->PumpTx(key);
                  });
}

void RdmaChannel::PumpTx(const std::string& key) {
  auto item = std::make_unique<Item>();
  std::shared_ptr<RemoteRegion> dst;
  uint32_t imm = 0;
  const uint64_t wr_id = [&]() -> uint64_t {
    absl::MutexLock lock(&mu_);
    auto it = tx_by_key_.find(key);
    if (!status_.ok() || it == tx_by_key_.end()) return 0;
    TxBuffer* tx = it->second.get();
    if (!tx->remote_idle || tx->awaiting_response || tx->ready.empty()) return 0;
    Item& front = tx->ready.front();
    RdmaMessage head;
    head.set_type(RDMA_MESSAGE_TENSOR_WRITE);
    head.set_key(key);
    head.set_step_id(front.step_id);
    head.set_buffer_id(tx->remote_id);
    uint64_t payload = 0;
    if (!front.status.ok()) {
      head.set_error_code(static_cast<int32_t>(front.status.code()));
      head.set_error_message(std::string(front.status.message()));
    } else if (front.is_dead) {
      head.set_is_dead(true);
    } else {
      head.set_dtype(front.tensor.dtype());
      front.tensor.shape().AsProto(head.mutable_shape());
      head.set_payload_is_proto(DataTypeSize(front.tensor.dtype()) == 0);
      payload = head.payload_is_proto() ? front.proto_payload.size() : front.tensor.TotalBytes();
      head.set_payload_bytes(payload);
    }
    uint64_t needed = 0;
    if (!AddWithoutOverflow<uint64_t>(kPayloadOffset, payload, &needed)) needed = UINT64_MAX;
    if (tx->remote == nullptr || tx->remote->info().size < needed) {
      // The consumer's buffer must grow (or be made) first.
      tx->awaiting_response = true;
      RdmaMessage req;
      req.set_type(RDMA_MESSAGE_BUFFER_REQUEST);
      req.set_key(key);
      req.set_step_id(front.step_id);
      req.set_buffer_id(tx->remote_id);
      req.set_size(needed);
      outgoing_.push_back(std::move(req));
      return 0;
    }
    *item = std::move(front);
    tx->ready.pop_front();
    item->header.resize(kPayloadOffset);
    size_t written = 0;
    if (!WriteFramed(head, item->header.data(), item->header.size(), &written)) {
      // Only an error message can make the header this long: cut it.
      head.set_error_message(head.error_message().substr(0, 1024));
      WriteFramed(head, item->header.data(), item->header.size(), &written);
    }
    tx->remote_idle = false;
    dst = tx->remote;
    imm = tx->remote_id;
    return next_wr_id_++;
  }();
  if (wr_id == 0) {
    SendNextMessage();  // a BUFFER_REQUEST may be queued
    return;
  }
  std::vector<absl::Span<const char>> src;
  src.emplace_back(item->header.data(), item->header.size());
  if (!item->proto_payload.empty()) {
    src.emplace_back(item->proto_payload.data(), item->proto_payload.size());
  } else if (item->status.ok() && !item->is_dead && item->tensor.TotalBytes() > 0) {
    src.emplace_back(static_cast<const char*>(item->tensor.raw_data()), item->tensor.TotalBytes());
  }
  if (item->status.ok()) {
    CountTensorTransfer(
        true, TensorTransport::kVerbs, options_.remote_task,
        static_cast<int64_t>(item->proto_payload.empty() ? item->tensor.TotalBytes()
                                                         : item->proto_payload.size()));
  }
  {
    absl::MutexLock lock(&mu_);
    in_flight_[wr_id] = std::move(item);
  }
  absl::Status s = conn_->PostWriteWithImm(src, *dst, 0, imm, wr_id);
  if (!s.ok()) Fail(s);
}

void RdmaChannel::HandleBufferRequest(const RdmaMessage& m) {
  RdmaMessage resp;
  resp.set_type(RDMA_MESSAGE_BUFFER_RESPONSE);
  resp.set_key(m.key());
  resp.set_step_id(m.step_id());
  resp.set_buffer_id(m.buffer_id());
  {
    absl::ReleasableMutexLock lock(&mu_);
    auto it = rx_by_id_.find(m.buffer_id());
    if (it == rx_by_id_.end() || it->second->key != m.key()) {
      lock.Release();
      Fail(Malformed(absl::StrCat("BUFFER_REQUEST for '", m.key(), "' names buffer ", m.buffer_id(),
                                  ", which is not its")));
      return;
    }
  }
  absl::Status refused;
  std::unique_ptr<MemoryRegion> region;
  if (m.size() < kPayloadOffset || m.size() > options_.max_tensor_buffer_bytes) {
    refused = errors::ResourceExhausted(options_.remote_task, " asked ", options_.local_task,
                                        " for a buffer of ", m.size(), " bytes for tensor '",
                                        m.key(), "' of step ", m.step_id(), "; the maximum is ",
                                        options_.max_tensor_buffer_bytes, " bytes");
  } else {
    absl::StatusOr<std::unique_ptr<MemoryRegion>> r = provider_->RegisterMemory(m.size());
    if (r.ok()) {
      region = std::move(*r);
    } else {
      refused = errors::ResourceExhausted("cannot make a buffer of ", m.size(),
                                          " bytes for tensor '", m.key(), "' from ",
                                          options_.remote_task, ": ", r.status().message());
    }
  }
  TensorDone failed;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;  // failed meanwhile: its receives have failed
    RxBuffer* rx = rx_by_id_[m.buffer_id()];
    if (refused.ok()) {
      *resp.mutable_region() = ToProto(region->info());
      // The old buffers are too small; tensors still holding one keep it.
      rx->region = std::move(region);
      rx->spare = nullptr;
    } else {
      resp.set_error_code(static_cast<int32_t>(refused.code()));
      resp.set_error_message(std::string(refused.message()));
      // The producer drops this tensor: its write is no longer due.
      --rx->writes_due;
      auto p = rx->pending.find(m.step_id());
      if (p != rx->pending.end()) {
        failed = std::move(p->second.done);
        recv_index_.erase(p->second.id);
        rx->pending.erase(p);
      }
    }
  }
  Enqueue(std::move(resp));
  if (failed) failed(refused, Tensor(), false);
}

void RdmaChannel::HandleBufferResponse(const RdmaMessage& m) {
  std::unique_ptr<RemoteRegion> attached;
  if (m.error_code() == 0) {
    absl::StatusOr<std::unique_ptr<RemoteRegion>> r = conn_->AttachRemote(FromProto(m.region()));
    if (!r.ok()) {
      Fail(Malformed(absl::StrCat("BUFFER_RESPONSE for '", m.key(), "': ", r.status().message())));
      return;
    }
    attached = std::move(*r);
  }
  {
    absl::ReleasableMutexLock lock(&mu_);
    auto it = tx_by_key_.find(m.key());
    if (it == tx_by_key_.end() || !it->second->awaiting_response) {
      lock.Release();
      Fail(Malformed(absl::StrCat("BUFFER_RESPONSE for '", m.key(), "', which asked none")));
      return;
    }
    TxBuffer* tx = it->second.get();
    tx->awaiting_response = false;
    if (attached == nullptr) {
      // Refused: the consumer has failed that receive already.
      if (!tx->ready.empty()) tx->ready.pop_front();
    } else {
      // The grown buffer replaces both: the old ones are too small.
      tx->remote = std::move(attached);
      tx->previous = nullptr;
      tx->remote_idle = true;
    }
  }
  PumpTx(m.key());
}

void RdmaChannel::HandleBufferIdle(const RdmaMessage& m) {
  std::unique_ptr<RemoteRegion> attached;
  bool same = false;
  {
    absl::ReleasableMutexLock lock(&mu_);
    auto it = tx_by_key_.find(m.key());
    if (it == tx_by_key_.end() || it->second->remote == nullptr || it->second->remote_idle) {
      lock.Release();
      Fail(Malformed(absl::StrCat("BUFFER_IDLE for '", m.key(), "', which was not busy")));
      return;
    }
    TxBuffer* tx = it->second.get();
    const RemoteRegionInfo info = FromProto(m.region());
    same = SameRegion(tx->remote->info(), info);
    if (!same && tx->previous != nullptr && SameRegion(tx->previous->info(), info)) {
      std::swap(tx->remote, tx->previous);
      same = true;
    }
  }
  if (!same) {
    absl::StatusOr<std::unique_ptr<RemoteRegion>> r = conn_->AttachRemote(FromProto(m.region()));
    if (!r.ok()) {
      Fail(Malformed(absl::StrCat("BUFFER_IDLE for '", m.key(), "': ", r.status().message())));
      return;
    }
    attached = std::move(*r);
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = tx_by_key_.find(m.key());
    if (it == tx_by_key_.end()) return;  // failed meanwhile
    if (attached != nullptr) {
      it->second->previous = std::move(it->second->remote);
      it->second->remote = std::move(attached);
    }
    it->second->remote_idle = true;
  }
  PumpTx(m.key());
}

void RdmaChannel::OnTensorWrite(uint32_t buffer_id) {
  std::shared_ptr<MemoryRegion> region;
  std::string key;
  {
    absl::ReleasableMutexLock lock(&mu_);
    auto it = rx_by_id_.find(buffer_id);
    if (it == rx_by_id_.end() || it->second->region == nullptr || it->second->writes_due <= 0) {
      lock.Release();
      Fail(Malformed(
          absl::StrCat("a tensor written into buffer ", buffer_id, ", which expects none")));
      return;
    }
    region = it->second->region;
    key = it->second->key;
  }
  RdmaMessage head;
  if (!ReadFramed(region->data(), kPayloadOffset, &head) ||
      head.type() != RDMA_MESSAGE_TENSOR_WRITE || head.key() != key) {
    Fail(Malformed(absl::StrCat("tensor buffer of '", key, "' does not start with its header")));
    return;
  }
  const uint64_t room = region->size() - kPayloadOffset;
  const char* payload = region->data() + kPayloadOffset;
  absl::Status status;
  Tensor tensor;
  bool lent = false;
  if (head.error_code() != 0) {
    const int code = head.error_code();
    status = absl::Status(
        code > 0 && code <= 16 ? static_cast<absl::StatusCode>(code) : absl::StatusCode::kUnknown,
        absl::StrCat(options_.remote_task, ": ", head.error_message()));
  } else if (!head.is_dead()) {
    TensorShape shape;
    absl::Status decoded;
    if (head.payload_bytes() > room) {
      decoded = Malformed(absl::StrCat("tensor '", key, "' of ", head.payload_bytes(),
                                       " bytes in a buffer of ", room));
    } else if (head.payload_is_proto()) {
      TensorProto proto;
      decoded = proto.ParseFromArray(payload, static_cast<int>(head.payload_bytes()))
                    ? TensorFromProto(proto, &tensor)
                    : Malformed(absl::StrCat("tensor '", key, "' is not a TensorProto"));
    } else if (!DataTypeIsSupported(head.dtype()) || DataTypeSize(head.dtype()) == 0) {
      decoded = Malformed(absl::StrCat("tensor '", key, "' has raw bytes of type ",
                                       static_cast<int>(head.dtype())));
    } else if (decoded = TensorShape::FromProto(head.shape(), &shape); decoded.ok()) {
      const int64_t bytes = TensorBufferBytes(head.dtype(), shape.num_elements());
      if (bytes < 0 || static_cast<uint64_t>(bytes) != head.payload_bytes()) {
        decoded = Malformed(absl::StrCat("tensor '", key, "' of shape ", shape.DebugString(),
                                         " comes with ", head.payload_bytes(), " bytes"));
      } else if (bytes == 0 || head.dtype() == DT_BOOL) {
        // Bools are copied so that a byte other than 0 or 1 never lands in
        // one; empty tensors need no buffer.
        tensor = Tensor(head.dtype(), shape);
        if (bytes > 0) CopyRawBytesToTensor(payload, &tensor);
      } else {
        // In place: the tensor holds the region until it is freed.
        tensor = Tensor(head.dtype(), shape,
                        MakeExternalBuffer(region->data() + kPayloadOffset, bytes, [region] {}));
        lent = true;
      }
    }
    if (!decoded.ok()) {
      Fail(decoded.code() == absl::StatusCode::kDataLoss
               ? decoded
               : Malformed(std::string(decoded.message())));
      return;
    }
  }
  // The region to write next: this one unless a tensor holds it; then the
  // spare when it is free again; otherwise a new one.
  std::shared_ptr<MemoryRegion> next = region;
  if (lent) {
    std::shared_ptr<MemoryRegion> spare;
    {
      absl::MutexLock lock(&mu_);
      spare = rx_by_id_[buffer_id]->spare;
    }
    if (spare != nullptr && spare.use_count() == 2 && spare->size() >= region->size()) {
      next = spare;
    } else {
      absl::StatusOr<std::unique_ptr<MemoryRegion>> r = provider_->RegisterMemory(region->size());
      if (!r.ok()) {
        Fail(errors::ResourceExhausted("cannot make a tensor buffer for '", key, "' from ",
                                       options_.remote_task, ": ", r.status().message()));
        return;
      }
      next = std::move(*r);
    }
  }
  TensorDone done;
  RdmaMessage idle;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;  // failed meanwhile: its receives have failed
    RxBuffer* rx = rx_by_id_[buffer_id];
    if (lent) {
      rx->spare = rx->region;
      rx->region = next;
    }
    --rx->writes_due;
    auto p = rx->pending.find(head.step_id());
    if (p != rx->pending.end()) {
      done = std::move(p->second.done);
      recv_index_.erase(p->second.id);
      rx->pending.erase(p);
    }
    idle.set_type(RDMA_MESSAGE_BUFFER_IDLE);
    idle.set_key(key);
    idle.set_step_id(head.step_id());
    idle.set_buffer_id(buffer_id);
    *idle.mutable_region() = ToProto(rx->region->info());
  }
  Enqueue(std::move(idle));
  if (!done) return;
  if (status.ok()) {
    CountTensorTransfer(false, TensorTransport::kVerbs, options_.remote_task,
                        static_cast<int64_t>(tensor.TotalBytes()));
  }
  if (options_.schedule) {
    options_.schedule([done = std::move(done), status, tensor, dead = head.is_dead()] {
      done(status, tensor, dead);
    });
  } else {
    done(status, tensor, head.is_dead());
  }
}

void RdmaChannel::Enqueue(RdmaMessage m) {
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;
    outgoing_.push_back(std::move(m));
  }
  SendNextMessage();
}

void RdmaChannel::SendNextMessage() {
  size_t written = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok() || !connected_ || message_local_busy_ || message_remote_busy_ ||
        outgoing_.empty()) {
      return;
    }
    // Keys are bounded in RecvTensor, so every message fits; should one not,
    // the channel fails rather than the process.
    if (WriteFramed(outgoing_.front(), tx_message_->data(), tx_message_->size(), &written)) {
      outgoing_.pop_front();
      message_local_busy_ = true;
      message_remote_busy_ = true;
    }
  }
  if (written == 0) {
    Fail(errors::Internal("a verbs message to ", options_.remote_task, " is larger than the ",
                          kMessageBufferBytes, "-byte message buffer"));
    return;
  }
  const absl::Span<const char> src[] = {{tx_message_->data(), written}};
  absl::Status s = conn_->PostWriteWithImm(src, *remote_message_, 0, kMessageImm, kMessageWr);
  if (!s.ok()) Fail(s);
}

void RdmaChannel::SendAck() {
  const absl::Span<const char> src[] = {{tx_ack_->data(), ack_bytes_}};
  absl::Status s = conn_->PostWriteWithImm(src, *remote_ack_, 0, kAckImm, kAckWr);
  if (!s.ok()) Fail(s);
}

void RdmaChannel::Fail(const absl::Status& status) {
  std::vector<TensorDone> dones;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;
    status_ = status;
    // The buffers go now (tensors still holding one keep it): a failed
    // channel stays with its owner until the owner goes.
    for (auto& [key, rx] : rx_by_key_) {
      for (auto& [step, p] : rx->pending) dones.push_back(std::move(p.done));
      rx->pending.clear();
      rx->region.reset();
      rx->spare.reset();
    }
    recv_index_.clear();
    outgoing_.clear();
    tx_by_key_.clear();
  }
  if (conn_ != nullptr) conn_->Close();
  for (TensorDone& d : dones) d(status, Tensor(), false);
}

}  // namespace distflow
