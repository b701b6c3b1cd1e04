// The small RDMA-style interface the verbs protocol (rdma_channel.h) is
// written against: register memory, connect a reliable connection to one
// peer, attach a region the peer advertised, post a write-with-immediate
// into it, post receives, and get completions. Two implementations: the
// shared-memory provider (shm_provider.h) for tasks on one host, and the
// libibverbs provider (ibverbs_provider.h) for RDMA hardware.
//
// Semantics every provider keeps, as RDMA reliable connections do:
// - A write-with-immediate places its bytes in the peer's region and then
//   raises one kRecvImm completion carrying `imm` on the peer, consuming one
//   receive the peer posted; writes on one connection arrive in order.
// - A posted write raises one kWriteDone completion (carrying its wr_id) on
//   the writer once its source memory may be reused.
// - A connection that fails (peer gone, protocol error) raises one kError
//   completion with a status naming the peer; nothing follows it.
// Completions run the connection's handler: kRecvImm and kError on the
// provider's thread for that connection, kWriteDone possibly on the thread
// that posted the write. The handler must not block.
// Providers, connections and regions are thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_VERBS_PROVIDER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_VERBS_PROVIDER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace distflow {

// What the owner of a region tells a peer so that the peer can write into
// it: the RDMA (addr, rkey) pair and the region's size.
struct RemoteRegionInfo {
  uint64_t addr = 0;
  uint64_t rkey = 0;
  uint64_t size = 0;
};

// Local memory registered with a provider: peers may write into it once
// they attach its info().
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual char* data() const = 0;
  virtual size_t size() const = 0;
  virtual RemoteRegionInfo info() const = 0;
};

// A peer's region, attached to one connection for writing.
class RemoteRegion {
 public:
  virtual ~RemoteRegion() = default;
  virtual const RemoteRegionInfo& info() const = 0;
};

struct Completion {
  enum class Kind { kWriteDone, kRecvImm, kError };
  Kind kind = Kind::kError;
  uint64_t wr_id = 0;   // kWriteDone
  uint32_t imm = 0;     // kRecvImm
  absl::Status status;  // kError
};
using CompletionHandler = std::function<void(const Completion&)>;

// One reliable connection to one peer ("queue pair").
class VerbsConnection {
 public:
  virtual ~VerbsConnection() = default;

  // What the peer passes to its Connect to reach this connection.
  virtual std::string endpoint() const = 0;
  // Connects to the connection the peer described with `peer_endpoint`.
  // Unavailable naming the peer when that fails or `deadline` passes.
  virtual absl::Status Connect(const std::string& peer_endpoint, absl::Time deadline) = 0;

  // InvalidArgument when `info` is not a region the peer registered (or no
  // longer exists); Unavailable when the peer is gone.
  virtual absl::StatusOr<std::unique_ptr<RemoteRegion>> AttachRemote(
      const RemoteRegionInfo& info) = 0;

  // Gathers `src` into `dst` from byte `offset` on, then raises `imm` on
  // the peer. InvalidArgument when the bytes do not fit in `dst`;
  // Unavailable when the connection is down. `src` must stay valid until
  // the kWriteDone completion for `wr_id`.
  virtual absl::Status PostWriteWithImm(absl::Span<const absl::Span<const char>> src,
                                        const RemoteRegion& dst, uint64_t offset, uint32_t imm,
                                        uint64_t wr_id) = 0;
  // Posts `count` receives, each consumed by one incoming immediate.
  virtual absl::Status PostRecv(int count) = 0;

  // Tears the connection down; the peer sees kError. Idempotent. No
  // completion starts after Close returns (called from a completion handler,
  // that handler is the last); the destructor waits for a running one.
  virtual void Close() = 0;
};

class VerbsProvider {
 public:
  virtual ~VerbsProvider() = default;
  // "shm" or "ibverbs".
  virtual const char* name() const = 0;
  // ResourceExhausted when the memory cannot be had.
  virtual absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(size_t bytes) = 0;
  // An unconnected connection whose completions go to `handler`.
  virtual absl::StatusOr<std::unique_ptr<VerbsConnection>> CreateConnection(
      CompletionHandler handler) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_VERBS_PROVIDER_H_
