#include "distflow/serving/example_json.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/example.pb.h"
#include "distflow/serving/tensor_json.h"

namespace distflow {
namespace {

using nlohmann::json;

absl::Status ReadFeature(const json& value, const std::string& where, Feature* out) {
  const json single = json::array({value});
  const json& list = value.is_array() ? value : single;
  if (list.empty()) {
    return errors::InvalidArgument(where, " is an empty list, whose type cannot be told");
  }
  bool strings = false, numbers = false, fractions = false;
  for (const json& v : list) {
    if (v.is_string() || v.is_object()) {
      strings = true;
    } else if (v.is_number()) {
      numbers = true;
      fractions = fractions || v.is_number_float();
    } else {
      return errors::InvalidArgument(where, ": values must be numbers, strings or {\"b64\": ...}",
                                     ", got ", v.dump().substr(0, 80));
    }
  }
  if (strings && numbers) {
    return errors::InvalidArgument(where, " mixes strings and numbers");
  }
  if (strings) {
    BytesList* bytes = out->mutable_bytes_list();
    for (const json& v : list) {
      if (v.is_string()) {
        bytes->add_value(v.get<std::string>());
        continue;
      }
      std::string decoded;
      if (v.size() != 1 || !v.contains("b64") || !v["b64"].is_string() ||
          !absl::Base64Unescape(v["b64"].get<std::string>(), &decoded)) {
        return errors::InvalidArgument(where, ": an object must be {\"b64\": \"<base64>\"}, got ",
                                       v.dump().substr(0, 80));
      }
      bytes->add_value(std::move(decoded));
    }
  } else if (fractions) {
    FloatList* floats = out->mutable_float_list();
    for (const json& v : list) floats->add_value(v.get<float>());
  } else {
    Int64List* ints = out->mutable_int64_list();
    for (const json& v : list) {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return errors::InvalidArgument(where, ": ", v.dump(), " does not fit in an int64");
      }
      ints->add_value(v.get<int64_t>());
    }
  }
  return absl::OkStatus();
}

absl::Status ReadFeatures(const json& object, const std::string& where, Features* out) {
  if (!object.is_object()) {
    return errors::InvalidArgument(where, " must be an object of features, got ",
                                   object.type_name());
  }
  for (const auto& [name, value] : object.items()) {
    Feature feature;
    DF_RETURN_IF_ERROR(ReadFeature(value, absl::StrCat(where, " feature '", name, "'"), &feature));
    (*out->mutable_feature())[name] = std::move(feature);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> ReadExamples(const json& body) {
  auto examples = body.find("examples");
  if (examples == body.end() || !examples->is_array()) {
    return errors::InvalidArgument("the request needs \"examples\": a list of objects of features");
  }
  if (examples->empty()) return errors::InvalidArgument("\"examples\" is an empty list");
  Features context;
  auto c = body.find("context");
  if (c != body.end()) DF_RETURN_IF_ERROR(ReadFeatures(*c, "context", &context));
  Tensor out;
  DF_RETURN_IF_ERROR(Tensor::Allocate(
      DT_STRING, TensorShape({static_cast<int64_t>(examples->size())}), &out, "examples"));
  std::string* serialized = out.base<std::string>();
  for (size_t i = 0; i < examples->size(); ++i) {
    Example example;
    *example.mutable_features() = context;
    DF_RETURN_IF_ERROR(
        ReadFeatures((*examples)[i], absl::StrCat("example ", i), example.mutable_features()));
    if (!example.SerializeToString(&serialized[i])) {
      return errors::InvalidArgument("example ", i, " cannot be serialized");
    }
  }
  return out;
}

absl::StatusOr<std::string> WriteClassifyResults(const Tensor* classes, const Tensor* scores,
                                                 int64_t num_examples) {
  int64_t k = -1;
  if (classes != nullptr) {
    if (classes->dtype() != DT_STRING || classes->dims() != 2 ||
        classes->dim_size(0) != num_examples) {
      return errors::InvalidArgument("output 'classes' must be a string tensor of shape [",
                                     num_examples, ", k], got ", DataTypeString(classes->dtype()),
                                     " ", classes->shape().DebugString());
    }
    k = classes->dim_size(1);
  }
  if (scores != nullptr) {
    const bool vector = scores->dims() == 1;
    if (scores->dtype() != DT_FLOAT || (scores->dims() != 2 && !vector) ||
        scores->dim_size(0) != num_examples) {
      return errors::InvalidArgument("output 'scores' must be a float tensor of shape [",
                                     num_examples, ", k], got ", DataTypeString(scores->dtype()),
                                     " ", scores->shape().DebugString());
    }
    const int64_t score_k = vector ? 1 : scores->dim_size(1);
    if (k >= 0 && k != score_k) {
      return errors::InvalidArgument(
          "outputs 'classes' and 'scores' disagree on the number of "
          "classes (",
          k, " and ", score_k, ")");
    }
    k = score_k;
  }
  std::string out = "{\"results\":[";
  for (int64_t i = 0; i < num_examples; ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('[');
    for (int64_t j = 0; j < k; ++j) {
      if (j > 0) out.push_back(',');
      out.push_back('[');
      AppendStringJson(classes != nullptr ? classes->base<std::string>()[i * k + j] : "", false,
                       &out);
      out.push_back(',');
      AppendFloatJson(scores != nullptr ? scores->base<float>()[i * k + j] : 0.0f, true, &out);
      out.push_back(']');
    }
    out.push_back(']');
  }
  out.append("]}");
  return out;
}

absl::StatusOr<std::string> WriteRegressResults(const Tensor& outputs, int64_t num_examples) {
  const bool shape_ok =
      (outputs.dims() == 1 || (outputs.dims() == 2 && outputs.dim_size(1) == 1)) &&
      outputs.dim_size(0) == num_examples;
  if (outputs.dtype() != DT_FLOAT || !shape_ok) {
    return errors::InvalidArgument(
        "output 'outputs' must be a float tensor of shape [", num_examples, "] or [", num_examples,
        ", 1], got ", DataTypeString(outputs.dtype()), " ", outputs.shape().DebugString());
  }
  std::string out = "{\"results\":[";
  for (int64_t i = 0; i < num_examples; ++i) {
    if (i > 0) out.push_back(',');
    AppendFloatJson(outputs.base<float>()[i], true, &out);
  }
  out.append("]}");
  return out;
}

}  // namespace distflow
