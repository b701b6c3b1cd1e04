// Conversion between Tensor and TensorProto, TensorFlow-compatible.
// Reading accepts tensor_content or the typed *_val fields; a typed field
// with fewer values than elements repeats its last value (one value fills
// the tensor), and an empty one means zeros. Writing uses tensor_content for
// numbers (raw little-endian bytes) and string_val for strings.
#ifndef DISTFLOW_FRAMEWORK_TENSOR_PROTO_H_
#define DISTFLOW_FRAMEWORK_TENSOR_PROTO_H_

#include <string>

#include "absl/status/status.h"
#include "distflow/framework/tensor.h"
#include "distflow/tensor.pb.h"

namespace distflow {

// InvalidArgument naming the problem for an unsupported dtype, a bad shape,
// a tensor_content of the wrong length or too many typed values.
absl::Status TensorFromProto(const TensorProto& proto, Tensor* out);

// Writes tensor_content (numbers) or string_val (strings).
void TensorToProto(const Tensor& tensor, TensorProto* proto);

// About the bytes TensorToProto's result holds, without building it: the
// raw bytes for numbers; for strings each value's bytes plus what one
// element of the repeated field costs (a pointer and a string object, and
// a heap block when the value does not fit in the object).
int64_t ProtoBytes(const Tensor& tensor);

// TensorToProto with ProtoBytes(tensor) held in the process's memory budget
// while the proto is built (the caller's message charges it afterwards, as
// a gRPC call's response does): ResourceExhausted naming `what`, the dtype
// and shape when it does not fit, and the proto left empty. Without a
// budget, TensorToProto.
absl::Status TensorToProtoInBudget(const Tensor& tensor, TensorProto* proto,
                                   const std::string& what);

// Writes the typed *_val fields instead of tensor_content.
void TensorToProtoField(const Tensor& tensor, TensorProto* proto);

// Fills `tensor`'s buffer from `bytes`, which must hold TotalBytes() bytes
// of little-endian elements. A bool is one byte, and any nonzero byte reads
// as true: a byte other than 0 or 1 is never left in a bool (reading one is
// undefined behaviour). REQUIRES: a non-string dtype.
void CopyRawBytesToTensor(const char* bytes, Tensor* tensor);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TENSOR_PROTO_H_
