// PySession: distflow._distflow.Session, a ClientSession over a PyGraph's
// scope ("" runs in this process, "grpc://host:port" on a cluster). Nodes
// Python adds after the session was made are sent before the next run.
// Run releases the GIL while the step runs, so other Python threads (and
// the coordinator's callbacks) go on; feeds are numpy arrays wrapped without
// a copy where their layout allows (numpy_tensor.h) and fetches come back as
// arrays over the fetched tensors' buffers.
#ifndef DISTFLOW_PYTHON_SESSION_H_
#define DISTFLOW_PYTHON_SESSION_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "distflow/cc/client_session.h"
#include "graph.h"

namespace distflow {
namespace python {

class PySession {
 public:
  // Raises the distflow.errors class of the failure when the target cannot
  // be reached or named.
  PySession(std::shared_ptr<PyGraph> graph, const std::string& target,
            const std::string& config_proto);

  const ClientSession& client() const { return *client_; }
  PyGraph& graph() const { return *graph_; }

  // feeds: [(id, index, value)]; fetches: [(id, index)]; targets: [id].
  // Returns the fetched arrays, in order, and the serialized RunMetadata
  // (empty bytes unless trace_level asked for step stats).
  pybind11::tuple Run(const pybind11::list& feeds, const pybind11::list& fetches,
                      const pybind11::list& targets, int64_t timeout_in_ms, int trace_level);
  void Close();

 private:
  std::shared_ptr<PyGraph> graph_;
  std::unique_ptr<ClientSession> client_;
};

void RegisterSession(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_SESSION_H_
