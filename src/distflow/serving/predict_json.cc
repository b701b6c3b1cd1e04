#include "distflow/serving/predict_json.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/serving/tensor_json.h"

namespace distflow {
namespace {

using nlohmann::json;

// A JSON object that names inputs, as opposed to a binary string.
bool IsNamedInputs(const json& v) { return v.is_object() && !(v.size() == 1 && v.contains("b64")); }

std::string InputKeys(const SignatureDef& signature) {
  std::vector<std::string> keys;
  for (const auto& [key, info] : signature.inputs()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return absl::StrCat("[", absl::StrJoin(keys, ", "), "]");
}

absl::StatusOr<const TensorInfo*> FindInput(const SignatureDef& signature, const std::string& key) {
  auto it = signature.inputs().find(key);
  if (it == signature.inputs().end()) {
    return errors::InvalidArgument(
        "input '", key, "' is not an input of the signature (its inputs: ", InputKeys(signature),
        ")");
  }
  return &it->second;
}

absl::StatusOr<std::string> OnlyInputKey(const SignatureDef& signature, absl::string_view field) {
  if (signature.inputs_size() != 1) {
    return errors::InvalidArgument(
        "'", field, "' gives one unnamed value, but the signature has ", signature.inputs_size(),
        " inputs: name them in an object (inputs: ", InputKeys(signature), ")");
  }
  return signature.inputs().begin()->first;
}

absl::Status ReadRows(json& instances, const SignatureDef& signature, PredictInputs* out) {
  if (!instances.is_array()) {
    return errors::InvalidArgument("'instances' must be a list, got ", instances.type_name());
  }
  if (instances.empty()) return errors::InvalidArgument("'instances' is an empty list");
  if (!IsNamedInputs(instances[0])) {
    DF_ASSIGN_OR_RETURN(const std::string key, OnlyInputKey(signature, "instances"));
    DF_ASSIGN_OR_RETURN(const TensorInfo* info, FindInput(signature, key));
    DF_ASSIGN_OR_RETURN(
        Tensor t, TensorFromJson(instances, info->dtype(), absl::StrCat("input '", key, "'")));
    out->inputs.emplace_back(key, std::move(t));
    return absl::OkStatus();
  }
  // Named inputs: one list per input, the rows moved out of the instances.
  std::vector<std::string> keys;
  for (const auto& [key, value] : instances[0].items()) keys.push_back(key);
  std::vector<json> columns(keys.size(), json::array());
  for (size_t i = 0; i < instances.size(); ++i) {
    json& row = instances[i];
    if (!IsNamedInputs(row) || row.size() != keys.size()) {
      return errors::InvalidArgument(
          "instance ", i, " names other inputs than instance 0 (every instance must name ",
          absl::StrJoin(keys, ", "), ")");
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      auto it = row.find(keys[k]);
      if (it == row.end()) {
        return errors::InvalidArgument("instance ", i, " lacks input '", keys[k],
                                       "', which instance 0 has");
      }
      columns[k].push_back(std::move(*it));
    }
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    DF_ASSIGN_OR_RETURN(const TensorInfo* info, FindInput(signature, keys[k]));
    DF_ASSIGN_OR_RETURN(
        Tensor t, TensorFromJson(columns[k], info->dtype(), absl::StrCat("input '", keys[k], "'")));
    out->inputs.emplace_back(keys[k], std::move(t));
  }
  return absl::OkStatus();
}

absl::Status ReadColumns(json& inputs, const SignatureDef& signature, PredictInputs* out) {
  if (!IsNamedInputs(inputs)) {
    DF_ASSIGN_OR_RETURN(const std::string key, OnlyInputKey(signature, "inputs"));
    DF_ASSIGN_OR_RETURN(const TensorInfo* info, FindInput(signature, key));
    DF_ASSIGN_OR_RETURN(Tensor t,
                        TensorFromJson(inputs, info->dtype(), absl::StrCat("input '", key, "'")));
    out->inputs.emplace_back(key, std::move(t));
    return absl::OkStatus();
  }
  for (auto& [key, value] : inputs.items()) {
    DF_ASSIGN_OR_RETURN(const TensorInfo* info, FindInput(signature, key));
    DF_ASSIGN_OR_RETURN(Tensor t,
                        TensorFromJson(value, info->dtype(), absl::StrCat("input '", key, "'")));
    out->inputs.emplace_back(key, std::move(t));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PredictInputs> ReadPredictInputs(json& body, const SignatureDef& signature) {
  auto instances = body.find("instances");
  auto inputs = body.find("inputs");
  PredictInputs out;
  if (instances != body.end() && inputs != body.end()) {
    return errors::InvalidArgument(
        "the request has both 'instances' (row format) and 'inputs' (columnar format): give one");
  }
  if (instances != body.end()) {
    out.format = JsonFormat::kRow;
    DF_RETURN_IF_ERROR(ReadRows(*instances, signature, &out));
  } else if (inputs != body.end()) {
    out.format = JsonFormat::kColumnar;
    DF_RETURN_IF_ERROR(ReadColumns(*inputs, signature, &out));
  } else {
    return errors::InvalidArgument(
        "the request has neither 'instances' (row format) nor 'inputs' (columnar format)");
  }
  return out;
}

absl::StatusOr<std::string> WritePredictOutputs(JsonFormat format,
                                                const std::vector<std::string>& keys,
                                                const std::vector<Tensor>& outputs) {
  std::string out;
  if (format == JsonFormat::kColumnar) {
    out = "{\"outputs\":";
    if (keys.size() == 1) {
      AppendTensorJson(outputs[0], IsBinaryOutputKey(keys[0]), &out);
    } else {
      out.push_back('{');
      for (size_t k = 0; k < keys.size(); ++k) {
        if (k > 0) out.push_back(',');
        AppendStringJson(keys[k], false, &out);
        out.push_back(':');
        AppendTensorJson(outputs[k], IsBinaryOutputKey(keys[k]), &out);
      }
      out.push_back('}');
    }
    out.push_back('}');
    return out;
  }
  int64_t rows = -1;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (outputs[k].dims() == 0) {
      return errors::InvalidArgument("output '", keys[k],
                                     "' is a scalar, which has no rows to return as "
                                     "'predictions': ask in the columnar format ('inputs')");
    }
    if (rows >= 0 && outputs[k].dim_size(0) != rows) {
      return errors::InvalidArgument(
          "the outputs have different numbers of rows ('", keys[0], "' ", rows, ", '", keys[k],
          "' ", outputs[k].dim_size(0),
          "), so they cannot be returned as 'predictions': ask in the columnar format ('inputs')");
    }
    rows = outputs[k].dim_size(0);
  }
  out = "{\"predictions\":[";
  for (int64_t r = 0; r < rows; ++r) {
    if (r > 0) out.push_back(',');
    if (keys.size() == 1) {
      AppendTensorRowJson(outputs[0], r, IsBinaryOutputKey(keys[0]), &out);
      continue;
    }
    out.push_back('{');
    for (size_t k = 0; k < keys.size(); ++k) {
      if (k > 0) out.push_back(',');
      AppendStringJson(keys[k], false, &out);
      out.push_back(':');
      AppendTensorRowJson(outputs[k], r, IsBinaryOutputKey(keys[k]), &out);
    }
    out.push_back('}');
  }
  out.append("]}");
  return out;
}

}  // namespace distflow
