#include "distflow/common_runtime/graph_execution_state.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/rendezvous.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_partition.h"
#include "distflow/graph/lower_functional_ops.h"
#include "distflow/graph/subgraph.h"
#include "distflow/graph/tensor_id.h"
#include "google/protobuf/util/message_differencer.h"

namespace distflow {

absl::Status PartitionGraph(const PartitionGraphOptions& options, Graph* g,
                            std::unordered_map<std::string, GraphDef>* partitions) {
  PartitionOptions popts;
  popts.node_to_loc = options.by == PartitionBy::kTask ? SplitByTask : SplitByDevice;
  std::atomic<int64_t>* counter = options.counter;
  std::string tag(options.name_tag);
  popts.new_name = [counter, tag](absl::string_view prefix) {
    return absl::StrCat(prefix, "/", tag, counter->fetch_add(1));
  };
  popts.get_incarnation = options.incarnation;
  popts.enable_bfloat16_sendrecv = options.enable_bfloat16_sendrecv;
  if (counter == nullptr || !popts.get_incarnation) {
    return errors::InvalidArgument(
        "PartitionGraph needs a name counter and an incarnation function");
  }
  return Partition(popts, g, partitions);
}

absl::Status ClientGraph::CheckFeed(size_t i, const std::string& given, DataType dtype,
                                    const TensorShape& shape) const {
  const Feed& feed = feeds[i];
  if (dtype != feed.dtype) {
    return errors::InvalidArgument("feed '", given, "': expected a value of type ",
                                   DataTypeString(feed.dtype), " but got ", DataTypeString(dtype));
  }
  if (!feed.shape.IsCompatibleWith(shape)) {
    return errors::InvalidArgument("feed '", given, "': a value of shape ", shape.DebugString(),
                                   " does not fit the placeholder's shape ",
                                   feed.shape.DebugString());
  }
  return absl::OkStatus();
}

GraphExecutionState::GraphExecutionState(Options options) : options_(std::move(options)) {}

bool GraphExecutionState::has_graph() const {
  absl::MutexLock lock(&mu_);
  return graph_ != nullptr;
}

absl::Status GraphExecutionState::ResetLocked(const GraphDef& graph_def) {
  auto graph = std::make_shared<Graph>();
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, graph_def, graph.get()));
  graph_ = std::move(graph);
  return absl::OkStatus();
}

absl::Status GraphExecutionState::Create(const GraphDef& graph_def) {
  absl::MutexLock lock(&mu_);
  if (graph_ != nullptr) {
    return errors::FailedPrecondition("Session already has a graph; use Extend to add nodes");
  }
  return ResetLocked(graph_def);
}

absl::Status GraphExecutionState::Extend(const GraphDef& graph_def) {
  absl::MutexLock lock(&mu_);
  if (graph_ == nullptr) return ResetLocked(graph_def);
  // The graph is the only copy kept: the merged GraphDef is written from it.
  GraphDef merged;
  graph_->ToGraphDef(&merged);
  for (const NodeDef& n : graph_def.node()) *merged.add_node() = n;
  if (graph_def.has_versions()) {
    *merged.mutable_versions() = graph_def.versions();
  }
  // A function sent again unchanged is kept once; a changed one is an error.
  const FunctionDefLibrary existing = merged.library();
  absl::flat_hash_map<std::string, const FunctionDef*> known;
  for (const FunctionDef& f : existing.function()) known[f.signature().name()] = &f;
  for (const FunctionDef& f : graph_def.library().function()) {
    auto it = known.find(f.signature().name());
    if (it == known.end()) {
      *merged.mutable_library()->add_function() = f;
    } else if (!google::protobuf::util::MessageDifferencer::Equals(*it->second, f)) {
      // (Equal definitions may serialize differently: their maps' order.)
      return errors::InvalidArgument("Extend: function '", f.signature().name(),
                                     "' is already in the library with another definition");
    }
  }
  for (const GradientDef& g : graph_def.library().gradient()) {
    *merged.mutable_library()->add_gradient() = g;
  }
  return ResetLocked(merged);
}

