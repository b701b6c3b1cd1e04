#include "distflow/graph/subgraph.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {
namespace subgraph {
namespace {

// A feed or fetch resolved against the graph.
struct Endpoint {
  std::string given;      // as the caller spelled it
  std::string canonical;  // "node:index"
  Node* node = nullptr;
  int index = 0;
};

using NameIndex = absl::flat_hash_map<std::string, Node*>;

absl::Status ResolveEndpoint(const NameIndex& index, absl::string_view what,
                             const std::string& name, Endpoint* out) {
  TensorId id;
  DF_RETURN_IF_ERROR(ParseFeedOrFetchName(name, what, &id));
  auto it = index.find(id.node);
  if (it == index.end()) {
    return errors::InvalidArgument(what, " '", name, "': no node named '", id.node,
                                   "' in the graph");
  }
  Node* node = it->second;
  if (id.index >= node->num_outputs()) {
    return errors::InvalidArgument(what, " '", name, "': node '", node->name(), "' has ",
                                   node->num_outputs(), " outputs, so output ", id.index,
                                   " does not exist");
  }
  out->given = name;
  out->canonical = absl::StrCat(node->name(), ":", id.index);
  out->node = node;
  out->index = id.index;
  return absl::OkStatus();
}

absl::Status ResolveEndpoints(const NameIndex& index, absl::string_view what,
                              absl::Span<const std::string> names, std::vector<Endpoint>* out) {
  absl::flat_hash_set<std::string> seen;
  out->resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    DF_RETURN_IF_ERROR(ResolveEndpoint(index, what, names[i], &(*out)[i]));
    if (!seen.insert((*out)[i].canonical).second) {
      return errors::InvalidArgument(what, " '", names[i], "' (tensor '", (*out)[i].canonical,
                                     "') is listed more than once");
    }
  }
  return absl::OkStatus();
}

bool IsPlaceholder(const Node* n) {
  return n->type_string() == "Placeholder" || n->type_string() == "PlaceholderV2";
}

// `base` if no node uses it yet, else `base_1`, `base_2`, ...; the result is
// reserved in `taken`.
std::string UniqueName(const std::string& base, absl::flat_hash_set<std::string>* taken) {
  std::string name = base;
  for (int i = 1; taken->contains(name); ++i) name = absl::StrCat(base, "_", i);
  taken->insert(name);
  return name;
}

void SetClientAttrs(const Endpoint& e, const DeviceAttributes& client, NodeDef* def) {
  AddNodeAttr("tensor_name", e.given, def);
  AddNodeAttr("send_device", client.name(), def);
  AddNodeAttr("send_device_incarnation", static_cast<int64_t>(client.incarnation()), def);
  AddNodeAttr("recv_device", client.name(), def);
  AddNodeAttr("client_terminated", true, def);
  def->set_device(client.name());
}

// Which nodes the rewrite for these feeds, fetches and targets keeps: the
// ones reachable backwards from the targets and the fetched tensors, where a
// fed tensor (and a fed Placeholder's control edges) comes from its feed
// node instead of its producer.
std::vector<bool> SurvivesRewrite(const Graph& g, const std::vector<Endpoint>& feeds,
                                  const std::vector<Endpoint>& fetches,
                                  const std::vector<Node*>& targets) {
  absl::flat_hash_set<std::pair<int, int>> fed;
  absl::flat_hash_set<int> fed_placeholders;
  for (const Endpoint& f : feeds) {
    fed.insert({f.node->id(), f.index});
    if (IsPlaceholder(f.node)) fed_placeholders.insert(f.node->id());
  }
  std::vector<bool> kept(g.num_node_ids(), false);
  std::vector<const Node*> stack;
  auto visit = [&](const Node* n) {
    if (n->IsOp() && !kept[n->id()]) {
      kept[n->id()] = true;
      stack.push_back(n);
    }
  };
  for (const Node* t : targets) visit(t);
  for (const Endpoint& f : fetches) {
    if (!fed.contains({f.node->id(), f.index})) visit(f.node);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      const int src = e->src()->id();
      if (e->IsControlEdge() ? fed_placeholders.contains(src)
                             : fed.contains({src, e->src_output()})) {
        continue;
      }
      visit(e->src());
    }
  }
  return kept;
}

}  // namespace

void PruneForReverseReachability(Graph* g, absl::Span<Node* const> roots) {
  std::vector<bool> visited(g->num_node_ids(), false);
  std::vector<Node*> stack(roots.begin(), roots.end());
  for (Node* n : roots) visited[n->id()] = true;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      Node* src = e->src();
      if (!visited[src->id()]) {
        visited[src->id()] = true;
        stack.push_back(src);
      }
    }
  }
  for (Node* n : g->op_nodes()) {
    if (!visited[n->id()]) g->RemoveNode(n);
  }
  FixupSourceAndSinkEdges(g);
}

