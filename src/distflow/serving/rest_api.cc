#include "distflow/serving/rest_api.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "distflow/core/status.h"
#include "distflow/serving/example_json.h"
#include "distflow/serving/predict_json.h"
#include "distflow/serving/tensor_json.h"

namespace distflow {
namespace {

constexpr char kModelsPrefix[] = "/v1/models/";
constexpr char kClassifyMethod[] = "tensorflow/serving/classify";
constexpr char kRegressMethod[] = "tensorflow/serving/regress";

// What a /v1/models/... path asks for.
struct ModelPath {
  std::string model;
  std::optional<int64_t> version;
  std::string label;
  // "status", "metadata", "predict", "classify" or "regress".
  std::string verb;
};

absl::StatusOr<ModelPath> ParseModelPath(absl::string_view method, absl::string_view path) {
  const absl::string_view full = path.substr(0, 200);
  const absl::Status malformed = errors::NotFound("Malformed request: ", method, " ", full);
  ModelPath out;
  if (!absl::ConsumePrefix(&path, kModelsPrefix)) return malformed;
  const size_t name_end = path.find_first_of("/:");
  out.model = std::string(path.substr(0, name_end));
  if (out.model.empty()) return malformed;
  path.remove_prefix(std::min(path.size(), name_end));
  if (absl::ConsumePrefix(&path, "/versions/")) {
    const size_t end = path.find_first_of("/:");
    int64_t v;
    const absl::string_view digits = path.substr(0, end);
    if (digits.empty() || !absl::c_all_of(digits, absl::ascii_isdigit) ||
        !absl::SimpleAtoi(digits, &v)) {
      return errors::InvalidArgument("version '", digits.substr(0, 40),
                                     "' in the path is not a version number");
    }
    out.version = v;
    path.remove_prefix(std::min(path.size(), end));
  } else if (absl::ConsumePrefix(&path, "/labels/")) {
    const size_t end = path.find_first_of("/:");
    out.label = std::string(path.substr(0, end));
    if (out.label.empty()) return malformed;
    path.remove_prefix(std::min(path.size(), end));
  }
  if (path.empty()) {
    out.verb = "status";
  } else if (path == "/metadata") {
    out.verb = "metadata";
  } else if (path == ":predict" || path == ":classify" || path == ":regress") {
    out.verb = std::string(path.substr(1));
  } else {
    return malformed;
  }
  const bool post = out.verb != "status" && out.verb != "metadata";
  if (method != (post ? "POST" : "GET")) {
    return errors::NotFound("Malformed request: ", method, " ", full, " (use ",
                            post ? "POST" : "GET", ")");
  }
  return out;
}

HttpReply JsonReply(std::string body) {
  HttpReply r;
  r.body = std::move(body);
  return r;
}

std::string StatusJson(const std::vector<ModelVersionStatus>& versions) {
  std::string out = "{\"model_version_status\":[";
  for (size_t i = 0; i < versions.size(); ++i) {
    const ModelVersionStatus& v = versions[i];
    if (i > 0) out.push_back(',');
    absl::StrAppend(&out, "{\"version\":\"", v.version, "\",\"state\":\"",
                    ModelVersionStateName(v.state), "\",\"status\":{\"error_code\":\"",
                    absl::StatusCodeToString(v.status.code()), "\",\"error_message\":");
    AppendStringJson(v.status.message(), false, &out);
    out.append("}}");
  }
  out.append("]}");
  return out;
}

absl::StatusOr<std::string> MetadataJson(const LoadedModel& model) {
  std::string out = "{\"model_spec\":{\"name\":";
  AppendStringJson(model.name(), false, &out);
  absl::StrAppend(&out, ",\"signature_name\":\"\",\"version\":\"", model.version(),
                  "\"},\"metadata\":{\"signature_def\":{\"signature_def\":{");
  std::vector<std::string> names;
  for (const auto& [name, sig] : model.meta_graph_def().signature_def()) names.push_back(name);
  std::sort(names.begin(), names.end());
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string sig;
    const auto s = google::protobuf::util::MessageToJsonString(
        model.meta_graph_def().signature_def().at(names[i]), &sig, options);
    if (!s.ok()) return errors::Internal("signature '", names[i], "' has no JSON form");
    if (i > 0) out.push_back(',');
    AppendStringJson(names[i], false, &out);
    out.push_back(':');
    out.append(sig);
  }
  out.append("}}}}");
  return out;
}

// The request's "signature_name" ("" when absent).
absl::StatusOr<std::string> SignatureName(const nlohmann::json& body) {
  auto it = body.find("signature_name");
  if (it == body.end()) return std::string();
  if (!it->is_string()) {
    return errors::InvalidArgument("'signature_name' must be a string, got ", it->type_name());
  }
  return it->get<std::string>();
}

// Names what a request resolved to, for the metrics.
struct Resolved {
  std::string model;
  std::string signature;
};

absl::StatusOr<std::string> Predict(LoadedModel& model, nlohmann::json& body, absl::Time deadline,
                                    Resolved* resolved) {
  DF_ASSIGN_OR_RETURN(const std::string signature_name, SignatureName(body));
  DF_ASSIGN_OR_RETURN(const SignatureDef* signature, model.Signature(signature_name));
  resolved->signature = signature_name.empty() ? kDefaultServingSignature : signature_name;
  DF_ASSIGN_OR_RETURN(PredictInputs inputs, ReadPredictInputs(body, *signature));
  std::vector<std::string> output_keys;
  std::vector<Tensor> outputs;
  DF_RETURN_IF_ERROR(
      model.RunSignature(signature_name, inputs.inputs, &output_keys, deadline, &outputs));
  return WritePredictOutputs(inputs.format, output_keys, outputs);
}

// Classify and regress: the examples fed to the signature's "inputs".
absl::StatusOr<std::string> RunOnExamples(LoadedModel& model, const nlohmann::json& body,
                                          const std::string& verb, absl::Time deadline,
                                          Resolved* resolved) {
  DF_ASSIGN_OR_RETURN(const std::string signature_name, SignatureName(body));
  DF_ASSIGN_OR_RETURN(const SignatureDef* signature, model.Signature(signature_name));
  const std::string name = signature_name.empty() ? kDefaultServingSignature : signature_name;
  resolved->signature = name;
  const bool classify = verb == "classify";
  const char* expected_method = classify ? kClassifyMethod : kRegressMethod;
  if (signature->method_name() != expected_method) {
    return errors::InvalidArgument("signature '", name, "' is not a ", verb,
                                   " signature: its method_name is '", signature->method_name(),
                                   "', expected '", expected_method, "'");
  }
  auto input = signature->inputs().find("inputs");
  if (signature->inputs_size() != 1 || input == signature->inputs().end()) {
    return errors::InvalidArgument("signature '", name,
                                   "' cannot take tf.Examples: it needs exactly one input, called "
                                   "'inputs'");
  }
  DF_ASSIGN_OR_RETURN(Tensor examples, ReadExamples(body));
  const int64_t n = examples.dim_size(0);
  std::vector<std::string> output_keys;
  if (classify) {
    for (const char* key : {"classes", "scores"}) {
      if (signature->outputs().contains(key)) output_keys.push_back(key);
    }
    if (output_keys.empty()) {
      return errors::InvalidArgument("classify signature '", name,
                                     "' has neither a 'classes' nor a 'scores' output");
    }
  } else {
    if (!signature->outputs().contains("outputs")) {
      return errors::InvalidArgument("regress signature '", name, "' has no 'outputs' output");
    }
    output_keys.push_back("outputs");
  }
  std::vector<Tensor> outputs;
  DF_RETURN_IF_ERROR(model.RunSignature(signature_name, {{"inputs", std::move(examples)}},
                                        &output_keys, deadline, &outputs));
  if (!classify) return WriteRegressResults(outputs[0], n);
  const Tensor* classes = nullptr;
  const Tensor* scores = nullptr;
  for (size_t k = 0; k < output_keys.size(); ++k) {
    (output_keys[k] == "classes" ? classes : scores) = &outputs[k];
  }
  return WriteClassifyResults(classes, scores, n);
}

}  // namespace

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

