#include "distflow/graph/graph_partition.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/framework/device_name_utils.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/graph/control_flow.h"

namespace distflow {
namespace {

// Per node (by id): device type and the memory type of each input and output.
struct GraphInfo {
  std::vector<std::string> device_types;
  std::vector<std::vector<MemoryType>> input_types;
  std::vector<std::vector<MemoryType>> output_types;
};

void MemoryTypesForNode(const Node& n, const std::string& device_type, std::vector<MemoryType>* in,
                        std::vector<MemoryType>* out) {
  if (device_type == kDeviceCpu) {
    in->assign(n.num_inputs(), MemoryType::kHost);
    out->assign(n.num_outputs(), MemoryType::kHost);
    return;
  }
  in->assign(n.num_inputs(), MemoryType::kDevice);
  out->assign(n.num_outputs(), MemoryType::kDevice);
  for (int i = 0; i < n.num_inputs(); ++i) {
    if (BaseType(n.input_type(i)) == DT_RESOURCE) (*in)[i] = MemoryType::kHost;
  }
  for (int i = 0; i < n.num_outputs(); ++i) {
    if (BaseType(n.output_type(i)) == DT_RESOURCE) {
      (*out)[i] = MemoryType::kHost;
    }
  }
  auto kernel = KernelRegistry::Global()->FindKernelDef(device_type, n.def());
  if (!kernel.ok() || (*kernel)->host_memory_args.empty()) return;
  NameRangeMap in_ranges, out_ranges;
  if (!NameRangesForNode(n.def(), n.op_def(), &in_ranges, &out_ranges).ok()) {
    return;
  }
  for (const std::string& arg : (*kernel)->host_memory_args) {
    for (auto [ranges, types] :
         {std::make_pair(&in_ranges, in), std::make_pair(&out_ranges, out)}) {
      auto it = ranges->find(arg);
      if (it == ranges->end()) continue;
      for (int i = it->second.first; i < it->second.second; ++i) {
        (*types)[i] = MemoryType::kHost;
      }
    }
  }
}

absl::Status BuildGraphInfo(const Graph& g, GraphInfo* info) {
  info->device_types.assign(g.num_node_ids(), "");
  info->input_types.assign(g.num_node_ids(), {});
  info->output_types.assign(g.num_node_ids(), {});
  for (const Node* n : g.op_nodes()) {
    ParsedDeviceName parsed;
    if (n->assigned_device_name().empty()) {
      return errors::InvalidArgument(
          FormatNodeForError(n->def()),
          " has no assigned device; place the graph before partitioning it");
    }
    if (!device_name::Parse(n->assigned_device_name(), &parsed) || !parsed.has_type) {
      return errors::InvalidArgument(FormatNodeForError(n->def()),
                                     " is assigned to malformed device '",
                                     n->assigned_device_name(), "'");
    }
    info->device_types[n->id()] = parsed.type;
    MemoryTypesForNode(*n, parsed.type, &info->input_types[n->id()], &info->output_types[n->id()]);
  }
  return absl::OkStatus();
}

// The dtype a data edge carries: what the consumer reads.
DataType EdgeType(const Edge* e) {
  return e->IsControlEdge() ? DT_FLOAT : e->dst()->input_type(e->dst_input());
}

// A data edge within one device whose ends disagree on memory type.
bool NeedSameDeviceSendRecv(const Edge* e, const GraphInfo& info) {
  if (e->IsControlEdge()) return false;
  const Node* src = e->src();
  const Node* dst = e->dst();
  return src->assigned_device_name() == dst->assigned_device_name() &&
         info.output_types[src->id()][e->src_output()] !=
             info.input_types[dst->id()][e->dst_input()];
}

bool IsDstInputOnHost(const Edge* e, const GraphInfo& info) {
  const Node* dst = e->dst();
  if (info.device_types[dst->id()] == kDeviceCpu) return true;
  return !e->IsControlEdge() && info.input_types[dst->id()][e->dst_input()] == MemoryType::kHost;
}

void AddInput(NodeDef* dst, absl::string_view src_name, int src_slot) {
  if (src_slot == kControlSlot) {
    dst->add_input(absl::StrCat("^", src_name));
  } else if (src_slot == 0) {
    dst->add_input(std::string(src_name));
  } else {
    dst->add_input(absl::StrCat(src_name, ":", src_slot));
  }
}

// Tensor a new node reads: node name, output index, dtype.
struct Output {
  std::string node;
  int index = 0;
  DataType dtype = DT_INVALID;
};

// Builds the nodes that carry one edge from the source partition to the
// destination partition.
class EdgeSplitter {
 public:
  EdgeSplitter(const PartitionOptions& opts, const Edge* edge, bool same_partition)
      : opts_(opts),
        edge_(edge),
        src_(edge->src()),
        dst_(edge->dst()),
        dtype_(EdgeType(edge)),
        wire_dtype_(opts.enable_bfloat16_sendrecv && !same_partition && dtype_ == DT_FLOAT &&
                            !edge->IsControlEdge()
                        ? DT_BFLOAT16
                        : dtype_),
        tensor_name_(absl::StrCat("edge_", edge->id(), "_", src_->name())) {}

