// Writes GraphDefs the way TF1's tf.while_loop and tf.cond write them
// (Enter/Merge/cond/LoopCond/Switch/Identity/body/NextIteration/Exit, and
// Switch/Identity/branch/Merge), node by node, for tests that run loops on
// one device, several devices or several tasks. Not thread-safe.
#ifndef DISTFLOW_TESTS_COMMON_RUNTIME_TF_LOOP_WRITER_H_
#define DISTFLOW_TESTS_COMMON_RUNTIME_TF_LOOP_WRITER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph.pb.h"

namespace distflow {
namespace test {

class TfLoopWriter {
 public:
  explicit TfLoopWriter(GraphDef* g) : g_(g) {}

  // The device written into the nodes added from now on ("" for any).
  void set_device(std::string device) { device_ = std::move(device); }

  NodeDef* Node(const std::string& name, const std::string& op,
                const std::vector<std::string>& inputs) {
    NodeDef* n = g_->add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device_);
    for (const std::string& in : inputs) n->add_input(in);
    return n;
  }
  std::string Placeholder(const std::string& name, DataType dtype) {
    AddNodeAttr("dtype", dtype, Node(name, "Placeholder", {}));
    return name;
  }
  // A constant; `control` (when set) is the pivot that puts it in a frame.
  std::string Const(const std::string& name, const Tensor& value, const std::string& control = "") {
    NodeDef* n = Node(
        name, "Const",
        control.empty() ? std::vector<std::string>{} : std::vector<std::string>{"^" + control});
    AddNodeAttr("dtype", value.dtype(), n);
    AddNodeAttr("value", value, n);
    return name;
  }
  std::string Binary(const std::string& name, const std::string& op, const std::string& a,
                     const std::string& b, DataType t) {
    AddNodeAttr("T", t, Node(name, op, {a, b}));
    return name;
  }
  std::string Unary(const std::string& name, const std::string& op, const std::string& a,
                    DataType t) {
    AddNodeAttr("T", t, Node(name, op, {a}));
    return name;
  }

  struct LoopVar {
    std::string tensor;
    DataType dtype;
  };
  // What cond and body see: the loop variables inside the frame, the
  // loop-invariant values (constant Enters), and the pivot constants hang
  // off.
  struct Frame {
    std::vector<std::string> vars;
    std::vector<std::string> invariants;
    std::string pivot;
  };
  using CondFn = std::function<std::string(const Frame&)>;
  using BodyFn = std::function<std::vector<std::string>(const Frame&)>;

  // tf.while_loop(cond, body, vars) with loop-invariant inputs `invariants`.
  // Returns the Exit nodes, one per variable.
  std::vector<std::string> While(const std::string& prefix, const std::vector<LoopVar>& vars,
                                 const std::vector<LoopVar>& invariants, const CondFn& cond,
                                 const BodyFn& body, int parallel_iterations = 10) {
    const std::string frame = prefix + "/while_context";
    Frame in_cond, in_body;
    for (size_t k = 0; k < vars.size(); ++k) {
      NodeDef* enter = Node(absl::StrCat(prefix, "/Enter_", k), "Enter", {vars[k].tensor});
      EnterAttrs(enter, vars[k].dtype, frame, false, parallel_iterations);
      NodeDef* merge = Node(absl::StrCat(prefix, "/Merge_", k), "Merge",
                            {enter->name(), absl::StrCat(prefix, "/NextIteration_", k)});
      AddNodeAttr("T", vars[k].dtype, merge);
      AddNodeAttr("N", 2, merge);
      in_cond.vars.push_back(merge->name());
    }
    for (size_t k = 0; k < invariants.size(); ++k) {
      NodeDef* enter =
          Node(absl::StrCat(prefix, "/EnterInvariant_", k), "Enter", {invariants[k].tensor});
      EnterAttrs(enter, invariants[k].dtype, frame, true, parallel_iterations);
      in_cond.invariants.push_back(enter->name());
    }
    in_cond.pivot = in_cond.vars[0];
    const std::string pred = cond(in_cond);
    const std::string loop_cond = prefix + "/LoopCond";
    Node(loop_cond, "LoopCond", {pred});
    std::vector<std::string> exits;
    for (size_t k = 0; k < vars.size(); ++k) {
      const std::string sw = absl::StrCat(prefix, "/Switch_", k);
      AddNodeAttr("T", vars[k].dtype, Node(sw, "Switch", {in_cond.vars[k], loop_cond}));
      exits.push_back(Unary(absl::StrCat(prefix, "/Exit_", k), "Exit", sw, vars[k].dtype));
      in_body.vars.push_back(
          Unary(absl::StrCat(prefix, "/Identity_", k), "Identity", sw + ":1", vars[k].dtype));
    }
    in_body.invariants = in_cond.invariants;
    in_body.pivot = in_body.vars[0];
    const std::vector<std::string> next = body(in_body);
    for (size_t k = 0; k < vars.size(); ++k) {
      Unary(absl::StrCat(prefix, "/NextIteration_", k), "NextIteration", next[k], vars[k].dtype);
    }
    return exits;
  }

  // tf.cond(pred, true_fn, false_fn) on one value `x`: each branch gets x
  // through its Switch output and the branch pivot. Returns the Merge.
  using BranchFn = std::function<std::string(const std::string& x, const std::string& pivot)>;
  std::string Cond(const std::string& prefix, const std::string& pred, const std::string& x,
                   DataType t, const BranchFn& true_fn, const BranchFn& false_fn) {
    AddNodeAttr("T", DT_BOOL, Node(prefix + "/Switch", "Switch", {pred, pred}));
    const std::string pivot_t =
        Unary(prefix + "/switch_t", "Identity", prefix + "/Switch:1", DT_BOOL);
    const std::string pivot_f =
        Unary(prefix + "/switch_f", "Identity", prefix + "/Switch", DT_BOOL);
    AddNodeAttr("T", t, Node(prefix + "/SwitchX", "Switch", {x, pred}));
    const std::string t_out = true_fn(prefix + "/SwitchX:1", pivot_t);
    const std::string f_out = false_fn(prefix + "/SwitchX", pivot_f);
    NodeDef* merge = Node(prefix + "/Merge", "Merge", {f_out, t_out});
    AddNodeAttr("T", t, merge);
    AddNodeAttr("N", 2, merge);
    return merge->name();
  }

 private:
  static void EnterAttrs(NodeDef* n, DataType t, const std::string& frame, bool is_constant,
                         int parallel_iterations) {
    AddNodeAttr("T", t, n);
    AddNodeAttr("frame_name", frame, n);
    AddNodeAttr("is_constant", is_constant, n);
    AddNodeAttr("parallel_iterations", parallel_iterations, n);
  }

  GraphDef* g_;
  std::string device_;
};

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_COMMON_RUNTIME_TF_LOOP_WRITER_H_
