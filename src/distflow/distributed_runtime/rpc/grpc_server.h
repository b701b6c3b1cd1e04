// One task of a cluster as a process: a gRPC server on one port hosting the
// master service and the worker service, the task's CPU devices, and the
// state they share. Start() binds the port (0 picks a free one; the chosen
// port is bound_port()), Stop() shuts the server down and fails what is
// running. With ServerDef.protocol "grpc+verbs" the server also hosts the
// verbs service and its workers fetch tensors from other tasks over verbs
// channels (verbs/rdma_mgr.h); "grpc" or empty is plain gRPC.
// Large RecvTensor payloads between tasks move over the tensor side channel
// (side_channel_server.h), a plain TCP stream on an ephemeral port of the
// same host, unless options.tensor_side_channel is off or the server speaks
// TLS: the side channel is never encrypted, so with TLS it stays off and
// every byte goes over the TLS-protected gRPC calls.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SERVER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SERVER_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distflow/distributed_runtime/rpc/grpc_tls.h"
#include "distflow/distributed_runtime/worker.h"
#include "distflow/tensorflow_server.pb.h"

namespace distflow {

class DeviceMgr;
class GrpcMasterService;
class GrpcWorkerService;
class Master;
class RdmaMgr;
class RendezvousMgr;
class ServerCallQueue;
class SideChannelServer;
class ThreadPool;
class Worker;
class WorkerCache;

struct GrpcServerOptions {
  // The host to listen on instead of the one the task's cluster entry
  // names ("0.0.0.0" for every interface).
  std::string bind_host;
  // Calls must carry this token (grpc_auth.h); empty: the process token.
  std::string token;
  // Serve over mutual TLS with these (grpc_tls.h); off: the process's TLS
  // settings. The process's channels then use them too.
  TlsConfig tls;
  // Larger request messages are refused (ResourceExhausted) unread.
  int max_receive_message_bytes = std::numeric_limits<int32_t>::max();
  // grpc+verbs: a peer's request for a tensor buffer larger than this
  // (bytes) is refused with ResourceExhausted; 0: RdmaMgr's default.
  uint64_t verbs_max_buffer_bytes = 0;
  // Serve large RecvTensor payloads over the tensor side channel, and fetch
  // them from other tasks that offer it. Ignored (off) with TLS.
  bool tensor_side_channel = true;
  // With the side channel: push small tensors a step sends to another task
  // before it asks (side_channel_pusher.h), and take such pushes.
  bool tensor_push = true;
};

class GrpcServer {
 public:
  // InvalidArgument when the ServerDef's task is not in its cluster, or
  // when TLS settings lack a certificate, key or CA; the error of bad
  // DISTFLOW_TLS_* settings.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Create(const ServerDef& server_def,
                                                            GrpcServerOptions options = {});
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Binds the task's port (or ServerDef.port when nonzero) on the host its
  // cluster entry names — a loopback entry listens on loopback only — or
  // on options.bind_host. Unavailable naming the address when it cannot
  // bind: "the address is already in use" when another socket holds the
  // port; otherwise a message that lists the likely causes (with TLS, also a
  // certificate and key that do not load).
  absl::Status Start();
  // How long running calls may take to finish when Stop is given no grace
  // (`distflow server` gives --grace-seconds instead, 5 s by default).
  static constexpr absl::Duration kDefaultStopGrace = absl::Seconds(2);
  // Stops accepting calls, fails waiting steps, and gives running calls
  // `grace` to finish before cancelling them. Returns once the last call is
  // answered: connections that carry no call are closed, not waited for.
  void Stop(absl::Duration grace = kDefaultStopGrace);
  // Blocks until Stop() is called (from another thread or a signal).
  void Join();

  int bound_port() const { return bound_port_; }
  // "/job:J/replica:0/task:T".
  const std::string& task_name() const { return task_name_; }
  // The per-step rendezvous this server's worker holds.
  const RendezvousMgr& rendezvous_mgr() const { return *rendezvous_mgr_; }
  // "grpc://localhost:PORT", the target a client session connects to.
  std::string target() const;
  // The tensor side channel this server serves, or null (off, TLS, or not
  // started).
  const SideChannelServer* side_channel() const;
  // The completion queue the server's calls and its calls to other tasks
  // use (grpc_call_queue.h); null before Start.
  std::shared_ptr<ServerCallQueue> call_queue() const;

  // What the server holds now, for its status page.
  struct Stats {
    int64_t master_sessions = 0;
    int64_t registered_graphs = 0;
    // Steps whose rendezvous the worker holds: steps running here, and
    // receives waiting for steps that have not started.
    int64_t steps = 0;
    // Tensors sent in full over the side channel since Start (-1: none).
    int64_t side_channel_fetches = -1;
    // The worker's RunGraph steps running now, oldest first, with the Recv
    // keys each waits for.
    std::vector<Worker::RunningStep> running_steps;
  };
  Stats stats() const;

 private:
  GrpcServer() = default;
  // Sets up pushes over the started side channel (options.tensor_push).
  void StartPushes();

  ServerDef server_def_;
  GrpcServerOptions options_;
  std::string task_name_;
  int bound_port_ = 0;
  std::unique_ptr<DeviceMgr> device_mgr_;
  std::unique_ptr<ThreadPool> compute_pool_;
  // Declared before the caches: their workers use it until they go.
  std::unique_ptr<RdmaMgr> rdma_mgr_;
  std::shared_ptr<WorkerCache> worker_cache_;
  std::unique_ptr<RendezvousMgr> rendezvous_mgr_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SERVER_H_
