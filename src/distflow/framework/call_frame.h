// CallFrame: the arguments and results of one run of a graph in the function
// calling convention. The graph takes argument i through an `_Arg` node with
// index=i and gives result i through a `_Retval` node with index=i; a
// DirectSession rewrites a run's feeds and fetches into those nodes, fills the
// arguments before the step and takes the results after it, so feeds and
// fetches never pass through a rendezvous.
//
// GetArg may be called concurrently with anything; SetRetval concurrently for
// distinct indices (each `_Retval` node writes its own result). Taking the
// results needs the step to be over.
#ifndef DISTFLOW_FRAMEWORK_CALL_FRAME_H_
#define DISTFLOW_FRAMEWORK_CALL_FRAME_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class CallFrame {
 public:
  CallFrame(std::vector<Tensor> args, size_t num_retvals);
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  size_t num_args() const { return args_.size(); }
  size_t num_retvals() const { return retvals_.size(); }

  // Argument `index`, sharing its buffer. InvalidArgument when there is no
  // such argument.
  absl::Status GetArg(int index, Tensor* value) const;
  // Sets result `index` to `value` (sharing its buffer). InvalidArgument when
  // there is no such result or it was set already.
  absl::Status SetRetval(int index, const Tensor& value);

  // Whether result `index` was set; a fetch whose value was dead never is.
  // REQUIRES: index < num_retvals().
  bool has_retval(size_t index) const { return retvals_[index].has_value(); }
  // Moves result `index` out. REQUIRES: has_retval(index).
  Tensor TakeRetval(size_t index) { return std::move(*retvals_[index]); }

 private:
  const std::vector<Tensor> args_;
  std::vector<std::optional<Tensor>> retvals_;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_CALL_FRAME_H_
