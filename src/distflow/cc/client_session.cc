#include "distflow/cc/client_session.h"

#include "distflow/core/status.h"

namespace distflow {
namespace {
SessionOptions OptionsFor(const std::string& target) {
  SessionOptions options;
  options.target = target;
  return options;
}
}  // namespace

ClientSession::ClientSession(const Scope& scope, const std::string& target)
    : ClientSession(scope, OptionsFor(target)) {}

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options) : scope_(scope) {
  absl::StatusOr<std::unique_ptr<Session>> s = NewSession(options);
  if (!s.ok()) {
    status_ = s.status();
    return;
  }
  session_ = std::move(*s);
}

ClientSession::~ClientSession() {
  if (session_ != nullptr) session_->Close().IgnoreError();
}

absl::Status ClientSession::MaybeExtend() const {
  DF_RETURN_IF_ERROR(status_);
  DF_RETURN_IF_ERROR(scope_.status());
  absl::MutexLock lock(&mu_);
  const Graph& graph = *scope_.graph();
  if (graph.num_node_ids() <= last_node_id_) return absl::OkStatus();
  GraphDef all;
  graph.ToGraphDef(&all);
  // ToGraphDef writes op nodes in id order; send the ones not sent yet.
  GraphDef delta;
  *delta.mutable_versions() = all.versions();
  // The whole library each time: the session keeps a function sent again
  // unchanged once, and an imported graph brings its functions with it.
  *delta.mutable_library() = all.library();
  const std::vector<Node*> nodes = graph.op_nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->id() >= last_node_id_) *delta.add_node() = all.node(static_cast<int>(i));
  }
  DF_RETURN_IF_ERROR(session_->Extend(delta));
  last_node_id_ = graph.num_node_ids();
  return absl::OkStatus();
}

absl::Status ClientSession::Run(const std::vector<Output>& fetch_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(FeedType(), fetch_outputs, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(inputs, fetch_outputs, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(RunOptions(), inputs, fetch_outputs, run_outputs, outputs, nullptr);
}

absl::Status ClientSession::Run(const RunOptions& run_options, const FeedType& inputs,
                                const std::vector<Output>& fetch_outputs,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs, RunMetadata* run_metadata) const {
  DF_RETURN_IF_ERROR(MaybeExtend());
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [output, init] : inputs) {
    DF_RETURN_IF_ERROR(errors::Annotate(init.status, absl::StrCat("feed '", output.name(), "': ")));
    feeds.emplace_back(output.name(), init.tensor);
  }
  std::vector<std::string> fetches;
  for (const Output& o : fetch_outputs) fetches.push_back(o.name());
  std::vector<std::string> targets;
  for (const Operation& op : run_outputs) {
    if (op.node() == nullptr) return errors::InvalidArgument("target operation is null");
    targets.push_back(op.node()->name());
  }
  return session_->Run(run_options, feeds, fetches, targets, outputs, run_metadata);
}

}  // namespace distflow
