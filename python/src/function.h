// Graph functions for the Python package (function.cc).
#ifndef DISTFLOW_PYTHON_FUNCTION_H_
#define DISTFLOW_PYTHON_FUNCTION_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterFunction(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_FUNCTION_H_
