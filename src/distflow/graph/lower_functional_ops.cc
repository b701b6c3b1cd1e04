#include "distflow/graph/lower_functional_ops.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/graph/function_body.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {
namespace {

bool IsCallOp(const std::string& op) {
  return op == "PartitionedCall" || op == "StatefulPartitionedCall";
}
bool IsIfOp(const std::string& op) { return op == "If" || op == "StatelessIf"; }
bool IsCaseOp(const std::string& op) { return op == "Case" || op == "StatelessCase"; }
bool IsWhileOp(const std::string& op) { return op == "While" || op == "StatelessWhile"; }

// The chain of functions a node was inlined from, innermost last.
struct CallStack {
  std::string function;
  std::shared_ptr<const CallStack> parent;
  int depth = 0;
};
using StackPtr = std::shared_ptr<const CallStack>;

bool OnStack(const StackPtr& stack, const std::string& function) {
  for (const CallStack* s = stack.get(); s != nullptr; s = s->parent.get()) {
    if (s->function == function) return true;
  }
  return false;
}

std::string DescribeChain(const StackPtr& stack, const std::string& last) {
  std::vector<std::string> names{last};
  for (const CallStack* s = stack.get(); s != nullptr; s = s->parent.get()) {
    names.push_back(s->function);
  }
  std::reverse(names.begin(), names.end());
  return absl::StrJoin(names, " -> ");
}

struct Out {
  Node* node;
  int index;
};

// An upper bound on the nodes lowering adds for a functional node, read
// from the library alone (nothing is instantiated): the function's nodes,
// its calls' bounds in turn, and for each lowered node at most
// kOverheadPerValue nodes per input and output (Identity, Enter, Merge,
// Switch, Exit, NextIteration...) plus kOverheadPerValue. A small request
// can name 2^30 inlined nodes through a few nested calls; this finds that
// before a node is made. Sums saturate at kSaturated; functions deeper than
// kMaxFunctionCallDepth or recursive count nothing more (lowering refuses
// them by name).
class LoweredSizeBound {
 public:
  static constexpr int64_t kSaturated = int64_t{1} << 62;
  static constexpr int64_t kOverheadPerValue = 8;

  explicit LoweredSizeBound(const FunctionLibraryDefinition* library) : library_(library) {}

  int64_t OfNode(const NodeDef& def, int depth = 0) {
    int64_t total = 0;
    int64_t outputs = 0;
    auto add_function = [&](const std::string& name) {
      total = Add(total, OfFunction(name, depth + 1));
      if (const FunctionDef* f = library_->Find(name)) {
        outputs = Add(outputs, f->signature().output_arg_size());
      }
    };
    if (library_->Find(def.op()) != nullptr) add_function(def.op());
    for (const auto& [name, value] : def.attr()) {
      if (value.value_case() == AttrValue::kFunc) add_function(value.func().name());
      if (value.value_case() == AttrValue::kList) {
        for (const NameAttrList& f : value.list().func()) add_function(f.name());
      }
    }
    if (total == 0 && outputs == 0) return 0;
    const int64_t values = Add(Add(def.input_size(), outputs), 1);
    return Add(total,
               values > kSaturated / kOverheadPerValue ? kSaturated : values * kOverheadPerValue);
  }

  // a + b, or kSaturated when that is more. REQUIRES: 0 <= a, b <= kSaturated.
  static int64_t Add(int64_t a, int64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

 private:
  int64_t OfFunction(const std::string& name, int depth) {
    if (depth > kMaxFunctionCallDepth) return 0;
    if (auto it = memo_.find(name); it != memo_.end()) return it->second;
    const FunctionDef* f = library_->Find(name);
    if (f == nullptr || !in_progress_.insert(name).second) return 0;
    int64_t total = f->node_def_size();
    for (const NodeDef& n : f->node_def()) total = Add(total, OfNode(n, depth));
    in_progress_.erase(name);
    memo_[name] = total;
    return total;
  }

  const FunctionLibraryDefinition* const library_;
  absl::flat_hash_map<std::string, int64_t> memo_;
  absl::flat_hash_set<std::string> in_progress_;
};

class Lowering {
 public:
  explicit Lowering(Graph* g) : g_(g) {}

