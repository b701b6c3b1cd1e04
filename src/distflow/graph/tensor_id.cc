#include "distflow/graph/tensor_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

std::string TensorId::ToString() const {
  if (index == kControlSlot) return absl::StrCat("^", node);
  if (index == 0) return std::string(node);
  return absl::StrCat(node, ":", index);
}

absl::Status ParseTensorName(absl::string_view name, TensorId* out) {
  if (!name.empty() && name[0] == '^') {
    out->node = name.substr(1);
    out->index = kControlSlot;
    if (out->node.empty() || out->node.find(':') != absl::string_view::npos) {
      return errors::InvalidArgument("malformed control input '", name, "'");
    }
    return absl::OkStatus();
  }
  const size_t colon = name.rfind(':');
  if (colon == absl::string_view::npos) {
    out->node = name;
    out->index = 0;
  } else {
    out->node = name.substr(0, colon);
    absl::string_view idx = name.substr(colon + 1);
    int v;
    if (idx.empty() || !absl::ascii_isdigit(idx[0]) || !absl::SimpleAtoi(idx, &v)) {
      return errors::InvalidArgument("malformed tensor name '", name,
                                     "': the output index must be a non-negative integer");
    }
    out->index = v;
  }
  if (out->node.empty()) {
    return errors::InvalidArgument("malformed tensor name '", name, "': empty node name");
  }
  return absl::OkStatus();
}

absl::Status ParseFeedOrFetchName(absl::string_view name, absl::string_view what, TensorId* out) {
  DF_RETURN_IF_ERROR(
      errors::Annotate(ParseTensorName(name, out), absl::StrCat(what, " '", name, "': ")));
  if (out->IsControl()) {
    return errors::InvalidArgument(what, " '", name, "' names a control input, not a tensor");
  }
  return absl::OkStatus();
}

}  // namespace distflow
