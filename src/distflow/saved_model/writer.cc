#include "distflow/saved_model/writer.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/saved_model.pb.h"

namespace distflow {
namespace {

namespace fs = std::filesystem;

// A variable as the saver's nodes need it.
struct SavedVariable {
  std::string node;
  std::string key;
  DataType dtype;
  bool resource;  // VarHandleOp (else VariableV2)
};

absl::StatusOr<std::vector<SavedVariable>> CheckVariables(const SavedModelExport& model) {
  absl::flat_hash_map<std::string, const NodeDef*> nodes;
  for (const NodeDef& n : model.graph.node()) nodes[n.name()] = &n;
  std::vector<SavedVariable> out;
  std::set<std::string> keys;
  for (const ExportedVariable& v : model.variables) {
    auto it = nodes.find(v.node);
    auto bad = [&v](absl::string_view why) {
      return errors::InvalidArgument("exported variable '", v.node, "' ", why);
    };
    if (it == nodes.end()) return bad("is not a node of the graph");
    const NodeDef& n = *it->second;
    if (n.op() != "VarHandleOp" && n.op() != "VariableV2") {
      return bad(absl::StrCat("is a ", n.op(), ", not a VarHandleOp or VariableV2"));
    }
    DataType dtype = DT_INVALID;
    DF_RETURN_IF_ERROR(GetNodeAttr(AttrSlice(n), "dtype", &dtype));
    if (v.value.dtype() != dtype) {
      return bad(absl::StrCat("holds ", DataTypeString(dtype), " but its value is ",
                              DataTypeString(v.value.dtype())));
    }
    PartialTensorShape shape;
    if (GetNodeAttr(AttrSlice(n), "shape", &shape).ok() &&
        !shape.IsCompatibleWith(v.value.shape())) {
      return bad(absl::StrCat("has shape ", shape.DebugString(), " but its value has shape ",
                              v.value.shape().DebugString()));
    }
    const std::string key = v.checkpoint_key.empty() ? v.node : v.checkpoint_key;
    if (!keys.insert(key).second) return bad(absl::StrCat("repeats checkpoint key '", key, "'"));
    out.push_back({v.node, key, dtype, n.op() == "VarHandleOp"});
  }
  return out;
}

// "save", or "save_1", ... when the graph already has nodes under it.
std::string SaverScope(const GraphDef& g) {
  for (int i = 0;; ++i) {
    const std::string scope = i == 0 ? "save" : absl::StrCat("save_", i);
    bool used = false;
    for (const NodeDef& n : g.node()) {
      used = used || n.name() == scope || absl::StartsWith(n.name(), scope + "/");
    }
    if (!used) return scope;
  }
}

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (std::string& i : inputs) n->add_input(std::move(i));
  return n;
}

NodeDef* AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = AddNode(g, name, "Const", {});
  AddNodeAttr("dtype", value.dtype(), n);
  AddNodeAttr("value", value, n);
  return n;
}

