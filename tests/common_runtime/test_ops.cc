#include "test_ops.h"

#include <atomic>

#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace test {

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& device) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  n->set_device(device);
  return n;
}

NodeDef* AddConst(GraphDef* g, const std::string& name, int64_t value, const std::string& device) {
  NodeDef* n = AddNode(g, name, "TestConst", {}, device);
  AddNodeAttr("value", value, n);
  return n;
}

NodeDef* AddPlaceholder(GraphDef* g, const std::string& name, DataType dtype,
                        const PartialTensorShape& shape, const std::string& device) {
  NodeDef* n = AddNode(g, name, "Placeholder", {}, device);
  AddNodeAttr("dtype", dtype, n);
  AddNodeAttr("shape", shape, n);
  return n;
}

namespace {

REGISTER_OP("TestConst").Output("out: int64").Attr("value: int").SetShapeFn(ScalarShape);
REGISTER_OP("TestAdd")
    .Input("a: int64")
    .Input("b: int64")
    .Output("sum: int64")
    .SetShapeFn(UnchangedShape);
REGISTER_OP("TestSum").Input("x: N * int64").Output("sum: int64").SetShapeFn(UnchangedShape);
REGISTER_OP("TestAddOne")
    .Input("x: int64")
    .Output("y: int64")
    .Attr("expensive: bool = false")
    .SetShapeFn(UnchangedShape);
REGISTER_OP("TestAsyncAddOne").Input("x: int64").Output("y: int64").SetShapeFn(UnchangedShape);
REGISTER_OP("TestFail").Input("x: int64").Output("y: int64").SetShapeFn(UnchangedShape);
REGISTER_OP("TestBlock").Input("x: int64").Output("y: int64").SetShapeFn(UnchangedShape);
REGISTER_OP("TestCounter").Output("count: int64").SetIsStateful().SetShapeFn(ScalarShape);

// out = a + b elementwise (b may be a scalar).
Tensor AddTensors(const Tensor& a, const Tensor& b) {
  Tensor out(DT_INT64, a.shape());
  auto x = a.flat<int64_t>();
  auto y = b.flat<int64_t>();
  auto z = out.flat<int64_t>();
  for (size_t i = 0; i < z.size(); ++i) z[i] = x[i] + y[y.size() == 1 ? 0 : i];
  return out;
}

class TestConstOp : public OpKernel {
 public:
  explicit TestConstOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    int64_t v = 0;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("value", &v));
    value_ = Tensor::Scalar<int64_t>(v);
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;
};

class TestAddOp : public OpKernel {
 public:
  explicit TestAddOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, AddTensors(ctx->input(0), ctx->input(1)));
  }
};

class TestSumOp : public OpKernel {
 public:
  explicit TestSumOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    Tensor sum = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) sum = AddTensors(sum, ctx->input(i));
    ctx->set_output(0, sum);
  }
};

class TestAddOneOp : public OpKernel {
 public:
  explicit TestAddOneOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    bool expensive = false;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("expensive", &expensive));
    set_expensive(expensive);
  }
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, AddTensors(ctx->input(0), Tensor::Scalar<int64_t>(1)));
  }
};

class TestAsyncAddOneOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    (*ctx->params()->runner)([ctx, done] {
      ctx->set_output(0, AddTensors(ctx->input(0), Tensor::Scalar<int64_t>(1)));
      done();
    });
  }
};

class TestFailOp : public OpKernel {
 public:
  explicit TestFailOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { ctx->SetStatus(errors::InvalidArgument("boom")); }
};

// Finishes only when the step's cancellation manager is cancelled.
class TestBlockOp : public AsyncOpKernel {
 public:
  explicit TestBlockOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) { set_expensive(false); }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    CancellationManager* cm = ctx->cancellation_manager();
    OP_REQUIRES_ASYNC(ctx, cm != nullptr,
                      errors::Internal("TestBlock needs a cancellation manager"), done);
    auto finish = [ctx, done] {
      ctx->SetStatus(errors::Cancelled("TestBlock was cancelled"));
      done();
    };
    if (!cm->RegisterCallback(cm->get_cancellation_token(), finish)) finish();
  }
};

class TestCounterOp : public OpKernel {
 public:
  explicit TestCounterOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, Tensor::Scalar<int64_t>(++count_));
  }

 private:
  std::atomic<int64_t> count_{0};
};

REGISTER_KERNEL_BUILDER(Name("TestConst").Device(kDeviceCpu), TestConstOp);
REGISTER_KERNEL_BUILDER(Name("TestAdd").Device(kDeviceCpu), TestAddOp);
REGISTER_KERNEL_BUILDER(Name("TestSum").Device(kDeviceCpu), TestSumOp);
REGISTER_KERNEL_BUILDER(Name("TestAddOne").Device(kDeviceCpu), TestAddOneOp);
REGISTER_KERNEL_BUILDER(Name("TestAsyncAddOne").Device(kDeviceCpu), TestAsyncAddOneOp);
REGISTER_KERNEL_BUILDER(Name("TestFail").Device(kDeviceCpu), TestFailOp);
REGISTER_KERNEL_BUILDER(Name("TestBlock").Device(kDeviceCpu), TestBlockOp);
REGISTER_KERNEL_BUILDER(Name("TestCounter").Device(kDeviceCpu), TestCounterOp);

}  // namespace
}  // namespace test
}  // namespace distflow
