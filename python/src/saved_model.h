// SavedModels as the Python package loads them (saved_model.cc).
#ifndef DISTFLOW_PYTHON_SAVED_MODEL_H_
#define DISTFLOW_PYTHON_SAVED_MODEL_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterSavedModel(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_SAVED_MODEL_H_
