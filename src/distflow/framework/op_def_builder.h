// Builds an OpDef from TensorFlow-style spec strings:
//   Input("a: T"), Input("values: N * T"), Input("ref: Ref(T)"),
//   Input("handle: resource"), Input("args: Tlist"),
//   Attr("T: {float, double, int32}"), Attr("N: int >= 1"),
//   Attr("transpose_a: bool = false"), Attr("padding: {'SAME', 'VALID'}"),
//   Attr("T: numbertypes"), Attr("shape: shape = { unknown_rank: true }").
// An input/output naming a type attr or number attr that is not declared gets
// one declared implicitly ("type", or "int >= 1"). Errors in a spec surface
// from Finalize, naming the op and the spec.
#ifndef DISTFLOW_FRAMEWORK_OP_DEF_BUILDER_H_
#define DISTFLOW_FRAMEWORK_OP_DEF_BUILDER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distflow/op_def.pb.h"

namespace distflow {

class InferenceContext;
using ShapeInferenceFn = std::function<absl::Status(InferenceContext* c)>;

// What the registry keeps for one op.
struct OpRegistrationData {
  OpDef op_def;
  ShapeInferenceFn shape_fn;  // never null after registration
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string op_name);

  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetIsAggregate();
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetAllowsUninitializedInput();
  OpDefBuilder& SetShapeFn(ShapeInferenceFn fn);
  OpDefBuilder& Doc(std::string summary);

  // Parses every spec; InvalidArgument naming the op and spec on error.
  absl::Status Finalize(OpRegistrationData* out) const;

 private:
  OpDef op_def_;
  std::vector<std::string> attrs_, inputs_, outputs_;
  ShapeInferenceFn shape_fn_;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_OP_DEF_BUILDER_H_
