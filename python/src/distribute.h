// Servers, the parameter-server strategy and the cluster coordinator for
// the Python package (distribute.cc).
#ifndef DISTFLOW_PYTHON_DISTRIBUTE_H_
#define DISTFLOW_PYTHON_DISTRIBUTE_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterDistribute(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_DISTRIBUTE_H_
