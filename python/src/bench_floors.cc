// The floors bench/python_session_bench.py compares Session.run with, timed
// in C++ in the same process: the same fetch through ClientSession::Run,
// and a pybind11 call that does nothing.
#include <pybind11/pybind11.h>

#include <chrono>
#include <vector>

#include "distflow/cc/client_session.h"
#include "session.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {

void RegisterBenchFloors(py::module_& m) {
  m.def("_noop", [] {});
  // Seconds per ClientSession::Run of output `index` of node `id`, over
  // `iterations` runs (after one warm-up run), without the GIL.
  m.def(
      "_time_client_session_run", [](const PySession& session, int id, int index, int iterations) {
        const Output fetch = session.graph().OutputOf(id, index);
        std::vector<Tensor> outputs;
        ThrowIfError(session.client().Run({fetch}, &outputs));
        absl::Status s;
        double seconds = 0;
        {
          py::gil_scoped_release release;
          const auto start = std::chrono::steady_clock::now();
          for (int i = 0; i < iterations && s.ok(); ++i)
            s = session.client().Run({fetch}, &outputs);
          seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        ThrowIfError(s);
        return seconds / iterations;
      });
}

}  // namespace python
}  // namespace distflow
