// Shorthands for the array kernel tests: run a kernel and expect success or
// an error message, and run only an op's shape function on partial shapes.
#ifndef DISTFLOW_TESTS_KERNELS_ARRAY_TEST_UTIL_H_
#define DISTFLOW_TESTS_KERNELS_ARRAY_TEST_UTIL_H_

#include <string>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace test {

// A bool tensor (AsTensor cannot take std::vector<bool>).
inline Tensor AsBoolTensor(std::initializer_list<bool> values,
                           std::initializer_list<int64_t> shape) {
  return Tensor::FromVector<bool>(absl::Span<const bool>(values.begin(), values.size()),
                                  TensorShape(shape));
}

// An int32 tensor of `shape` holding start, start + 1, ... in row-major order.
inline Tensor Iota32(std::initializer_list<int64_t> shape, int32_t start = 0) {
  Tensor t(DT_INT32, TensorShape(shape));
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    t.flat<int32_t>()[i] = start + static_cast<int32_t>(i);
  }
  return t;
}

// The outputs of a kernel that must succeed (empty on failure, which is
// reported).
inline std::vector<Tensor> RunOk(const std::string& op, const std::vector<Tensor>& inputs,
                                 const std::vector<KernelAttr>& attrs) {
  auto out = RunKernel(op, inputs, attrs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

// Output 0 of a kernel that must succeed.
inline Tensor RunOne(const std::string& op, const std::vector<Tensor>& inputs,
                     const std::vector<KernelAttr>& attrs) {
  std::vector<Tensor> out = RunOk(op, inputs, attrs);
  EXPECT_EQ(out.size(), 1u) << op;
  return out.empty() ? Tensor() : out[0];
}

// Expects the kernel (or its shape function) to fail with InvalidArgument
// whose message contains `substr`.
inline void ExpectInvalid(const std::string& op, const std::vector<Tensor>& inputs,
                          const std::vector<KernelAttr>& attrs, const std::string& substr) {
  auto out = RunKernel(op, inputs, attrs);
  ASSERT_FALSE(out.ok()) << op << " succeeded; expected an error with: " << substr;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_THAT(std::string(out.status().message()), ::testing::HasSubstr(substr));
}

// Runs only the shape function of `op` on `shapes`, with `values[i]` the
// constant value of input i or nullptr.
inline absl::StatusOr<std::vector<PartialTensorShape>> InferShapes(
    const std::string& op, const std::vector<PartialTensorShape>& shapes,
    const std::vector<const Tensor*>& values, const std::vector<KernelAttr>& attrs) {
  NodeDef def;
  def.set_name("shape_node");
  def.set_op(op);
  for (size_t i = 0; i < shapes.size(); ++i) def.add_input("in" + std::to_string(i));
  for (const KernelAttr& a : attrs) (*def.mutable_attr())[a.name] = a.value;
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
  if (reg == nullptr) return errors::Unimplemented("op '", op, "' is not registered");
  AddDefaultsToNodeDef(reg->op_def, &def);
  DF_RETURN_IF_ERROR(ValidateNodeDef(def, reg->op_def));
  DataTypeVector in_types, out_types;
  DF_RETURN_IF_ERROR(InOutTypesForNode(def, reg->op_def, &in_types, &out_types));
  InferenceContext ic(def, reg->op_def, in_types, out_types, shapes, values);
  DF_RETURN_IF_ERROR(reg->shape_fn(&ic));
  return ic.outputs();
}

// The DebugString of output `i` of InferShapes, or the error text.
inline std::string InferredShape(const std::string& op,
                                 const std::vector<PartialTensorShape>& shapes,
                                 const std::vector<const Tensor*>& values,
                                 const std::vector<KernelAttr>& attrs, int i = 0) {
  auto out = InferShapes(op, shapes, values, attrs);
  if (!out.ok()) return std::string(out.status().message());
  return (*out)[i].DebugString();
}

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_KERNELS_ARRAY_TEST_UTIL_H_
