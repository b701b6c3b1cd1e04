// Kernels asked for absurd sizes fail the step with an error naming the
// node (InvalidArgument when the size cannot exist, ResourceExhausted when
// it cannot be allocated) and leave the process running.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/common_runtime/session.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr int64_t k2p20 = int64_t{1} << 20;
constexpr int64_t k2p40 = int64_t{1} << 40;

Tensor Int64s(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(v); }

// Runs `fetch` with `feeds`; the scope's error when building failed.
absl::Status RunOnce(const Scope& root, const ClientSession::FeedType& feeds, const Output& fetch) {
  if (!root.ok()) return root.status();
  ClientSession session(root);
  if (!session.status().ok()) return session.status();
  std::vector<Tensor> out;
  return session.Run(feeds, {fetch}, &out);
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& node,
                 const std::string& text) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_THAT(s.message(), HasSubstr(node)) << s;
  EXPECT_THAT(s.message(), HasSubstr(text)) << s;
}

TEST(ResourceLimitsTest, FillWithOverflowingDimsIsInvalidArgument) {
  Scope root = Scope::NewRootScope();
  auto dims = ops::Placeholder(root.WithOpName("dims"), DT_INT64);
  auto fill = ops::Fill(root.WithOpName("huge_fill"), dims, 1.0f);
  ExpectError(RunOnce(root, {{dims, Int64s({k2p40, k2p40})}}, fill),
              absl::StatusCode::kInvalidArgument, "huge_fill", "2^63");
}

TEST(ResourceLimitsTest, FillTooBigToAllocateIsResourceExhausted) {
  Scope root = Scope::NewRootScope();
  auto dims = ops::Placeholder(root.WithOpName("dims"), DT_INT64);
  auto fill = ops::Fill(root.WithOpName("big_fill"), dims, 1.0f);
  // 2^40 floats: 4 TiB.
  ExpectError(RunOnce(root, {{dims, Int64s({k2p20, k2p20})}}, fill),
              absl::StatusCode::kResourceExhausted, "big_fill",
              "OOM when allocating tensor of shape [1048576,1048576] and type float32 "
              "for node 'big_fill'");
}

TEST(ResourceLimitsTest, PerTensorCapFailsInsteadOfAllocating) {
  const int64_t saved = MaxTensorBytes();
  SetMaxTensorBytes(1 << 20);
  Scope root = Scope::NewRootScope();
  auto dims = ops::Placeholder(root.WithOpName("dims"), DT_INT64);
  auto fill = ops::Fill(root.WithOpName("capped_fill"), dims, 1.0f);
  absl::Status s = RunOnce(root, {{dims, Int64s({1024, 1024})}}, fill);
  absl::Status ok = RunOnce(root, {{dims, Int64s({512, 512})}}, fill);
  SetMaxTensorBytes(saved);
  ExpectError(s, absl::StatusCode::kResourceExhausted, "capped_fill",
              "4194304 bytes exceed the limit of 1048576 bytes");
  EXPECT_TRUE(ok.ok()) << ok;
}

TEST(ResourceLimitsTest, RangeWithTooManyElements) {
  Scope root = Scope::NewRootScope();
  auto start = ops::Placeholder(root.WithOpName("start"), DT_INT64);
  auto limit = ops::Placeholder(root.WithOpName("limit"), DT_INT64);
  auto range = ops::Range(root.WithOpName("huge_range"), start, limit, int64_t{1});
  // 2^64 - 1 elements: more than int64 counts (it used to abort on a
  // negative dimension).
  ExpectError(RunOnce(root,
                      {{start, Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::min())},
                       {limit, Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::max())}},
                      range),
              absl::StatusCode::kInvalidArgument, "huge_range", "too many elements");
  // 2^40 int64s: 8 TiB.
  ExpectError(
      RunOnce(root, {{start, Tensor::Scalar<int64_t>(0)}, {limit, Tensor::Scalar<int64_t>(k2p40)}},
              range),
      absl::StatusCode::kResourceExhausted, "huge_range", "OOM when allocating");
}

TEST(ResourceLimitsTest, OneHotWithHugeDepth) {
  Scope root = Scope::NewRootScope();
  auto depth = ops::Placeholder(root.WithOpName("depth"), DT_INT32);
  auto indices = ops::Placeholder(root.WithOpName("indices"), DT_INT64);
  auto one_hot = ops::OneHot(root.WithOpName("huge_one_hot"), indices, depth, 1.0f, 0.0f);
  // Depth 2^30 for each of 2^12 indices: 2^42 floats.
  ExpectError(RunOnce(root,
                      {{depth, Tensor::Scalar<int32_t>(1 << 30)},
                       {indices, Tensor(DT_INT64, TensorShape({4096}))}},
                      one_hot),
              absl::StatusCode::kResourceExhausted, "huge_one_hot", "OOM when allocating");
}

