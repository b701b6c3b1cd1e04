#include "distflow/saved_model/loader.h"

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/saved_model.pb.h"
#include "distflow/saved_model/reader.h"
#include "distflow/saved_model/session_bundle.h"
#include "distflow/saved_model/version_dirs.h"
#include "google/protobuf/any.pb.h"

namespace distflow {
namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// The node the init op collection `key` names, or "".
std::string CollectionNode(const MetaGraphDef& m, const std::string& key) {
  auto it = m.collection_def().find(key);
  if (it == m.collection_def().end() || it->second.node_list().value_size() == 0) return "";
  return it->second.node_list().value(0);
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// A tensor name's node ("init:0" -> "init"; "^init" -> "init").
std::string NodeOf(std::string name) {
  if (!name.empty() && name[0] == '^') name.erase(0, 1);
  return name.substr(0, name.find(':'));
}

// The model's assets: its asset_file_defs, or for models written before
// that field existed, the AssetFileDefs packed in the "saved_model_assets"
// collection. Each tensor is fed the path of its file under EXPORT_DIR/assets.
absl::StatusOr<Feeds> AssetFeeds(const MetaGraphDef& m, const std::string& export_dir) {
  std::vector<AssetFileDef> defs(m.asset_file_def().begin(), m.asset_file_def().end());
  auto legacy = m.collection_def().find("saved_model_assets");
  if (defs.empty() && legacy != m.collection_def().end()) {
    for (const std::string& bytes : legacy->second.any_list().value()) {
      google::protobuf::Any any;
      AssetFileDef def;
      if (!any.ParseFromString(bytes) || !absl::EndsWith(any.type_url(), ".AssetFileDef") ||
          !def.ParseFromString(any.value())) {
        return errors::InvalidArgument(
            "its saved_model_assets collection holds an entry that is not an AssetFileDef");
      }
      defs.push_back(std::move(def));
    }
  }
  Feeds feeds;
  for (const AssetFileDef& a : defs) {
    if (a.filename().empty() || a.filename().find("..") != std::string::npos ||
        a.filename()[0] == '/') {
      return errors::InvalidArgument("asset file name '", a.filename(),
                                     "' is not a plain name under assets/");
    }
    feeds.emplace_back(a.tensor_info().name(), Tensor::Scalar<std::string>(absl::StrCat(
                                                   export_dir, "/assets/", a.filename())));
  }
  return feeds;
}

absl::Status LoadSavedModelFrom(const SessionOptions& session_options,
                                const RunOptions& run_options, const std::string& export_dir,
                                const std::set<std::string>& tags, SavedModelBundle* bundle) {
  DF_ASSIGN_OR_RETURN(SavedModel model, ReadSavedModel(export_dir));
  DF_ASSIGN_OR_RETURN(const MetaGraphDef* chosen, FindMetaGraph(model, tags, export_dir));
  bundle->meta_graph_def = *chosen;
  bundle->export_dir = export_dir;
  const MetaGraphDef& m = bundle->meta_graph_def;
  auto annotate = [&export_dir](absl::string_view what) {
    return absl::StrCat("loading SavedModel '", export_dir, "': ", what, ": ");
  };
  // As TensorFlow's C++ session: a signature's feeds are not held to the
  // shape their Placeholder declares (TF Serving's regress and classify feed
  // a batch of records to a placeholder half_plus_three declares scalar).
  SessionOptions options = session_options;
  options.config.set_feed_shapes_unchecked(true);
  DF_ASSIGN_OR_RETURN(bundle->session, NewSession(options));
  DF_RETURN_IF_ERROR(errors::Annotate(bundle->session->Create(m.graph_def()), annotate("graph")));

  auto assets = AssetFeeds(m, export_dir);
  DF_RETURN_IF_ERROR(errors::Annotate(assets.status(), annotate("assets")));
  std::vector<Tensor> unused;
  const bool bundle_dir = !HasSavedModelProto(export_dir) && IsSessionBundleDir(export_dir);
  std::string variables = absl::StrCat(export_dir, "/variables/variables");
  if (bundle_dir) {
    auto prefix = SessionBundleCheckpoint(export_dir);
    DF_RETURN_IF_ERROR(errors::Annotate(prefix.status(), annotate("its checkpoint")));
    variables = *prefix;
  }
  const SaverDef& saver = m.saver_def();
  if (!saver.restore_op_name().empty() && FileExists(absl::StrCat(variables, ".index"))) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        bundle->session->Run(
            run_options, {{saver.filename_tensor_name(), Tensor::Scalar<std::string>(variables)}},
            {}, {NodeOf(saver.restore_op_name())}, &unused, nullptr),
        annotate("restoring its variables")));
  }
  std::string init = CollectionNode(m, "saved_model_main_op");
  if (init.empty()) init = CollectionNode(m, "legacy_init_op");
  if (init.empty()) init = CollectionNode(m, "serving_init_op");  // session bundles
  auto sig = m.signature_def().find("__saved_model_init_op");
  if (init.empty() && sig != m.signature_def().end()) {
    auto out = sig->second.outputs().find("__saved_model_init_op");
    if (out != sig->second.outputs().end()) init = out->second.name();
  }
  if (!init.empty()) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        bundle->session->Run(run_options, *assets, {}, {NodeOf(init)}, &unused, nullptr),
        annotate(absl::StrCat("running its init op '", init, "'"))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                            const std::string& export_dir, const std::set<std::string>& tags,
                            SavedModelBundle* bundle) {
  DF_ASSIGN_OR_RETURN(const std::string dir, ResolveSavedModelDir(export_dir));
  return LoadSavedModelFrom(session_options, run_options, dir, tags, bundle);
}

}  // namespace distflow
