#include "distflow/saved_model/session_bundle.h"

#include <filesystem>
#include <limits>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/types.h"
#include "distflow/session_bundle.pb.h"
#include "google/protobuf/any.pb.h"

namespace distflow {
namespace {

constexpr char kSignaturesKey[] = "serving_signatures";
constexpr char kRegressMethod[] = "tensorflow/serving/regress";
constexpr char kClassifyMethod[] = "tensorflow/serving/classify";
constexpr char kPredictMethod[] = "tensorflow/serving/predict";
constexpr char kDefaultKey[] = "serving_default";

// The TensorInfo of `tensor` ("node:i"): its name, and the dtype (and shape
// when recorded) of that output of its node in `graph`. Unknown nodes or ops
// leave the dtype unset; loading the graph reports them.
TensorInfo InfoFor(const GraphDef& graph, const std::string& tensor) {
  TensorInfo info;
  info.set_name(tensor);
  const size_t colon = tensor.rfind(':');
  const std::string node = tensor.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos && !absl::SimpleAtoi(tensor.substr(colon + 1), &index)) index = 0;
  for (const NodeDef& n : graph.node()) {
    if (n.name() != node) continue;
    const OpDef* op = nullptr;
    DataTypeVector ins, outs;
    if (OpRegistry::Global()->LookUpOpDef(n.op(), &op).ok() &&
        InOutTypesForNode(n, *op, &ins, &outs).ok() && index >= 0 &&
        static_cast<size_t>(index) < outs.size()) {
      info.set_dtype(BaseType(outs[index]));
    }
    auto shapes = n.attr().find("_output_shapes");
    if (shapes != n.attr().end() && index >= 0 && index < shapes->second.list().shape_size()) {
      *info.mutable_tensor_shape() = shapes->second.list().shape(index);
    }
    break;
  }
  return info;
}

void AddRegression(const GraphDef& g, const RegressionSignature& r, SignatureDef* def) {
  def->set_method_name(kRegressMethod);
  (*def->mutable_inputs())["inputs"] = InfoFor(g, r.input().tensor_name());
  (*def->mutable_outputs())["outputs"] = InfoFor(g, r.output().tensor_name());
}

void AddClassification(const GraphDef& g, const ClassificationSignature& c, SignatureDef* def) {
  def->set_method_name(kClassifyMethod);
  (*def->mutable_inputs())["inputs"] = InfoFor(g, c.input().tensor_name());
  if (!c.classes().tensor_name().empty()) {
    (*def->mutable_outputs())["classes"] = InfoFor(g, c.classes().tensor_name());
  }
  if (!c.scores().tensor_name().empty()) {
    (*def->mutable_outputs())["scores"] = InfoFor(g, c.scores().tensor_name());
  }
}

// Adds the signature `s` as `name` when it is a regression or a
// classification; generic ones are handled by the caller.
void AddTyped(const GraphDef& g, const std::string& name, const Signature& s, MetaGraphDef* m) {
  if (s.has_regression_signature()) {
    AddRegression(g, s.regression_signature(), &(*m->mutable_signature_def())[name]);
  } else if (s.has_classification_signature()) {
    AddClassification(g, s.classification_signature(), &(*m->mutable_signature_def())[name]);
  }
}

absl::Status ConvertSignatures(const std::string& file, MetaGraphDef* m) {
  auto it = m->collection_def().find(kSignaturesKey);
  if (it == m->collection_def().end()) return absl::OkStatus();  // a bundle without signatures
  if (it->second.any_list().value_size() != 1) {
    return errors::InvalidArgument(file, ": its ", kSignaturesKey,
                                   " collection must hold exactly one Signatures, not ",
                                   it->second.any_list().value_size());
  }
  google::protobuf::Any any;
  Signatures sigs;
  if (!any.ParseFromString(it->second.any_list().value(0)) ||
      !absl::EndsWith(any.type_url(), ".Signatures") || !sigs.ParseFromString(any.value())) {
    return errors::InvalidArgument(file, ": its ", kSignaturesKey,
                                   " collection does not hold a Signatures proto");
  }
  const GraphDef& g = m->graph_def();
  if (sigs.has_default_signature()) AddTyped(g, kDefaultKey, sigs.default_signature(), m);
  const auto& named = sigs.named_signatures();
  auto inputs = named.find("inputs");
  auto outputs = named.find("outputs");
  if (inputs != named.end() && outputs != named.end() && inputs->second.has_generic_signature() &&
      outputs->second.has_generic_signature()) {
    const std::string key = m->signature_def().count(kDefaultKey) > 0 ? "predict" : kDefaultKey;
    SignatureDef& def = (*m->mutable_signature_def())[key];
    def.set_method_name(kPredictMethod);
    for (const auto& [alias, binding] : inputs->second.generic_signature().map()) {
      (*def.mutable_inputs())[alias] = InfoFor(g, binding.tensor_name());
    }
    for (const auto& [alias, binding] : outputs->second.generic_signature().map()) {
      (*def.mutable_outputs())[alias] = InfoFor(g, binding.tensor_name());
    }
  }
  for (const auto& [name, s] : named) {
    if (m->signature_def().count(name) == 0) AddTyped(g, name, s, m);
  }
  return absl::OkStatus();
}

// The bundle's assets ("serving_assets": AssetFiles in Anys) as the
// AssetFileDefs a SavedModel lists.
absl::Status ConvertAssets(const std::string& file, MetaGraphDef* m) {
  auto it = m->collection_def().find("serving_assets");
  if (it == m->collection_def().end()) return absl::OkStatus();
  for (const std::string& bytes : it->second.any_list().value()) {
    google::protobuf::Any any;
    AssetFile asset;
    if (!any.ParseFromString(bytes) || !absl::EndsWith(any.type_url(), ".AssetFile") ||
        !asset.ParseFromString(any.value())) {
      return errors::InvalidArgument(file,
                                     ": its serving_assets collection holds an entry that is "
                                     "not an AssetFile");
    }
    AssetFileDef* def = m->add_asset_file_def();
    def->mutable_tensor_info()->set_name(asset.tensor_binding().tensor_name());
    def->set_filename(asset.filename());
  }
  return absl::OkStatus();
}

bool Exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

}  // namespace

