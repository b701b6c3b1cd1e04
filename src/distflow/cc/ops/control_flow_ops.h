// Client wrappers for control flow: Switch and Merge, the pair tf.cond
// builds (a value routed by Switch reaches only the branch its predicate
// picks; the other branch's nodes are dead and do not run; Merge joins the
// branches), and the loop primitives tf.while_loop adds around them (Enter,
// Exit, NextIteration, LoopCond). BuildWhileLoop and BuildCond (cc/) put
// them together; use these directly only to write a loop by hand.
#ifndef DISTFLOW_CC_OPS_CONTROL_FLOW_OPS_H_
#define DISTFLOW_CC_OPS_CONTROL_FLOW_OPS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// `data` on output_true when `pred` (a bool scalar) is true, else on
// output_false; the other output is dead.
class Switch {
 public:
  Switch(const Scope& scope, Input data, Input pred);
  Operation operation;
  Output output_false;
  Output output_true;
};

// The first of `inputs` that is alive, and its index; dead when all are.
class Merge {
 public:
  Merge(const Scope& scope, InputList inputs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
  Output value_index;
};

// Brings `data` into the loop frame `frame_name`.
class Enter {
 public:
  struct Attrs {
    // Every iteration sees the value (a loop invariant). Default false.
    [[nodiscard]] Attrs IsConstant(bool x) {
      Attrs ret = *this;
      ret.is_constant_ = x;
      return ret;
    }
    // At most this many iterations run at once. Default 10.
    [[nodiscard]] Attrs ParallelIterations(int64_t x) {
      Attrs ret = *this;
      ret.parallel_iterations_ = x;
      return ret;
    }
    bool is_constant_ = false;
    int64_t parallel_iterations_ = 10;
  };
  Enter(const Scope& scope, Input data, absl::string_view frame_name);
  Enter(const Scope& scope, Input data, absl::string_view frame_name, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Hands the loop's last value of `data` to the frame around the loop.
class Exit {
 public:
  Exit(const Scope& scope, Input data);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Carries `data` to the next iteration (into the loop's Merge).
class NextIteration {
 public:
  NextIteration(const Scope& scope, Input data);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// The loop's predicate: another iteration runs iff it is true.
class LoopCond {
 public:
  LoopCond(const Scope& scope, Input input);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_CONTROL_FLOW_OPS_H_
