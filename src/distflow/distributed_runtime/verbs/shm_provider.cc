#include "distflow/distributed_runtime/verbs/shm_provider.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "distflow/core/errno_text.h"
#include "distflow/core/random.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

constexpr char kMemfdPrefix[] = "distflow-verbs-";
// How long an accepted socket may take to say which connection it is for
// (a peer sends its hello right after connecting), and how many may be
// waiting to do so at once (beyond that the oldest is dropped). Any local
// user can dial the abstract socket: silent dialers cost the acceptor
// neither time nor more than this many descriptors.
constexpr absl::Duration kHelloTimeout = absl::Milliseconds(250);
constexpr size_t kMaxPendingHellos = 64;

std::atomic<uint64_t> next_generation{1};

// MADV_POPULATE_WRITE (Linux 5.14), spelled out for older headers.
constexpr int kMadvPopulateWrite = 23;

class ShmRegion : public MemoryRegion {
 public:
  ShmRegion(int fd, char* data, size_t size, uint64_t generation)
      : fd_(fd), data_(data), size_(size), generation_(generation) {}
  ~ShmRegion() override {
    munmap(data_, size_);
    close(fd_);
  }
  char* data() const override { return data_; }
  size_t size() const override { return size_; }
  // rkey: the generation in the high half, the fd in the low half.
  RemoteRegionInfo info() const override {
    return RemoteRegionInfo{reinterpret_cast<uint64_t>(data_),
                            (generation_ << 32) | static_cast<uint32_t>(fd_), size_};
  }

 private:
  const int fd_;
  char* const data_;
  const size_t size_;
  const uint64_t generation_;
};

class ShmRemoteRegion : public RemoteRegion {
 public:
  ShmRemoteRegion(RemoteRegionInfo info, char* data) : info_(info), data_(data) {}
  ~ShmRemoteRegion() override { munmap(data_, info_.size); }
  const RemoteRegionInfo& info() const override { return info_; }
  char* data() const { return data_; }

 private:
  const RemoteRegionInfo info_;
  char* const data_;
};

struct Endpoint {
  std::string host;
  pid_t pid = 0;
  std::string socket_name;
  uint64_t connection = 0;  // 0: the peer has dialled already
};

std::string FormatEndpoint(const Endpoint& e) {
  return absl::StrCat("shm;", e.host, ";", e.pid, ";", e.socket_name, ";", e.connection);
}

absl::StatusOr<Endpoint> ParseEndpoint(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ';');
  Endpoint e;
  if (parts.size() != 5 || parts[0] != "shm" || !absl::SimpleAtoi(parts[2], &e.pid) ||
      !absl::SimpleAtoi(parts[4], &e.connection) || e.pid <= 0 || parts[3].empty() ||
      parts[3].size() >= sizeof(sockaddr_un::sun_path) - 1) {
    return errors::InvalidArgument("malformed shared-memory endpoint '", text, "'");
  }
  e.host = parts[1];
  e.socket_name = parts[3];
  return e;
}

sockaddr_un AbstractAddress(const std::string& name, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // Abstract namespace: a leading NUL, no file.
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

struct Hello {
  uint64_t connection;
  int32_t pid;
  int32_t pad;
};

}  // namespace

class ShmConnection : public VerbsConnection {
 public:
  ShmConnection(ShmProvider* provider, uint64_t id, CompletionHandler handler)
      : provider_(provider), id_(id), handler_(std::move(handler)) {}
  ~ShmConnection() override {
    Close();
    if (reader_.joinable()) {
      // Only when the last owner lets go inside a completion handler.
      if (reader_.get_id() == std::this_thread::get_id()) {
        reader_.detach();
      } else {
        reader_.join();
      }
    }
    absl::MutexLock lock(&mu_);
    if (fd_ >= 0) close(fd_);
  }

  std::string endpoint() const override {
    absl::MutexLock lock(&mu_);
    return FormatEndpoint(
        Endpoint{ShmProvider::HostId(), getpid(), provider_->socket_name_, fd_ >= 0 ? 0 : id_});
  }

