#include "distflow/distributed_runtime/rpc/side_channel_keyed_answer.h"

#include "distflow/core/status.h"

namespace distflow {

void KeyedAnswer::Done(const absl::Status& status, grpc::ByteBuffer reply, Tensor follows) {
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_) return;
    wake = Settle(status, std::move(reply), std::move(follows));
  }
  // Outside the lock, which the woken thread takes first thing.
  if (wake) wake_->Signal();
}

bool KeyedAnswer::Settle(const absl::Status& status, grpc::ByteBuffer reply, Tensor follows) {
  if (!status.ok()) {
    status_ = status;
    state_ = State::kHandedBack;
    return true;
  }
  if (!Lay(std::move(reply), std::move(follows))) {
    status_ = errors::Internal("unreadable RecvTensor reply");
    state_ = State::kHandedBack;
    return true;
  }
  // Counted before the bytes go, so the receiver never has its tensor
  // before the count does.
  served_->fetch_add(1);
  if (follows_.IsInitialized()) {
    // 64 KiB or more: copying it into the socket here would hold up the
    // thread that made the tensor, where the connection's thread copies it
    // beside that thread's other work.
    state_ = State::kHandedBack;
    return true;
  }
  size_t moved = 0;
  int error = 0;
  switch (WriteGatheredNow(fd_, pieces_, 0, &moved, &error)) {
    case IoOutcome::kDone:
      state_ = State::kSent;
      return false;
    case IoOutcome::kDeadline:  // the socket is full: the rest waits
      sent_ = moved;
      state_ = State::kHandedBack;
      return true;
    default:
      state_ = State::kBroken;
      return true;
  }
}

bool KeyedAnswer::Lay(grpc::ByteBuffer reply, Tensor follows) {
  // The slices hold the response's bytes on their own.
  if (!reply.Dump(&slices_).ok()) return false;
  follows_ = std::move(follows);
  SideChannelReplyHeader header;
  header.payload_bytes = reply.Length();
  EncodeSideChannelReplyHeader(header, &head_);
  pieces_.clear();
  pieces_.emplace_back(head_.data(), head_.size());
  for (const grpc::Slice& s : slices_) {
    pieces_.emplace_back(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  // The bytes the response says follow, from the tensor's own buffer.
  if (follows_.IsInitialized()) {
    pieces_.emplace_back(static_cast<const char*>(follows_.raw_data()), follows_.TotalBytes());
  }
  return true;
}

KeyedAnswer::State KeyedAnswer::state() {
  absl::MutexLock lock(&mu_);
  return state_;
}

absl::Status KeyedAnswer::status() {
  absl::MutexLock lock(&mu_);
  return status_;
}

bool KeyedAnswer::SendRest(absl::Duration stall) {
  // Done has run: nothing else takes the lock but this connection's thread.
  absl::MutexLock lock(&mu_);
  size_t moved = 0;
  int error = 0;
  return WriteGatheredFully(fd_, pieces_, sent_, absl::InfiniteFuture(), stall, &moved, &error) ==
         IoOutcome::kDone;
}

void KeyedAnswer::Abandon() {
  {
    absl::MutexLock lock(&mu_);
    abandoned_ = true;
  }
  // Outside the lock: a source may answer its cancellation at once.
  cm_.StartCancel();
}

}  // namespace distflow
