// Kernel for BroadcastGradientArgs: given the shapes s0 and s1 of two
// operands that broadcast together, r0 (r1) lists, ascending, the output
// dimensions along which s0 (s1) has extent 1 after left-padding with ones —
// the dimensions its gradient must be summed over. Shapes that do not
// broadcast are InvalidArgument naming both.
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/broadcast.h"

namespace distflow {
namespace {

template <typename T>
class BroadcastGradientArgsOp : public OpKernel {
 public:
  explicit BroadcastGradientArgsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    TensorShape shapes[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& s = ctx->input(i);
      OP_REQUIRES(ctx, s.dims() == 1,
                  errors::InvalidArgument("s", i, " must be a vector, got shape ",
                                          s.shape().DebugString()));
      std::vector<int64_t> dims(s.flat<T>().begin(), s.flat<T>().end());
      OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape(dims, &shapes[i]));
    }
    TensorShape out;
    OP_REQUIRES_OK(ctx, BroadcastTensorShapes(shapes[0], shapes[1], &out));
    const int rank = out.dims();
    for (int i = 0; i < 2; ++i) {
      std::vector<T> axes;
      const int pad = rank - shapes[i].dims();
      for (int d = 0; d < rank; ++d) {
        if (d < pad || shapes[i].dim_size(d - pad) == 1) axes.push_back(d);
      }
      Tensor* r = nullptr;
      OP_REQUIRES_OK(ctx,
                     ctx->allocate_output(i, TensorShape({static_cast<int64_t>(axes.size())}), &r));
      std::copy(axes.begin(), axes.end(), r->base<T>());
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("BroadcastGradientArgs")
                            .Device(kDeviceCpu)
                            .TypeConstraint<int32_t>("T")
                            .HostMemory("s0")
                            .HostMemory("s1")
                            .HostMemory("r0")
                            .HostMemory("r1"),
                        BroadcastGradientArgsOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("BroadcastGradientArgs")
                            .Device(kDeviceCpu)
                            .TypeConstraint<int64_t>("T")
                            .HostMemory("s0")
                            .HostMemory("s1")
                            .HostMemory("r0")
                            .HostMemory("r1"),
                        BroadcastGradientArgsOp<int64_t>);

}  // namespace
}  // namespace distflow
