// RandomUniform, RandomStandardNormal and TruncatedNormal: determinism for
// fixed seeds, continuation of a kernel's stream across Compute calls, value
// ranges and rough statistics of 100k samples.
#include <cmath>
#include <memory>

#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// Runs `op` once (a fresh kernel) for a float/double/bfloat16 `dtype`.
absl::StatusOr<Tensor> RunRandom(const std::string& op, DataType dtype, const Tensor& shape,
                                 int64_t seed, int64_t seed2) {
  auto out = test::RunKernel(
      op, {shape}, {{"dtype", dtype}, {"T", shape.dtype()}, {"seed", seed}, {"seed2", seed2}});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

Tensor Shape(std::vector<int32_t> dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  return test::AsTensor<int32_t>(dims, {n});
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v;
  auto visit = [&](auto zero) {
    using T = decltype(zero);
    for (const T& x : t.flat<T>()) v.push_back(static_cast<double>(x));
  };
  if (t.dtype() == DT_FLOAT) visit(float{});
  if (t.dtype() == DT_DOUBLE) visit(double{});
  if (t.dtype() == DT_BFLOAT16) visit(bfloat16{});
  return v;
}

struct Moments {
  double mean, stddev, min, max;
};

Moments ComputeMoments(const std::vector<double>& v) {
  double sum = 0, sq = 0, lo = v[0], hi = v[0];
  for (double x : v) {
    sum += x;
    sq += x * x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double mean = sum / v.size();
  return {mean, std::sqrt(sq / v.size() - mean * mean), lo, hi};
}

class RandomDistributionTest : public ::testing::TestWithParam<DataType> {};

TEST_P(RandomDistributionTest, UniformRangeAndMoments) {
  auto out = RunRandom("RandomUniform", GetParam(), Shape({100, 1000}), 87, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape().DebugString(), "[100,1000]");
  const Moments m = ComputeMoments(AsDoubles(*out));
  EXPECT_GE(m.min, 0.0);
  EXPECT_LT(m.max, 1.0);
  EXPECT_NEAR(m.mean, 0.5, 0.01);
  EXPECT_NEAR(m.stddev, std::sqrt(1.0 / 12), 0.01);
}

TEST_P(RandomDistributionTest, StandardNormalMoments) {
  auto out = RunRandom("RandomStandardNormal", GetParam(), Shape({100000}), 87, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  const Moments m = ComputeMoments(AsDoubles(*out));
  EXPECT_NEAR(m.mean, 0.0, 0.02);
  EXPECT_NEAR(m.stddev, 1.0, 0.02);
  EXPECT_LT(m.min, -3.0);  // a tail this light has ~135 draws below -3
  EXPECT_GT(m.max, 3.0);
}

TEST_P(RandomDistributionTest, TruncatedNormalWithinTwoStddevs) {
  auto out = RunRandom("TruncatedNormal", GetParam(), Shape({100000}), 87, 5);
  ASSERT_TRUE(out.ok()) << out.status();
  const Moments m = ComputeMoments(AsDoubles(*out));
  EXPECT_GE(m.min, -2.0);
  EXPECT_LE(m.max, 2.0);
  EXPECT_NEAR(m.mean, 0.0, 0.02);
  // The stddev of a standard normal truncated to [-2, 2] is about 0.8796.
  EXPECT_NEAR(m.stddev, 0.8796, 0.02);
}

TEST_P(RandomDistributionTest, SameSeedsSameValuesDifferentSeedsDiffer) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    auto a = RunRandom(op, GetParam(), Shape({4, 8}), 1, 2);
    auto b = RunRandom(op, GetParam(), Shape({4, 8}), 1, 2);
    auto c = RunRandom(op, GetParam(), Shape({4, 8}), 1, 3);
    auto d = RunRandom(op, GetParam(), Shape({4, 8}), 2, 2);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok()) << op;
    test::ExpectTensorEqual(*a, *b);
    EXPECT_NE(AsDoubles(*a), AsDoubles(*c)) << op;
    EXPECT_NE(AsDoubles(*a), AsDoubles(*d)) << op;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RandomDistributionTest,
                         ::testing::Values(DT_FLOAT, DT_DOUBLE, DT_BFLOAT16),
                         [](const auto& info) { return DataTypeString(info.param); });

TEST(RandomOpsTest, ZeroSeedsAreNondeterministic) {
  auto a = RunRandom("RandomUniform", DT_DOUBLE, Shape({16}), 0, 0);
  auto b = RunRandom("RandomUniform", DT_DOUBLE, Shape({16}), 0, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(AsDoubles(*a), AsDoubles(*b));
}

TEST(RandomOpsTest, Int64ShapeAndScalarAndEmpty) {
  auto out =
      RunRandom("RandomStandardNormal", DT_FLOAT, test::AsTensor<int64_t>({2, 3, 4}, {3}), 7, 7);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape().DebugString(), "[2,3,4]");
  auto scalar = RunRandom("RandomUniform", DT_FLOAT, Shape({}), 7, 7);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->shape().DebugString(), "[]");
  auto empty = RunRandom("TruncatedNormal", DT_DOUBLE, Shape({3, 0}), 7, 7);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->NumElements(), 0);
}

