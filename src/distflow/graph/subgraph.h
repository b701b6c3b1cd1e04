// Rewrites a graph for one run signature (feeds, fetches, targets): every fed
// tensor is replaced by a node that receives the value from the client, every
// fetched tensor gets a node that hands it to the client, and everything the
// fetches and targets do not need is pruned.
//
// Guarantees: on success every op node of the graph is reachable backwards
// (data and control edges) from a fetch node or a target, and every op node
// hangs between SOURCE and SINK. On error the graph is unchanged. Functions
// here are not thread-safe with respect to the graph they rewrite.
#ifndef DISTFLOW_GRAPH_SUBGRAPH_H_
#define DISTFLOW_GRAPH_SUBGRAPH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "distflow/device_attributes.pb.h"
#include "distflow/framework/types.h"
#include "distflow/graph/graph.h"

namespace distflow {
namespace subgraph {

// How a rewritten graph takes its feeds and gives its fetches.
enum class FeedFetchConvention {
  // Client-terminated _Recv and _Send nodes, through the step's rendezvous
  // (a master's graphs: the values cross processes).
  kRendezvous,
  // _Arg and _Retval nodes, through the step's call frame (TensorFlow's
  // function convention; a DirectSession's graphs).
  kCallFrame,
};

// What the rewrite created, parallel to the feeds and fetches it was given.
struct RewriteGraphMetadata {
  // The base (non-ref) dtype of each fed / fetched tensor.
  DataTypeVector feed_types;
  DataTypeVector fetch_types;
  // The node created for each feed (a _Recv, or an _Arg with the function
  // convention) and for each fetch (a _Send, or a _Retval). A feed node that
  // nothing needs is pruned, so its name may be absent from the graph.
  std::vector<std::string> feed_node_names;
  std::vector<std::string> fetch_node_names;
};

// Rewrites `g` for a run with the given feeds, fetches and targets.
//
// `fed_outputs` and `fetch_outputs` are tensor names ("node:index" or "node"
// for index 0); `target_node_names` are node names. With kRendezvous, each fed tensor gets a
// `_Recv` and each fetched tensor a
// `_Send`, both with client_terminated=true, send_device = recv_device =
// `client_device.name()`, send_device_incarnation = its incarnation (the
// uint64 bits stored as int64), tensor_name = the feed or fetch string exactly
// as given, and both their requested and assigned device set to the client
// device. With kCallFrame, feed i becomes an `_Arg` (attrs T,
// index=i) and fetch i a `_Retval` (attrs T, index=i) instead; those ops must
// be registered.
//
// Every consumer of a fed tensor is rewired to its feed node; when the fed
// node is a Placeholder, its outgoing control edges move to the feed node
// too. Fetching a fed tensor is allowed and returns the fed value. Then every
// node that the fetch nodes and targets do not reach backwards is removed.
//
// InvalidArgument, naming the tensor or node, when a name is malformed or a
// control name ("^x"), names a missing node or an output index out of range,
// when a tensor is fed or fetched more than once (names are compared after
// canonicalisation, so "x" and "x:0" are the same tensor), when a fed tensor
// is consumed by a ref input of a node this run keeps (a consumer the run
// prunes away does not matter), or when a target names a missing node.
absl::Status RewriteGraphForExecution(Graph* g, absl::Span<const std::string> fed_outputs,
                                      absl::Span<const std::string> fetch_outputs,
                                      absl::Span<const std::string> target_node_names,
                                      const DeviceAttributes& client_device,
                                      FeedFetchConvention convention,
                                      RewriteGraphMetadata* out_metadata = nullptr);

// Removes every op node not reachable backwards from `roots` over data and
// control edges, then reconnects SOURCE and SINK. REQUIRES: the roots are op
// nodes of `g`.
void PruneForReverseReachability(Graph* g, absl::Span<Node* const> roots);

}  // namespace subgraph
}  // namespace distflow

#endif  // DISTFLOW_GRAPH_SUBGRAPH_H_
