// Building an Executor: a kernel per node, and the flat tables the step
// runner reads (node items in topological order, out edges, roots, the
// layout and initial pending counts of every loop frame's iterations).
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "distflow/common_runtime/executor.h"
#include "distflow/common_runtime/executor_state.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/graph/control_flow.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {

using executor_internal::kMergeDeadMask;
using executor_internal::kUnmeasured;
using executor_internal::NodePrefix;
using executor_internal::StableHash;

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(Params params,
                                                           std::unique_ptr<const Graph> graph) {
  if (params.device == nullptr) {
    return errors::InvalidArgument("Executor::Create needs a device");
  }
  std::unique_ptr<Executor> exec(new Executor);
  exec->device_ = params.device;
  exec->graph_ = std::move(graph);
  CreateKernelFn create_kernel = std::move(params.create_kernel);
  if (!create_kernel) {
    Device* device = params.device;
    create_kernel = [device](const NodeDef& def) -> absl::StatusOr<std::shared_ptr<OpKernel>> {
      DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                          KernelRegistry::Global()->CreateKernel(device, def));
      return std::shared_ptr<OpKernel>(std::move(k));
    };
  }
  DF_RETURN_IF_ERROR(exec->Initialize(create_kernel));
  return exec;
}

absl::Status Executor::Initialize(const CreateKernelFn& create_kernel) {
  std::vector<Node*> order;
  DF_RETURN_IF_ERROR(TopologicalOrder(*graph_, &order));
  ControlFlowInfo cf;
  DF_RETURN_IF_ERROR(BuildControlFlowInfo(*graph_, &cf));
  has_loops_ = cf.frames.size() > 1;
  frames_.resize(cf.frames.size());
  for (size_t f = 0; f < cf.frames.size(); ++f) {
    FrameInfo& info = frames_[f];
    info.name = cf.frames[f].name;
    info.name_hash = StableHash(info.name.data(), info.name.size());
    info.parent = cf.frames[f].parent;
    info.parallel_iterations = cf.frames[f].parallel_iterations;
  }

  std::vector<int32_t> index(graph_->num_node_ids(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    index[order[i]->id()] = static_cast<int32_t>(i);
  }
  items_.resize(order.size());
  cost_nanos_ = std::make_unique<std::atomic<int64_t>[]>(order.size());
  for (size_t i = 0; i < order.size(); ++i) cost_nanos_[i].store(kUnmeasured);
  kernels_.reserve(order.size());
  const_outputs_.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    absl::StatusOr<std::shared_ptr<OpKernel>> kernel = create_kernel(n->def());
    if (!kernel.ok()) return kernel.status();
    if (*kernel == nullptr) {
      return errors::Internal(NodePrefix(*n), "no kernel was created");
    }
    kernels_.push_back(*std::move(kernel));
    NodeItem& item = items_[i];
    item.kernel = kernels_.back().get();
    item.node = n;
    item.num_inputs = item.kernel->num_inputs();
    item.num_outputs = item.kernel->num_outputs();
    if (item.num_inputs != n->num_inputs() || item.num_outputs != n->num_outputs()) {
      return errors::Internal(NodePrefix(*n), "the kernel's arity differs from the node's");
    }
    item.frame = cf.InputFrame(n);
    FrameInfo& frame = frames_[item.frame];
    item.pending_index = frame.num_nodes++;
    item.input_start = frame.total_inputs;
    frame.total_inputs += item.num_inputs;
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.may_be_expensive = item.kernel->IsExpensive();
    item.is_transfer = n->IsSend() || n->IsRecv();
    item.unset_output_is_dead = n->IsRecv() || n->type_string() == "Switch" ||
                                n->type_string() == "RefSwitch" || n->type_string() == "_SwitchN";
    item.is_merge = n->IsMerge();
    // In loops entries are copied between iterations and frames; there a
    // Const's output travels as any other.
    if (!has_loops_ && n->type_string() == "Const") {
      OpKernelContext::Params params;
      params.op_kernel = item.kernel;
      params.device = device_;
      OpKernelContext ctx(&params);
      item.kernel->Compute(&ctx);
      DF_RETURN_IF_ERROR(errors::Annotate(ctx.status(), NodePrefix(*n)));
      if (item.num_outputs == 1 && ctx.output_is_set(0) && !ctx.output_value(0).is_ref()) {
        const_outputs_.push_back(*ctx.mutable_output(0));
        item.const_output = &const_outputs_.back();
      }
    }
    if (IsEnter(n)) {
      item.loop_role = LoopRole::kEnter;
      item.child_frame = cf.node_frame[n->id()];
      ++frames_[item.child_frame].num_enters;
      if (n->attrs().Find("is_constant") != nullptr) {
        DF_RETURN_IF_ERROR(GetNodeAttr(n->attrs(), "is_constant", &item.is_constant_enter));
      }
    } else if (IsExit(n)) {
      item.loop_role = LoopRole::kExit;
    } else if (n->IsNextIteration()) {
      item.loop_role = LoopRole::kNextIteration;
    }
    if (has_loops_ && item.num_outputs != 1 && item.loop_role != LoopRole::kNone) {
      return errors::InvalidArgument(NodePrefix(*n), "a loop node must have one output");
    }
  }

  size_t num_dtypes = 0;
  for (const NodeItem& item : items_) num_dtypes += item.num_inputs + item.num_outputs;
  dtypes_.reserve(num_dtypes);
  for (NodeItem& item : items_) {
    const DataTypeVector& in = item.kernel->input_types();
    const DataTypeVector& out = item.kernel->output_types();
    item.input_types = dtypes_.data() + dtypes_.size();
    dtypes_.insert(dtypes_.end(), in.begin(), in.end());
    item.output_types = dtypes_.data() + dtypes_.size();
    dtypes_.insert(dtypes_.end(), out.begin(), out.end());
    item.has_ref_input = std::any_of(in.begin(), in.end(), IsRefType);
  }

  std::vector<bool> has_input;
  std::vector<bool> seen_output;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    NodeItem& item = items_[i];
    has_input.assign(item.num_inputs, false);
    bool fed_by_next_iteration = false;
    for (const Edge* e : n->in_edges()) {
      if (!e->src()->IsOp()) continue;
      ++item.num_pending;
      if (e->IsControlEdge()) continue;
      if (has_input[e->dst_input()]) {
        return errors::InvalidArgument(NodePrefix(*n), "input ", e->dst_input(), " has two edges");
      }
      has_input[e->dst_input()] = true;
      fed_by_next_iteration |= e->src()->IsNextIteration();
    }
    for (int k = 0; k < item.num_inputs; ++k) {
      if (!has_input[k]) {
        return errors::InvalidArgument(NodePrefix(*n), "input ", k, " is not connected");
      }
    }
    if (item.is_merge) {
      // Its control inputs, plus one slot for the live (or last dead) input.
      item.num_pending -= item.num_inputs - 1;
      if (item.num_inputs > static_cast<int32_t>(kMergeDeadMask)) {
        return errors::InvalidArgument(NodePrefix(*n), "a Merge takes at most ", kMergeDeadMask,
                                       " inputs");
      }
      item.merge_dead_needed = fed_by_next_iteration ? 1 : item.num_inputs;
    }
    if (item.num_pending == 0) roots_.push_back(static_cast<int32_t>(i));

    item.out_edge_begin = static_cast<int32_t>(out_edges_.size());
    item.control_begin = static_cast<int32_t>(control_out_.size());
    for (const Edge* e : n->out_edges()) {
      if (!e->dst()->IsOp()) continue;
      const int32_t dst = index[e->dst()->id()];
      if (e->IsControlEdge()) {
        control_out_.push_back(dst);
      } else {
        out_edges_.push_back(
            OutEdge{dst, e->src_output(), items_[dst].input_start + e->dst_input(), false});
      }
    }
    item.out_edge_end = static_cast<int32_t>(out_edges_.size());
    item.control_end = static_cast<int32_t>(control_out_.size());
    seen_output.assign(item.num_outputs, false);
    for (int32_t k = item.out_edge_end - 1; k >= item.out_edge_begin; --k) {
      OutEdge& e = out_edges_[k];
      if (!seen_output[e.src_output]) {
        seen_output[e.src_output] = true;
        e.is_last_use = true;
      }
    }
  }
  for (const NodeItem& item : items_) {
    frames_[item.frame].initial_pending.push_back(static_cast<uint64_t>(item.num_pending));
  }
  return absl::OkStatus();
}

}  // namespace distflow
