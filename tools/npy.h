// Reading NumPy .npy files (format versions 1 and 2) into Tensors: little-
// endian float32/float64/int32/int64 ('<f4', '<f8', '<i4', '<i8'), uint8
// ('|u1') and bool ('|b1'), C order. Every error is InvalidArgument (or the
// file system's NotFound) naming the file and what is wrong. Pure functions;
// thread-safe.
#ifndef DISTFLOW_TOOLS_NPY_H_
#define DISTFLOW_TOOLS_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/tensor.h"

namespace distflow {

// Parses the bytes of an .npy file; `name` is used in error messages.
absl::StatusOr<Tensor> ParseNpy(absl::string_view data, const std::string& name);
absl::StatusOr<Tensor> ReadNpyFile(const std::string& path);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_NPY_H_