absl::Status RewriteGraphForExecution(Graph* g, absl::Span<const std::string> fed_outputs,
                                      absl::Span<const std::string> fetch_outputs,
                                      absl::Span<const std::string> target_node_names,
                                      const DeviceAttributes& client_device,
                                      FeedFetchConvention convention,
                                      RewriteGraphMetadata* out_metadata) {
  const bool use_function_convention = convention == FeedFetchConvention::kCallFrame;
  // Validate everything before the first mutation.
  NameIndex index;
  absl::flat_hash_set<std::string> taken;
  for (Node* n : g->op_nodes()) {
    index[n->name()] = n;
    taken.insert(n->name());
  }
  std::vector<Endpoint> feeds, fetches;
  DF_RETURN_IF_ERROR(ResolveEndpoints(index, "feed", fed_outputs, &feeds));
  DF_RETURN_IF_ERROR(ResolveEndpoints(index, "fetch", fetch_outputs, &fetches));
  std::vector<Node*> roots;
  for (const std::string& target : target_node_names) {
    auto it = index.find(target);
    if (it == index.end()) {
      return errors::InvalidArgument("target '", target, "': no node of that name in the graph");
    }
    roots.push_back(it->second);
  }
  const std::vector<bool> kept = SurvivesRewrite(*g, feeds, fetches, roots);
  for (const Endpoint& feed : feeds) {
    for (const Edge* e : feed.node->out_edges()) {
      if (e->src_output() == feed.index && kept[e->dst()->id()] &&
          IsRefType(e->dst()->input_type(e->dst_input()))) {
        return errors::InvalidArgument("feed '", feed.given, "': node '", e->dst()->name(),
                                       "' consumes it as a reference (input ", e->dst_input(),
                                       "), which a fed value cannot be");
      }
    }
  }
  const char* feed_op = use_function_convention ? "_Arg" : "_Recv";
  const char* fetch_op = use_function_convention ? "_Retval" : "_Send";
  for (const auto& [op, used] :
       {std::make_pair(feed_op, !feeds.empty()), std::make_pair(fetch_op, !fetches.empty())}) {
    if (used && g->op_registry()->LookUp(op) == nullptr) {
      return errors::Unimplemented("op '", op,
                                   "' is not registered; it is needed to "
                                   "rewrite feeds and fetches");
    }
  }

  RewriteGraphMetadata metadata;
  absl::flat_hash_map<std::string, Node*> fed;  // canonical name -> feed node
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Endpoint& feed = feeds[i];
    const DataType dtype = BaseType(feed.node->output_type(feed.index));
    NodeDef def;
    def.set_op(feed_op);
    if (use_function_convention) {
      def.set_name(
          UniqueName(absl::StrCat(feed.node->name(), "/_arg_", feed.index, "_", i), &taken));
      AddNodeAttr("T", dtype, &def);
      AddNodeAttr("index", static_cast<int64_t>(i), &def);
      def.set_device(client_device.name());
    } else {
      def.set_name(UniqueName(absl::StrCat(feed.node->name(), "/_recv_", feed.index), &taken));
      AddNodeAttr("tensor_type", dtype, &def);
      SetClientAttrs(feed, client_device, &def);
    }
    DF_ASSIGN_OR_RETURN(Node * feed_node, g->AddNode(std::move(def)));
    feed_node->set_assigned_device_name(client_device.name());
    std::vector<const Edge*> moved;
    for (const Edge* e : feed.node->out_edges()) {
      if (e->src_output() == feed.index ||
          (e->IsControlEdge() && IsPlaceholder(feed.node) && e->dst()->IsOp())) {
        moved.push_back(e);
      }
    }
    for (const Edge* e : moved) {
      if (e->IsControlEdge()) {
        g->AddControlEdge(feed_node, e->dst());
      } else {
        g->AddEdge(feed_node, 0, e->dst(), e->dst_input());
      }
      g->RemoveEdge(e);
    }
    fed[feed.canonical] = feed_node;
    metadata.feed_types.push_back(dtype);
    metadata.feed_node_names.push_back(feed_node->name());
  }

  for (size_t i = 0; i < fetches.size(); ++i) {
    const Endpoint& fetch = fetches[i];
    Node* src = fetch.node;
    int src_output = fetch.index;
    if (auto it = fed.find(fetch.canonical); it != fed.end()) {
      src = it->second;
      src_output = 0;
    }
    const DataType dtype = BaseType(fetch.node->output_type(fetch.index));
    NodeDef def;
    def.set_op(fetch_op);
    def.add_input(absl::StrCat(src->name(), ":", src_output));
    AddNodeAttr("T", dtype, &def);
    if (use_function_convention) {
      def.set_name(
          UniqueName(absl::StrCat(fetch.node->name(), "/_retval_", fetch.index, "_", i), &taken));
      AddNodeAttr("index", static_cast<int64_t>(i), &def);
      def.set_device(client_device.name());
    } else {
      def.set_name(UniqueName(absl::StrCat(fetch.node->name(), "/_send_", fetch.index), &taken));
      SetClientAttrs(fetch, client_device, &def);
    }
    DF_ASSIGN_OR_RETURN(Node * fetch_node, g->AddNode(std::move(def)));
    fetch_node->set_assigned_device_name(client_device.name());
    g->AddEdge(src, src_output, fetch_node, 0);
    roots.push_back(fetch_node);
    metadata.fetch_types.push_back(dtype);
    metadata.fetch_node_names.push_back(fetch_node->name());
  }

  PruneForReverseReachability(g, roots);
  if (out_metadata != nullptr) *out_metadata = std::move(metadata);
  return absl::OkStatus();
}

}  // namespace subgraph
}  // namespace distflow
