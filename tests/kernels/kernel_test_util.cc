#include "kernel_test_util.h"

#include <cmath>

#include "distflow/core/threadpool.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace test {
namespace {

class TestCpuDevice : public DeviceBase {
 public:
  TestCpuDevice() : pool_("test_intra_op", 2) {}
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  ThreadPool* intra_op_threadpool() const override { return &pool_; }

 private:
  std::string name_ = "/job:localhost/replica:0/task:0/device:CPU:0";
  std::string type_ = kDeviceCpu;
  mutable ThreadPool pool_;
};

}  // namespace

DeviceBase* TestDevice() {
  static TestCpuDevice* device = new TestCpuDevice;
  return device;
}

absl::StatusOr<std::vector<Tensor>> RunKernel(const std::string& op,
                                              const std::vector<Tensor>& inputs,
                                              const std::vector<KernelAttr>& attrs) {
  NodeDef def;
  def.set_name("test_node");
  def.set_op(op);
  for (size_t i = 0; i < inputs.size(); ++i) def.add_input("in" + std::to_string(i));
  for (const KernelAttr& a : attrs) (*def.mutable_attr())[a.name] = a.value;
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
  if (reg == nullptr) return errors::Unimplemented("op '", op, "' is not registered");
  AddDefaultsToNodeDef(reg->op_def, &def);
  DF_RETURN_IF_ERROR(ValidateNodeDef(def, reg->op_def));

  DataTypeVector in_types, out_types;
  DF_RETURN_IF_ERROR(InOutTypesForNode(def, reg->op_def, &in_types, &out_types));
  std::vector<PartialTensorShape> shapes;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != BaseType(in_types[i])) {
      return errors::InvalidArgument("test input ", i, " is ", DataTypeString(inputs[i].dtype()),
                                     " but the node expects ", DataTypeString(in_types[i]));
    }
    shapes.emplace_back(inputs[i].shape());
    values.push_back(&inputs[i]);
  }
  InferenceContext ic(def, reg->op_def, in_types, out_types, shapes, values);
  DF_RETURN_IF_ERROR(reg->shape_fn(&ic));

  DeviceBase* device = TestDevice();
  DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateKernel(device, def));
  // Inputs are copies, so the kernel may forward buffers it holds alone.
  std::vector<Tensor> owned = inputs;
  std::vector<TensorValue> tvs;
  for (Tensor& t : owned) tvs.emplace_back(&t);
  OpKernelContext::Params params;
  params.op_kernel = kernel.get();
  params.device = device;
  params.inputs = tvs.data();
  params.num_inputs = static_cast<int>(tvs.size());
  OpKernelContext ctx(&params);
  kernel->Compute(&ctx);
  DF_RETURN_IF_ERROR(ctx.status());
  std::vector<Tensor> out;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Tensor* t = ctx.mutable_output(i);
    if (t == nullptr) return errors::Internal("kernel did not set output ", i);
    if (t->dtype() != BaseType(out_types[i])) {
      return errors::Internal("output ", i, " is ", DataTypeString(t->dtype()),
                              " but the op declares ", DataTypeString(out_types[i]));
    }
    if (!ic.output(i).IsCompatibleWith(t->shape())) {
      return errors::Internal("output ", i, " has shape ", t->shape().DebugString(),
                              " but shape inference said ", ic.output(i).DebugString());
    }
    out.push_back(*t);
  }
  return out;
}

void ExpectTensorEqual(const Tensor& expected, const Tensor& actual) {
  ASSERT_EQ(DataTypeString(expected.dtype()), DataTypeString(actual.dtype()));
  ASSERT_EQ(expected.shape().DebugString(), actual.shape().DebugString());
  EXPECT_EQ(expected.SummarizeValue(1 << 20), actual.SummarizeValue(1 << 20));
}

void ExpectTensorNear(const Tensor& expected, const Tensor& actual, double tol) {
  ASSERT_EQ(DataTypeString(expected.dtype()), DataTypeString(actual.dtype()));
  ASSERT_EQ(expected.shape().DebugString(), actual.shape().DebugString());
  auto check = [&](auto zero) {
    using T = decltype(zero);
    auto e = expected.flat<T>();
    auto a = actual.flat<T>();
    for (size_t i = 0; i < e.size(); ++i) {
      const double ev = static_cast<double>(e[i]), av = static_cast<double>(a[i]);
      if (std::isnan(ev)) {
        EXPECT_TRUE(std::isnan(av)) << "element " << i;
        continue;
      }
      if (std::isinf(ev)) {
        EXPECT_EQ(ev, av) << "element " << i;
        continue;
      }
      EXPECT_NEAR(ev, av, tol * std::max(1.0, std::fabs(ev))) << "element " << i;
    }
  };
  switch (expected.dtype()) {
    case DT_FLOAT:
      check(float{});
      break;
    case DT_DOUBLE:
      check(double{});
      break;
    case DT_BFLOAT16:
      check(bfloat16{});
      break;
    default:
      ExpectTensorEqual(expected, actual);
  }
}

}  // namespace test
}  // namespace distflow
