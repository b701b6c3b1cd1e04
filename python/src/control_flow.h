// Control flow for the Python package (control_flow.cc).
#ifndef DISTFLOW_PYTHON_CONTROL_FLOW_H_
#define DISTFLOW_PYTHON_CONTROL_FLOW_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterControlFlow(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_CONTROL_FLOW_H_
