// The shared-memory verbs provider: RDMA's write-with-immediate between two
// processes on one host. A registered region is a memfd mapped by its
// owner; a peer attaches it by opening /proc/<owner pid>/fd/<fd> and
// mapping it too, so a "write" is one memcpy into the peer's memory. A
// connection is a connected SOCK_SEQPACKET Unix socket: each write sends
// one 4-byte frame carrying the immediate value (the doorbell), and the
// socket closing is how each side learns that the other died.
//
// Why a socket as doorbell rather than an eventfd or a futex in the shared
// memory: it carries the immediate value itself, keeps the writes of one
// connection in order, wakes a blocked reader without polling, and the
// kernel closes it when the peer dies, however it dies (SIGKILL included) —
// so no wait on a dead peer goes unnoticed.
//
// Why /proc/<pid>/fd rather than passing fds over the socket (SCM_RIGHTS):
// attaching is then synchronous and independent of the socket's stream, so
// a region advertised in any message (or in the start-up RPC) can be
// attached the moment it is read, with no ordering between fd passing and
// address advertising to get wrong. The memfd's name carries a per-process
// generation number that the attacher checks, so a recycled fd number is
// refused, never mapped. It needs the two processes to run as one user (the
// kernel's ptrace read check); otherwise AttachRemote fails naming the pid.
//
// Connections are made in pairs by the start-up exchange: the side that
// answers the exchange dials the asker's listening socket (an abstract Unix
// socket, so nothing is left in the file system) and the asker waits for
// that dial. Endpoints name the host (boot id and network namespace),
// which is how a caller tells whether two tasks share a host.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_SHM_PROVIDER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_SHM_PROVIDER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "distflow/distributed_runtime/verbs/verbs_provider.h"

namespace distflow {

class ShmConnection;

class ShmProvider : public VerbsProvider {
 public:
  // Unavailable when the listening socket cannot be made.
  static absl::StatusOr<std::unique_ptr<ShmProvider>> Create();
  ~ShmProvider() override;
  ShmProvider(const ShmProvider&) = delete;
  ShmProvider& operator=(const ShmProvider&) = delete;

  const char* name() const override { return "shm"; }
  absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(size_t bytes) override;
  absl::StatusOr<std::unique_ptr<VerbsConnection>> CreateConnection(
      CompletionHandler handler) override;

  // This host's identity: boot id and network namespace.
  static std::string HostId();
  // True iff `endpoint` is a shared-memory endpoint on this host.
  static bool IsOnThisHost(const std::string& endpoint);

 private:
  friend class ShmConnection;
  ShmProvider() = default;
  void AcceptLoop();
  void Forget(uint64_t id);

  int listen_fd_ = -1;
  std::string socket_name_;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  // Connections waiting for the peer's dial, by id.
  absl::flat_hash_map<uint64_t, ShmConnection*> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_SHM_PROVIDER_H_
