// Element types: the DataType enum (from types.proto), their C++ types, sizes
// and names, and the reference-type helpers.
#ifndef DISTFLOW_FRAMEWORK_TYPES_H_
#define DISTFLOW_FRAMEWORK_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/types.pb.h"

namespace distflow {

using bfloat16 = Eigen::bfloat16;

// A set of DataTypes with cheap membership tests.
using DataTypeVector = std::vector<DataType>;
using DataTypeSlice = absl::Span<const DataType>;

inline bool IsRefType(DataType dtype) { return dtype > 100; }
inline DataType MakeRefType(DataType dtype) {
  return IsRefType(dtype) ? dtype : static_cast<DataType>(dtype + 100);
}
inline DataType BaseType(DataType dtype) {
  return IsRefType(dtype) ? static_cast<DataType>(dtype - 100) : dtype;
}

// The user-facing name: "float32", "float64", "int32", "int64", "uint8",
// "bool", "string", "bfloat16", "resource", ...; ref types end in "_ref".
std::string DataTypeString(DataType dtype);
// Accepts the names above and TensorFlow's proto-style names ("float",
// "double", "DT_FLOAT"). Returns false for an unknown name.
bool DataTypeFromString(absl::string_view name, DataType* dtype);

// Bytes per element for fixed-size types; 0 for string, resource, variant.
int DataTypeSize(DataType dtype);
// True for types whose elements distflow can hold in a Tensor.
bool DataTypeIsSupported(DataType dtype);
bool DataTypeIsFloating(DataType dtype);  // float, double, bfloat16, half
bool DataTypeIsInteger(DataType dtype);
// Types allowed in arithmetic ops (numbers, not bool/string/resource).
bool DataTypeIsNumeric(DataType dtype);

std::string DataTypeSliceString(DataTypeSlice types);

class ResourceHandle;  // framework/resource_handle.h

// Maps C++ types to their DataType.
template <typename T>
struct DataTypeToEnum;
#define DF_MATCH_TYPE_AND_ENUM(TYPE, ENUM)  \
  template <>                               \
  struct DataTypeToEnum<TYPE> {             \
    static constexpr DataType value = ENUM; \
  }
DF_MATCH_TYPE_AND_ENUM(float, DT_FLOAT);
DF_MATCH_TYPE_AND_ENUM(double, DT_DOUBLE);
DF_MATCH_TYPE_AND_ENUM(int32_t, DT_INT32);
DF_MATCH_TYPE_AND_ENUM(int64_t, DT_INT64);
DF_MATCH_TYPE_AND_ENUM(uint8_t, DT_UINT8);
DF_MATCH_TYPE_AND_ENUM(int8_t, DT_INT8);
DF_MATCH_TYPE_AND_ENUM(int16_t, DT_INT16);
DF_MATCH_TYPE_AND_ENUM(uint16_t, DT_UINT16);
DF_MATCH_TYPE_AND_ENUM(uint32_t, DT_UINT32);
DF_MATCH_TYPE_AND_ENUM(uint64_t, DT_UINT64);
DF_MATCH_TYPE_AND_ENUM(bool, DT_BOOL);
DF_MATCH_TYPE_AND_ENUM(std::string, DT_STRING);
DF_MATCH_TYPE_AND_ENUM(bfloat16, DT_BFLOAT16);
// DT_RESOURCE tensors hold ResourceHandle objects, as DT_STRING tensors hold
// std::string. Not in VisitDataType: kernels that visit types compute on
// numbers and strings, never on handles.
DF_MATCH_TYPE_AND_ENUM(ResourceHandle, DT_RESOURCE);
#undef DF_MATCH_TYPE_AND_ENUM

// Calls `fn(T{})` with the C++ type of `dtype` for the tensor element types
// distflow supports; returns false (without calling) for any other type.
template <typename Fn>
bool VisitDataType(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT:
      fn(float{});
      return true;
    case DT_DOUBLE:
      fn(double{});
      return true;
    case DT_INT32:
      fn(int32_t{});
      return true;
    case DT_INT64:
      fn(int64_t{});
      return true;
    case DT_UINT8:
      fn(uint8_t{});
      return true;
    case DT_INT8:
      fn(int8_t{});
      return true;
    case DT_INT16:
      fn(int16_t{});
      return true;
    case DT_UINT16:
      fn(uint16_t{});
      return true;
    case DT_UINT32:
      fn(uint32_t{});
      return true;
    case DT_UINT64:
      fn(uint64_t{});
      return true;
    case DT_BOOL:
      fn(bool{});
      return true;
    case DT_BFLOAT16:
      fn(bfloat16{});
      return true;
    case DT_STRING:
      fn(std::string{});
      return true;
    default:
      return false;
  }
}

// Device types.
inline constexpr char kDeviceCpu[] = "CPU";

// Named type sets used in op definitions.
DataTypeSlice AllNumberTypes();   // float, double, bfloat16, all ints
DataTypeSlice RealNumberTypes();  // same (no complex types in distflow)
DataTypeSlice FloatingTypes();    // float, double, bfloat16
DataTypeSlice IntegerTypes();
DataTypeSlice AllTypes();  // numbers, bool, string

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TYPES_H_