TEST(RandomOpsTest, BadShapes) {
  auto negative = RunRandom("RandomUniform", DT_FLOAT, Shape({2, -3}), 1, 1);
  ASSERT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.status().message(), HasSubstr("-3"));
  // -1 means "unknown" to shape inference; the kernel rejects it.
  auto unknown = RunRandom("RandomUniform", DT_FLOAT, Shape({-1}), 1, 1);
  ASSERT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("-1"));
  auto matrix =
      RunRandom("RandomUniform", DT_FLOAT, test::AsTensor<int32_t>({1, 2, 3, 4}, {2, 2}), 1, 1);
  ASSERT_EQ(matrix.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(matrix.status().message(), HasSubstr("[2,2]"));
}

TEST(RandomOpsTest, OpsAreStateful) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
    ASSERT_NE(reg, nullptr) << op;
    EXPECT_TRUE(reg->op_def.is_stateful()) << op;
  }
}

// One kernel instance computed several times, as an executor would across
// steps.
class KernelInstance {
 public:
  KernelInstance(const std::string& op, int64_t seed, int64_t seed2) {
    NodeDef def;
    def.set_name("random");
    def.set_op(op);
    def.add_input("shape");
    test::KernelAttr attrs[] = {
        {"dtype", DT_FLOAT}, {"T", DT_INT32}, {"seed", seed}, {"seed2", seed2}};
    for (const auto& a : attrs) (*def.mutable_attr())[a.name] = a.value;
    AddDefaultsToNodeDef(OpRegistry::Global()->LookUp(op)->op_def, &def);
    auto kernel = KernelRegistry::Global()->CreateKernel(&device_, def);
    DF_CHECK(kernel.ok());
    kernel_ = std::move(kernel).value();
  }

  Tensor Compute(int32_t n) {
    Tensor shape = Shape({n});
    TensorValue input(&shape);
    OpKernelContext::Params params;
    params.op_kernel = kernel_.get();
    params.device = &device_;
    params.inputs = &input;
    params.num_inputs = 1;
    OpKernelContext ctx(&params);
    kernel_->Compute(&ctx);
    DF_CHECK(ctx.status().ok());
    return *ctx.mutable_output(0);
  }

 private:
  class Device : public DeviceBase {
   public:
    const std::string& name() const override { return name_; }
    const std::string& device_type() const override { return type_; }

   private:
    std::string name_ = "/job:localhost/replica:0/task:0/device:CPU:0";
    std::string type_ = kDeviceCpu;
  };
  Device device_;
  std::unique_ptr<OpKernel> kernel_;
};

TEST(RandomOpsTest, SuccessiveComputesContinueTheStream) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    KernelInstance stepwise(op, 11, 12);
    const std::vector<double> first = AsDoubles(stepwise.Compute(3));
    const std::vector<double> second = AsDoubles(stepwise.Compute(5));
    EXPECT_NE(first, std::vector<double>(second.begin(), second.begin() + 3)) << op;
    KernelInstance at_once(op, 11, 12);
    std::vector<double> joined = first;
    joined.insert(joined.end(), second.begin(), second.end());
    EXPECT_EQ(AsDoubles(at_once.Compute(8)), joined) << op;
  }
}

}  // namespace
}  // namespace distflow
