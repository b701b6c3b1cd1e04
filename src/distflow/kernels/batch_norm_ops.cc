// FusedBatchNormV3 and FusedBatchNormGradV3 on CPU for float, NHWC: the
// input is viewed as [rows = N * H * W, channels]. Per channel c, with x̂ =
// (x - mean) / sqrt(var + epsilon):
//   training:  mean, var = the batch's (var biased); the running outputs
//              are (1 - f) * old + f * batch (f = exponential_avg_factor;
//              the variance's batch value is the unbiased one, n / (n - 1));
//   inference: mean, var = the inputs, passed through.
//   grad (training):  dx = scale / sqrt(var + eps) / n *
//                          (n * dy - sum(dy) - x̂ * sum(dy * x̂))
//   grad (inference): dx = dy * scale / sqrt(var + eps)
//   scale_backprop = sum(dy * x̂), offset_backprop = sum(dy).
// Sums are accumulated in double; channels split over the intra-op pool.
#include <cmath>
#include <string>

#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/nn_kernel_util.h"

namespace distflow {
namespace {

absl::Status ReadAttrs(OpKernelConstruction* ctx, float* epsilon, bool* is_training) {
  std::string data_format;
  DF_RETURN_IF_ERROR(ctx->GetAttr("epsilon", epsilon));
  DF_RETURN_IF_ERROR(ctx->GetAttr("is_training", is_training));
  DF_RETURN_IF_ERROR(ctx->GetAttr("data_format", &data_format));
  if (data_format != "NHWC") {
    return errors::Unimplemented("node '", ctx->name(), "': data_format '", data_format,
                                 "' is not supported on CPU (use NHWC)");
  }
  return absl::OkStatus();
}

// InvalidArgument unless input `index` is a vector of `channels` entries.
absl::Status CheckChannelVector(OpKernelContext* ctx, int index, const char* what,
                                int64_t channels) {
  const Tensor& t = ctx->input(index);
  if (t.dims() == 1 && t.dim_size(0) == channels) return absl::OkStatus();
  return errors::InvalidArgument("node '", ctx->op_kernel().name(), "': ", what,
                                 " must be a vector of ", channels, " (the channels), got shape ",
                                 t.shape().DebugString());
}

absl::Status CheckInput(OpKernelContext* ctx, int index) {
  const Tensor& x = ctx->input(index);
  if (x.dims() != 4) {
    return errors::InvalidArgument("node '", ctx->op_kernel().name(),
                                   "': x must be 4-D NHWC, got shape ", x.shape().DebugString());
  }
  return absl::OkStatus();
}

class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &epsilon_, &is_training_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("exponential_avg_factor", &factor_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckInput(ctx, 0));
    const Tensor& x = ctx->input(0);
    const int64_t channels = x.dim_size(3);
    const int64_t rows = channels == 0 ? 0 : x.NumElements() / channels;
    const char* names[] = {"", "scale", "offset", "mean", "variance"};
    for (int i = 1; i < 5; ++i) {
      // In training the given mean and variance are only the running values
      // (TensorFlow accepts them empty when exponential_avg_factor is 1).
      if (is_training_ && i >= 3 && ctx->input(i).NumElements() == 0) continue;
      OP_REQUIRES_OK(ctx, CheckChannelVector(ctx, i, names[i], channels));
    }
    OP_REQUIRES(ctx, !is_training_ || rows > 0,
                errors::InvalidArgument("node '", name(),
                                        "': training needs at least one value per channel"));
    Tensor* outs[6];
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &outs[0]));
    for (int i = 1; i < 5; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({channels}), &outs[i]));
    }
    OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape({0}), &outs[5]));
    const float* in = x.base<float>();
    const float* scale = ctx->input(1).base<float>();
    const float* offset = ctx->input(2).base<float>();
    const bool have_running = ctx->input(3).NumElements() == channels;
    float* y = outs[0]->base<float>();
    nn::ParallelFor(ctx, channels, rows * 8, [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        double mean, var;
        if (is_training_) {
          double sum = 0, sq = 0;
          for (int64_t r = 0; r < rows; ++r) sum += in[r * channels + c];
          mean = sum / rows;
          for (int64_t r = 0; r < rows; ++r) {
            const double d = in[r * channels + c] - mean;
            sq += d * d;
          }
          var = sq / rows;
          const double unbiased = rows > 1 ? sq / (rows - 1) : var;
          const double old_mean = have_running ? ctx->input(3).base<float>()[c] : 0;
          const double old_var = have_running ? ctx->input(4).base<float>()[c] : 0;
          outs[1]->base<float>()[c] = static_cast<float>((1 - factor_) * old_mean + factor_ * mean);
          outs[2]->base<float>()[c] =
              static_cast<float>((1 - factor_) * old_var + factor_ * unbiased);
        } else {
          mean = ctx->input(3).base<float>()[c];
          var = ctx->input(4).base<float>()[c];
          outs[1]->base<float>()[c] = static_cast<float>(mean);
          outs[2]->base<float>()[c] = static_cast<float>(var);
        }
        outs[3]->base<float>()[c] = static_cast<float>(mean);
        outs[4]->base<float>()[c] = static_cast<float>(var);
        const double k = scale[c] / std::sqrt(var + epsilon_);
        for (int64_t r = 0; r < rows; ++r) {
          y[r * channels + c] = static_cast<float>((in[r * channels + c] - mean) * k + offset[c]);
        }
      }
    });
  }

 private:
  float epsilon_, factor_;
  bool is_training_;
};

