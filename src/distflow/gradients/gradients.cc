#include "distflow/gradients/gradients.h"

#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_op_registry.h"

namespace distflow {
namespace {

// One backward pass. The nodes that matter are those that lie between the
// inputs and the outputs: forward-reachable from an input node and
// backward-reachable from an output node over data edges. A node's gradient
// function runs once every consumer of its outputs among those nodes has
// passed its gradients back, so each tensor's gradient is complete (and
// summed once) before it is used.
class SymbolicGradientBuilder {
 public:
  SymbolicGradientBuilder(const Scope& scope, const std::vector<Output>& outputs,
                          const std::vector<Output>& inputs, const std::vector<Output>& grad_inputs,
                          std::vector<Output>* grad_outputs)
      : scope_(scope),
        outputs_(outputs),
        inputs_(inputs),
        grad_inputs_(grad_inputs),
        grad_outputs_(grad_outputs) {}

  absl::Status Run();

 private:
  absl::Status Validate() const;
  // Marks the nodes between inputs and outputs and counts, for each, the
  // data edges to consumers that are also between.
  void FindBetweenNodes();
  // Runs `node`'s gradient function and records what it passes back.
  absl::Status Backprop(Node* node);
  // The sum of the gradients passed back to `tensor` (cached): null when
  // there are none, the only one, or their AddN.
  Output SumGradients(const Output& tensor);

  bool between(const Node* n) const { return between_[n->id()]; }

  const Scope& scope_;
  const std::vector<Output>& outputs_;
  const std::vector<Output>& inputs_;
  const std::vector<Output>& grad_inputs_;
  std::vector<Output>* grad_outputs_;

  std::vector<bool> between_;  // by node id
  std::vector<int> pending_;   // by node id
  int num_between_ = 0;
  absl::flat_hash_map<Output, std::vector<Output>, OutputHash> backprops_;
  absl::flat_hash_map<Output, Output, OutputHash> summed_;
};

absl::Status SymbolicGradientBuilder::Validate() const {
  if (!scope_.ok()) return scope_.status();
  if (grad_inputs_.size() != outputs_.size()) {
    return errors::InvalidArgument("AddSymbolicGradients got ", outputs_.size(), " outputs but ",
                                   grad_inputs_.size(), " grad_inputs; they must match one to one");
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].node() == nullptr) {
      return errors::InvalidArgument("AddSymbolicGradients output ", i,
                                     " is null (did building it fail?)");
    }
    if (grad_inputs_[i].node() == nullptr) {
      return errors::InvalidArgument("AddSymbolicGradients grad_input ", i,
                                     " is null (did building it fail?)");
    }
    if (grad_inputs_[i].type() != outputs_[i].type()) {
      return errors::InvalidArgument(
          "AddSymbolicGradients grad_input ", i, " (", grad_inputs_[i].name(), ") has dtype ",
          DataTypeString(grad_inputs_[i].type()), " but output ", outputs_[i].name(), " has dtype ",
          DataTypeString(outputs_[i].type()));
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].node() == nullptr) {
      return errors::InvalidArgument("AddSymbolicGradients input ", i,
                                     " is null (did building it fail?)");
    }
  }
  return absl::OkStatus();
}

void SymbolicGradientBuilder::FindBetweenNodes() {
  const Graph& graph = *scope_.graph();
  const int n = graph.num_node_ids();
  std::vector<bool> from_inputs(n, false);
  std::deque<Node*> queue;
  for (const Output& in : inputs_) {
    if (!from_inputs[in.node()->id()]) {
      from_inputs[in.node()->id()] = true;
      queue.push_back(in.node());
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    for (const Edge* e : node->out_edges()) {
      if (e->IsControlEdge() || from_inputs[e->dst()->id()]) continue;
      from_inputs[e->dst()->id()] = true;
      queue.push_back(e->dst());
    }
  }
  // An ancestor of a node not reachable from the inputs is not reachable
  // either, so the backward search can stop at such nodes.
  between_.assign(n, false);
  for (const Output& out : outputs_) {
    Node* node = out.node();
    if (from_inputs[node->id()] && !between_[node->id()]) {
      between_[node->id()] = true;
      queue.push_back(node);
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    ++num_between_;
    for (const Edge* e : node->in_edges()) {
      Node* src = e->src();
      if (e->IsControlEdge() || !from_inputs[src->id()] || between(src)) {
        continue;
      }
      between_[src->id()] = true;
      queue.push_back(src);
    }
  }
  pending_.assign(n, 0);
  for (Node* node : graph.op_nodes()) {
    if (!between(node)) continue;
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge() && between(e->src())) ++pending_[e->src()->id()];
    }
  }
}

Output SymbolicGradientBuilder::SumGradients(const Output& tensor) {
  auto cached = summed_.find(tensor);
  if (cached != summed_.end()) return cached->second;
  Output sum;
  auto it = backprops_.find(tensor);
  if (it != backprops_.end()) {
    std::vector<Output>& grads = it->second;
    if (grads.size() == 1) {
      sum = grads[0];
    } else if (grads.size() > 1) {
      sum = ops::AddN(scope_, grads);
    }
  }
  summed_[tensor] = sum;
  return sum;
}

