#include "distflow/serving/loaded_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"

namespace distflow {
namespace {

std::vector<std::string> SortedKeys(const google::protobuf::Map<std::string, TensorInfo>& map) {
  std::vector<std::string> keys;
  for (const auto& [key, info] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// For a failed call: which inputs do not have the shape their signature
// records, as " (input 'x' has shape [1,5], the signature's is
// [?,28,28,1])", or "" when all do. Shapes are not refused before the call:
// exporters often record the shape of the example they traced, and
// TensorFlow Serving feeds what it is given, so the graph's kernels decide.
std::string ShapeHint(const SignatureDef& signature, const NamedTensors& inputs) {
  std::vector<std::string> hints;
  for (const auto& [key, t] : inputs) {
    const TensorInfo& info = signature.inputs().at(key);
    PartialTensorShape expected;
    if (!info.has_tensor_shape() ||
        !PartialTensorShape::FromProto(info.tensor_shape(), &expected).ok() ||
        expected.IsCompatibleWith(t.shape())) {
      continue;
    }
    hints.push_back(absl::StrCat("input '", key, "' has shape ", t.shape().DebugString(),
                                 ", the signature's is ", expected.DebugString()));
  }
  return hints.empty() ? "" : absl::StrCat(" (", absl::StrJoin(hints, "; "), ")");
}

absl::Status CheckInputs(const std::string& signature_name, const SignatureDef& signature,
                         const NamedTensors& inputs) {
  for (const auto& [key, t] : inputs) {
    if (!signature.inputs().contains(key)) {
      return errors::InvalidArgument(
          "signature '", signature_name, "' has no input '", key,
          "' (its inputs: ", absl::StrJoin(SortedKeys(signature.inputs()), ", "), ")");
    }
  }
  if (inputs.size() != static_cast<size_t>(signature.inputs_size())) {
    std::vector<std::string> missing;
    for (const std::string& key : SortedKeys(signature.inputs())) {
      const bool given = std::any_of(inputs.begin(), inputs.end(),
                                     [&](const auto& in) { return in.first == key; });
      if (!given) missing.push_back(absl::StrCat("'", key, "'"));
    }
    if (!missing.empty()) {
      return errors::InvalidArgument("signature '", signature_name, "' needs input",
                                     missing.size() > 1 ? "s " : " ", absl::StrJoin(missing, ", "),
                                     ", which the request lacks");
    }
    return errors::InvalidArgument("the request gives an input of signature '", signature_name,
                                   "' more than once");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<LoadedModel>> LoadedModel::Load(const std::string& name,
                                                               int64_t version,
                                                               const std::string& export_dir,
                                                               const LoadedModelOptions& options) {
  std::shared_ptr<LoadedModel> model(new LoadedModel(name, version));
  DF_RETURN_IF_ERROR(
      LoadSavedModel(SessionOptions(), RunOptions(), export_dir, {"serve"}, &model->bundle_));
  if (options.batching.has_value()) {
    DF_RETURN_IF_ERROR(ValidateBatchingOptions(*options.batching));
    LoadedModel* self = model.get();
    model->batcher_ = std::make_unique<BatchScheduler>(
        *options.batching,
        [self](const std::string& signature_name, const NamedTensors& inputs,
               const std::vector<std::string>& output_keys, absl::Time deadline,
               std::vector<Tensor>* outputs) {
          const SignatureDef& signature =
              self->bundle_.meta_graph_def.signature_def().at(signature_name);
          return self->RunSession(signature, inputs, output_keys, deadline, outputs);
        },
        [observer = options.batch_observer, name](const std::string& signature, int64_t rows) {
          if (observer) observer(name, signature, rows);
        });
  }
  return model;
}

LoadedModel::~LoadedModel() {
  // Batches still running call into the session: stop them first.
  batcher_.reset();
  if (bundle_.session != nullptr) bundle_.session->Close().IgnoreError();
}

absl::StatusOr<const SignatureDef*> LoadedModel::Signature(
    const std::string& signature_name) const {
  const std::string& name = signature_name.empty() ? kDefaultServingSignature : signature_name;
  const auto& signatures = bundle_.meta_graph_def.signature_def();
  auto it = signatures.find(name);
  if (it == signatures.end()) {
    std::vector<std::string> names;
    for (const auto& [key, sig] : signatures) {
      if (key != "__saved_model_init_op") names.push_back(key);
    }
    std::sort(names.begin(), names.end());
    return errors::NotFound("model '", name_, "' version ", version_, " has no signature '", name,
                            "' (its signatures: ", absl::StrJoin(names, ", "), ")");
  }
  return &it->second;
}

absl::Status LoadedModel::RunSignature(const std::string& signature_name,
                                       const NamedTensors& inputs,
                                       std::vector<std::string>* output_keys, absl::Time deadline,
                                       std::vector<Tensor>* outputs) {
  DF_ASSIGN_OR_RETURN(const SignatureDef* signature, Signature(signature_name));
  const std::string& name = signature_name.empty() ? kDefaultServingSignature : signature_name;
  DF_RETURN_IF_ERROR(CheckInputs(name, *signature, inputs));
  if (output_keys->empty()) {
    *output_keys = SortedKeys(signature->outputs());
  } else {
    for (const std::string& key : *output_keys) {
      if (!signature->outputs().contains(key)) {
        return errors::InvalidArgument(
            "signature '", name, "' has no output '", key,
            "' (its outputs: ", absl::StrJoin(SortedKeys(signature->outputs()), ", "), ")");
      }
    }
  }
  absl::Status s = batcher_ != nullptr && batcher_->CanBatch(inputs)
                       ? batcher_->Run(name, inputs, *output_keys, deadline, outputs)
                       : RunSession(*signature, inputs, *output_keys, deadline, outputs);
  if (s.code() == absl::StatusCode::kInvalidArgument) {
    const std::string hint = ShapeHint(*signature, inputs);
    if (!hint.empty()) s = absl::InvalidArgumentError(absl::StrCat(s.message(), hint));
  }
  return s;
}

absl::Status LoadedModel::RunSession(const SignatureDef& signature, const NamedTensors& inputs,
                                     const std::vector<std::string>& output_keys,
                                     absl::Time deadline, std::vector<Tensor>* outputs) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    return errors::DeadlineExceeded("the request's deadline passed before its session call");
  }
  RunOptions run_options;
  run_options.set_timeout_in_ms(std::max<int64_t>(1, absl::ToInt64Milliseconds(left)));
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.reserve(inputs.size());
  for (const auto& [key, t] : inputs) feeds.emplace_back(signature.inputs().at(key).name(), t);
  std::vector<std::string> fetches;
  fetches.reserve(output_keys.size());
  for (const std::string& key : output_keys) fetches.push_back(signature.outputs().at(key).name());
  return bundle_.session->Run(run_options, feeds, fetches, {}, outputs, nullptr);
}

}  // namespace distflow
