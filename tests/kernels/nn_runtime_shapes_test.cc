// The NN and random ops when shapes are only partly known while the graph is
// built: shape functions on partial shapes, and kernels run without shape
// inference (as the executor does) rejecting bad inputs themselves.
#include <memory>

#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

NodeDef MakeNode(const std::string& op, int num_inputs,
                 const std::vector<test::KernelAttr>& attrs) {
  NodeDef def;
  def.set_name("n");
  def.set_op(op);
  for (int i = 0; i < num_inputs; ++i) def.add_input("in" + std::to_string(i));
  for (const auto& a : attrs) (*def.mutable_attr())[a.name] = a.value;
  AddDefaultsToNodeDef(OpRegistry::Global()->LookUp(op)->op_def, &def);
  return def;
}

// The output shapes `op`'s shape function infers from `inputs`, as strings.
absl::StatusOr<std::vector<std::string>> Infer(const std::string& op,
                                               std::vector<PartialTensorShape> inputs,
                                               const std::vector<test::KernelAttr>& attrs,
                                               std::vector<const Tensor*> values = {}) {
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
  const NodeDef def = MakeNode(op, static_cast<int>(inputs.size()), attrs);
  DataTypeVector in_types, out_types;
  DF_RETURN_IF_ERROR(InOutTypesForNode(def, reg->op_def, &in_types, &out_types));
  InferenceContext c(def, reg->op_def, in_types, out_types, std::move(inputs), std::move(values));
  DF_RETURN_IF_ERROR(reg->shape_fn(&c));
  std::vector<std::string> out;
  for (const PartialTensorShape& s : c.outputs()) out.push_back(s.DebugString());
  return out;
}

const PartialTensorShape kUnknown = PartialTensorShape::Unknown();

TEST(NnShapeFnTest, Activations) {
  EXPECT_THAT(*Infer("Relu", {PartialTensorShape({-1, 3})}, {{"T", DT_FLOAT}}),
              ::testing::ElementsAre("[?,3]"));
  EXPECT_THAT(*Infer("ReluGrad", {PartialTensorShape({-1, 3}), PartialTensorShape({2, -1})},
                     {{"T", DT_FLOAT}}),
              ::testing::ElementsAre("[2,3]"));
  auto bad = Infer("SoftplusGrad", {PartialTensorShape({-1, 3}), PartialTensorShape({2, 4})},
                   {{"T", DT_FLOAT}});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("[?,3]"));
  EXPECT_THAT(bad.status().message(), HasSubstr("[2,4]"));
}

TEST(NnShapeFnTest, BiasAdd) {
  EXPECT_THAT(
      *Infer("BiasAdd", {PartialTensorShape({-1, -1}), PartialTensorShape({3})}, {{"T", DT_FLOAT}}),
      ::testing::ElementsAre("[?,3]"));
  EXPECT_THAT(*Infer("BiasAdd", {PartialTensorShape({-1, -1, 5}), PartialTensorShape({4})},
                     {{"T", DT_FLOAT}, {"data_format", "NCHW"}}),
              ::testing::ElementsAre("[?,4,5]"));
  EXPECT_THAT(*Infer("BiasAdd", {kUnknown, kUnknown}, {{"T", DT_FLOAT}}),
              ::testing::ElementsAre("<unknown>"));
  EXPECT_THAT(*Infer("BiasAddGrad", {PartialTensorShape({-1, 2, 7})},
                     {{"T", DT_FLOAT}, {"data_format", "NCHW"}}),
              ::testing::ElementsAre("[2]"));
  EXPECT_THAT(*Infer("BiasAddGrad", {kUnknown}, {{"T", DT_FLOAT}}), ::testing::ElementsAre("[?]"));
}

TEST(NnShapeFnTest, SoftmaxAndL2Loss) {
  EXPECT_THAT(*Infer("LogSoftmax", {PartialTensorShape({-1, 10})}, {{"T", DT_FLOAT}}),
              ::testing::ElementsAre("[?,10]"));
  EXPECT_THAT(*Infer("L2Loss", {kUnknown}, {{"T", DT_FLOAT}}), ::testing::ElementsAre("[]"));
}

TEST(NnShapeFnTest, CrossEntropy) {
  EXPECT_THAT(
      *Infer("SoftmaxCrossEntropyWithLogits",
             {PartialTensorShape({-1, 10}), PartialTensorShape({8, -1})}, {{"T", DT_FLOAT}}),
      ::testing::ElementsAre("[8]", "[8,10]"));
  EXPECT_THAT(*Infer("SoftmaxCrossEntropyWithLogits", {kUnknown, kUnknown}, {{"T", DT_FLOAT}}),
              ::testing::ElementsAre("[?]", "[?,?]"));
  EXPECT_THAT(*Infer("SparseSoftmaxCrossEntropyWithLogits",
                     {PartialTensorShape({-1, 5}), PartialTensorShape({4})}, {{"T", DT_FLOAT}}),
              ::testing::ElementsAre("[4]", "[4,5]"));
  auto bad = Infer("SparseSoftmaxCrossEntropyWithLogits",
                   {PartialTensorShape({-1, 5}), PartialTensorShape({4, 1})}, {{"T", DT_FLOAT}});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("labels shape [4,1]"));
}