absl::Status SymbolicGradientBuilder::Backprop(Node* node) {
  bool has_between_input = false;
  for (const Edge* e : node->in_edges()) {
    if (!e->IsControlEdge() && between(e->src())) has_between_input = true;
  }
  // A node with nothing between upstream of it is where the walk ends (an
  // input, or a leaf beside one): its gradient function is not needed.
  if (!has_between_input) return absl::OkStatus();

  std::vector<Output> grads(node->num_outputs());
  bool any_grad = false;
  for (int i = 0; i < node->num_outputs(); ++i) {
    grads[i] = SumGradients(Output(node, i));
    any_grad = any_grad || grads[i].node() != nullptr;
  }
  if (!scope_.ok()) return scope_.status();

  std::vector<Output> input_grads;
  if (any_grad) {
    GradFunc fn = nullptr;
    absl::Status s = GradOpRegistry::Global()->Lookup(node->type_string(), &fn);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(s.message(), " (node '", node->name(), "')"));
    }
    if (fn != nullptr) {
      const Scope grad_scope = scope_.NewSubScope(absl::StrCat(node->name(), "_grad"));
      s = fn(grad_scope, Operation(node), grads, &input_grads);
      if (s.ok()) s = scope_.status();
      if (!s.ok()) {
        return errors::Annotate(
            s, absl::StrCat("gradient of node '", node->name(), "' (", node->type_string(), "): "));
      }
      if (static_cast<int>(input_grads.size()) != node->num_inputs()) {
        return errors::Internal("gradient function of ", node->type_string(), " returned ",
                                input_grads.size(), " gradients for node '", node->name(),
                                "' with ", node->num_inputs(), " inputs");
      }
    }
  }
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge() || !between(e->src())) continue;
    Node* src = e->src();
    const DataType want = BaseType(src->output_type(e->src_output()));
    // As in TensorFlow, gradients flow only into floating-point tensors and
    // variable handles; integer and bool tensors (indices, shapes, masks)
    // have none.
    if (!input_grads.empty() && (DataTypeIsFloating(want) || want == DT_RESOURCE)) {
      const Output& g = input_grads[e->dst_input()];
      if (g.node() != nullptr) {
        if (want != DT_RESOURCE && g.type() != want) {
          return errors::Internal("gradient function of ", node->type_string(), " gave input ",
                                  e->dst_input(), " of node '", node->name(), "' a ",
                                  DataTypeString(g.type()), " gradient; expected ",
                                  DataTypeString(want));
        }
        backprops_[Output(src, e->src_output())].push_back(g);
      }
    }
    --pending_[src->id()];
  }
  return absl::OkStatus();
}

absl::Status SymbolicGradientBuilder::Run() {
  DF_RETURN_IF_ERROR(Validate());
  FindBetweenNodes();
  for (size_t i = 0; i < outputs_.size(); ++i) {
    backprops_[outputs_[i]].push_back(grad_inputs_[i]);
  }
  std::deque<Node*> ready;
  for (Node* node : scope_.graph()->op_nodes()) {
    if (between(node) && pending_[node->id()] == 0) ready.push_back(node);
  }
  int processed = 0;
  while (!ready.empty()) {
    Node* node = ready.front();
    ready.pop_front();
    ++processed;
    DF_RETURN_IF_ERROR(Backprop(node));
    for (const Edge* e : node->in_edges()) {
      Node* src = e->src();
      if (e->IsControlEdge() || !between(src) || pending_[src->id()] != 0) {
        continue;
      }
      // Enqueue once: a node whose count just reached zero.
      pending_[src->id()] = -1;
      ready.push_back(src);
    }
  }
  if (processed != num_between_) {
    return errors::Unimplemented(
        "AddSymbolicGradients: the nodes between the outputs and the inputs "
        "form a cycle (",
        num_between_ - processed, " nodes never became ready); loops are not supported");
  }

  grad_outputs_->clear();
  for (const Output& in : inputs_) {
    Output g = SumGradients(in);
    if (g.node() == nullptr && in.type() != DT_RESOURCE) {
      g = ops::ZerosLike(scope_, in);
    }
    grad_outputs_->push_back(g);
  }
  return scope_.status();
}

}  // namespace

Output NoGradient() { return Output(); }

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs) {
  return SymbolicGradientBuilder(scope, outputs, inputs, grad_inputs, grad_outputs).Run();
}

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  std::vector<Output>* grad_outputs) {
  std::vector<Output> grad_inputs;
  grad_inputs.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].node() == nullptr) {
      return errors::InvalidArgument("AddSymbolicGradients output ", i,
                                     " is null (did building it fail?)");
    }
    grad_inputs.push_back(ops::OnesLike(scope, outputs[i]));
  }
  if (!scope.ok()) return scope.status();
  return AddSymbolicGradients(scope, outputs, inputs, grad_inputs, grad_outputs);
}

}  // namespace distflow
