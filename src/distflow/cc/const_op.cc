#include "distflow/cc/const_op.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "distflow/cc/op_builder.h"
#include "distflow/core/status.h"

namespace distflow {
namespace ops {
namespace {

// Every element of `out` set to the single element of `value`.
void FillWith(const Tensor& value, Tensor* out) {
  if (value.dtype() == DT_STRING) {
    for (std::string& s : out->flat<std::string>()) s = value.scalar<std::string>();
    return;
  }
  const size_t size = DataTypeSize(value.dtype());
  char* dst = static_cast<char*>(out->raw_data());
  for (int64_t i = 0; i < out->NumElements(); ++i) {
    std::memcpy(dst + i * size, value.raw_data(), size);
  }
}

}  // namespace

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!scope.ok()) return Output();
  if (!value.status.ok()) {
    scope.UpdateStatus(errors::Annotate(
        value.status, absl::StrCat("Const '", scope.GetUniqueNameForOp("Const"), "': ")));
    return Output();
  }
  return Output(internal::BuildOp(scope, "Const", {},
                                  {{"value", value.tensor}, {"dtype", value.tensor.dtype()}}));
}

Output Const(const Scope& scope, const Input::Initializer& value, const TensorShape& shape) {
  if (!scope.ok() || !value.status.ok()) return Const(scope, value);
  const Tensor& v = value.tensor;
  Tensor t;
  if (v.NumElements() == 1) {
    absl::Status s = Tensor::Allocate(v.dtype(), shape, &t, scope.GetUniqueNameForOp("Const"));
    if (!s.ok()) {
      scope.UpdateStatus(s);
      return Output();
    }
    FillWith(v, &t);
  } else if (v.NumElements() == shape.num_elements()) {
    t.CopyFrom(v, shape);
  } else {
    scope.UpdateStatus(
        errors::InvalidArgument("Const '", scope.GetUniqueNameForOp("Const"),
                                "': a value of shape ", v.shape().DebugString(), " (",
                                v.NumElements(), " elements) can neither fill nor be reshaped to ",
                                shape.DebugString(), " (", shape.num_elements(), " elements)"));
    return Output();
  }
  return Const(scope, t);
}

Output ScalarConst(const Scope& scope, double value, DataType dtype) {
  dtype = BaseType(dtype);
  Tensor t(dtype, TensorShape());
  bool is_number = false;
  VisitDataType(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, std::string>) {
      t.scalar<T>() = static_cast<T>(value);
      is_number = true;
    }
  });
  if (!is_number) {
    scope.UpdateStatus(errors::InvalidArgument("cannot make a scalar constant of type ",
                                               DataTypeString(dtype), ": it is not a number"));
    return Output();
  }
  return Const(scope, t);
}

}  // namespace ops
}  // namespace distflow
