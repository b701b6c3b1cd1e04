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
std::string Annotation(const std::string& export_dir, absl::string_view what) {
  return absl::StrCat("loading SavedModel '", export_dir, "': ", what, ": ");
}

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

// The plan for `export_dir` (already resolved to a model's directory).
absl::StatusOr<SavedModelLoadPlan> PlanFrom(const std::string& export_dir,
                                            const std::set<std::string>& tags) {
  SavedModelLoadPlan plan;
  plan.export_dir = export_dir;
  DF_ASSIGN_OR_RETURN(SavedModel model, ReadSavedModel(export_dir));
  DF_ASSIGN_OR_RETURN(const MetaGraphDef* chosen, FindMetaGraph(model, tags, export_dir));
  plan.meta_graph_def = *chosen;
  const MetaGraphDef& m = plan.meta_graph_def;
  auto assets = AssetFeeds(m, export_dir);
  DF_RETURN_IF_ERROR(errors::Annotate(assets.status(), Annotation(export_dir, "assets")));
  plan.asset_feeds = *std::move(assets);
  const bool bundle_dir = !HasSavedModelProto(export_dir) && IsSessionBundleDir(export_dir);
  std::string variables = absl::StrCat(export_dir, "/variables/variables");
  if (bundle_dir) {
    auto prefix = SessionBundleCheckpoint(export_dir);
    DF_RETURN_IF_ERROR(errors::Annotate(prefix.status(), Annotation(export_dir, "its checkpoint")));
    variables = *prefix;
  }
  const SaverDef& saver = m.saver_def();
  if (!saver.restore_op_name().empty() && FileExists(absl::StrCat(variables, ".index"))) {
    plan.restore_op = NodeOf(saver.restore_op_name());
    plan.filename_tensor = saver.filename_tensor_name();
    plan.variables_prefix = variables;
  }
  std::string init = CollectionNode(m, "saved_model_main_op");
  if (init.empty()) init = CollectionNode(m, "legacy_init_op");
  if (init.empty()) init = CollectionNode(m, "serving_init_op");  // session bundles
  auto sig = m.signature_def().find("__saved_model_init_op");
  if (init.empty() && sig != m.signature_def().end()) {
    auto out = sig->second.outputs().find("__saved_model_init_op");
    if (out != sig->second.outputs().end()) init = out->second.name();
  }
  plan.init_op = NodeOf(init);
  return plan;
}

}  // namespace

absl::StatusOr<SavedModelLoadPlan> PlanSavedModelLoad(const std::string& export_dir,
                                                      const std::set<std::string>& tags) {
  DF_ASSIGN_OR_RETURN(const std::string dir, ResolveSavedModelDir(export_dir));
  return PlanFrom(dir, tags);
}

absl::Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                            const std::string& export_dir, const std::set<std::string>& tags,
                            SavedModelBundle* bundle) {
  DF_ASSIGN_OR_RETURN(SavedModelLoadPlan plan, PlanSavedModelLoad(export_dir, tags));
  bundle->meta_graph_def = std::move(plan.meta_graph_def);
  bundle->export_dir = plan.export_dir;
  const std::string& dir = plan.export_dir;
  // As TensorFlow's C++ session: a signature's feeds are not held to the
  // shape their Placeholder declares (TF Serving's regress and classify feed
  // a batch of records to a placeholder half_plus_three declares scalar).
  SessionOptions options = session_options;
  options.config.set_feed_shapes_unchecked(true);
  DF_ASSIGN_OR_RETURN(bundle->session, NewSession(options));
  DF_RETURN_IF_ERROR(errors::Annotate(bundle->session->Create(bundle->meta_graph_def.graph_def()),
                                      Annotation(dir, "graph")));
  std::vector<Tensor> unused;
  if (!plan.restore_op.empty()) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        bundle->session->Run(
            run_options,
            {{plan.filename_tensor, Tensor::Scalar<std::string>(plan.variables_prefix)}}, {},
            {plan.restore_op}, &unused, nullptr),
        Annotation(dir, "restoring its variables")));
  }
  if (!plan.init_op.empty()) {
    DF_RETURN_IF_ERROR(errors::Annotate(
        bundle->session->Run(run_options, plan.asset_feeds, {}, {plan.init_op}, &unused, nullptr),
        Annotation(dir, absl::StrCat("running its init op '", plan.init_op, "'"))));
  }
  return absl::OkStatus();
}

}  // namespace distflow
