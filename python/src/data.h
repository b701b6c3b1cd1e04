// Input pipelines for the Python package (data.cc).
#ifndef DISTFLOW_PYTHON_DATA_H_
#define DISTFLOW_PYTHON_DATA_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterData(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_DATA_H_