TEST(RandomShapeFnTest, ShapeTensorOfUnknownValue) {
  const std::vector<test::KernelAttr> attrs = {{"dtype", DT_FLOAT}, {"T", DT_INT32}};
  EXPECT_THAT(*Infer("RandomUniform", {PartialTensorShape({3})}, attrs),
              ::testing::ElementsAre("[?,?,?]"));
  EXPECT_THAT(*Infer("TruncatedNormal", {kUnknown}, attrs), ::testing::ElementsAre("<unknown>"));
  const Tensor value = test::AsTensor<int32_t>({2, -1}, {2});
  EXPECT_THAT(*Infer("RandomStandardNormal", {PartialTensorShape({2})}, attrs, {&value}),
              ::testing::ElementsAre("[2,?]"));
  auto bad = Infer("RandomUniform", {PartialTensorShape({2, 2})}, attrs);
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("[2,2]"));
}

// Runs a CPU kernel once without shape inference; returns its status.
absl::Status ComputeDirectly(const std::string& op, std::vector<Tensor> inputs,
                             const std::vector<test::KernelAttr>& attrs) {
  class Device : public DeviceBase {
   public:
    const std::string& name() const override { return name_; }
    const std::string& device_type() const override { return type_; }

   private:
    std::string name_ = "/job:localhost/replica:0/task:0/device:CPU:0";
    std::string type_ = kDeviceCpu;
  };
  Device device;
  const NodeDef def = MakeNode(op, static_cast<int>(inputs.size()), attrs);
  DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateKernel(&device, def));
  std::vector<TensorValue> values;
  for (Tensor& t : inputs) values.emplace_back(&t);
  OpKernelContext::Params params;
  params.op_kernel = kernel.get();
  params.device = &device;
  params.inputs = values.data();
  params.num_inputs = static_cast<int>(values.size());
  OpKernelContext ctx(&params);
  kernel->Compute(&ctx);
  return ctx.status();
}

Tensor Floats(std::initializer_list<int64_t> shape) {
  Tensor t(DT_FLOAT, TensorShape(shape));
  for (float& v : t.flat<float>()) v = 1;
  return t;
}

void ExpectInvalid(const absl::Status& s, std::vector<std::string> parts) {
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

TEST(NnKernelValidationTest, KernelsCheckShapesThemselves) {
  const std::vector<test::KernelAttr> f = {{"T", DT_FLOAT}};
  ExpectInvalid(ComputeDirectly("ReluGrad", {Floats({2}), Floats({3})}, f),
                {"gradients shape [2]", "features shape [3]"});
  ExpectInvalid(ComputeDirectly("EluGrad", {Floats({2}), Floats({1, 2})}, f),
                {"gradients shape [2]", "outputs shape [1,2]"});
  ExpectInvalid(ComputeDirectly("Softmax", {Floats({})}, f), {"rank >= 1", "[]"});
  ExpectInvalid(ComputeDirectly("BiasAdd", {Floats({2, 3}), Floats({2})}, f),
                {"bias shape [2]", "value shape [2,3]"});
  ExpectInvalid(ComputeDirectly("BiasAdd", {Floats({3}), Floats({3})}, f), {"at least 2-D", "[3]"});
  ExpectInvalid(ComputeDirectly("BiasAdd", {Floats({2, 3}), Floats({1, 3})}, f), {"1-D", "[1,3]"});
  ExpectInvalid(ComputeDirectly("BiasAddGrad", {Floats({4})}, f), {"at least 2-D", "[4]"});
  ExpectInvalid(
      ComputeDirectly("SoftmaxCrossEntropyWithLogits", {Floats({2, 3}), Floats({3, 3})}, f),
      {"logits shape [2,3]", "labels shape [3,3]"});
  ExpectInvalid(
      ComputeDirectly("SoftmaxCrossEntropyWithLogits", {Floats({2, 3, 1}), Floats({2, 3})}, f),
      {"2-D", "logits shape [2,3,1]"});
  ExpectInvalid(ComputeDirectly("SparseSoftmaxCrossEntropyWithLogits",
                                {Floats({2, 3}), test::AsTensor<int64_t>({0}, {1})}, f),
                {"logits shape [2,3]", "labels shape [1]"});
  ExpectInvalid(ComputeDirectly("RandomUniform", {test::AsTensor<int32_t>({2}, {})},
                                {{"dtype", DT_FLOAT}, {"T", DT_INT32}}),
                {"1-D", "shape []"});
  ExpectInvalid(ComputeDirectly("RandomUniform", {test::AsTensor<int64_t>({4, -2}, {2})},
                                {{"dtype", DT_FLOAT}, {"T", DT_INT64}}),
                {"-2"});
}

}  // namespace
}  // namespace distflow
