// Optimizer update ops, on reference variables (Apply*: the variable and
// its slots are Ref inputs, the variable is passed through as output) and on
// resource variables (ResourceApply*: handles, no outputs). Names, inputs,
// attrs and update formulas follow TensorFlow's.
#include <initializer_list>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// The inputs listed must be scalars (learning rate, momentum, betas, ...).
absl::Status Scalars(InferenceContext* c, std::initializer_list<int> inputs) {
  for (int i : inputs) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        c->WithScalar(i), absl::StrCat("input '", c->op_def().input_arg(i).name(), "': ")));
  }
  return absl::OkStatus();
}

// The shape every listed input (variable, slots, gradient) shares.
absl::Status SameShapes(InferenceContext* c, std::initializer_list<int> inputs,
                        PartialTensorShape* out) {
  PartialTensorShape merged = PartialTensorShape::Unknown();
  for (int i : inputs) {
    PartialTensorShape next;
    absl::Status s = merged.MergeWith(c->input(i), &next);
    if (!s.ok()) {
      return errors::InvalidArgument("input '", c->op_def().input_arg(i).name(), "' has shape ",
                                     c->input(i).DebugString(), " but the variable has shape ",
                                     merged.DebugString());
    }
    merged = std::move(next);
  }
  *out = std::move(merged);
  return absl::OkStatus();
}

// Ref ops output the variable (input 0), resource ops nothing. Resource
// handles are scalars whose variable shapes are unknown here, so for resource
// ops only the gradient's shape is known.
absl::Status ApplyShape(InferenceContext* c, std::initializer_list<int> scalars,
                        std::initializer_list<int> same) {
  DF_RETURN_IF_ERROR(Scalars(c, scalars));
  if (c->num_outputs() == 0) {
    for (int i = 0; i < c->num_inputs(); ++i) {
      if (c->input_type(i) == DT_RESOURCE) DF_RETURN_IF_ERROR(c->WithScalar(i));
    }
    return absl::OkStatus();
  }
  PartialTensorShape var;
  DF_RETURN_IF_ERROR(SameShapes(c, same, &var));
  c->set_output(0, var);
  return absl::OkStatus();
}

absl::Status GradientDescentShape(InferenceContext* c) { return ApplyShape(c, {1}, {0, 2}); }
absl::Status MomentumShape(InferenceContext* c) { return ApplyShape(c, {2, 4}, {0, 1, 3}); }
absl::Status AdamShape(InferenceContext* c) {
  return ApplyShape(c, {3, 4, 5, 6, 7, 8}, {0, 1, 2, 9});
}

}  // namespace

REGISTER_OP("ApplyGradientDescent")
    .Input("var: Ref(T)")
    .Input("alpha: T")
    .Input("delta: T")
    .Output("out: Ref(T)")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .SetShapeFn(GradientDescentShape)
    .Doc("var -= alpha * delta.");

REGISTER_OP("ResourceApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .SetShapeFn(GradientDescentShape)
    .Doc("var -= alpha * delta.");

REGISTER_OP("ApplyMomentum")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Output("out: Ref(T)")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(MomentumShape)
    .Doc(
        "accum = accum * momentum + grad; var -= lr * accum, or with "
        "use_nesterov var -= lr * grad + lr * momentum * accum.");

REGISTER_OP("ResourceApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .SetShapeFn(MomentumShape)
    .Doc(
        "accum = accum * momentum + grad; var -= lr * accum, or with "
        "use_nesterov var -= lr * grad + lr * momentum * accum.");

REGISTER_OP("ApplyAdam")
    .Input("var: Ref(T)")
    .Input("m: Ref(T)")
    .Input("v: Ref(T)")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(AdamShape)
    .Doc(
        "lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); "
        "m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2); "
        "var -= lr_t * m / (sqrt(v) + epsilon), with use_nesterov m replaced "
        "by beta1 * m + (1 - beta1) * grad.");

REGISTER_OP("ResourceApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .SetShapeFn(AdamShape)
    .Doc(
        "lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); "
        "m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2); "
        "var -= lr_t * m / (sqrt(v) + epsilon), with use_nesterov m replaced "
        "by beta1 * m + (1 - beta1) * grad.");

}  // namespace distflow
