// Loading a SavedModel as TensorFlow's C++ LoadSavedModel does, for the
// SavedModels TensorFlow 1.x writes: saved_model.pb (or saved_model.pbtxt)
// is read; the MetaGraphDef whose tag set is exactly `tags` is chosen; its
// graph goes into a new session; the variables are restored by running the
// saver's restore op with its filename tensor fed EXPORT_DIR/variables/
// variables (a checkpoint in TensorFlow's format, framework/tensor_bundle.h);
// then the init op runs (the main_op or legacy_init_op collection, or the
// __saved_model_init_op signature), with every asset's tensor fed the path
// of its file in EXPORT_DIR/assets/ (the asset_file_defs, or in models older
// than that field the AssetFileDefs of the "saved_model_assets" collection).
// An EXPORT_DIR holding numbered version directories instead of a model
// loads the highest version (version_dirs.h). A session bundle (the format
// before SavedModel: export.meta + the "export" checkpoint) loads the same
// way, its signatures converted (session_bundle.h), its variables restored
// from EXPORT_DIR/export and its init op the serving_init_op collection's.
//
// Errors: NotFound when EXPORT_DIR holds no saved_model.pb(txt) or no graph
// with the tag set (the message lists the tag sets there are);
// InvalidArgument naming the file when it is not a SavedModel; the
// session's errors (an op distflow lacks, a damaged checkpoint) annotated
// with the directory. Thread-safe (no shared state).
#ifndef DISTFLOW_SAVED_MODEL_LOADER_H_
#define DISTFLOW_SAVED_MODEL_LOADER_H_

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distflow/common_runtime/session.h"
#include "distflow/framework/tensor.h"
#include "distflow/meta_graph.pb.h"

namespace distflow {

// A loaded model: the session holding its graph and restored variables, and
// the MetaGraphDef it came from (signatures in meta_graph_def.signature_def).
struct SavedModelBundle {
  std::unique_ptr<Session> session;
  MetaGraphDef meta_graph_def;
  std::string export_dir;  // the directory loaded: a version's when given a base
};

absl::Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                            const std::string& export_dir, const std::set<std::string>& tags,
                            SavedModelBundle* bundle);

// What LoadSavedModel does, as steps for a caller that owns the session (the
// Python package's saved_model.loader.load imports the graph into its own):
// create or extend the session with meta_graph_def.graph_def(); when
// restore_op is set, run it with filename_tensor fed variables_prefix; when
// init_op is set, run it with asset_feeds. Reads the directory only; its
// errors are LoadSavedModel's.
struct SavedModelLoadPlan {
  std::string export_dir;  // the directory to load: a version's when given a base
  MetaGraphDef meta_graph_def;
  std::string restore_op;       // a node name; "" when there is nothing to restore
  std::string filename_tensor;  // the tensor restore_op reads the prefix from
  std::string variables_prefix;
  std::string init_op;  // a node name; "" when the model has none
  std::vector<std::pair<std::string, Tensor>> asset_feeds;
};
absl::StatusOr<SavedModelLoadPlan> PlanSavedModelLoad(const std::string& export_dir,
                                                      const std::set<std::string>& tags);

}  // namespace distflow

#endif  // DISTFLOW_SAVED_MODEL_LOADER_H_
