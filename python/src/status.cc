#include "status.h"

#include <pybind11/pybind11.h>

#include <string>

namespace py = pybind11;

namespace distflow {
namespace python {

void ThrowIfError(const absl::Status& status) {
  if (status.ok()) return;
  // distflow/errors.py owns the code -> class table, so that Python code
  // and this extension raise the same classes.
  py::object make = py::module_::import("distflow.errors").attr("_error_from_status");
  py::object error = make(static_cast<int>(status.code()), std::string(status.message()));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

}  // namespace python
}  // namespace distflow
