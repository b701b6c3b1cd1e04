#include "json_tensor.h"

#include <cmath>
#include <limits>
#include <vector>

#include "distflow/core/status.h"

namespace distflow {
namespace {

using nlohmann::json;

// Finds the shape from the first element at each depth, then checks that
// every list agrees; collects the leaves in row-major order.
absl::Status Flatten(const json& value, const std::vector<int64_t>& dims,
                     size_t depth, const std::string& name,
                     std::vector<const json*>* leaves) {
  if (depth == dims.size()) {
    if (value.is_array()) {
      return errors::InvalidArgument(
          "feed '", name,
          "': ragged nested list (a list where a scalar "
          "was expected at depth ",
          depth, ")");
    }
    leaves->push_back(&value);
    return absl::OkStatus();
  }
  if (!value.is_array() || static_cast<int64_t>(value.size()) != dims[depth]) {
    return errors::InvalidArgument(
        "feed '", name, "': ragged nested list (expected ", dims[depth],
        " elements at depth ", depth, ")");
  }
  for (const json& v : value)
    DF_RETURN_IF_ERROR(Flatten(v, dims, depth + 1, name, leaves));
  return absl::OkStatus();
}

template <typename T>
absl::Status ConvertLeaves(const std::vector<const json*>& leaves,
                           DataType dtype, const std::string& name, T* out) {
  auto bad = [&](const json& v, absl::string_view expected) {
    return errors::InvalidArgument("feed '", name, "': expected ", expected,
                                   " for ", DataTypeString(dtype), ", got ",
                                   v.dump());
  };
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return bad(v, "true or false");
      out[i] = v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return bad(v, "strings");
      out[i] = v.get<std::string>();
    } else if constexpr (std::is_floating_point_v<T> ||
                         std::is_same_v<T, bfloat16>) {
      if (!v.is_number()) return bad(v, "numbers");
      out[i] = static_cast<T>(v.get<double>());
    } else {
      if (!v.is_number_integer()) return bad(v, "integers");
      if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
          return bad(v, "integers in range");
        }
        out[i] = static_cast<T>(u);
      } else {
        const int64_t s = v.get<int64_t>();
        if constexpr (std::is_signed_v<T>) {
          if (s < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
              s > static_cast<int64_t>(std::numeric_limits<T>::max())) {
            return bad(v, "integers in range");
          }
        } else {
          if (s < 0 ||
              static_cast<uint64_t>(s) > std::numeric_limits<T>::max()) {
            return bad(v, "integers in range");
          }
        }
        out[i] = static_cast<T>(s);
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
json ElementToJson(const T& v) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

json Nest(const Tensor& t, int depth, int64_t* offset) {
  if (depth == t.dims()) {
    json out;
    VisitDataType(t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      out = ElementToJson(t.base<T>()[(*offset)++]);
    });
    return out;
  }
  json list = json::array();
  for (int64_t i = 0; i < t.dim_size(depth); ++i)
    list.push_back(Nest(t, depth + 1, offset));
  return list;
}

}  // namespace

absl::StatusOr<Tensor> TensorFromJson(const json& value, DataType dtype,
                                      const std::string& name) {
  std::vector<int64_t> dims;
  for (const json* v = &value; v->is_array(); v = &(*v)[0]) {
    dims.push_back(static_cast<int64_t>(v->size()));
    if (v->empty()) break;
  }
  std::vector<const json*> leaves;
  DF_RETURN_IF_ERROR(Flatten(value, dims, 0, name, &leaves));
  TensorShape shape;
  DF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(dims, &shape));
  if (!DataTypeIsSupported(dtype)) {
    return errors::InvalidArgument("feed '", name,
                                   "': cannot feed values of type ",
                                   DataTypeString(dtype));
  }
  Tensor t(dtype, shape);
  absl::Status status;
  const bool visited = VisitDataType(dtype, [&](auto zero) {
    using T = decltype(zero);
    status = ConvertLeaves<T>(leaves, dtype, name, t.base<T>());
  });
  if (!visited) {
    return errors::InvalidArgument("feed '", name,
                                   "': cannot feed values of type ",
                                   DataTypeString(dtype));
  }
  DF_RETURN_IF_ERROR(status);
  return t;
}

json TensorValuesToJson(const Tensor& t) {
  json values = json::array();
  VisitDataType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = t.base<T>();
    for (int64_t i = 0; i < t.NumElements(); ++i)
      values.push_back(ElementToJson(p[i]));
  });
  return values;
}

json TensorToNestedJson(const Tensor& t) {
  int64_t offset = 0;
  return Nest(t, 0, &offset);
}

}  // namespace distflow