  absl::Status Connect(const std::string& peer_endpoint, absl::Time deadline) override {
    DF_ASSIGN_OR_RETURN(Endpoint peer, ParseEndpoint(peer_endpoint));
    if (peer.host != ShmProvider::HostId()) {
      return errors::Unavailable("shared-memory peer (pid ", peer.pid, ") is on another host");
    }
    if (peer.connection != 0) return Dial(peer);
    // The peer dialled us while answering the exchange: wait for it.
    absl::MutexLock lock(&mu_);
    auto attached = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return fd_ >= 0 || closed_; };
    if (!mu_.AwaitWithDeadline(absl::Condition(&attached), deadline) || closed_) {
      return errors::Unavailable("shared-memory peer (pid ", peer.pid, ") did not connect in time");
    }
    if (peer_pid_ != peer.pid) {
      return errors::Unavailable("shared-memory connection came from pid ", peer_pid_,
                                 ", expected ", peer.pid);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<RemoteRegion>> AttachRemote(
      const RemoteRegionInfo& info) override {
    pid_t pid;
    {
      absl::MutexLock lock(&mu_);
      if (fd_ < 0) return errors::FailedPrecondition("shared-memory connection not connected");
      pid = peer_pid_;
    }
    const int peer_fd = static_cast<int>(info.rkey & 0xffffffffu);
    const uint64_t generation = info.rkey >> 32;
    if (info.size == 0 || peer_fd < 0 || generation == 0) {
      return errors::InvalidArgument("pid ", pid, " advertised a malformed region (rkey ",
                                     info.rkey, ", ", info.size, " bytes)");
    }
    const std::string path = absl::StrCat("/proc/", pid, "/fd/", peer_fd);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      return errors::InvalidArgument("cannot open region ", path, " of pid ", pid, ": ",
                                     ErrnoText(errno), " (is the peer gone, or another user?)");
    }
    // Check that the fd is the region advertised and not a recycled number.
    char target[128] = {0};
    const std::string self = absl::StrCat("/proc/self/fd/", fd);
    const ssize_t n = readlink(self.c_str(), target, sizeof(target) - 1);
    const std::string expected = absl::StrCat("/memfd:", kMemfdPrefix, generation, " ");
    struct stat st {};
    if (n <= 0 || std::string(target, n).rfind(expected, 0) != 0 || fstat(fd, &st) != 0 ||
        static_cast<uint64_t>(st.st_size) < info.size) {
      close(fd);
      return errors::InvalidArgument("region ", path, " of pid ", pid,
                                     " is not the one advertised (freed, or a stale rkey)");
    }
    void* data = mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    // Writes land here: map every page writable now, not at a fault per
    // page during the first write (a read-populated shared mapping faults
    // again on write). Older kernels lack it, and then the first write
    // faults, which is only slower.
    if (data != MAP_FAILED) madvise(data, info.size, kMadvPopulateWrite);
    if (data == MAP_FAILED) {
      return errors::ResourceExhausted("cannot map ", info.size, " bytes of pid ", pid, ": ",
                                       ErrnoText(errno));
    }
    return std::unique_ptr<RemoteRegion>(new ShmRemoteRegion(info, static_cast<char*>(data)));
  }

  absl::Status PostWriteWithImm(absl::Span<const absl::Span<const char>> src,
                                const RemoteRegion& dst, uint64_t offset, uint32_t imm,
                                uint64_t wr_id) override {
    const auto* region = dynamic_cast<const ShmRemoteRegion*>(&dst);
    if (region == nullptr) return errors::InvalidArgument("not a shared-memory region");
    uint64_t end = offset;
    for (const auto& s : src) {
      if (end > region->info().size || s.size() > region->info().size - end) {
        return errors::InvalidArgument("a write of ", s.size(), " bytes at offset ", end,
                                       " does not fit a remote region of ", region->info().size,
                                       " bytes");
      }
      end += s.size();
    }
    int fd;
    {
      absl::MutexLock lock(&mu_);
      fd = fd_;
      if (fd < 0 || closed_ || failed_) {
        return errors::Unavailable("shared-memory connection to pid ", peer_pid_, " is down");
      }
    }
    char* out = region->data() + offset;
    for (const auto& s : src) {
      std::memcpy(out, s.data(), s.size());
      out += s.size();
    }
    if (send(fd, &imm, sizeof(imm), MSG_NOSIGNAL) != sizeof(imm)) {
      return errors::Unavailable("shared-memory peer pid ", peer_pid_,
                                 " is gone: ", ErrnoText(errno));
    }
    Completion c;
    c.kind = Completion::Kind::kWriteDone;
    c.wr_id = wr_id;
    handler_(c);
    return absl::OkStatus();
  }

