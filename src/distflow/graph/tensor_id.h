// Tensor and input names: "node:index", "node" (index 0), "^node" (control).
#ifndef DISTFLOW_GRAPH_TENSOR_ID_H_
#define DISTFLOW_GRAPH_TENSOR_ID_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace distflow {

inline constexpr int kControlSlot = -1;

// A parsed input or tensor name. `index` is kControlSlot for "^node".
struct TensorId {
  absl::string_view node;
  int index = 0;
  bool IsControl() const { return index == kControlSlot; }
  // "node", "node:2" or "^node".
  std::string ToString() const;
};

// InvalidArgument naming `name` when malformed (empty node, bad index).
absl::Status ParseTensorName(absl::string_view name, TensorId* out);

// Parses the name of a tensor a run feeds or fetches: InvalidArgument
// naming it as `what` ("feed", "fetch") when it is malformed or names a
// control input.
absl::Status ParseFeedOrFetchName(absl::string_view name, absl::string_view what, TensorId* out);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_TENSOR_ID_H_
