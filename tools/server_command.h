// `distflow server`: runs one task of a cluster (master + worker services on
// one port) until SIGTERM or SIGINT. The task comes from --cluster/--job/
// --task, or from the TF_CONFIG environment variable when --cluster is not
// given. The server listens on the host the task's cluster entry names
// (127.0.0.1 means loopback only) unless --bind names another. A task
// address with port 0 binds a free port. The first line printed is
// "listening on HOST:PORT". With --tls-cert/--tls-key/--tls-ca it speaks
// only mutual TLS; --memory-budget-mb caps the tensor memory of the process.
// A request larger than --max-request-mb is refused by gRPC
// (ResourceExhausted) before it is parsed; a graph of more than
// --max-graph-nodes nodes is ResourceExhausted naming the limit.
// --protocol grpc+verbs moves the tensors of remote receives over verbs
// channels (shared memory between tasks of one host) and keeps gRPC for
// every control call; --verbs-max-buffer-mb caps a peer's tensor buffer.
// Large tensors between tasks move over a plain TCP side channel beside
// gRPC unless --tensor-side-channel off (or TLS, which turns it off).
#ifndef DISTFLOW_TOOLS_SERVER_COMMAND_H_
#define DISTFLOW_TOOLS_SERVER_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distflow/common_runtime/step_watchdog.h"
#include "distflow/distributed_runtime/rpc/grpc_tls.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {

// The most CPU devices one task may have.
inline constexpr int kMaxServerDevices = 4096;
// --max-request-mb: the default, and the most a gRPC message may have (2^31 - 1
// bytes).
inline constexpr int kDefaultMaxRequestMb = 1024;
inline constexpr int kMaxRequestMbLimit = 2047;

struct ServerFlags {
  // "ps=h:p;worker=h:p,h:p"; empty means read TF_CONFIG.
  std::string cluster;
  // "grpc" or "grpc+verbs".
  std::string protocol = "grpc";
  // grpc+verbs: the largest tensor buffer a peer may ask this task for.
  int64_t verbs_max_buffer_mb = 4096;
  // "on" or "off": large RecvTensor payloads over the tensor side channel.
  std::string tensor_side_channel = "on";
  std::string tensor_push = "on";
  std::string job;
  int task = 0;
  // CPU devices in this task.
  int devices = 1;
  // Listen on this host instead of the one the cluster names for the task.
  std::string bind;
  // The deadline of a step whose RunOptions set none (0: none).
  int64_t step_timeout_ms = 0;
  // How long SIGTERM waits for running calls before the process exits anyway.
  int grace_seconds = 5;
  // A file holding the cluster's shared token: calls without it are refused.
  std::string token_file;
  // The directories ops touching files may use; empty: any.
  std::vector<std::string> file_roots;
  // PEM files for mutual TLS; all empty: DISTFLOW_TLS_CERT/KEY/CA or none.
  TlsFiles tls;
  // A step running this long logs the Recv keys it waits for (0: never).
  double stuck_step_warn_seconds = kDefaultStuckStepWarnSeconds;
  // The process's budget for tensor memory in MiB (0: DISTFLOW_MEMORY_BUDGET_MB or none).
  int64_t memory_budget_mb = 0;
  // The most nodes a graph may have (sessions and registered graphs).
  int64_t max_graph_nodes = kDefaultMaxGraphNodes;
  // The largest request message (a graph, a step's feeds) the server reads.
  int max_request_mb = kDefaultMaxRequestMb;
  // "grpc://host:port" of a running coordinator to join as a worker (the
  // task must be of its worker job); empty: join none.
  std::string join;
  // The status page's port (server/server_status.h); -1: none, 0: a free one.
  int status_port = -1;
  std::string status_bind = "127.0.0.1";
};

// The largest --stuck-step-warn-seconds: a year.
inline constexpr double kMaxWarnSeconds = 365.0 * 24 * 3600;

// Blocks until the process is asked to stop; OK after a clean shutdown, with
// the signal that asked in *stop_signal when given.
absl::Status RunServerCommand(const ServerFlags& flags, std::ostream& out,
                              int* stop_signal = nullptr);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_SERVER_COMMAND_H_
