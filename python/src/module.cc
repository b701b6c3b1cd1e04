// distflow._distflow: the extension module under the Python package
// distflow (python/distflow/). It holds the C++ runtime itself: graphs,
// sessions, the op registry, training builders; the Python modules give
// them TensorFlow 1's names.
#include <pybind11/pybind11.h>

#include "bench_floors.h"
#include "control_flow.h"
#include "data.h"
#include "distribute.h"
#include "function.h"
#include "graph.h"
#include "interrupt.h"
#include "op_defs.h"
#include "saved_model.h"
#include "session.h"
#include "training.h"

PYBIND11_MODULE(_distflow, m) {
  m.doc() = "distflow's C++ runtime (use the distflow package, not this module)";
  distflow::python::RegisterGraph(m);
  distflow::python::RegisterData(m);
  distflow::python::RegisterDistribute(m);
  distflow::python::RegisterOpDefs(m);
  distflow::python::RegisterSession(m);
  distflow::python::RegisterTraining(m);
  distflow::python::RegisterControlFlow(m);
  distflow::python::RegisterSavedModel(m);
  distflow::python::RegisterFunction(m);
  distflow::python::RegisterInterrupt(m);
  distflow::python::RegisterBenchFloors(m);
}
