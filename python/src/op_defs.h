// The op registry as Python sees it (op_defs.cc).
#ifndef DISTFLOW_PYTHON_OP_DEFS_H_
#define DISTFLOW_PYTHON_OP_DEFS_H_

#include <pybind11/pybind11.h>

namespace distflow {
namespace python {

void RegisterOpDefs(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_OP_DEFS_H_
