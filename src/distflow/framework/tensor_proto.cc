#include "distflow/framework/tensor_proto.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// Copies typed proto values into `dst`, converting each with `conv`.
template <typename T, typename Field, typename Conv>
absl::Status FillFromField(const Field& field, int64_t n, T* dst, Conv conv,
                           const char* field_name) {
  const int64_t have = field.size();
  if (have > n) {
    return errors::InvalidArgument("TensorProto has ", have, " values in ", field_name,
                                   " but its shape holds ", n);
  }
  if (have == 0) {
    for (int64_t i = 0; i < n; ++i) dst[i] = T();
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < have; ++i) dst[i] = conv(field.Get(static_cast<int>(i)));
  const T last = dst[have - 1];
  for (int64_t i = have; i < n; ++i) dst[i] = last;
  return absl::OkStatus();
}

template <typename T>
T Same(T v) {
  return v;
}

bfloat16 BitsToBfloat16(int32_t bits) {
  return Eigen::numext::bit_cast<bfloat16>(static_cast<uint16_t>(bits));
}

}  // namespace

absl::Status TensorFromProto(const TensorProto& proto, Tensor* out) {
  const DataType dtype = proto.dtype();
  if (!DataTypeIsSupported(dtype) || IsRefType(dtype)) {
    return errors::InvalidArgument("TensorProto has unsupported dtype ", DataTypeString(dtype));
  }
  TensorShape shape;
  DF_RETURN_IF_ERROR(
      errors::Annotate(TensorShape::FromProto(proto.tensor_shape(), &shape), "TensorProto: "));
  const int64_t n = shape.num_elements();

  // Sizes are checked against what the proto carries before anything is
  // allocated: a shape of [2^62] must not become a tiny (wrapped) buffer.
  if (dtype != DT_STRING && !proto.tensor_content().empty()) {
    int64_t want = 0;
    const bool fits =
        MultiplyWithoutOverflow<int64_t>(n, static_cast<int64_t>(DataTypeSize(dtype)), &want);
    if (!fits || static_cast<uint64_t>(want) != proto.tensor_content().size()) {
      return errors::InvalidArgument(
          "TensorProto of type ", DataTypeString(dtype), " and shape ", shape.DebugString(),
          " needs ", fits ? absl::StrCat(want) : std::string("more than 2^63 - 1"),
          " bytes of tensor_content, got ", proto.tensor_content().size());
    }
    Tensor t;
    DF_RETURN_IF_ERROR(Tensor::Allocate(dtype, shape, &t));
    CopyRawBytesToTensor(proto.tensor_content().data(), &t);
    *out = std::move(t);
    return absl::OkStatus();
  }
  Tensor t;
  DF_RETURN_IF_ERROR(Tensor::Allocate(dtype, shape, &t));

  absl::Status s;
  switch (dtype) {
    case DT_FLOAT:
      s = FillFromField(proto.float_val(), n, t.base<float>(), Same<float>, "float_val");
      break;
    case DT_DOUBLE:
      s = FillFromField(proto.double_val(), n, t.base<double>(), Same<double>, "double_val");
      break;
    case DT_INT32:
      s = FillFromField(proto.int_val(), n, t.base<int32_t>(), Same<int32_t>, "int_val");
      break;
    case DT_UINT8:
      s = FillFromField(
          proto.int_val(), n, t.base<uint8_t>(), [](int32_t v) { return static_cast<uint8_t>(v); },
          "int_val");
      break;
    case DT_INT8:
      s = FillFromField(
          proto.int_val(), n, t.base<int8_t>(), [](int32_t v) { return static_cast<int8_t>(v); },
          "int_val");
      break;
    case DT_INT16:
      s = FillFromField(
          proto.int_val(), n, t.base<int16_t>(), [](int32_t v) { return static_cast<int16_t>(v); },
          "int_val");
      break;
    case DT_UINT16:
      s = FillFromField(
          proto.int_val(), n, t.base<uint16_t>(),
          [](int32_t v) { return static_cast<uint16_t>(v); }, "int_val");
      break;
    case DT_INT64:
      s = FillFromField(proto.int64_val(), n, t.base<int64_t>(), Same<int64_t>, "int64_val");
      break;
    case DT_UINT32:
      s = FillFromField(proto.uint32_val(), n, t.base<uint32_t>(), Same<uint32_t>, "uint32_val");
      break;
    case DT_UINT64:
      s = FillFromField(proto.uint64_val(), n, t.base<uint64_t>(), Same<uint64_t>, "uint64_val");
      break;
    case DT_BOOL:
      s = FillFromField(proto.bool_val(), n, t.base<bool>(), Same<bool>, "bool_val");
      break;
    case DT_BFLOAT16:
      s = FillFromField(proto.half_val(), n, t.base<bfloat16>(), BitsToBfloat16, "half_val");
      break;
    case DT_STRING:
      s = FillFromField(
          proto.string_val(), n, t.base<std::string>(), [](const std::string& v) { return v; },
          "string_val");
      break;
    default:
      return errors::InvalidArgument("TensorProto has unsupported dtype ", DataTypeString(dtype));
  }
  DF_RETURN_IF_ERROR(s);
  *out = std::move(t);
  return absl::OkStatus();
}

