#include "distflow/framework/call_frame.h"

#include <utility>

#include "distflow/core/status.h"

namespace distflow {

CallFrame::CallFrame(std::vector<Tensor> args, size_t num_retvals)
    : args_(std::move(args)), retvals_(num_retvals) {}

absl::Status CallFrame::GetArg(int index, Tensor* value) const {
  if (index < 0 || static_cast<size_t>(index) >= args_.size()) {
    return errors::InvalidArgument("argument ", index, " requested, but the call has ",
                                   args_.size(), " argument(s)");
  }
  *value = args_[index];
  return absl::OkStatus();
}

absl::Status CallFrame::SetRetval(int index, const Tensor& value) {
  if (index < 0 || static_cast<size_t>(index) >= retvals_.size()) {
    return errors::InvalidArgument("result ", index, " set, but the call has ", retvals_.size(),
                                   " result(s)");
  }
  if (retvals_[index].has_value()) {
    return errors::InvalidArgument("result ", index, " was set twice");
  }
  retvals_[index] = value;
  return absl::OkStatus();
}

}  // namespace distflow
