// Runs one CPU kernel outside any runtime, for kernel tests:
//   auto out = RunKernel("AddV2", {a, b}, {{"T", DT_FLOAT}});
// The node is built from the op name, the attrs and one input per tensor,
// validated against its OpDef, shape-inferred from the input shapes (the
// kernel's outputs must match the inferred shapes) and computed once.
#ifndef DISTFLOW_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define DISTFLOW_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/device_base.h"
#include "distflow/framework/tensor.h"
#include "gtest/gtest.h"

namespace distflow {
namespace test {

// One attr given to RunKernel; any type SetAttrValue accepts.
struct KernelAttr {
  template <typename T>
  KernelAttr(std::string n, T&& v) : name(std::move(n)) {  // NOLINT
    SetAttrValue(std::forward<T>(v), &value);
  }
  KernelAttr(std::string n, std::initializer_list<int64_t> v) : name(std::move(n)) {
    SetAttrValue(v, &value);
  }
  std::string name;
  AttrValue value;
};

// The outputs of the kernel, or the status it (or node validation, or shape
// inference) failed with.
absl::StatusOr<std::vector<Tensor>> RunKernel(const std::string& op,
                                              const std::vector<Tensor>& inputs,
                                              const std::vector<KernelAttr>& attrs = {});

// The CPU device RunKernel builds its kernels on (two intra-op threads),
// for tests that build and call a kernel themselves.
DeviceBase* TestDevice();

// A tensor of `shape` with `values` (row-major).
template <typename T>
Tensor AsTensor(std::vector<T> values, std::initializer_list<int64_t> shape) {
  return Tensor::FromVector<T>(absl::Span<const T>(values), TensorShape(shape));
}
template <typename T>
Tensor AsTensor(std::vector<T> values) {
  return Tensor::FromVector<T>(values);
}

// Same dtype, shape and values (floating types within `tol`, relative to magnitude).
void ExpectTensorEqual(const Tensor& expected, const Tensor& actual);
void ExpectTensorNear(const Tensor& expected, const Tensor& actual, double tol = 1e-5);

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
