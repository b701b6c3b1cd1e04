// Writing a SavedModel as TensorFlow's SavedModelBuilder does, so that
// LoadSavedModel here and TensorFlow's loader read it back:
//   EXPORT_DIR/saved_model.pb      a SavedModel with one MetaGraphDef: the
//                                  graph, the tags, the signatures and a
//                                  SaverDef whose restore op reads the
//                                  variables from the prefix fed to its
//                                  filename tensor
//   EXPORT_DIR/variables/variables.{index,data-00000-of-00001}
//                                  the variables' values, a checkpoint in
//                                  TensorFlow's format (tensor_bundle.h)
// The graph gets the saver's nodes under "save/" (or "save_1/", ... when the
// graph has nodes there): RestoreV2 into each variable (AssignVariableOp for
// a VarHandleOp, Assign for a VariableV2) grouped by "save/restore_all", and
// SaveV2 of every variable. Everything is written into a temporary directory
// beside EXPORT_DIR and renamed into place, so a server watching the base
// directory never sees half a version. Thread-compatible.
#ifndef DISTFLOW_SAVED_MODEL_WRITER_H_
#define DISTFLOW_SAVED_MODEL_WRITER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distflow/framework/tensor.h"
#include "distflow/meta_graph.pb.h"

namespace distflow {

// A variable of the exported graph and the value it is saved with.
struct ExportedVariable {
  std::string node;            // its VarHandleOp or VariableV2 node
  Tensor value;                // of the node's dtype (and shape, when it declares one)
  std::string checkpoint_key;  // its key in variables/; empty: the node's name
};

struct SavedModelExport {
  GraphDef graph;
  std::vector<ExportedVariable> variables;
  std::map<std::string, SignatureDef> signatures;  // by key, e.g. "serving_default"
  std::set<std::string> tags = {"serve"};
};

// Writes `model` to `export_dir`. AlreadyExists when `export_dir` exists;
// InvalidArgument naming the variable when its node is missing, is not a
// variable, or its value's dtype or shape does not match the node's; the
// file system's errors naming the path.
absl::Status SaveSavedModel(const SavedModelExport& model, const std::string& export_dir);

}  // namespace distflow

#endif  // DISTFLOW_SAVED_MODEL_WRITER_H_