void CopyRawBytesToTensor(const char* bytes, Tensor* tensor) {
  const size_t n = tensor->TotalBytes();
  if (n == 0) return;
  if (tensor->dtype() == DT_BOOL) {
    bool* out = tensor->base<bool>();
    for (size_t i = 0; i < n; ++i) out[i] = bytes[i] != 0;
    return;
  }
  std::memcpy(tensor->raw_data(), bytes, n);
}

void TensorToProto(const Tensor& tensor, TensorProto* proto) {
  proto->Clear();
  proto->set_dtype(tensor.dtype());
  tensor.shape().AsProto(proto->mutable_tensor_shape());
  if (tensor.dtype() == DT_STRING) {
    for (const std::string& s : tensor.flat<std::string>()) proto->add_string_val(s);
    return;
  }
  if (tensor.NumElements() > 0) {
    proto->set_tensor_content(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  }
}

int64_t ProtoBytes(const Tensor& tensor) {
  if (tensor.dtype() != DT_STRING) return static_cast<int64_t>(tensor.TotalBytes());
  // A pointer in the repeated field and the string object it points to.
  constexpr int64_t kPerValue = sizeof(void*) + sizeof(std::string) + 16;
  constexpr int64_t kInline = 15;  // what std::string holds without a heap block
  int64_t bytes = 0;
  for (const std::string& s : tensor.flat<std::string>()) {
    const int64_t heap = s.size() > kInline ? static_cast<int64_t>(s.size()) + 16 : 0;
    if (!AddWithoutOverflow<int64_t>(bytes, kPerValue + heap, &bytes)) return INT64_MAX;
  }
  return bytes;
}

absl::Status TensorToProtoInBudget(const Tensor& tensor, TensorProto* proto,
                                   const std::string& what) {
  if (memory_budget::Limit() <= 0) {
    TensorToProto(tensor, proto);
    return absl::OkStatus();
  }
  auto charge = memory_budget::Reservation::Make(
      ProtoBytes(tensor), absl::StrCat("encoding ", what, " (", DataTypeString(tensor.dtype()), " ",
                                       tensor.shape().DebugString(), ")"));
  if (!charge.ok()) {
    proto->Clear();
    return charge.status();
  }
  TensorToProto(tensor, proto);
  return absl::OkStatus();
}

void TensorToProtoField(const Tensor& tensor, TensorProto* proto) {
  proto->Clear();
  proto->set_dtype(tensor.dtype());
  tensor.shape().AsProto(proto->mutable_tensor_shape());
  switch (tensor.dtype()) {
    case DT_FLOAT:
      for (float v : tensor.flat<float>()) proto->add_float_val(v);
      break;
    case DT_DOUBLE:
      for (double v : tensor.flat<double>()) proto->add_double_val(v);
      break;
    case DT_INT32:
      for (int32_t v : tensor.flat<int32_t>()) proto->add_int_val(v);
      break;
    case DT_UINT8:
      for (uint8_t v : tensor.flat<uint8_t>()) proto->add_int_val(v);
      break;
    case DT_INT8:
      for (int8_t v : tensor.flat<int8_t>()) proto->add_int_val(v);
      break;
    case DT_INT16:
      for (int16_t v : tensor.flat<int16_t>()) proto->add_int_val(v);
      break;
    case DT_UINT16:
      for (uint16_t v : tensor.flat<uint16_t>()) proto->add_int_val(v);
      break;
    case DT_INT64:
      for (int64_t v : tensor.flat<int64_t>()) proto->add_int64_val(v);
      break;
    case DT_UINT32:
      for (uint32_t v : tensor.flat<uint32_t>()) proto->add_uint32_val(v);
      break;
    case DT_UINT64:
      for (uint64_t v : tensor.flat<uint64_t>()) proto->add_uint64_val(v);
      break;
    case DT_BOOL:
      for (bool v : tensor.flat<bool>()) proto->add_bool_val(v);
      break;
    case DT_BFLOAT16:
      for (bfloat16 v : tensor.flat<bfloat16>()) {
        proto->add_half_val(Eigen::numext::bit_cast<uint16_t>(v));
      }
      break;
    case DT_STRING:
      for (const std::string& s : tensor.flat<std::string>()) proto->add_string_val(s);
      break;
    default:
      break;
  }
}

}  // namespace distflow
