#include "distflow/distributed_runtime/rpc/side_channel_client.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "distflow/core/errno_text.h"
#include "distflow/core/status.h"

namespace distflow {

// One TCP connection to a producer. The descriptor stays open as long as
// the object lives, so a late cancel can never shut down a reused number;
// the generation makes a cancel meant for an earlier fetch a no-op.
class SideChannelClient::Connection {
 public:
  explicit Connection(int fd) : fd_(fd) {}
  ~Connection() { close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }

  uint64_t generation() {
    absl::MutexLock lock(&mu_);
    return generation_;
  }
  // Shuts the socket down iff `generation` is still the current fetch's.
  void Cancel(uint64_t generation) {
    absl::MutexLock lock(&mu_);
    if (generation != generation_ || cancelled_) return;
    cancelled_ = true;
    shutdown(fd_, SHUT_RDWR);
  }
  // Ends the current fetch; true iff it was cancelled.
  bool EndFetch() {
    absl::MutexLock lock(&mu_);
    ++generation_;
    return cancelled_;
  }
  // True iff the connection looks usable: nothing to read and no hang-up
  // (an idle connection the producer closed reads as end of file).
  bool LooksOpen() const {
    pollfd pfd{fd_, POLLIN, 0};
    return poll(&pfd, 1, 0) == 0;
  }

 private:
  const int fd_;
  absl::Mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// How one try of a fetch went. `stale`: the connection was found closed
// before the producer answered anything, so a fresh one may try again.
struct SideChannelClient::Attempt {
  absl::Status status;
  bool stale = false;
};

namespace {

std::string Endpoint(const std::string& host, int port) {
  return absl::StrCat(host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host,
                      ":", port);
}

// The status of a read or write that did not finish, naming the task and
// how far it got.
absl::Status IoFailure(IoOutcome outcome, int error, absl::string_view what, size_t moved,
                       uint64_t total, absl::Duration stall, const std::string& task) {
  const std::string progress = absl::StrCat(" (", moved, " of ", total, " bytes)");
  switch (outcome) {
    case IoOutcome::kDeadline:
      return errors::DeadlineExceeded(
          "RecvTensor from ", task, " timed out on the tensor side channel while ", what, progress);
    case IoOutcome::kStalled:
      return errors::Unavailable("tensor side channel from ", task, " stalled: nothing moved for ",
                                 absl::FormatDuration(stall), " while ", what, progress);
    case IoOutcome::kClosed:
      return errors::Unavailable("tensor side channel from ", task, " closed while ", what,
                                 progress, error != 0 ? ": " : "",
                                 error != 0 ? ErrnoText(error) : "", " (did the task exit?)");
    default:
      return errors::Unavailable("tensor side channel from ", task, " failed while ", what,
                                 progress, ": ", ErrnoText(error));
  }
}

// Buffers this large come from fresh mappings (malloc maps anything over
// 32 MiB), so every page of them faults when the payload first lands; with
// 4 KiB pages that costs as much as the copy itself. Asking for huge pages
// on the buffer's aligned interior makes it one fault per 2 MiB. Advice
// only: where huge pages are off or scarce nothing changes.
constexpr uint64_t kHugePageMinBytes = uint64_t{32} << 20;
constexpr uintptr_t kHugePageBytes = uintptr_t{2} << 20;

void AdviseHugePages(void* dst, uint64_t bytes) {
  if (bytes < kHugePageMinBytes) return;
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(dst) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(dst) + bytes) & ~(kHugePageBytes - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

absl::Status SideChannelClient::Fetch(const std::string& host, int port,
                                      const SideChannelTicket& ticket, void* dst, uint64_t bytes,
                                      absl::Time deadline, CallOptions* opts,
                                      const std::string& task) {
  AdviseHugePages(dst, bytes);
  for (int attempt = 0;; ++attempt) {
    if (absl::Now() >= deadline) {
      return errors::DeadlineExceeded("RecvTensor from ", task,
                                      " timed out before its tensor side channel was read");
    }
    bool reused = false;
    DF_ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Take(host, port, deadline, task, &reused));
    const uint64_t generation = c->generation();
    if (opts != nullptr && !opts->SetCancelCallback([c, generation] { c->Cancel(generation); })) {
      return errors::Cancelled("RecvTensor from ", task, " was cancelled");
    }
    Attempt a = Transfer(c.get(), ticket, dst, bytes, deadline, task);
    if (opts != nullptr) opts->ClearCancelCallback();
    if (c->EndFetch()) return errors::Cancelled("RecvTensor from ", task, " was cancelled");
    if (a.status.ok()) {
      GiveBack(Endpoint(host, port), std::move(c));
      return absl::OkStatus();
    }
    if (!(a.stale && reused && attempt == 0)) return a.status;
  }
}

SideChannelClient::Attempt SideChannelClient::Transfer(Connection* c,
                                                       const SideChannelTicket& ticket, void* dst,
                                                       uint64_t bytes, absl::Time deadline,
                                                       const std::string& task) {
  const absl::Duration stall = options_.stall_timeout;
  size_t moved = 0;
  int error = 0;
  std::array<char, kSideChannelRequestBytes> request;
  EncodeSideChannelRequest(ticket, &request);
  IoOutcome o =
      WriteFully(c->fd(), request.data(), request.size(), deadline, stall, &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "sending the ticket", moved, request.size(), stall, task),
            o == IoOutcome::kClosed};
  }
  std::array<char, kSideChannelReplyHeaderBytes> head;
  o = ReadFully(c->fd(), head.data(), head.size(), deadline, stall, &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "reading the reply header", moved, head.size(), stall, task),
            o == IoOutcome::kClosed && moved == 0};
  }
  SideChannelReplyHeader header;
  if (!DecodeSideChannelReplyHeader(head, &header) || header.ticket != ticket) {
    return {errors::DataLoss("malformed tensor side channel reply from ", task)};
  }
  if (header.code != absl::StatusCode::kOk) {
    std::string message(header.message_bytes, '\0');
    if (ReadFully(c->fd(), message.data(), message.size(), deadline, stall, &moved, &error) !=
        IoOutcome::kDone) {
      message = "(no message)";
    }
    return {absl::Status(header.code,
                         absl::StrCat(task, " refused a tensor side channel fetch: ", message))};
  }
  if (header.payload_bytes != bytes) {
    return {errors::DataLoss("tensor side channel from ", task, " announced ", header.payload_bytes,
                             " bytes where the RecvTensor reply said ", bytes)};
  }
  o = ReadFully(c->fd(), dst, bytes, deadline, stall, &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "reading the tensor", moved, bytes, stall, task)};
  }
  return {absl::OkStatus()};
}

