// Floors for the Python session benchmark (bench_floors.cc).
#ifndef DISTFLOW_PYTHON_BENCH_FLOORS_H_
#define DISTFLOW_PYTHON_BENCH_FLOORS_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterBenchFloors(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_BENCH_FLOORS_H_