TEST(ResourceLimitsTest, OneHotWithTheLargestDepth) {
  // depth is int32 (as in TensorFlow): 2^31 - 1 for each of 1024 indices.
  Scope root = Scope::NewRootScope();
  auto depth = ops::Placeholder(root.WithOpName("depth"), DT_INT32);
  auto indices = ops::Placeholder(root.WithOpName("indices"), DT_INT64);
  auto one_hot = ops::OneHot(root.WithOpName("deep_one_hot"), indices, depth, 1.0f, 0.0f);
  std::vector<int64_t> ix(1024, 3);
  ExpectError(RunOnce(root,
                      {{depth, Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::max())},
                       {indices, Int64s(ix)}},
                      one_hot),
              absl::StatusCode::kResourceExhausted, "deep_one_hot",
              "OOM when allocating tensor of shape [1024,2147483647]");
}

TEST(ResourceLimitsTest, TileWithHugeMultiples) {
  Scope root = Scope::NewRootScope();
  auto multiples = ops::Placeholder(root.WithOpName("multiples"), DT_INT64);
  auto x = ops::Const(root, {{1.0f}});
  auto tile = ops::Tile(root.WithOpName("huge_tile"), x, multiples);
  ExpectError(RunOnce(root, {{multiples, Int64s({k2p40, k2p40})}}, tile),
              absl::StatusCode::kInvalidArgument, "huge_tile", "2^63");
  ExpectError(RunOnce(root, {{multiples, Int64s({k2p20, k2p20})}}, tile),
              absl::StatusCode::kResourceExhausted, "huge_tile", "OOM when allocating");
}

TEST(ResourceLimitsTest, BroadcastTooBigToAllocate) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  auto sum = ops::AddV2(root.WithOpName("huge_broadcast"), a, b);
  // [2^20,1] + [1,2^20]: 4 MiB each, 4 TiB broadcast.
  Tensor ta(DT_FLOAT, TensorShape({k2p20, 1}));
  Tensor tb(DT_FLOAT, TensorShape({1, k2p20}));
  ExpectError(RunOnce(root, {{a, ta}, {b, tb}}, sum), absl::StatusCode::kResourceExhausted,
              "huge_broadcast", "OOM when allocating");
}

TEST(ResourceLimitsTest, AddNOfMismatchedShapes) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  auto sum = ops::AddN(root.WithOpName("bad_add_n"), {a, b});
  ExpectError(RunOnce(root, {{a, {1.0f, 2.0f}}, {b, {1.0f, 2.0f, 3.0f}}}, sum),
              absl::StatusCode::kInvalidArgument, "bad_add_n", "same shape");
}

// A GraphDef written by hand (as a fuzzer would), run in a DirectSession.
absl::Status RunGraphDef(const GraphDef& def, const std::string& fetch) {
  auto session = NewSession(SessionOptions());
  if (!session.ok()) return session.status();
  absl::Status s = (*session)->Create(def);
  if (!s.ok()) return s;
  std::vector<Tensor> out;
  return (*session)->Run({}, {fetch}, {}, &out);
}

NodeDef* AddConst(GraphDef* def, const std::string& name, const TensorProto& value) {
  NodeDef* n = def->add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(value.dtype());
  *(*n->mutable_attr())["value"].mutable_tensor() = value;
  return n;
}

TEST(ResourceLimitsTest, ConstClaimingAHugeShapeWithShortContent) {
  GraphDef def;
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 62);
  p.set_tensor_content("abcd");
  AddConst(&def, "lying_const", p);
  absl::Status s = RunGraphDef(def, "lying_const");
  ExpectError(s, absl::StatusCode::kInvalidArgument, "lying_const", "tensor_content");

  // One value broadcast over 2^40 elements: valid, but not allocatable.
  GraphDef def2;
  TensorProto q;
  q.set_dtype(DT_FLOAT);
  q.mutable_tensor_shape()->add_dim()->set_size(k2p40);
  q.add_float_val(1.0f);
  AddConst(&def2, "huge_const", q);
  s = RunGraphDef(def2, "huge_const");
  EXPECT_TRUE(s.code() == absl::StatusCode::kResourceExhausted ||
              s.code() == absl::StatusCode::kInvalidArgument)
      << s;
  EXPECT_THAT(s.message(), HasSubstr("huge_const"));
}

TEST(ResourceLimitsTest, AddNWithAbsurdN) {
  GraphDef def;
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.add_float_val(1.0f);
  AddConst(&def, "one", p);
  NodeDef* n = def.add_node();
  n->set_name("absurd_add_n");
  n->set_op("AddN");
  n->add_input("one");
  n->add_input("one");
  (*n->mutable_attr())["T"].set_type(DT_FLOAT);
  (*n->mutable_attr())["N"].set_i(int64_t{1} << 62);
  absl::Status s = RunGraphDef(def, "absurd_add_n");
  ExpectError(s, absl::StatusCode::kInvalidArgument, "absurd_add_n", "N");
}

}  // namespace
}  // namespace distflow
