#include "distflow/cc/cond.h"

#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/control_flow_ops.h"
#include "distflow/core/status.h"

namespace distflow {
namespace ops {

absl::Status BuildCond(const Scope& scope, const Output& pred, const std::vector<Output>& inputs,
                       const BranchGraphBuilderFn& then_fn, const BranchGraphBuilderFn& else_fn,
                       OutputList* outputs) {
  DF_RETURN_IF_ERROR(scope.status());
  auto fail = [&scope](absl::Status s) {
    scope.UpdateStatus(s);
    return s;
  };
  if (pred.node() == nullptr || BaseType(pred.type()) != DT_BOOL) {
    return fail(errors::InvalidArgument("a cond's predicate must be a bool tensor"));
  }
  const Scope cond = scope.NewSubScope("cond");
  Switch pivots(cond.WithOpName("Switch"), pred, pred);
  Identity pivot_t(cond.WithOpName("switch_t"), pivots.output_true);
  Identity pivot_f(cond.WithOpName("switch_f"), pivots.output_false);
  Identity pred_id(cond.WithOpName("pred_id"), pred);
  std::vector<Output> then_in, else_in;
  for (const Output& in : inputs) {
    Switch sw(cond.WithOpName("Switch"), in, pred_id.output);
    then_in.push_back(sw.output_true);
    else_in.push_back(sw.output_false);
  }
  DF_RETURN_IF_ERROR(cond.status());

  std::vector<Output> then_out, else_out;
  DF_RETURN_IF_ERROR(fail(then_fn(cond.NewSubScope("then").WithControlDependencies(pivot_t.output),
                                  then_in, &then_out)));
  DF_RETURN_IF_ERROR(fail(else_fn(cond.NewSubScope("else").WithControlDependencies(pivot_f.output),
                                  else_in, &else_out)));
  DF_RETURN_IF_ERROR(cond.status());
  if (then_out.size() != else_out.size()) {
    return fail(errors::InvalidArgument("the branches of cond '", cond.name_prefix(), "' return ",
                                        then_out.size(), " and ", else_out.size(), " values"));
  }
  outputs->clear();
  for (size_t k = 0; k < then_out.size(); ++k) {
    if (then_out[k].node() == nullptr || else_out[k].node() == nullptr ||
        BaseType(then_out[k].type()) != BaseType(else_out[k].type())) {
      return fail(errors::InvalidArgument("the branches of cond '", cond.name_prefix(),
                                          "' return different dtypes for output ", k));
    }
    Merge merge(cond.WithOpName("Merge"), {else_out[k], then_out[k]});
    outputs->push_back(merge.output);
  }
  return cond.status();
}

}  // namespace ops
}  // namespace distflow