  absl::Status Run() {
    std::optional<LoweredSizeBound> bound;
    if (g_->flib_def() != nullptr) bound.emplace(g_->flib_def().get());
    int64_t added_at_most = 0;
    for (Node* n : g_->op_nodes()) {
      names_.insert(n->name());
      if (!IsFunctionalNode(*g_, *n)) continue;
      work_.push_back({n->id(), nullptr});
      if (!bound.has_value()) continue;
      added_at_most = LoweredSizeBound::Add(added_at_most, bound->OfNode(n->def()));
      if (added_at_most > kMaxLoweredNodes) {
        return errors::ResourceExhausted(
            "lowering the functional nodes up to ", FormatNodeForError(n->def()),
            " could grow the graph by up to ",
            added_at_most == LoweredSizeBound::kSaturated ? std::string("2^62 or more")
                                                          : absl::StrCat(added_at_most),
            " nodes (their functions inlined, calls within calls), past the limit of ",
            kMaxLoweredNodes);
      }
    }
    while (!work_.empty()) {
      const auto [id, stack] = work_.back();
      work_.pop_back();
      Node* n = g_->FindNodeId(id);
      if (n == nullptr) continue;
      DF_RETURN_IF_ERROR(Lower(n, stack));
    }
    FixupSourceAndSinkEdges(g_);
    return absl::OkStatus();
  }

 private:
  struct Inlined {
    std::vector<Out> rets;
    Node* done = nullptr;  // set when asked for: runs after the whole body
  };

