// Tensors as numpy arrays and back, without copying where the layouts agree.
//  - TensorToNumpy: the array's data is the tensor's buffer; the array owns
//    a reference to it (a capsule holding a Tensor), so the buffer lives as
//    long as the array. Strings become an object array of bytes (a copy).
//  - NumpyToTensor: a C-contiguous array of the wanted dtype becomes a
//    tensor over the array's memory (the tensor holds a reference to the
//    array); anything else (another dtype, strides, a scalar, nested lists)
//    is converted by numpy once and then wrapped the same way.
// The tensor's reference to an array may be dropped on a runtime thread that
// does not hold the GIL: it is queued, and released by the next conversion
// or session call (DrainReleasedArrays), as only a GIL holder may.
// REQUIRES for every function: the GIL is held.
#ifndef DISTFLOW_PYTHON_NUMPY_TENSOR_H_
#define DISTFLOW_PYTHON_NUMPY_TENSOR_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/types.h"

namespace distflow {
namespace python {

// The numpy dtype of `dtype`; InvalidArgument naming it when numpy has none.
absl::Status NumpyDtype(DataType dtype, pybind11::dtype* out);
// The DataType of a numpy dtype; InvalidArgument naming it when distflow
// has none.
absl::Status DataTypeOfNumpy(const pybind11::dtype& dtype, DataType* out);

pybind11::object TensorToNumpy(const Tensor& tensor);

// Converts `value` (a numpy array, a scalar, nested lists) to a tensor of
// `dtype` (DT_INVALID: numpy's choice). InvalidArgument, saying what the
// value was and what was wanted, when numpy cannot convert it.
absl::Status NumpyToTensor(pybind11::handle value, DataType dtype, Tensor* out);

// Releases the arrays that tensors have let go of since the last call.
void DrainReleasedArrays();

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_NUMPY_TENSOR_H_
