// has_saved_model_proto(dir): version_dirs.h's HasSavedModelProto.
// saved_model_load_plan(export_dir, tags): the C++ PlanSavedModelLoad
// (saved_model/loader.h) as a dict for distflow.saved_model.loader.load,
// which imports the graph into the caller's session and runs the steps
// itself: "export_dir", "graph_def" (serialized), "meta_graph_def"
// (serialized), "signatures" {key: (method_name, {input key: (tensor name,
// dtype enum)}, {output key: ...})}, "restore_op", "filename_tensor",
// "variables_prefix", "init_op" and "asset_feeds" [(tensor name, path)].
#include "saved_model.h"

#include <pybind11/stl.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "distflow/saved_model/loader.h"
#include "distflow/saved_model/version_dirs.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

py::dict TensorInfos(const google::protobuf::Map<std::string, TensorInfo>& infos) {
  py::dict out;
  for (const auto& [key, info] : infos) {
    out[py::str(key)] = py::make_tuple(info.name(), static_cast<int>(info.dtype()));
  }
  return out;
}

}  // namespace

void RegisterSavedModel(py::module_& m) {
  m.def("has_saved_model_proto", [](const std::string& dir) { return HasSavedModelProto(dir); });
  m.def("saved_model_load_plan",
        [](const std::string& export_dir, const std::vector<std::string>& tags) {
          absl::StatusOr<SavedModelLoadPlan> plan = [&] {
            py::gil_scoped_release release;
            return PlanSavedModelLoad(export_dir, std::set<std::string>(tags.begin(), tags.end()));
          }();
          ThrowIfError(plan.status());
          const MetaGraphDef& meta = plan->meta_graph_def;
          py::dict signatures;
          for (const auto& [key, sig] : meta.signature_def()) {
            signatures[py::str(key)] = py::make_tuple(sig.method_name(), TensorInfos(sig.inputs()),
                                                      TensorInfos(sig.outputs()));
          }
          py::list assets;
          for (const auto& [name, tensor] : plan->asset_feeds) {
            assets.append(py::make_tuple(name, tensor.scalar<std::string>()));
          }
          py::dict out;
          out["export_dir"] = plan->export_dir;
          out["graph_def"] = py::bytes(meta.graph_def().SerializeAsString());
          out["meta_graph_def"] = py::bytes(meta.SerializeAsString());
          out["signatures"] = signatures;
          out["restore_op"] = plan->restore_op;
          out["filename_tensor"] = plan->filename_tensor;
          out["variables_prefix"] = plan->variables_prefix;
          out["init_op"] = plan->init_op;
          out["asset_feeds"] = assets;
          return out;
        });
}

}  // namespace python
}  // namespace distflow