  // A float [0] Const controlled by the source, standing in for a control
  // edge's "value".
  Output AddDummyConst(GraphDef* gdef) {
    NodeDef* c = NewNode(gdef, "Const", src_->assigned_device_name());
    AddNodeAttr("dtype", DT_FLOAT, c);
    AddNodeAttr("value", Tensor(DT_FLOAT, TensorShape({0})), c);
    AddInput(c, src_->name(), kControlSlot);
    return {c->name(), 0, DT_FLOAT};
  }

  // Adds (Cast and) _Send to the source partition.
  NodeDef* AddSend(GraphDef* gdef, Output from) {
    if (wire_dtype_ != from.dtype) {
      NodeDef* cast = AddCast(gdef, src_->assigned_device_name(), from, wire_dtype_);
      from = {cast->name(), 0, wire_dtype_};
    }
    NodeDef* send = NewNode(gdef, "_Send", src_->assigned_device_name());
    AddInput(send, from.node, from.index);
    AddNodeAttr("T", wire_dtype_, send);
    SetTransferAttrs(send);
    return send;
  }

  // Adds _Recv (and the Cast back, or the Identity of a control edge) to the
  // destination partition. Returns the node consumers read from; `*recv` is
  // the _Recv itself.
  NodeDef* AddRecv(GraphDef* gdef, NodeDef** recv) {
    const std::string& device = dst_->assigned_device_name();
    *recv = NewNode(gdef, "_Recv", device);
    AddNodeAttr("tensor_type", wire_dtype_, *recv);
    SetTransferAttrs(*recv);
    const Output received{(*recv)->name(), 0, wire_dtype_};
    if (wire_dtype_ != dtype_) return AddCast(gdef, device, received, dtype_);
    if (edge_->IsControlEdge()) {
      NodeDef* id = NewNode(gdef, "Identity", device);
      AddInput(id, received.node, 0);
      AddNodeAttr("T", DT_FLOAT, id);
      return id;
    }
    return *recv;
  }

 private:
  NodeDef* NewNode(GraphDef* gdef, const char* op, const std::string& device) {
    NodeDef* n = gdef->add_node();
    n->set_name(opts_.new_name(src_->name()));
    n->set_op(op);
    n->set_device(device);
    return n;
  }

  NodeDef* AddCast(GraphDef* gdef, const std::string& device, const Output& from, DataType to) {
    NodeDef* cast = NewNode(gdef, "Cast", device);
    AddInput(cast, from.node, from.index);
    AddNodeAttr("SrcT", from.dtype, cast);
    AddNodeAttr("DstT", to, cast);
    AddNodeAttr("Truncate", false, cast);
    return cast;
  }

  void SetTransferAttrs(NodeDef* n) {
    const std::string& send_device = src_->assigned_device_name();
    AddNodeAttr("tensor_name", tensor_name_, n);
    AddNodeAttr("send_device", send_device, n);
    AddNodeAttr("send_device_incarnation", static_cast<int64_t>(opts_.get_incarnation(send_device)),
                n);
    AddNodeAttr("recv_device", dst_->assigned_device_name(), n);
    AddNodeAttr("client_terminated", false, n);
  }

