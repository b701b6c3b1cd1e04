#include "distflow/saved_model/loader.h"

#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/saved_model.pb.h"
#include "google/protobuf/text_format.h"

namespace distflow {
namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir) {
  SavedModel model;
  const std::string pb = absl::StrCat(export_dir, "/saved_model.pb");
  absl::StatusOr<std::string> bytes = ReadFileToString(pb);
  if (bytes.ok()) {
    if (!model.ParseFromString(*bytes)) {
      return errors::InvalidArgument(pb, " is not a SavedModel (it does not parse)");
    }
    return model;
  }
  if (!absl::IsNotFound(bytes.status())) return bytes.status();
  const std::string pbtxt = absl::StrCat(export_dir, "/saved_model.pbtxt");
  absl::StatusOr<std::string> text = ReadFileToString(pbtxt);
  if (absl::IsNotFound(text.status())) {
    return errors::NotFound("no SavedModel in '", export_dir,
                            "': it has neither saved_model.pb nor saved_model.pbtxt");
  }
  if (!text.ok()) return text.status();
  if (!google::protobuf::TextFormat::ParseFromString(*text, &model)) {
    return errors::InvalidArgument(pbtxt, " is not a SavedModel in text format");
  }
  return model;
}

std::string TagSet(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  return absl::StrCat("{", absl::StrJoin(std::set<std::string>(tags.begin(), tags.end()), ", "),
                      "}");
}

// The node the init op collection `key` names, or "".
std::string CollectionNode(const MetaGraphDef& m, const std::string& key) {
  auto it = m.collection_def().find(key);
  if (it == m.collection_def().end() || it->second.node_list().value_size() == 0) return "";
  return it->second.node_list().value(0);
}

// A tensor name's node ("init:0" -> "init"; "^init" -> "init").
std::string NodeOf(std::string name) {
  if (!name.empty() && name[0] == '^') name.erase(0, 1);
  return name.substr(0, name.find(':'));
}

}  // namespace

absl::Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                            const std::string& export_dir, const std::set<std::string>& tags,
                            SavedModelBundle* bundle) {
  DF_ASSIGN_OR_RETURN(SavedModel model, ReadSavedModel(export_dir));
  const MetaGraphDef* chosen = nullptr;
  std::vector<std::string> available;
  for (const MetaGraphDef& m : model.meta_graphs()) {
    const auto& t = m.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == tags) chosen = &m;
    available.push_back(TagSet(t));
  }
  if (chosen == nullptr) {
    return errors::NotFound(
        "SavedModel '", export_dir, "' has no graph with tags {", absl::StrJoin(tags, ", "),
        "}; its tag sets: ", available.empty() ? "none" : absl::StrJoin(available, " "));
  }
  bundle->meta_graph_def = *chosen;
  const MetaGraphDef& m = bundle->meta_graph_def;
  auto annotate = [&export_dir](absl::string_view what) {
    return absl::StrCat("loading SavedModel '", export_dir, "': ", what, ": ");
  };
  DF_ASSIGN_OR_RETURN(bundle->session, NewSession(session_options));
  DF_RETURN_IF_ERROR(errors::Annotate(bundle->session->Create(m.graph_def()), annotate("graph")));

  Feeds assets;
  for (const AssetFileDef& a : m.asset_file_def()) {
    assets.emplace_back(a.tensor_info().name(), Tensor::Scalar<std::string>(absl::StrCat(
                                                    export_dir, "/assets/", a.filename())));
  }
  std::vector<Tensor> unused;
  const std::string variables = absl::StrCat(export_dir, "/variables/variables");
  const SaverDef& saver = m.saver_def();
  if (!saver.restore_op_name().empty() &&
      std::filesystem::exists(absl::StrCat(variables, ".index"))) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        bundle->session->Run(
            run_options, {{saver.filename_tensor_name(), Tensor::Scalar<std::string>(variables)}},
            {}, {NodeOf(saver.restore_op_name())}, &unused, nullptr),
        annotate("restoring its variables")));
  }
  std::string init = CollectionNode(m, "saved_model_main_op");
  if (init.empty()) init = CollectionNode(m, "legacy_init_op");
  auto sig = m.signature_def().find("__saved_model_init_op");
  if (init.empty() && sig != m.signature_def().end()) {
    auto out = sig->second.outputs().find("__saved_model_init_op");
    if (out != sig->second.outputs().end()) init = out->second.name();
  }
  if (!init.empty()) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        bundle->session->Run(run_options, assets, {}, {NodeOf(init)}, &unused, nullptr),
        annotate(absl::StrCat("running its init op '", init, "'"))));
  }
  return absl::OkStatus();
}

}  // namespace distflow
