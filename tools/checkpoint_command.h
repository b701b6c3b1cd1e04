// `distflow checkpoint`: what a TensorFlow-format checkpoint holds.
//   distflow checkpoint list PREFIX            one line per tensor:
//                                              NAME<TAB>DTYPE<TAB>SHAPE
//   distflow checkpoint dump PREFIX NAME OUT   the tensor NAME as an .npy file
// PREFIX is what precedes ".index" (a SavedModel's "DIR/variables/variables",
// a Saver's "DIR/model.ckpt-N"). A tensor saved in slices (a partitioned
// variable) is listed and dumped whole. Thread-compatible.
#ifndef DISTFLOW_TOOLS_CHECKPOINT_COMMAND_H_
#define DISTFLOW_TOOLS_CHECKPOINT_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace distflow {

// Writes the tensors of the checkpoint at `prefix`, sorted by name.
absl::Status ListCheckpoint(const std::string& prefix, std::ostream& out);

// Writes tensor `name` of the checkpoint at `prefix` to `npy_path`.
// NotFound naming the tensor when there is none.
absl::Status DumpCheckpointTensor(const std::string& prefix, const std::string& name,
                                  const std::string& npy_path);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_CHECKPOINT_COMMAND_H_