absl::StatusOr<std::unique_ptr<ClientGraph>> GraphExecutionState::BuildClientGraph(
    const RunSignature& signature, PartitionBy by, subgraph::FeedFetchConvention convention) {
  const DeviceSet& devices = *options_.devices;
  const DeviceAttributes* client = devices.client_device();
  if (client == nullptr) {
    return errors::FailedPrecondition("the session has no client device");
  }
  std::shared_ptr<const Graph> full;
  {
    absl::MutexLock lock(&mu_);
    full = graph_;
  }
  if (full == nullptr) {
    return errors::FailedPrecondition("Session was not created with a graph before Run()");
  }
  Graph graph;
  graph.Copy(*full);
  subgraph::RewriteGraphMetadata metadata;
  DF_RETURN_IF_ERROR(subgraph::RewriteGraphForExecution(&graph, signature.feeds, signature.fetches,
                                                        signature.targets, *client, convention,
                                                        &metadata));
  // Calls and functional control flow become plain dataflow before
  // placement, so their bodies are placed and partitioned like any node.
  DF_RETURN_IF_ERROR(LowerFunctionalOps(&graph));

  auto cg = std::make_unique<ClientGraph>();
  cg->signature = signature;
  // Feed dtypes come from the rewrite, declared shapes from the original
  // Placeholders (in `full`, which the rewrite did not touch).
  absl::flat_hash_map<absl::string_view, const Node*> by_name;
  for (const Node* n : full->op_nodes()) by_name[n->name()] = n;
  const bool by_rendezvous = convention == subgraph::FeedFetchConvention::kRendezvous;
  auto client_key = [client](const std::string& tensor) {
    return Rendezvous::CreateKey(client->name(), client->incarnation(), client->name(), tensor,
                                 FrameAndIter());
  };
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    ClientGraph::Feed feed;
    feed.dtype = metadata.feed_types[i];
    if (by_rendezvous) feed.key = client_key(signature.feeds[i]);
    TensorId id;
    DF_RETURN_IF_ERROR(ParseTensorName(signature.feeds[i], &id));
    auto it = by_name.find(id.node);
    if (!options_.feed_shapes_unchecked && it != by_name.end() &&
        it->second->attrs().Find("shape") != nullptr &&
        (it->second->type_string() == "Placeholder" ||
         it->second->type_string() == "PlaceholderV2")) {
      DF_RETURN_IF_ERROR(GetNodeAttr(it->second->attrs(), "shape", &feed.shape));
    }
    cg->feeds.push_back(std::move(feed));
  }
  if (by_rendezvous) {
    for (const std::string& fetch : signature.fetches) cg->fetch_keys.push_back(client_key(fetch));
  }

  {
    absl::MutexLock lock(&mu_);
    // Nodes with no device go to the client device, as in TensorFlow: the
    // local CPU for a DirectSession, the master's own task for a
    // MasterSession (never the first task of the sorted cluster).
    Placer placer(&graph, &devices, /*default_device=*/client->name(),
                  options_.allow_soft_placement, options_.log_device_placement,
                  &stateful_placements_);
    DF_RETURN_IF_ERROR(placer.Run());
  }

  PartitionGraphOptions popts;
  popts.by = by;
  popts.incarnation = [&devices](const std::string& name) -> uint64_t {
    const DeviceAttributes* d = devices.FindDeviceByName(name);
    return d == nullptr ? 0 : d->incarnation();
  };
  popts.name_tag = options_.name_tag;
  popts.counter = &name_counter_;
  popts.enable_bfloat16_sendrecv = options_.enable_bfloat16_sendrecv;
  DF_RETURN_IF_ERROR(PartitionGraph(popts, &graph, &cg->partitions));
  return cg;
}

}  // namespace distflow
