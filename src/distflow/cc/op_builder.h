// The one routine every op wrapper uses to add its node: convert the inputs
// (constants become Const nodes), pick the node's unique name from the scope,
// set the attrs, apply the scope's device / control dependencies /
// colocation, add the node, and infer its shapes. Any failure is recorded in
// the scope (the first error wins) and leaves no half-built node behind.
// Lives in ops::internal: wrappers call it, client code should not need to.
#ifndef DISTFLOW_CC_OP_BUILDER_H_
#define DISTFLOW_CC_OP_BUILDER_H_

#include <initializer_list>
#include <vector>

#include "absl/strings/string_view.h"
#include "distflow/attr_value.pb.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/graph/node_builder.h"

namespace distflow {
namespace ops {
namespace internal {

// One input arg of the op being built: a single Input or an InputList.
// Refers to the caller's object, which must outlive the BuildOp call.
class OpArg {
 public:
  OpArg(const Input& input) : single_(&input) {}  // NOLINT: implicit
  OpArg(const InputList& list) : list_(&list) {}  // NOLINT: implicit
  const Input* single() const { return single_; }
  const InputList* list() const { return list_; }

 private:
  const Input* single_ = nullptr;
  const InputList* list_ = nullptr;
};

// One attr of the op being built.
struct OpAttr {
  template <typename T>
  OpAttr(absl::string_view attr_name, const T& v) : name(attr_name) {
    SetAttrValue(v, &value);
  }
  absl::string_view name;
  AttrValue value;
};

// Adds op `op_name` with `inputs` (one per input arg, in order) and `attrs`
// to the scope's graph, named scope.GetUniqueNameForOp(op_name), and infers
// its shapes. Type attrs and list lengths come from the inputs. Returns the
// node, or nullptr after recording the error (also when the scope already
// has one).
Node* BuildOp(const Scope& scope, absl::string_view op_name, std::initializer_list<OpArg> inputs,
              std::initializer_list<OpAttr> attrs = {});

// Every output of `op` in order; empty for a null operation.
OutputList AllOutputs(const Operation& op);

}  // namespace internal

// The tensor `input` denotes: its Output, or a new Const node (named under
// the sub-scope "Const") holding its constant value.
NodeBuilder::NodeOut AsNodeOut(const Scope& scope, const Input& input);
std::vector<NodeBuilder::NodeOut> AsNodeOutList(const Scope& scope, const InputList& inputs);

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OP_BUILDER_H_
