// Session: how a client runs graphs, in TensorFlow's shape. Create() gives
// the session a GraphDef (Extend() adds nodes to it); Run() feeds tensors by
// name, computes the fetched tensors and the target nodes, and returns the
// fetched values in order. NewSession picks the implementation from the
// target among the factories registered with RegisterSessionFactory: "" is
// the in-process DirectSession (common_runtime/direct_session.cc registers
// it), "grpc://..." a remote master (distributed_runtime/rpc/grpc_session.cc).
//
// Every Session implementation is thread-safe: Run may be called from many
// threads at once, concurrently with Extend, ListDevices and Close.
#ifndef DISTFLOW_COMMON_RUNTIME_SESSION_H_
#define DISTFLOW_COMMON_RUNTIME_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/config.pb.h"
#include "distflow/device_attributes.pb.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph.pb.h"

namespace distflow {

struct SessionOptions {
  // "" for an in-process session; "grpc://host:port" for a remote master.
  std::string target;
  ConfigProto config;
};

class Session {
 public:
  virtual ~Session() = default;

  // Gives the session its graph. FailedPrecondition when it already has
  // one; InvalidArgument naming the node for a graph that does not import.
  virtual absl::Status Create(const GraphDef& graph) = 0;
  // Adds the nodes of `graph` to the session's graph (Create when it has
  // none). InvalidArgument naming the node when a name is already used or
  // the result does not import; the session's graph is then unchanged.
  virtual absl::Status Extend(const GraphDef& graph) = 0;

  // Feeds `inputs` (tensor name -> value), runs what `output_tensor_names`
  // and `target_node_names` need, and sets *outputs to the fetched values in
  // the order asked (a name listed twice is returned twice). Errors:
  // InvalidArgument naming the tensor for an unknown, malformed or
  // duplicated feed, a fed value of the wrong dtype or shape, an unknown or
  // malformed fetch; InvalidArgument for an unknown target; the first error
  // of the step, naming the node ("node 'x' (Op): ..."); DeadlineExceeded
  // when the step runs past run_options.timeout_in_ms (or the config's
  // operation_timeout_in_ms); SessionClosedError() after Close. `run_metadata` may be
  // null; otherwise it gets per-node step stats when
  // run_options.trace_level != NO_TRACE and the partition graphs when
  // run_options.output_partition_graphs.
  virtual absl::Status Run(const RunOptions& run_options,
                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                           const std::vector<std::string>& output_tensor_names,
                           const std::vector<std::string>& target_node_names,
                           std::vector<Tensor>* outputs, RunMetadata* run_metadata) = 0;

  // Run with default options and no metadata.
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_tensor_names,
                   const std::vector<std::string>& target_node_names,
                   std::vector<Tensor>* outputs) {
    return Run(RunOptions(), inputs, output_tensor_names, target_node_names, outputs, nullptr);
  }

  // The devices the session places nodes on.
  virtual absl::Status ListDevices(std::vector<DeviceAttributes>* response) = 0;

  // Cancels the steps running now: each Run in progress returns Cancelled
  // as soon as its kernels notice (a Python caller's Ctrl-C). Steps started
  // later run as usual and the session stays open. Unimplemented where a
  // session cannot.
  virtual absl::Status CancelRunningSteps();

  // Cancels running steps and makes every later call but Close fail with
  // SessionClosedError(). Idempotent.
  virtual absl::Status Close() = 0;
};

// What every session (and a master's session on a server) answers after
// Close: Cancelled, "Session has been closed".
absl::Status SessionClosedError();

// Makes a session for options.target with the factory registered for it.
// NotFound for a target no factory accepts; the factory's error when it
// cannot build the session.
absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

// Builds sessions for the targets it was registered for.
using SessionFactory =
    std::function<absl::StatusOr<std::unique_ptr<Session>>(const SessionOptions& options)>;

// Registers `factory` for targets starting with `target_prefix` (the
// longest registered prefix wins), or, for an empty prefix, for the empty
// target only. A later registration for the same prefix replaces the
// earlier one. Thread-safe.
void RegisterSessionFactory(absl::string_view target_prefix, SessionFactory factory);

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_SESSION_H_
