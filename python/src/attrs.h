// Attr values between Python and AttrValue, by the type the OpDef declares
// ("int", "list(type)", "shape", "tensor", "func", ...). Python writes
// dtypes as their DataType enum value, shapes as None (unknown rank) or a
// sequence of ints and Nones, tensors as anything NumpyToTensor takes, and
// functions by name. REQUIRES: the GIL is held.
#ifndef DISTFLOW_PYTHON_ATTRS_H_
#define DISTFLOW_PYTHON_ATTRS_H_

#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "distflow/attr_value.pb.h"

namespace distflow {
namespace python {

// InvalidArgument naming the attr and the expected type when `value` does
// not convert.
absl::Status AttrValueFromPython(absl::string_view attr_name, absl::string_view type,
                                 pybind11::handle value, AttrValue* out);

// The Python value of `value` (the inverse of AttrValueFromPython).
pybind11::object AttrValueToPython(const AttrValue& value);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_ATTRS_H_
