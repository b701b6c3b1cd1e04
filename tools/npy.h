// NumPy .npy files and Tensors. Read (format versions 1 and 2) and written
// (version 1): little-endian float32/float64 ('<f4', '<f8'), int8/16/32/64
// ('|i1', '<i2', '<i4', '<i8'), uint8/16/32/64 ('|u1', '<u2', '<u4', '<u8')
// and bool ('|b1'), C order; strings are written as fixed-width bytes
// ('|S<n>', n the longest; NumPy drops trailing NUL bytes when it reads
// them). Every error is InvalidArgument (or the file system's NotFound)
// naming the file and what is wrong. Pure functions; thread-safe.
#ifndef DISTFLOW_TOOLS_NPY_H_
#define DISTFLOW_TOOLS_NPY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/tensor.h"

namespace distflow {

// Parses the bytes of an .npy file; `name` is used in error messages.
absl::StatusOr<Tensor> ParseNpy(absl::string_view data, const std::string& name);
absl::StatusOr<Tensor> ReadNpyFile(const std::string& path);

// The bytes of an .npy file holding `tensor`. Unimplemented for a dtype
// NumPy has no equivalent of (bfloat16, resource).
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);
// Writes `tensor` to `path` atomically.
absl::Status WriteNpyFile(const Tensor& tensor, const std::string& path);

// Writes tensors[i] to DIR/NAME.npy for names[i], the directory made when
// missing; in a name, characters other than letters, digits, '.', '-' and
// '_' become '_' ("y:0" -> "y_0.npy"). InvalidArgument naming the directory
// when it cannot be made. REQUIRES: names.size() == tensors.size().
absl::Status WriteNpyFiles(const std::string& dir, const std::vector<std::string>& names,
                           const std::vector<Tensor>& tensors);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_NPY_H_