class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &epsilon_, &is_training_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckInput(ctx, 1));
    const Tensor& dy_t = ctx->input(0);
    const Tensor& x = ctx->input(1);
    OP_REQUIRES(ctx, dy_t.shape() == x.shape(),
                errors::InvalidArgument("node '", name(), "': y_backprop has shape ",
                                        dy_t.shape().DebugString(), " but x has ",
                                        x.shape().DebugString()));
    const int64_t channels = x.dim_size(3);
    const int64_t rows = channels == 0 ? 0 : x.NumElements() / channels;
    OP_REQUIRES_OK(ctx, CheckChannelVector(ctx, 2, "scale", channels));
    OP_REQUIRES_OK(ctx, CheckChannelVector(ctx, 3, "reserve_space_1 (the mean)", channels));
    OP_REQUIRES_OK(ctx, CheckChannelVector(ctx, 4, "reserve_space_2 (the variance)", channels));
    Tensor *dx_t, *dscale, *doffset, *r4, *r5;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx_t));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({channels}), &dscale));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({channels}), &doffset));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({0}), &r4));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({0}), &r5));
    const float* dy = dy_t.base<float>();
    const float* in = x.base<float>();
    const float* scale = ctx->input(2).base<float>();
    const float* mean = ctx->input(3).base<float>();
    const float* var = ctx->input(4).base<float>();
    float* dx = dx_t->base<float>();
    nn::ParallelFor(ctx, channels, rows * 12, [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        const double inv = 1.0 / std::sqrt(static_cast<double>(var[c]) + epsilon_);
        double sum_dy = 0, sum_dy_xhat = 0;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = r * channels + c;
          sum_dy += dy[i];
          sum_dy_xhat += dy[i] * (in[i] - mean[c]) * inv;
        }
        dscale->base<float>()[c] = static_cast<float>(sum_dy_xhat);
        doffset->base<float>()[c] = static_cast<float>(sum_dy);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = r * channels + c;
          if (is_training_) {
            const double xhat = (in[i] - mean[c]) * inv;
            dx[i] = static_cast<float>(scale[c] * inv / rows *
                                       (rows * dy[i] - sum_dy - xhat * sum_dy_xhat));
          } else {
            dx[i] = static_cast<float>(dy[i] * scale[c] * inv);
          }
        }
      }
    });
  }

 private:
  float epsilon_;
  bool is_training_;
};

REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV3")
                            .Device(kDeviceCpu)
                            .TypeConstraint<float>("T")
                            .TypeConstraint<float>("U"),
                        FusedBatchNormOp);
REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV3")
                            .Device(kDeviceCpu)
                            .TypeConstraint<float>("T")
                            .TypeConstraint<float>("U"),
                        FusedBatchNormGradOp);

}  // namespace
}  // namespace distflow