bool IsSessionBundleDir(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(std::filesystem::path(dir) / "export.meta", ec);
}

absl::StatusOr<SavedModel> ReadSessionBundle(const std::string& dir) {
  const std::string file = absl::StrCat(dir, "/export.meta");
  DF_ASSIGN_OR_RETURN(const std::string bytes, ReadFileToString(file));
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return errors::InvalidArgument(file, " is larger than a protocol buffer may be (2 GiB)");
  }
  SavedModel model;
  MetaGraphDef* m = model.add_meta_graphs();
  if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      m->graph_def().node_size() == 0) {
    return errors::InvalidArgument(file, " is not a session bundle's MetaGraphDef");
  }
  m->mutable_meta_info_def()->clear_tags();
  m->mutable_meta_info_def()->add_tags("serve");
  DF_RETURN_IF_ERROR(ConvertSignatures(file, m));
  DF_RETURN_IF_ERROR(ConvertAssets(file, m));
  return model;
}

absl::StatusOr<std::string> SessionBundleCheckpoint(const std::string& dir) {
  const std::filesystem::path base(dir);
  if (Exists(base / "export.index")) return absl::StrCat(dir, "/export");
  std::error_code ec;
  for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (absl::StartsWith(name, "export-") && absl::StrContains(name, "-of-")) {
      return errors::Unimplemented("session bundle '", dir, "' holds a V1 (sharded, ", name,
                                   ") checkpoint, which distflow does not read; re-save it "
                                   "with TensorFlow's V2 saver (export.index + export.data-*)");
    }
  }
  return errors::NotFound("session bundle '", dir, "' holds no checkpoint (export.index)");
}

}  // namespace distflow