  absl::Status PostRecv(int count) override {
    posted_.fetch_add(count, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  void Close() override {
    int fd;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
      fd = fd_;
    }
    provider_->Forget(id_);
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
    // From a completion handler the reader ends once the handler returns;
    // the destructor joins it.
    if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
  }

  // Binds the connected socket `fd` from `pid` and starts reading it.
  // False (and `fd` untouched) when already bound or closed.
  bool Attach(int fd, pid_t pid) {
    absl::MutexLock lock(&mu_);
    if (fd_ >= 0 || closed_) return false;
    fd_ = fd;
    peer_pid_ = pid;
    reader_ = std::thread([this, fd] { ReadLoop(fd); });
    return true;
  }

 private:
  absl::Status Dial(const Endpoint& peer) {
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return errors::Unavailable("socket: ", ErrnoText(errno));
    socklen_t len;
    sockaddr_un addr = AbstractAddress(peer.socket_name, &len);
    Hello hello{peer.connection, static_cast<int32_t>(getpid()), 0};
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != sizeof(hello)) {
      const std::string why = ErrnoText(errno);
      close(fd);
      return errors::Unavailable("cannot reach shared-memory peer pid ", peer.pid, ": ", why);
    }
    if (!Attach(fd, peer.pid)) {
      close(fd);
      return errors::FailedPrecondition("shared-memory connection already connected or closed");
    }
    return absl::OkStatus();
  }

  void ReadLoop(int fd) {
    for (;;) {
      uint32_t frame[2];
      const ssize_t n = recv(fd, frame, sizeof(frame), 0);
      if (n < 0 && errno == EINTR) continue;
      Completion c;
      if (n == sizeof(uint32_t)) {
        if (posted_.fetch_sub(1, std::memory_order_relaxed) > 0) {
          c.kind = Completion::Kind::kRecvImm;
          c.imm = frame[0];
          handler_(c);
          absl::MutexLock lock(&mu_);
          if (closed_) return;
          continue;
        }
        c.status =
            errors::DataLoss("shared-memory peer pid ", peer_pid_, " wrote with no receive posted");
      } else if (n > 0) {
        c.status = errors::DataLoss("malformed doorbell of ", n, " bytes from pid ", peer_pid_);
      } else {
        c.status = errors::Unavailable("shared-memory peer pid ", peer_pid_,
                                       " closed the connection (did it exit?)");
      }
      {
        absl::MutexLock lock(&mu_);
        if (closed_) return;  // our own Close
        failed_ = true;
      }
      shutdown(fd, SHUT_RDWR);
      c.kind = Completion::Kind::kError;
      handler_(c);
      return;
    }
  }

  ShmProvider* const provider_;
  const uint64_t id_;
  const CompletionHandler handler_;
  std::atomic<int64_t> posted_{0};
  mutable absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  pid_t peer_pid_ = 0;  // set once, with fd_
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_;
};

