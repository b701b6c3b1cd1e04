// Gradients, variables, optimizers, Saver and checkpoint reading for the
// Python package (training.cc).
#ifndef DISTFLOW_PYTHON_TRAINING_H_
#define DISTFLOW_PYTHON_TRAINING_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterTraining(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_TRAINING_H_