  const PartitionOptions& opts_;
  const Edge* edge_;
  const Node* src_;
  const Node* dst_;
  const DataType dtype_;
  const DataType wire_dtype_;
  const std::string tensor_name_;
};

// Marks the Merge of a control loop AddControlFlow built, so a later
// Partition of the same graph (the worker's, by device, after the master's,
// by task) finds the loops already there and routes receives through them.
constexpr char kControlLoopAttr[] = "_control_loop";

bool IsControlLoopMerge(const Node* n) {
  return n->IsMerge() && n->attrs().Find(kControlLoopAttr) != nullptr;
}

// Gives a device that runs part of a loop frame its own copy of the loop's
// control structure, as "Implementation of Control Flow in TensorFlow" does:
//
//   Const or outer control Merge -> Enter -> Merge -> Switch(pred) -> NextIteration
//                                             ^------------------------'
//
// where pred is the frame's LoopCond (received from the device computing it).
// The Merge is live in exactly the iterations the real loop runs, so every
// node of the frame on this device that gets a value from another device
// hangs off it by a control edge, and Partition moves that edge onto the
// _Recv it creates: the receive then runs once per iteration, in the frame
// and iteration whose key the sender uses. Nested frames chain their control
// loops: the inner one's Enter reads the outer one's Merge.
class ControlFlowAdder {
 public:
  ControlFlowAdder(const PartitionOptions& opts, Graph* g) : opts_(opts), g_(g) {}

  absl::Status Run() {
    DF_RETURN_IF_ERROR(MoveLoopEntriesToConsumers());
    DF_RETURN_IF_ERROR(BuildControlFlowInfo(*g_, &cf_));
    if (cf_.frames.size() == 1) return absl::OkStatus();
    for (Node* n : g_->op_nodes()) {
      if (IsControlLoopMerge(n)) {
        merges_[{cf_.node_frame[n->id()], n->assigned_device_name()}] = n;
      }
    }
    // Adding loops adds edges: collect the ones to route first.
    std::vector<const Edge*> cross;
    for (const Edge* e : g_->edges()) {
      if (!e->src()->IsOp() || !e->dst()->IsOp()) continue;
      if (e->src()->assigned_device_name() == e->dst()->assigned_device_name()) continue;
      if (cf_.OutputFrame(e->src()) == 0) continue;
      cross.push_back(e);
    }
    absl::flat_hash_set<std::pair<int, int>> routed;
    for (const Edge* e : cross) {
      Node* dst = e->dst();
      DF_ASSIGN_OR_RETURN(
          Node * merge,
          EnsureControlLoop(cf_.OutputFrame(e->src()), dst->assigned_device_name(), e->src(), dst));
      if (!routed.insert({merge->id(), dst->id()}).second) continue;
      const bool present = std::any_of(
          dst->in_edges().begin(), dst->in_edges().end(),
          [merge](const Edge* in) { return in->IsControlEdge() && in->src() == merge; });
      if (!present) g_->AddControlEdge(merge, dst);
    }
    return absl::OkStatus();
  }