HttpReply ErrorReply(const absl::Status& status) {
  HttpReply r;
  r.status = HttpStatusFor(status.code());
  r.body = "{\"error\":";
  AppendStringJson(status.message(), false, &r.body);
  r.body.push_back('}');
  return r;
}

HttpReply RestApi::Handle(absl::string_view method, absl::string_view path,
                          absl::string_view body) const {
  if (path == kMetricsPath && method == "GET") {
    HttpReply r;
    r.content_type = kPrometheusContentType;
    r.body = metrics_->Render();
    return r;
  }
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + timeout_;
  absl::StatusOr<ModelPath> parsed = ParseModelPath(method, path);
  if (!parsed.ok()) return ErrorReply(parsed.status());
  const ModelPath& request = *parsed;
  Resolved resolved;
  absl::StatusOr<std::string> reply = [&]() -> absl::StatusOr<std::string> {
    if (request.verb == "status") {
      DF_ASSIGN_OR_RETURN(std::vector<ModelVersionStatus> versions,
                          models_->VersionStatuses(request.model, request.version, request.label));
      resolved.model = request.model;
      return StatusJson(versions);
    }
    DF_ASSIGN_OR_RETURN(std::shared_ptr<LoadedModel> model,
                        models_->Find(request.model, request.version, request.label));
    resolved.model = model->name();
    if (request.verb == "metadata") return MetadataJson(*model);
    DF_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonObject(body));
    if (request.verb == "predict") return Predict(*model, doc, deadline, &resolved);
    return RunOnExamples(*model, doc, request.verb, deadline, &resolved);
  }();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  metrics_->RecordRequest(resolved.model, resolved.signature, request.verb, reply.status().code(),
                          seconds);
  if (!reply.ok()) return ErrorReply(reply.status());
  return JsonReply(*std::move(reply));
}

}  // namespace distflow
