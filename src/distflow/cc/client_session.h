// ClientSession: runs the graph a Scope has built, in TensorFlow's C++
// shape. Feeds are keyed by Output; fetches are Outputs; targets are
// Operations. Nodes added to the scope after the session was created are
// sent to the session (Extend) on the next Run. The target picks where the
// graph runs: "" in this process, "grpc://host:port" on a cluster (link the
// distributed runtime for that). Run is thread-safe.
#ifndef DISTFLOW_CC_CLIENT_SESSION_H_
#define DISTFLOW_CC_CLIENT_SESSION_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/common_runtime/session.h"

namespace distflow {

class ClientSession {
 public:
  using FeedType = std::unordered_map<Output, Input::Initializer, OutputHash>;

  explicit ClientSession(const Scope& scope, const std::string& target = "");
  ClientSession(const Scope& scope, const SessionOptions& options);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // The status of creating the underlying session (and of the scope).
  const absl::Status& status() const { return status_; }

  absl::Status Run(const std::vector<Output>& fetch_outputs, std::vector<Tensor>* outputs) const;
  absl::Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                   std::vector<Tensor>* outputs) const;
  absl::Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs) const;
  absl::Status Run(const RunOptions& run_options, const FeedType& inputs,
                   const std::vector<Output>& fetch_outputs,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) const;

  Session* session() const { return session_.get(); }

 private:
  // Sends the scope's nodes added since the last call to the session.
  absl::Status MaybeExtend() const;

  Scope scope_;
  std::unique_ptr<Session> session_;
  absl::Status status_;
  mutable absl::Mutex mu_;
  mutable int last_node_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_CC_CLIENT_SESSION_H_