  // A non-constant Enter produces a value in iteration 0 only, and a
  // NextIteration in every iteration but 0: a _Send of their output would
  // not run in every iteration its _Recv does. So each runs on the device of
  // its consumers: moved there when they all share one device, copied to
  // each consumer device otherwise.
  absl::Status MoveLoopEntriesToConsumers() {
    for (Node* n : g_->op_nodes()) {
      bool is_constant = false;
      if (IsEnter(n) && n->attrs().Find("is_constant") != nullptr) {
        DF_RETURN_IF_ERROR(GetNodeAttr(n->attrs(), "is_constant", &is_constant));
      }
      if (!(IsEnter(n) && !is_constant) && !n->IsNextIteration()) continue;
      std::vector<std::pair<std::string, std::vector<const Edge*>>> groups;
      bool has_local_consumer = false;
      for (const Edge* e : n->out_edges()) {
        if (!e->dst()->IsOp()) continue;
        const std::string& device = e->dst()->assigned_device_name();
        if (device == n->assigned_device_name()) {
          has_local_consumer = true;
          continue;
        }
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == device; });
        if (it == groups.end()) {
          groups.emplace_back(device, std::vector<const Edge*>{});
          it = groups.end() - 1;
        }
        it->second.push_back(e);
      }
      if (groups.empty()) continue;
      size_t first_copy = 0;
      if (!has_local_consumer) {
        n->set_assigned_device_name(groups[0].first);
        first_copy = 1;
      }
      for (size_t k = first_copy; k < groups.size(); ++k) {
        NodeDef def = n->def();
        def.set_name(opts_.new_name(n->name()));
        def.set_device(groups[k].first);
        def.clear_input();
        DF_ASSIGN_OR_RETURN(Node * copy, AddNode(std::move(def), groups[k].first));
        for (const Edge* in : n->in_edges()) {
          if (in->IsControlEdge()) {
            g_->AddControlEdge(in->src(), copy);
          } else {
            g_->AddEdge(in->src(), in->src_output(), copy, in->dst_input());
          }
        }
        for (const Edge* out : groups[k].second) {
          if (out->IsControlEdge()) {
            g_->AddControlEdge(copy, out->dst());
          } else {
            g_->AddEdge(copy, out->src_output(), out->dst(), out->dst_input());
          }
          g_->RemoveEdge(out);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // The Merge of the control loop of `frame` on `device`, built (with the
  // loops of the frames around it) when missing. `src` and `dst` are the
  // edge that needs it, for error messages and names.
  absl::StatusOr<Node*> EnsureControlLoop(int frame, const std::string& device, const Node* src,
                                          const Node* dst) {
    if (auto it = merges_.find({frame, device}); it != merges_.end()) return it->second;
    const LoopFrame& info = cf_.frames[frame];
    if (info.loop_cond == nullptr) {
      return errors::InvalidArgument(
          "the loop of frame '", info.name, "' sends '", src->name(), "' from '",
          src->assigned_device_name(), "' to '", dst->name(), "' on '", device,
          "', but the frame has no LoopCond to drive a copy of the loop there");
    }
    Node* enter_input = nullptr;
    if (info.parent == 0) {
      NodeDef c = NewDef(dst, "cloop_const", "Const", device);
      AddNodeAttr("dtype", DT_FLOAT, &c);
      AddNodeAttr("value", Tensor(DT_FLOAT, TensorShape({0})), &c);
      DF_ASSIGN_OR_RETURN(enter_input, AddNode(std::move(c), device));
    } else {
      DF_ASSIGN_OR_RETURN(enter_input, EnsureControlLoop(info.parent, device, src, dst));
    }
    NodeDef enter_def = NewDef(dst, "cloop_enter", "Enter", device);
    AddNodeAttr("T", DT_FLOAT, &enter_def);
    AddNodeAttr("frame_name", info.name, &enter_def);
    AddNodeAttr("is_constant", false, &enter_def);
    AddNodeAttr("parallel_iterations", info.parallel_iterations, &enter_def);
    DF_ASSIGN_OR_RETURN(Node * enter, AddNode(std::move(enter_def), device));
    NodeDef merge_def = NewDef(dst, "cloop_merge", "Merge", device);
    AddNodeAttr("T", DT_FLOAT, &merge_def);
    AddNodeAttr("N", 2, &merge_def);
    AddNodeAttr(kControlLoopAttr, true, &merge_def);
    DF_ASSIGN_OR_RETURN(Node * merge, AddNode(std::move(merge_def), device));
    NodeDef switch_def = NewDef(dst, "cloop_switch", "Switch", device);
    AddNodeAttr("T", DT_FLOAT, &switch_def);
    DF_ASSIGN_OR_RETURN(Node * sw, AddNode(std::move(switch_def), device));
    NodeDef next_def = NewDef(dst, "cloop_next", "NextIteration", device);
    AddNodeAttr("T", DT_FLOAT, &next_def);
    DF_ASSIGN_OR_RETURN(Node * next, AddNode(std::move(next_def), device));

    g_->AddEdge(enter_input, 0, enter, 0);
    g_->AddEdge(enter, 0, merge, 0);
    g_->AddEdge(next, 0, merge, 1);
    g_->AddEdge(merge, 0, sw, 0);
    g_->AddEdge(const_cast<Node*>(info.loop_cond), 0, sw, 1);
    g_->AddEdge(sw, 1, next, 0);
    // The predicate comes from elsewhere (usually): its receive runs in the
    // loop too.
    if (info.loop_cond->assigned_device_name() != device) g_->AddControlEdge(merge, sw);
    merges_[{frame, device}] = merge;
    return merge;
  }

  NodeDef NewDef(const Node* dst, absl::string_view what, absl::string_view op,
                 const std::string& device) {
    NodeDef def;
    def.set_name(opts_.new_name(absl::StrCat(dst->name(), "/", what)));
    def.set_op(std::string(op));
    def.set_device(device);
    return def;
  }

  absl::StatusOr<Node*> AddNode(NodeDef def, const std::string& device) {
    DF_ASSIGN_OR_RETURN(Node * n, g_->AddNode(std::move(def)));
    n->set_assigned_device_name(device);
    return n;
  }

  const PartitionOptions& opts_;
  Graph* g_;
  ControlFlowInfo cf_;
  absl::flat_hash_map<std::pair<int, std::string>, Node*> merges_;
};

// (source node id, source output, destination location, on host).
using DupRecvKey = std::tuple<int, int, std::string, bool>;

}  // namespace

absl::Status Partition(const PartitionOptions& opts, Graph* g,
                       std::unordered_map<std::string, GraphDef>* partitions) {
  if (!opts.node_to_loc || !opts.new_name || !opts.get_incarnation) {
    return errors::InvalidArgument(
        "PartitionOptions needs node_to_loc, new_name and get_incarnation");
  }
  partitions->clear();
  // Control loops first: they add nodes the per-node tables must cover.
  DF_RETURN_IF_ERROR(ControlFlowAdder(opts, g).Run());
  GraphInfo info;
  DF_RETURN_IF_ERROR(BuildGraphInfo(*g, &info));

  // The node consumers in a partition read a transferred tensor from.
  absl::flat_hash_map<DupRecvKey, std::string> dup_recv;
  std::vector<const Edge*> inputs;
  std::vector<const Edge*> control_inputs;
  // For the node being built: recvs that read a ref output from another
  // partition, and the inputs that must be ready before those reads.
  std::vector<NodeDef*> ref_recvs;
  std::vector<std::string> ref_control_inputs;

  for (const Node* dst : g->op_nodes()) {
    const std::string dst_loc = opts.node_to_loc(dst);
    GraphDef* dst_graph = &(*partitions)[dst_loc];
    NodeDef* dst_def = dst_graph->add_node();
    *dst_def = dst->def();
    dst_def->set_device(dst->assigned_device_name());
    dst_def->clear_input();

    // Data inputs in input order, then control inputs by source id.
    inputs.assign(dst->num_inputs(), nullptr);
    control_inputs.clear();
    for (const Edge* e : dst->in_edges()) {
      if (e->IsControlEdge()) {
        if (e->src()->IsOp()) control_inputs.push_back(e);
      } else if (e->dst_input() < dst->num_inputs()) {
        inputs[e->dst_input()] = e;
      }
    }
    for (int i = 0; i < dst->num_inputs(); ++i) {
      if (inputs[i] == nullptr) {
        return errors::InvalidArgument(FormatNodeForError(dst->def()), " has no edge into input ",
                                       i);
      }
    }
    std::sort(control_inputs.begin(), control_inputs.end(),
              [](const Edge* a, const Edge* b) { return a->src()->id() < b->src()->id(); });
    inputs.insert(inputs.end(), control_inputs.begin(), control_inputs.end());
    // The control loop dst hangs off, if it is in a loop frame and gets
    // values from other devices: its receives hang off it too.
    const Node* control_loop = nullptr;
    for (const Edge* e : control_inputs) {
      if (IsControlLoopMerge(e->src())) control_loop = e->src();
    }

    ref_recvs.clear();
    ref_control_inputs.clear();
    for (const Edge* edge : inputs) {
      const Node* src = edge->src();
      const int slot = edge->IsControlEdge() ? kControlSlot : 0;
      const bool src_is_ref =
          !edge->IsControlEdge() && IsRefType(src->output_type(edge->src_output()));
      const std::string src_loc = opts.node_to_loc(src);
      GraphDef* src_graph = &(*partitions)[src_loc];
      const bool same_partition = src_loc == dst_loc;
      if (same_partition && !NeedSameDeviceSendRecv(edge, info)) {
        AddInput(dst_def, src->name(), edge->src_output());
        if (!src_is_ref) ref_control_inputs.push_back(src->name());
        continue;
      }
      if (!edge->IsControlEdge() && IsRefType(EdgeType(edge))) {
        return errors::InvalidArgument(
            FormatNodeForError(dst->def()), " on '", dst->assigned_device_name(), "' takes input ",
            edge->dst_input(), " by reference from node '", src->name(), "' on '",
            src->assigned_device_name(), "'; a reference cannot cross partitions (colocate them)");
      }

      const DupRecvKey key{src->id(), edge->src_output(), dst_loc, IsDstInputOnHost(edge, info)};
      if (auto it = dup_recv.find(key); it != dup_recv.end()) {
        AddInput(dst_def, it->second, slot);
        ref_control_inputs.push_back(it->second);
        continue;
      }

      EdgeSplitter splitter(opts, edge, same_partition);
      const Output from = edge->IsControlEdge()
                              ? splitter.AddDummyConst(src_graph)
                              : Output{src->name(), edge->src_output(), EdgeType(edge)};
      NodeDef* send = splitter.AddSend(src_graph, from);
      NodeDef* real_recv = nullptr;
      NodeDef* recv = splitter.AddRecv(dst_graph, &real_recv);
      if (same_partition) {
        AddInput(real_recv, send->name(), kControlSlot);
      } else if (control_loop != nullptr) {
        AddInput(real_recv, control_loop->name(), kControlSlot);
      }
      if (src_is_ref) {
        // Each read of a ref is its own transfer, ordered after dst's other
        // inputs below.
        ref_recvs.push_back(real_recv);
      } else {
        dup_recv[key] = recv->name();
        ref_control_inputs.push_back(recv->name());
      }
      AddInput(dst_def, recv->name(), slot);
    }

    if (!ref_recvs.empty()) {
      absl::flat_hash_set<absl::string_view> added;
      for (const std::string& input : ref_control_inputs) {
        if (!added.insert(input).second) continue;
        for (NodeDef* recv : ref_recvs) AddInput(recv, input, kControlSlot);
      }
    }
  }

  for (auto& [loc, gdef] : *partitions) {
    *gdef.mutable_versions() = g->versions();
    if (g->library().function_size() > 0 || g->library().gradient_size() > 0) {
      *gdef.mutable_library() = g->library();
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePartitions(const std::unordered_map<std::string, GraphDef>& partitions,
                                absl::Span<const std::string> device_names) {
  std::vector<ParsedDeviceName> devices(device_names.size());
  for (size_t i = 0; i < device_names.size(); ++i) {
    DF_RETURN_IF_ERROR(device_name::ParseOrError(device_names[i], &devices[i]));
  }
  const absl::flat_hash_set<std::string> names(device_names.begin(), device_names.end());
  auto available = [&] {
    return absl::StrCat("; available devices: [", absl::StrJoin(device_names, ", "), "]");
  };
  for (const auto& [loc, gdef] : partitions) {
    ParsedDeviceName spec;
    const bool matches = device_name::Parse(loc, &spec) &&
                         std::any_of(devices.begin(), devices.end(),
                                     [&](const auto& d) { return device_name::Matches(spec, d); });
    if (!matches) {
      return errors::InvalidArgument("partition for location '", loc,
                                     "' matches no available device", available());
    }
    for (const NodeDef& node : gdef.node()) {
      if (!names.contains(node.device())) {
        return errors::InvalidArgument("node '", node.name(), "' in the partition for '", loc,
                                       "' is on device '", node.device(),
                                       "', which is not an available device", available());
      }
    }
  }
  return absl::OkStatus();
}

std::string SplitByDevice(const Node* node) { return node->assigned_device_name(); }

std::string SplitByTask(const Node* node) {
  ParsedDeviceName parsed;
  if (!device_name::Parse(node->assigned_device_name(), &parsed) || !parsed.has_job ||
      !parsed.has_replica || !parsed.has_task) {
    return "";
  }
  return device_name::TaskName(parsed);
}

}  // namespace distflow
