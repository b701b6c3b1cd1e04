#include "distflow/framework/types.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace distflow {
namespace {

struct TypeName {
  DataType dtype;
  const char* name;     // distflow/NumPy style
  const char* tf_name;  // TensorFlow's DataTypeString
};

constexpr TypeName kTypeNames[] = {
    {DT_FLOAT, "float32", "float"},     {DT_DOUBLE, "float64", "double"},
    {DT_INT32, "int32", "int32"},       {DT_UINT8, "uint8", "uint8"},
    {DT_INT16, "int16", "int16"},       {DT_INT8, "int8", "int8"},
    {DT_STRING, "string", "string"},    {DT_COMPLEX64, "complex64", "complex64"},
    {DT_INT64, "int64", "int64"},       {DT_BOOL, "bool", "bool"},
    {DT_QINT8, "qint8", "qint8"},       {DT_QUINT8, "quint8", "quint8"},
    {DT_QINT32, "qint32", "qint32"},    {DT_BFLOAT16, "bfloat16", "bfloat16"},
    {DT_QINT16, "qint16", "qint16"},    {DT_QUINT16, "quint16", "quint16"},
    {DT_UINT16, "uint16", "uint16"},    {DT_COMPLEX128, "complex128", "complex128"},
    {DT_HALF, "float16", "half"},       {DT_RESOURCE, "resource", "resource"},
    {DT_VARIANT, "variant", "variant"}, {DT_UINT32, "uint32", "uint32"},
    {DT_UINT64, "uint64", "uint64"},
};

const TypeName* FindName(DataType base) {
  for (const TypeName& t : kTypeNames) {
    if (t.dtype == base) return &t;
  }
  return nullptr;
}

}  // namespace

std::string DataTypeString(DataType dtype) {
  const TypeName* t = FindName(BaseType(dtype));
  std::string name = t ? t->name : absl::StrCat("unknown_dtype_", static_cast<int>(dtype));
  if (IsRefType(dtype)) name += "_ref";
  return name;
}

bool DataTypeFromString(absl::string_view name, DataType* dtype) {
  std::string lower = absl::AsciiStrToLower(name);
  bool ref = false;
  if (absl::EndsWith(lower, "_ref")) {
    ref = true;
    lower.resize(lower.size() - 4);
  }
  if (absl::StartsWith(lower, "dt_")) lower = lower.substr(3);
  for (const TypeName& t : kTypeNames) {
    if (lower == t.name || lower == t.tf_name) {
      *dtype = ref ? MakeRefType(t.dtype) : t.dtype;
      return true;
    }
  }
  return false;
}

int DataTypeSize(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_FLOAT:
    case DT_INT32:
    case DT_UINT32:
    case DT_QINT32:
      return 4;
    case DT_DOUBLE:
    case DT_INT64:
    case DT_UINT64:
    case DT_COMPLEX64:
      return 8;
    case DT_UINT8:
    case DT_INT8:
    case DT_BOOL:
    case DT_QINT8:
    case DT_QUINT8:
      return 1;
    case DT_INT16:
    case DT_UINT16:
    case DT_BFLOAT16:
    case DT_HALF:
    case DT_QINT16:
    case DT_QUINT16:
      return 2;
    case DT_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

bool DataTypeIsSupported(DataType dtype) {
  return VisitDataType(BaseType(dtype), [](auto) {});
}

bool DataTypeIsFloating(DataType dtype) {
  const DataType b = BaseType(dtype);
  return b == DT_FLOAT || b == DT_DOUBLE || b == DT_BFLOAT16 || b == DT_HALF;
}

bool DataTypeIsInteger(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_INT8:
    case DT_INT16:
    case DT_INT32:
    case DT_INT64:
    case DT_UINT8:
    case DT_UINT16:
    case DT_UINT32:
    case DT_UINT64:
      return true;
    default:
      return false;
  }
}

bool DataTypeIsNumeric(DataType dtype) {
  return DataTypeIsFloating(dtype) || DataTypeIsInteger(dtype);
}

std::string DataTypeSliceString(DataTypeSlice types) {
  return absl::StrJoin(types, ", ",
                       [](std::string* out, DataType t) { out->append(DataTypeString(t)); });
}

DataTypeSlice AllNumberTypes() {
  static const DataType kTypes[] = {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16, DT_INT32,  DT_INT64, DT_UINT8,
                                    DT_INT8,  DT_INT16,  DT_UINT16,   DT_UINT32, DT_UINT64};
  return kTypes;
}
DataTypeSlice RealNumberTypes() { return AllNumberTypes(); }
DataTypeSlice FloatingTypes() {
  static const DataType kTypes[] = {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16};
  return kTypes;
}
DataTypeSlice IntegerTypes() {
  static const DataType kTypes[] = {DT_INT32, DT_INT64,  DT_UINT8,  DT_INT8,
                                    DT_INT16, DT_UINT16, DT_UINT32, DT_UINT64};
  return kTypes;
}
DataTypeSlice AllTypes() {
  static const DataType kTypes[] = {DT_FLOAT,  DT_DOUBLE, DT_BFLOAT16, DT_INT32,  DT_INT64,
                                    DT_UINT8,  DT_INT8,   DT_INT16,    DT_UINT16, DT_UINT32,
                                    DT_UINT64, DT_BOOL,   DT_STRING};
  return kTypes;
}

}  // namespace distflow