absl::StatusOr<std::unique_ptr<ShmProvider>> ShmProvider::Create() {
  std::unique_ptr<ShmProvider> p(new ShmProvider);
  p->socket_name_ = absl::StrCat("distflow-verbs-", getpid(), "-", absl::Hex(random::New64()));
  p->listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un addr = AbstractAddress(p->socket_name_, &len);
  if (p->listen_fd_ < 0 || bind(p->listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(p->listen_fd_, 64) != 0) {
    return errors::Unavailable("cannot listen on the shared-memory socket: ", ErrnoText(errno));
  }
  ShmProvider* raw = p.get();
  p->acceptor_ = std::thread([raw] { raw->AcceptLoop(); });
  return p;
}

ShmProvider::~ShmProvider() {
  stopping_.store(true);
  if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void ShmProvider::AcceptLoop() {
  // Accepted sockets whose hello has not come yet, oldest first; every one
  // is polled together with the listener, so none holds up the others.
  struct Pending {
    int fd;
    absl::Time deadline;
  };
  std::deque<Pending> pending;
  auto drop_front = [&pending] {
    close(pending.front().fd);
    pending.pop_front();
  };
  // Shutting the listener down wakes the poll; the bound is a second thought.
  constexpr int64_t kMaxPollMs = 1000;
  while (!stopping_.load()) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}};
    for (const Pending& p : pending) fds.push_back({p.fd, POLLIN, 0});
    const int64_t until_lapse =
        pending.empty() ? kMaxPollMs
                        : absl::ToInt64Milliseconds(pending.front().deadline - absl::Now()) + 1;
    const int timeout_ms = static_cast<int>(std::clamp<int64_t>(until_lapse, 0, kMaxPollMs));
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    // Hellos (or hang-ups) first, then the lapsed; fds[i + 1] is pending[i].
    std::deque<Pending> still;
    const absl::Time now = absl::Now();
    for (size_t i = 0; i < pending.size(); ++i) {
      const int fd = pending[i].fd;
      if (fds[i + 1].revents == 0) {
        if (now < pending[i].deadline) {
          still.push_back(pending[i]);
        } else {
          close(fd);
        }
        continue;
      }
      Hello hello{};
      if (recv(fd, &hello, sizeof(hello), MSG_DONTWAIT) != sizeof(hello)) {
        close(fd);
        continue;
      }
      absl::MutexLock lock(&mu_);
      auto it = waiting_.find(hello.connection);
      if (it == waiting_.end() || !it->second->Attach(fd, hello.pid)) {
        close(fd);
        continue;
      }
      waiting_.erase(it);
    }
    pending.swap(still);
    if (fds[0].revents == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
      break;  // shut down
    }
    if (pending.size() >= kMaxPendingHellos) drop_front();
    pending.push_back(Pending{fd, absl::Now() + kHelloTimeout});
  }
  while (!pending.empty()) drop_front();
}

void ShmProvider::Forget(uint64_t id) {
  absl::MutexLock lock(&mu_);
  waiting_.erase(id);
}

absl::StatusOr<std::unique_ptr<MemoryRegion>> ShmProvider::RegisterMemory(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes == 0 || bytes > (size_t{1} << 48)) {
    return errors::InvalidArgument("cannot register a region of ", bytes, " bytes");
  }
  const size_t size = (bytes + page - 1) / page * page;
  const uint64_t generation = next_generation.fetch_add(1);
  const std::string name = absl::StrCat(kMemfdPrefix, generation);
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return errors::ResourceExhausted("memfd_create: ", ErrnoText(errno));
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const std::string why = ErrnoText(errno);
    close(fd);
    return errors::ResourceExhausted("cannot size a ", size, "-byte region: ", why);
  }
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) {
    const std::string why = ErrnoText(errno);
    close(fd);
    return errors::ResourceExhausted("cannot map a ", size, "-byte region: ", why);
  }
  return std::unique_ptr<MemoryRegion>(
      new ShmRegion(fd, static_cast<char*>(data), size, generation));
}

absl::StatusOr<std::unique_ptr<VerbsConnection>> ShmProvider::CreateConnection(
    CompletionHandler handler) {
  absl::MutexLock lock(&mu_);
  // Random, not counted: the listening socket is abstract, so any local
  // process may dial it, and only the peer the exchange told the id to
  // should be able to name a waiting connection.
  uint64_t id = 0;
  while (id == 0 || waiting_.contains(id)) id = random::New64();
  auto conn = std::make_unique<ShmConnection>(this, id, std::move(handler));
  waiting_[id] = conn.get();
  return std::unique_ptr<VerbsConnection>(std::move(conn));
}

std::string ShmProvider::HostId() {
  static const std::string* const id = [] {
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string boot_id;
    std::getline(boot, boot_id);
    char ns[64] = {0};
    const ssize_t n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
    return new std::string(
        absl::StrCat(absl::StripAsciiWhitespace(boot_id), "/", n > 0 ? std::string(ns, n) : ""));
  }();
  return *id;
}

bool ShmProvider::IsOnThisHost(const std::string& endpoint) {
  absl::StatusOr<Endpoint> e = ParseEndpoint(endpoint);
  return e.ok() && e->host == HostId();
}

}  // namespace distflow