// Adds the saver's nodes for `vars` to `g` and says where they are.
SaverDef AddSaver(const std::vector<SavedVariable>& vars, GraphDef* g) {
  const std::string s = SaverScope(*g);
  AddConst(g, s + "/filename/input", Tensor::Scalar<std::string>("model"));
  NodeDef* filename =
      AddNode(g, s + "/filename", "PlaceholderWithDefault", {s + "/filename/input"});
  AddNodeAttr("dtype", DT_STRING, filename);
  AddNodeAttr("shape", TensorShape(), filename);
  Tensor names(DT_STRING, TensorShape({static_cast<int64_t>(vars.size())}));
  Tensor slices(DT_STRING, names.shape());
  DataTypeVector dtypes;
  for (size_t i = 0; i < vars.size(); ++i) {
    names.flat<std::string>()[i] = vars[i].key;
    dtypes.push_back(vars[i].dtype);
  }
  AddConst(g, s + "/tensor_names", names);
  AddConst(g, s + "/shape_and_slices", slices);

  NodeDef* restore = AddNode(g, s + "/RestoreV2", "RestoreV2",
                             {s + "/filename", s + "/tensor_names", s + "/shape_and_slices"});
  AddNodeAttr("dtypes", dtypes, restore);
  std::vector<std::string> assigns;
  std::vector<std::string> save_inputs = {s + "/filename", s + "/tensor_names",
                                          s + "/shape_and_slices"};
  for (size_t i = 0; i < vars.size(); ++i) {
    const SavedVariable& v = vars[i];
    const std::string restored = absl::StrCat(s, "/RestoreV2:", i);
    if (v.resource) {
      NodeDef* a = AddNode(g, absl::StrCat(s, "/AssignVariableOp_", i), "AssignVariableOp",
                           {v.node, restored});
      AddNodeAttr("dtype", v.dtype, a);
      assigns.push_back("^" + a->name());
      NodeDef* read = AddNode(g, absl::StrCat(s, "/Read_", i), "ReadVariableOp", {v.node});
      AddNodeAttr("dtype", v.dtype, read);
      save_inputs.push_back(read->name());
    } else {
      NodeDef* a = AddNode(g, absl::StrCat(s, "/Assign_", i), "Assign", {v.node, restored});
      AddNodeAttr("T", v.dtype, a);
      assigns.push_back("^" + a->name());
      save_inputs.push_back(v.node);
    }
  }
  AddNode(g, s + "/restore_all", "NoOp", assigns);
  NodeDef* save = AddNode(g, s + "/SaveV2", "SaveV2", save_inputs);
  AddNodeAttr("dtypes", dtypes, save);
  NodeDef* done =
      AddNode(g, s + "/control_dependency", "Identity", {s + "/filename", "^" + save->name()});
  AddNodeAttr("T", DT_STRING, done);

  SaverDef saver;
  saver.set_filename_tensor_name(s + "/filename:0");
  saver.set_save_tensor_name(s + "/control_dependency:0");
  saver.set_restore_op_name(s + "/restore_all");
  saver.set_max_to_keep(5);
  saver.set_keep_checkpoint_every_n_hours(10000);
  saver.set_version(SaverDef::V2);
  return saver;
}

absl::Status ErrorAt(const fs::path& path, absl::string_view what, const std::error_code& ec) {
  return errors::FailedPrecondition("cannot ", what, " '", path.string(), "': ", ec.message());
}

}  // namespace

absl::Status SaveSavedModel(const SavedModelExport& model, const std::string& export_dir) {
  const fs::path dir(export_dir);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return errors::AlreadyExists("export directory '", export_dir,
                                 "' already exists; a SavedModel version is written once");
  }
  DF_ASSIGN_OR_RETURN(const std::vector<SavedVariable> vars, CheckVariables(model));

  SavedModel saved;
  saved.set_saved_model_schema_version(1);
  MetaGraphDef* m = saved.add_meta_graphs();
  for (const std::string& tag : model.tags) m->mutable_meta_info_def()->add_tags(tag);
  *m->mutable_graph_def() = model.graph;
  if (!vars.empty()) *m->mutable_saver_def() = AddSaver(vars, m->mutable_graph_def());
  for (const auto& [key, sig] : model.signatures) (*m->mutable_signature_def())[key] = sig;

  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) return ErrorAt(parent, "make the directory", ec);
  const fs::path temp =
      parent / absl::StrCat(".", dir.filename().string(), ".tmp-", getpid(), "-", NowMicros());
  fs::create_directories(temp / "variables", ec);
  if (ec) return ErrorAt(temp, "make the directory", ec);
  absl::Status s = [&]() -> absl::Status {
    if (!vars.empty()) {
      BundleWriter writer((temp / "variables" / "variables").string());
      for (size_t i = 0; i < vars.size(); ++i) {
        DF_RETURN_IF_ERROR(writer.Add(vars[i].key, model.variables[i].value));
      }
      DF_RETURN_IF_ERROR(writer.Finish());
    }
    DF_RETURN_IF_ERROR(
        WriteStringToFileAtomic((temp / "saved_model.pb").string(), saved.SerializeAsString()));
    fs::rename(temp, dir, ec);
    if (ec) return ErrorAt(dir, "rename the finished export to", ec);
    return absl::OkStatus();
  }();
  if (!s.ok()) fs::remove_all(temp, ec);
  return s;
}

}  // namespace distflow