  absl::Status Lower(Node* n, const StackPtr& stack) {
    std::vector<Out> inputs(n->num_inputs(), Out{nullptr, 0});
    std::vector<Node*> controls;
    bool has_control_out = false;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        if (e->src()->IsOp()) controls.push_back(e->src());
      } else {
        inputs[e->dst_input()] = Out{e->src(), e->src_output()};
      }
    }
    for (const Out& in : inputs) {
      if (in.node == nullptr) {
        return errors::InvalidArgument(FormatNodeForError(n->def()), ": a data input has no edge");
      }
    }
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge() && e->dst()->IsOp()) has_control_out = true;
    }
    std::vector<Out> outputs;
    Node* control_out = nullptr;
    const std::string& op = n->type_string();
    absl::Status s;
    if (IsIfOp(op)) {
      s = LowerIf(n, inputs, controls, stack, has_control_out, &outputs, &control_out);
    } else if (IsCaseOp(op)) {
      s = LowerCase(n, inputs, controls, stack, has_control_out, &outputs, &control_out);
    } else if (IsWhileOp(op)) {
      s = LowerWhile(n, inputs, controls, stack, has_control_out, &outputs, &control_out);
    } else {
      NameAttrList func;
      if (IsCallOp(op)) {
        const AttrValue* f = n->attrs().Find("f");
        if (f == nullptr || f->value_case() != AttrValue::kFunc) {
          return errors::InvalidArgument(FormatNodeForError(n->def()), ": attr 'f' is not a func");
        }
        func = f->func();
      } else {
        func.set_name(op);
        for (const auto& [name, value] : n->def().attr()) {
          if (!name.empty() && name[0] != '_') (*func.mutable_attr())[name] = value;
        }
      }
      Inlined call;
      s = InlineCall(n, func, n->name(), inputs, controls, n->output_types(), stack,
                     has_control_out, &call);
      outputs = std::move(call.rets);
      control_out = call.done;
    }
    if (!s.ok()) return s;
    // Consumers read the replacement; the node goes.
    std::vector<const Edge*> out_edges(n->out_edges().begin(), n->out_edges().end());
    for (const Edge* e : out_edges) {
      Node* dst = e->dst();
      if (e->IsControlEdge()) {
        if (dst->IsOp()) g_->AddControlEdge(control_out, dst);
      } else {
        const Out& o = outputs[e->src_output()];
        const int dst_input = e->dst_input();
        g_->RemoveEdge(e);
        g_->AddEdge(o.node, o.index, dst, dst_input);
      }
    }
    g_->RemoveNode(n);
    return absl::OkStatus();
  }

  // A new node named `name` (made unique), on `origin`'s device unless the
  // def names one.
  absl::StatusOr<Node*> Add(NodeDef def, const std::string& name, const Node* origin) {
    if (++added_ > kMaxLoweredNodes) {
      return errors::ResourceExhausted("lowering ", FormatNodeForError(origin->def()),
                                       " grows the graph past ", kMaxLoweredNodes, " nodes");
    }
    def.set_name(names_.contains(name) ? g_->NewName(name) : name);
    while (names_.contains(def.name())) def.set_name(g_->NewName(name));
    if (def.device().empty()) def.set_device(origin->requested_device());
    absl::StatusOr<Node*> n = g_->AddNode(std::move(def));
    if (!n.ok()) {
      return errors::Annotate(n.status(),
                              absl::StrCat("lowering ", FormatNodeForError(origin->def()), ": "));
    }
    names_.insert((*n)->name());
    return *n;
  }

  absl::StatusOr<Node*> AddSimple(const std::string& op, const std::string& name,
                                  const Node* origin, std::vector<Out> inputs, DataType type,
                                  const std::vector<Node*>& controls = {}) {
    NodeDef def;
    def.set_op(op);
    if (type != DT_INVALID) AddNodeAttr("T", type, &def);
    DF_ASSIGN_OR_RETURN(Node * n, Add(std::move(def), name, origin));
    for (size_t i = 0; i < inputs.size(); ++i) {
      g_->AddEdge(inputs[i].node, inputs[i].index, n, static_cast<int>(i));
    }
    for (Node* c : controls) g_->AddControlEdge(c, n);
    return n;
  }

  absl::StatusOr<Node*> AddMerge(const std::string& name, const Node* origin,
                                 const std::vector<Out>& inputs, DataType type) {
    NodeDef def;
    def.set_op("Merge");
    AddNodeAttr("T", type, &def);
    AddNodeAttr("N", static_cast<int64_t>(inputs.size()), &def);
    DF_ASSIGN_OR_RETURN(Node * n, Add(std::move(def), name, origin));
    for (size_t i = 0; i < inputs.size(); ++i) {
      g_->AddEdge(inputs[i].node, inputs[i].index, n, static_cast<int>(i));
    }
    return n;
  }

  absl::Status InlineCall(const Node* origin, const NameAttrList& func, const std::string& prefix,
                          const std::vector<Out>& args, const std::vector<Node*>& controls,
                          const DataTypeVector& expected_rets, const StackPtr& stack,
                          bool want_done, Inlined* out) {
    const std::string where = FormatNodeForError(origin->def());
    if (OnStack(stack, func.name())) {
      return errors::InvalidArgument(where, ": function '", func.name(),
                                     "' calls itself recursively (",
                                     DescribeChain(stack, func.name()), ")");
    }
    const int depth = stack == nullptr ? 1 : stack->depth + 1;
    if (depth > kMaxFunctionCallDepth) {
      return errors::InvalidArgument(where, ": function calls nest deeper than ",
                                     kMaxFunctionCallDepth, " (", DescribeChain(stack, func.name()),
                                     ")");
    }
    absl::StatusOr<std::unique_ptr<FunctionBody>> instantiated =
        InstantiateFunctionBody(g_->flib_def(), func);
    if (!instantiated.ok()) {
      return errors::Annotate(instantiated.status(), absl::StrCat(where, ": "));
    }
    const FunctionBody& body = **instantiated;
    if (body.arg_types.size() != args.size()) {
      return errors::InvalidArgument(where, ": function '", func.name(), "' takes ",
                                     body.arg_types.size(), " arguments but is given ",
                                     args.size());
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (BaseType(args[i].node->output_type(args[i].index)) != BaseType(body.arg_types[i])) {
        return errors::InvalidArgument(where, ": argument ", i, " of function '", func.name(),
                                       "' is ", DataTypeString(body.arg_types[i]),
                                       " but the caller passes ",
                                       DataTypeString(args[i].node->output_type(args[i].index)));
      }
    }
    if (body.ret_types.size() != expected_rets.size()) {
      return errors::InvalidArgument(where, ": function '", func.name(), "' returns ",
                                     body.ret_types.size(), " values but the caller expects ",
                                     expected_rets.size());
    }
    for (size_t i = 0; i < expected_rets.size(); ++i) {
      if (body.ret_types[i] != BaseType(expected_rets[i])) {
        return errors::InvalidArgument(where, ": result ", i, " of function '", func.name(),
                                       "' is ", DataTypeString(body.ret_types[i]),
                                       " but the caller expects ",
                                       DataTypeString(expected_rets[i]));
      }
    }
    auto inner = std::make_shared<CallStack>(CallStack{func.name(), stack, depth});

    std::vector<Node*> arg_ids;
    for (size_t i = 0; i < args.size(); ++i) {
      DF_ASSIGN_OR_RETURN(Node * id, AddSimple("Identity", absl::StrCat(prefix, "/_arg", i), origin,
                                               {args[i]}, BaseType(body.arg_types[i])));
      arg_ids.push_back(id);
    }
    NodeDef noop;
    noop.set_op("NoOp");
    DF_ASSIGN_OR_RETURN(Node * input_control,
                        Add(noop, absl::StrCat(prefix, "/_input_control"), origin));
    for (Node* c : controls) g_->AddControlEdge(c, input_control);
    for (Node* id : arg_ids) g_->AddControlEdge(id, input_control);

    std::vector<Node*> copy(body.graph->num_node_ids(), nullptr);
    for (size_t i = 0; i < body.arg_nodes.size(); ++i) copy[body.arg_nodes[i]->id()] = arg_ids[i];
    for (Node* n : body.graph->op_nodes()) {
      if (n->type_string() == "_Arg" || n->type_string() == "_Retval") continue;
      DF_ASSIGN_OR_RETURN(Node * c, Add(n->def(), absl::StrCat(prefix, "/", n->name()), origin));
      copy[n->id()] = c;
      if (IsFunctionalNode(*g_, *c)) work_.push_back({c->id(), inner});
    }
    out->rets.assign(body.ret_nodes.size(), Out{nullptr, 0});
    for (const Edge* e : body.graph->edges()) {
      Node* src = e->src();
      Node* dst = e->dst();
      if (!src->IsOp() || !dst->IsOp()) continue;
      if (dst->type_string() == "_Retval") {
        if (e->IsControlEdge()) continue;
        int64_t index = 0;
        DF_RETURN_IF_ERROR(GetNodeAttr(dst->attrs(), "index", &index));
        out->rets[index] = Out{copy[src->id()], e->src_output()};
      } else if (e->IsControlEdge()) {
        g_->AddControlEdge(copy[src->id()], copy[dst->id()]);
      } else {
        g_->AddEdge(copy[src->id()], e->src_output(), copy[dst->id()], e->dst_input());
      }
    }
    // Body nodes without inputs start once the call's inputs are there.
    for (Node* n : body.graph->op_nodes()) {
      if (n->type_string() == "_Arg" || n->type_string() == "_Retval") continue;
      bool has_op_input = false;
      for (const Edge* e : n->in_edges()) has_op_input |= e->src()->IsOp();
      if (!has_op_input) g_->AddControlEdge(input_control, copy[n->id()]);
    }
    if (want_done) {
      DF_ASSIGN_OR_RETURN(out->done, Add(noop, absl::StrCat(prefix, "/_output_control"), origin));
      g_->AddControlEdge(input_control, out->done);
      for (const Out& r : out->rets) g_->AddControlEdge(r.node, out->done);
      for (Node* c : body.control_ret_nodes) g_->AddControlEdge(copy[c->id()], out->done);
    }
    return absl::OkStatus();
  }

  // Inlines branch k behind `pivot` and returns its results; `want_done`
  // gives a live node after the branch ran (an Identity of the pivot).
  absl::Status InlineBranch(Node* n, const NameAttrList& func, const std::string& prefix,
                            std::vector<Out> args, Node* pivot, const StackPtr& stack,
                            bool want_done, Inlined* out) {
    DF_RETURN_IF_ERROR(
        InlineCall(n, func, prefix, args, {pivot}, n->output_types(), stack, want_done, out));
    if (want_done) {
      DF_ASSIGN_OR_RETURN(Node * done, AddSimple("Identity", prefix + "/_done", n, {{pivot, 0}},
                                                 pivot->output_type(0), {out->done}));
      out->done = done;
    }
    return absl::OkStatus();
  }

  // Merges the branches' results, and their done nodes into `control_out`.
  absl::Status MergeBranches(Node* n, const std::vector<Inlined>& branches, bool want_done,
                             std::vector<Out>* outputs, Node** control_out) {
    for (int j = 0; j < n->num_outputs(); ++j) {
      std::vector<Out> ins;
      for (const Inlined& b : branches) ins.push_back(b.rets[j]);
      DF_ASSIGN_OR_RETURN(Node * m, AddMerge(absl::StrCat(n->name(), "/_merge", j), n, ins,
                                             BaseType(n->output_type(j))));
      outputs->push_back(Out{m, 0});
    }
    if (want_done) {
      std::vector<Out> ins;
      for (const Inlined& b : branches) ins.push_back(Out{b.done, 0});
      DF_ASSIGN_OR_RETURN(*control_out, AddMerge(n->name() + "/_branch_executed", n, ins,
                                                 branches.front().done->output_type(0)));
    }
    return absl::OkStatus();
  }

  absl::Status LowerIf(Node* n, const std::vector<Out>& inputs, const std::vector<Node*>& controls,
                       const StackPtr& stack, bool want_done, std::vector<Out>* outputs,
                       Node** control_out) {
    if (BaseType(n->input_type(0)) != DT_BOOL) {
      return errors::InvalidArgument(FormatNodeForError(n->def()), ": the predicate is ",
                                     DataTypeString(n->input_type(0)),
                                     "; only a bool predicate can be lowered");
    }
    const AttrValue* then_f = n->attrs().Find("then_branch");
    const AttrValue* else_f = n->attrs().Find("else_branch");
    if (then_f == nullptr || else_f == nullptr || then_f->value_case() != AttrValue::kFunc ||
        else_f->value_case() != AttrValue::kFunc) {
      return errors::InvalidArgument(FormatNodeForError(n->def()),
                                     ": then_branch and else_branch must be funcs");
    }
    const std::string& name = n->name();
    DF_ASSIGN_OR_RETURN(Node * pred_switch, AddSimple("Switch", name + "/_pred_switch", n,
                                                      {inputs[0], inputs[0]}, DT_BOOL, controls));
    DF_ASSIGN_OR_RETURN(Node * pivot_f,
                        AddSimple("Identity", name + "/_pivot_f", n, {{pred_switch, 0}}, DT_BOOL));
    DF_ASSIGN_OR_RETURN(Node * pivot_t,
                        AddSimple("Identity", name + "/_pivot_t", n, {{pred_switch, 1}}, DT_BOOL));
    std::vector<Out> then_args, else_args;
    for (size_t i = 1; i < inputs.size(); ++i) {
      DF_ASSIGN_OR_RETURN(
          Node * sw,
          AddSimple("Switch", absl::StrCat(name, "/_switch", i - 1), n, {inputs[i], inputs[0]},
                    BaseType(n->input_type(static_cast<int>(i))), controls));
      else_args.push_back(Out{sw, 0});
      then_args.push_back(Out{sw, 1});
    }
    std::vector<Inlined> branches(2);
    DF_RETURN_IF_ERROR(InlineBranch(n, else_f->func(), name + "/else", else_args, pivot_f, stack,
                                    want_done, &branches[0]));
    DF_RETURN_IF_ERROR(InlineBranch(n, then_f->func(), name + "/then", then_args, pivot_t, stack,
                                    want_done, &branches[1]));
    return MergeBranches(n, branches, want_done, outputs, control_out);
  }

  absl::Status LowerCase(Node* n, const std::vector<Out>& inputs,
                         const std::vector<Node*>& controls, const StackPtr& stack, bool want_done,
                         std::vector<Out>* outputs, Node** control_out) {
    const AttrValue* branches_attr = n->attrs().Find("branches");
    if (branches_attr == nullptr || branches_attr->list().func_size() == 0) {
      return errors::InvalidArgument(FormatNodeForError(n->def()), ": 'branches' lists no funcs");
    }
    const int num = branches_attr->list().func_size();
    const std::string& name = n->name();
    auto switch_n = [&](const std::string& sw_name, Out data,
                        DataType type) -> absl::StatusOr<Node*> {
      NodeDef def;
      def.set_op("_SwitchN");
      AddNodeAttr("T", type, &def);
      AddNodeAttr("num_outs", int64_t{num}, &def);
      DF_ASSIGN_OR_RETURN(Node * sw, Add(std::move(def), sw_name, n));
      g_->AddEdge(data.node, data.index, sw, 0);
      g_->AddEdge(inputs[0].node, inputs[0].index, sw, 1);
      for (Node* c : controls) g_->AddControlEdge(c, sw);
      return sw;
    };
    DF_ASSIGN_OR_RETURN(Node * index_switch,
                        switch_n(name + "/_index_switch", inputs[0], DT_INT32));
    std::vector<std::vector<Out>> args(num);
    for (size_t i = 1; i < inputs.size(); ++i) {
      DF_ASSIGN_OR_RETURN(Node * sw, switch_n(absl::StrCat(name, "/_switch", i - 1), inputs[i],
                                              BaseType(n->input_type(static_cast<int>(i)))));
      for (int k = 0; k < num; ++k) args[k].push_back(Out{sw, k});
    }
    std::vector<Inlined> branches(num);
    for (int k = 0; k < num; ++k) {
      DF_ASSIGN_OR_RETURN(Node * pivot, AddSimple("Identity", absl::StrCat(name, "/_pivot", k), n,
                                                  {{index_switch, k}}, DT_INT32));
      DF_RETURN_IF_ERROR(InlineBranch(n, branches_attr->list().func(k),
                                      absl::StrCat(name, "/branch", k), args[k], pivot, stack,
                                      want_done, &branches[k]));
    }
    return MergeBranches(n, branches, want_done, outputs, control_out);
  }

  absl::Status LowerWhile(Node* n, const std::vector<Out>& inputs,
                          const std::vector<Node*>& controls, const StackPtr& stack, bool want_done,
                          std::vector<Out>* outputs, Node** control_out) {
    const std::string where = FormatNodeForError(n->def());
    const AttrValue* cond_f = n->attrs().Find("cond");
    const AttrValue* body_f = n->attrs().Find("body");
    if (cond_f == nullptr || body_f == nullptr || cond_f->value_case() != AttrValue::kFunc ||
        body_f->value_case() != AttrValue::kFunc) {
      return errors::InvalidArgument(where, ": cond and body must be funcs");
    }
    if (inputs.empty()) return errors::InvalidArgument(where, ": a loop needs loop variables");
    int64_t parallel_iterations = 10;
    DF_RETURN_IF_ERROR(GetNodeAttr(n->attrs(), "parallel_iterations", &parallel_iterations));
    if (parallel_iterations < 1) {
      return errors::InvalidArgument(where, ": parallel_iterations must be at least 1, got ",
                                     parallel_iterations);
    }
    const std::string& name = n->name();
    const size_t num = inputs.size();
    std::vector<Node*> merges(num);
    std::vector<Out> cond_args;
    for (size_t i = 0; i < num; ++i) {
      const DataType type = BaseType(n->input_type(static_cast<int>(i)));
      NodeDef enter;
      enter.set_op("Enter");
      AddNodeAttr("T", type, &enter);
      AddNodeAttr("frame_name", name, &enter);
      AddNodeAttr("is_constant", false, &enter);
      AddNodeAttr("parallel_iterations", parallel_iterations, &enter);
      DF_ASSIGN_OR_RETURN(Node * e, Add(std::move(enter), absl::StrCat(name, "/_enter", i), n));
      g_->AddEdge(inputs[i].node, inputs[i].index, e, 0);
      for (Node* c : controls) g_->AddControlEdge(c, e);
      NodeDef merge;
      merge.set_op("Merge");
      AddNodeAttr("T", type, &merge);
      AddNodeAttr("N", int64_t{2}, &merge);
      DF_ASSIGN_OR_RETURN(merges[i], Add(std::move(merge), absl::StrCat(name, "/_merge", i), n));
      g_->AddEdge(e, 0, merges[i], 0);
      cond_args.push_back(Out{merges[i], 0});
    }
    Inlined cond;
    DF_RETURN_IF_ERROR(InlineCall(n, cond_f->func(), name + "/cond", cond_args, {},
                                  DataTypeVector{DT_BOOL}, stack, false, &cond));
    DF_ASSIGN_OR_RETURN(Node * loop_cond,
                        AddSimple("LoopCond", name + "/_loop_cond", n, {cond.rets[0]}, DT_INVALID));
    std::vector<Out> body_args;
    std::vector<Node*> exits(num);
    for (size_t i = 0; i < num; ++i) {
      const DataType type = BaseType(n->input_type(static_cast<int>(i)));
      DF_ASSIGN_OR_RETURN(Node * sw, AddSimple("Switch", absl::StrCat(name, "/_switch", i), n,
                                               {{merges[i], 0}, {loop_cond, 0}}, type));
      DF_ASSIGN_OR_RETURN(exits[i],
                          AddSimple("Exit", absl::StrCat(name, "/_exit", i), n, {{sw, 0}}, type));
      DF_ASSIGN_OR_RETURN(Node * id, AddSimple("Identity", absl::StrCat(name, "/_identity", i), n,
                                               {{sw, 1}}, type));
      body_args.push_back(Out{id, 0});
      outputs->push_back(Out{exits[i], 0});
    }
    Inlined body;
    DF_RETURN_IF_ERROR(InlineCall(n, body_f->func(), name + "/body", body_args, {},
                                  n->input_types(), stack, false, &body));
    for (size_t i = 0; i < num; ++i) {
      DF_ASSIGN_OR_RETURN(Node * next,
                          AddSimple("NextIteration", absl::StrCat(name, "/_next_iteration", i), n,
                                    {body.rets[i]}, BaseType(n->input_type(static_cast<int>(i)))));
      g_->AddEdge(next, 0, merges[i], 1);
    }
    if (want_done) {
      NodeDef noop;
      noop.set_op("NoOp");
      DF_ASSIGN_OR_RETURN(*control_out, Add(std::move(noop), name + "/_loop_executed", n));
      for (Node* e : exits) g_->AddControlEdge(e, *control_out);
    }
    return absl::OkStatus();
  }

  struct WorkItem {
    int id;
    StackPtr stack;
  };

  Graph* g_;
  absl::flat_hash_set<std::string> names_;
  std::vector<WorkItem> work_;
  int64_t added_ = 0;
};

}  // namespace

bool IsFunctionalNode(const Graph& g, const Node& node) {
  const std::string& op = node.type_string();
  if (IsCallOp(op) || IsIfOp(op) || IsCaseOp(op) || IsWhileOp(op)) return true;
  // Library functions never shadow registered ops.
  return node.IsOp() && g.flib_def() != nullptr && g.flib_def()->Find(op) != nullptr;
}

absl::Status LowerFunctionalOps(Graph* g) { return Lowering(g).Run(); }

}  // namespace distflow