absl::StatusOr<std::shared_ptr<SideChannelClient::Connection>> SideChannelClient::Take(
    const std::string& host, int port, absl::Time deadline, const std::string& task, bool* reused) {
  const std::string endpoint = Endpoint(host, port);
  {
    absl::MutexLock lock(&mu_);
    auto it = idle_.find(endpoint);
    while (it != idle_.end() && !it->second.empty()) {
      std::shared_ptr<Connection> c = std::move(it->second.back());
      it->second.pop_back();
      if (c->LooksOpen()) {
        *reused = true;
        return c;
      }
    }
  }
  std::string why;
  const int fd =
      ConnectTcp(host, port, std::min(deadline, absl::Now() + options_.connect_timeout), &why);
  if (fd < 0) {
    return errors::Unavailable("cannot connect to the tensor side channel of ", task, " at ",
                               endpoint, ": ", why);
  }
  *reused = false;
  return std::make_shared<Connection>(fd);
}

void SideChannelClient::GiveBack(const std::string& endpoint, std::shared_ptr<Connection> c) {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Connection>>& idle = idle_[endpoint];
  if (static_cast<int>(idle.size()) < options_.max_idle_per_peer) idle.push_back(std::move(c));
}

int SideChannelClient::IdleConnections(const std::string& host, int port) {
  absl::MutexLock lock(&mu_);
  auto it = idle_.find(Endpoint(host, port));
  return it == idle_.end() ? 0 : static_cast<int>(it->second.size());
}

}  // namespace distflow
