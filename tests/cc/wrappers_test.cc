// The op wrappers: each builds the right op with its attrs, inferred types
// and shapes, and construction errors name the node.
#include <functional>

#include "distflow/cc/ops/standard_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
T Attr(const Output& out, const std::string& name) {
  T value{};
  absl::Status s = GetNodeAttr(out.node()->attrs(), name, &value);
  EXPECT_TRUE(s.ok()) << s;
  return value;
}

class WrappersTest : public ::testing::Test {
 protected:
  std::string ShapeOf(const Output& out) {
    return root_.refiner()->OutputShape(out.node(), out.index()).DebugString();
  }

  Scope root_ = Scope::NewRootScope();
  // float [2,3]
  Output x_ = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({2, 3}));
};

// One wrapper and the op it must build.
struct Case {
  const char* op;
  std::function<Operation(const Scope&, const Output& x)> build;
};

TEST_F(WrappersTest, EveryWrapperBuildsItsOp) {
  const Output& x = x_;
  const std::vector<Case> cases = {
      {"Const", [](const Scope& s, const Output&) { return ops::Const(s, 1.f).op(); }},
      {"Placeholder",
       [](const Scope& s, const Output&) { return ops::Placeholder(s, DT_INT32).operation; }},
      {"PlaceholderWithDefault",
       [](const Scope& s, const Output& x) {
         return ops::PlaceholderWithDefault(s, x, PartialTensorShape({-1, 3})).operation;
       }},
      {"Identity", [](const Scope& s, const Output& x) { return ops::Identity(s, x).operation; }},
      {"IdentityN",
       [](const Scope& s, const Output& x) {
         return ops::IdentityN(s, {x, 1}).operation;
       }},
      {"NoOp", [](const Scope& s, const Output&) { return ops::NoOp(s).operation; }},
      {"StopGradient",
       [](const Scope& s, const Output& x) { return ops::StopGradient(s, x).operation; }},
      {"AddV2", [](const Scope& s, const Output& x) { return ops::AddV2(s, x, x).operation; }},
      {"Add", [](const Scope& s, const Output& x) { return ops::Add(s, x, x).operation; }},
      {"Sub", [](const Scope& s, const Output& x) { return ops::Sub(s, x, x).operation; }},
      {"Mul", [](const Scope& s, const Output& x) { return ops::Mul(s, x, x).operation; }},
      {"RealDiv", [](const Scope& s, const Output& x) { return ops::RealDiv(s, x, x).operation; }},
      {"Div", [](const Scope& s, const Output& x) { return ops::Div(s, x, x).operation; }},
      {"FloorDiv",
       [](const Scope& s, const Output& x) { return ops::FloorDiv(s, x, x).operation; }},
      {"FloorMod",
       [](const Scope& s, const Output& x) { return ops::FloorMod(s, x, x).operation; }},
      {"Neg", [](const Scope& s, const Output& x) { return ops::Neg(s, x).operation; }},
      {"Abs", [](const Scope& s, const Output& x) { return ops::Abs(s, x).operation; }},
      {"Sign", [](const Scope& s, const Output& x) { return ops::Sign(s, x).operation; }},
      {"Square", [](const Scope& s, const Output& x) { return ops::Square(s, x).operation; }},
      {"Sqrt", [](const Scope& s, const Output& x) { return ops::Sqrt(s, x).operation; }},
      {"Rsqrt", [](const Scope& s, const Output& x) { return ops::Rsqrt(s, x).operation; }},
      {"Exp", [](const Scope& s, const Output& x) { return ops::Exp(s, x).operation; }},
      {"Log", [](const Scope& s, const Output& x) { return ops::Log(s, x).operation; }},
      {"Tanh", [](const Scope& s, const Output& x) { return ops::Tanh(s, x).operation; }},
      {"Sigmoid", [](const Scope& s, const Output& x) { return ops::Sigmoid(s, x).operation; }},
      {"Reciprocal",
       [](const Scope& s, const Output& x) { return ops::Reciprocal(s, x).operation; }},
      {"Floor", [](const Scope& s, const Output& x) { return ops::Floor(s, x).operation; }},
      {"Ceil", [](const Scope& s, const Output& x) { return ops::Ceil(s, x).operation; }},
      {"Round", [](const Scope& s, const Output& x) { return ops::Round(s, x).operation; }},
      {"Sin", [](const Scope& s, const Output& x) { return ops::Sin(s, x).operation; }},
      {"Cos", [](const Scope& s, const Output& x) { return ops::Cos(s, x).operation; }},
      {"Log1p", [](const Scope& s, const Output& x) { return ops::Log1p(s, x).operation; }},
      {"Expm1", [](const Scope& s, const Output& x) { return ops::Expm1(s, x).operation; }},
      {"Erf", [](const Scope& s, const Output& x) { return ops::Erf(s, x).operation; }},
      {"Relu", [](const Scope& s, const Output& x) { return ops::Relu(s, x).operation; }},
      {"Relu6", [](const Scope& s, const Output& x) { return ops::Relu6(s, x).operation; }},
      {"Elu", [](const Scope& s, const Output& x) { return ops::Elu(s, x).operation; }},
      {"Softplus", [](const Scope& s, const Output& x) { return ops::Softplus(s, x).operation; }},
      {"Pow", [](const Scope& s, const Output& x) { return ops::Pow(s, x, 2.f).operation; }},
      {"Maximum",
       [](const Scope& s, const Output& x) { return ops::Maximum(s, x, 0.f).operation; }},
      {"Minimum",
       [](const Scope& s, const Output& x) { return ops::Minimum(s, x, 0.f).operation; }},
      {"SquaredDifference",
       [](const Scope& s, const Output& x) { return ops::SquaredDifference(s, x, x).operation; }},
      {"MatMul",
       [](const Scope& s, const Output& x) {
         return ops::MatMul(s, x, ops::Const(s, 1.f, {3, 4})).operation;
       }},
      {"BatchMatMulV2",
       [](const Scope& s, const Output& x) {
         return ops::BatchMatMulV2(s, x, ops::Const(s, 1.f, {3, 4})).operation;
       }},
      {"BiasAdd",
       [](const Scope& s, const Output& x) {
         return ops::BiasAdd(s, x, {1.f, 2.f, 3.f}).operation;
       }},
      {"Sum", [](const Scope& s, const Output& x) { return ops::Sum(s, x, 0).operation; }},
      {"Mean",
       [](const Scope& s, const Output& x) {
         return ops::Mean(s, x, {0, 1}).operation;
       }},
      {"Max", [](const Scope& s, const Output& x) { return ops::Max(s, x, 1).operation; }},
      {"Min", [](const Scope& s, const Output& x) { return ops::Min(s, x, 1).operation; }},
      {"Prod", [](const Scope& s, const Output& x) { return ops::Prod(s, x, 1).operation; }},
      {"All",
       [](const Scope& s, const Output&) {
         return ops::All(s, {true, false}, 0).operation;
       }},
      {"Any",
       [](const Scope& s, const Output&) {
         return ops::Any(s, {true, false}, 0).operation;
       }},
      {"ArgMax", [](const Scope& s, const Output& x) { return ops::ArgMax(s, x, 1).operation; }},
      {"ArgMin", [](const Scope& s, const Output& x) { return ops::ArgMin(s, x, 1).operation; }},
      {"Cast", [](const Scope& s, const Output& x) { return ops::Cast(s, x, DT_INT32).operation; }},
      {"Equal", [](const Scope& s, const Output& x) { return ops::Equal(s, x, x).operation; }},
      {"NotEqual",
       [](const Scope& s, const Output& x) { return ops::NotEqual(s, x, x).operation; }},
      {"Less", [](const Scope& s, const Output& x) { return ops::Less(s, x, x).operation; }},
      {"LessEqual",
       [](const Scope& s, const Output& x) { return ops::LessEqual(s, x, x).operation; }},
      {"Greater", [](const Scope& s, const Output& x) { return ops::Greater(s, x, x).operation; }},
      {"GreaterEqual",
       [](const Scope& s, const Output& x) { return ops::GreaterEqual(s, x, x).operation; }},
      {"LogicalAnd",
       [](const Scope& s, const Output&) { return ops::LogicalAnd(s, true, false).operation; }},
      {"LogicalOr",
       [](const Scope& s, const Output&) { return ops::LogicalOr(s, true, false).operation; }},
      {"LogicalNot",
       [](const Scope& s, const Output&) { return ops::LogicalNot(s, true).operation; }},
      {"Select",
       [](const Scope& s,
          const Output& x) { return ops::Select(s, ops::Less(s, x, 0.f), x, x).operation; }},
      {"SelectV2",
       [](const Scope& s, const Output& x) { return ops::SelectV2(s, true, x, 0.f).operation; }},
      {"Reshape",
       [](const Scope& s, const Output& x) { return ops::Reshape(s, x, {3, 2}).operation; }},
      {"Shape", [](const Scope& s, const Output& x) { return ops::Shape(s, x).operation; }},
      {"Size", [](const Scope& s, const Output& x) { return ops::Size(s, x).operation; }},
      {"Rank", [](const Scope& s, const Output& x) { return ops::Rank(s, x).operation; }},
      {"Fill", [](const Scope& s, const Output&) { return ops::Fill(s, {2, 2}, 1.f).operation; }},
      {"ZerosLike", [](const Scope& s, const Output& x) { return ops::ZerosLike(s, x).operation; }},
      {"OnesLike", [](const Scope& s, const Output& x) { return ops::OnesLike(s, x).operation; }},
      {"Transpose",
       [](const Scope& s, const Output& x) { return ops::Transpose(s, x, {1, 0}).operation; }},
      {"ConcatV2",
       [](const Scope& s, const Output& x) { return ops::Concat(s, {x, x}, 0).operation; }},
      {"Pack", [](const Scope& s, const Output& x) { return ops::Stack(s, {x, x}).operation; }},
      {"Unpack", [](const Scope& s, const Output& x) { return ops::Unstack(s, x, 2).operation; }},
      {"Split", [](const Scope& s, const Output& x) { return ops::Split(s, 0, x, 2).operation; }},
      {"Slice",
       [](const Scope& s, const Output& x) { return ops::Slice(s, x, {0, 0}, {1, -1}).operation; }},
      {"StridedSlice",
       [](const Scope& s,
          const Output& x) { return ops::StridedSlice(s, x, {0}, {1}, {1}).operation; }},
      {"ExpandDims",
       [](const Scope& s, const Output& x) { return ops::ExpandDims(s, x, 0).operation; }},
      {"Squeeze", [](const Scope& s, const Output&) { return ops::Squeeze(s, {{1.f}}).operation; }},
      {"Tile", [](const Scope& s, const Output& x) { return ops::Tile(s, x, {2, 1}).operation; }},
      {"GatherV2",
       [](const Scope& s, const Output& x) { return ops::GatherV2(s, x, {1, 0}, 0).operation; }},
      {"OneHot",
       [](const Scope& s, const Output&) { return ops::OneHot(s, {0, 2}, 3, 1.f, 0.f).operation; }},
      {"Range", [](const Scope& s, const Output&) { return ops::Range(s, 0, 10, 2).operation; }},
      {"Softmax", [](const Scope& s, const Output& x) { return ops::Softmax(s, x).operation; }},
      {"LogSoftmax",
       [](const Scope& s, const Output& x) { return ops::LogSoftmax(s, x).operation; }},
      {"SoftmaxCrossEntropyWithLogits",
       [](const Scope& s,
          const Output& x) { return ops::SoftmaxCrossEntropyWithLogits(s, x, x).operation; }},
      {"SparseSoftmaxCrossEntropyWithLogits",
       [](const Scope& s,
          const Output&
              x) { return ops::SparseSoftmaxCrossEntropyWithLogits(s, x, {0, 2}).operation; }},
      {"L2Loss", [](const Scope& s, const Output& x) { return ops::L2Loss(s, x).operation; }},
      {"RandomUniform",
       [](const Scope& s,
          const Output&) { return ops::RandomUniform(s, {2, 3}, DT_FLOAT).operation; }},
      {"RandomStandardNormal",
       [](const Scope& s,
          const Output&) { return ops::RandomNormal(s, {2, 3}, DT_FLOAT).operation; }},
      {"TruncatedNormal",
       [](const Scope& s,
          const Output&) { return ops::TruncatedNormal(s, {2, 3}, DT_DOUBLE).operation; }},
      {"AddN", [](const Scope& s, const Output& x) { return ops::AddN(s, {x, x, x}).operation; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Scope scope = root_.NewSubScope(c.op);
    Operation op = c.build(scope, x);
    ASSERT_TRUE(scope.ok()) << scope.status();
    ASSERT_NE(op.node(), nullptr);
    EXPECT_EQ(op.node()->type_string(), c.op);
    EXPECT_NE(root_.refiner()->OutputShapes(op.node()), nullptr);
  }
}

TEST_F(WrappersTest, BinaryOpInfersTAndBroadcastShape) {
  auto z = ops::Add(root_, x_, {1.f, 2.f, 3.f});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<DataType>(z, "T"), DT_FLOAT);
  EXPECT_EQ(z.z.type(), DT_FLOAT);
  EXPECT_EQ(ShapeOf(z), "[2,3]");
  EXPECT_EQ(z.node()->name(), "Add");
}

TEST_F(WrappersTest, AddOfFloatAndInt32NamesTheNode) {
  auto bad = ops::Add(root_.WithOpName("mixed"), x_, 1);
  EXPECT_EQ(bad.node(), nullptr);
  EXPECT_EQ(root_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(root_.status().message(), HasSubstr("node 'mixed' (Add)"));
  EXPECT_THAT(root_.status().message(), HasSubstr("input 'y' gets int32"));
  EXPECT_THAT(root_.status().message(), HasSubstr("attr 'T' is float32"));
  // Neither the Add nor the Const made for its constant input remain.
  EXPECT_EQ(root_.graph()->num_op_nodes(), 1);
}

TEST_F(WrappersTest, MatMulBadShapeFailsAtConstructionAndLaterOpsAreNoOps) {
  auto a = ops::Const(root_.WithOpName("a"), 1.f, {2, 3});
  auto b = ops::Const(root_.WithOpName("b"), 1.f, {4, 5});
  auto m = ops::MatMul(root_, a, b);
  EXPECT_EQ(m.node(), nullptr);
  EXPECT_EQ(m.product.node(), nullptr);
  const absl::Status first = root_.status();
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(first.message(), HasSubstr("node 'MatMul' (MatMul)"));
  const int nodes = root_.graph()->num_op_nodes();
  EXPECT_EQ(nodes, 3);  // x, a, b

  // Later constructions do nothing and keep the first error.
  auto later = ops::Add(root_, 1, 2.f);
  auto fine = ops::Relu(root_.NewSubScope("later"), x_);
  EXPECT_EQ(later.node(), nullptr);
  EXPECT_EQ(fine.node(), nullptr);
  EXPECT_EQ(root_.graph()->num_op_nodes(), nodes);
  EXPECT_EQ(root_.status(), first);
  GraphDef g;
  EXPECT_EQ(root_.ToGraphDef(&g), first);
}

TEST_F(WrappersTest, MatMulAttrs) {
  auto w = ops::Const(root_, 1.f, {2, 4});
  auto m = ops::MatMul(root_, x_, w, ops::MatMul::TransposeA(true));
  auto n = ops::MatMul(root_, x_, x_, ops::MatMul::Attrs().TransposeB(true).GradA(true));
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_TRUE(Attr<bool>(m, "transpose_a"));
  EXPECT_FALSE(Attr<bool>(m, "transpose_b"));
  EXPECT_EQ(ShapeOf(m), "[3,4]");
  EXPECT_TRUE(Attr<bool>(n, "transpose_b"));
  EXPECT_TRUE(Attr<bool>(n, "grad_a"));
  EXPECT_FALSE(Attr<bool>(n, "grad_b"));
  EXPECT_EQ(ShapeOf(n), "[2,2]");
}

TEST_F(WrappersTest, BatchMatMulAttrs) {
  auto m = ops::BatchMatMulV2(root_, x_, x_, ops::BatchMatMulV2::AdjY(true));
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_FALSE(Attr<bool>(m, "adj_x"));
  EXPECT_TRUE(Attr<bool>(m, "adj_y"));
  EXPECT_EQ(ShapeOf(m), "[2,2]");
}

TEST_F(WrappersTest, ReductionKeepDimsAndIndexType) {
  auto s = ops::Sum(root_, x_, int64_t{1}, ops::Sum::KeepDims(true));
  auto m = ops::Mean(root_, x_, {0});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_TRUE(Attr<bool>(s, "keep_dims"));
  EXPECT_EQ(Attr<DataType>(s, "Tidx"), DT_INT64);
  EXPECT_EQ(ShapeOf(s), "[2,1]");
  EXPECT_FALSE(Attr<bool>(m, "keep_dims"));
  EXPECT_EQ(Attr<DataType>(m, "Tidx"), DT_INT32);
  EXPECT_EQ(ShapeOf(m), "[3]");
}

TEST_F(WrappersTest, ArgMaxOutputType) {
  auto a = ops::ArgMax(root_, x_, 1, ops::ArgMax::OutputType(DT_INT32));
  auto b = ops::ArgMin(root_, x_, 0);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(a.output.type(), DT_INT32);
  EXPECT_EQ(b.output.type(), DT_INT64);
  EXPECT_EQ(ShapeOf(a), "[2]");
}

TEST_F(WrappersTest, CastSetsSrcAndDst) {
  auto c = ops::Cast(root_, x_, DT_INT32, ops::Cast::Truncate(true));
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<DataType>(c, "SrcT"), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>(c, "DstT"), DT_INT32);
  EXPECT_TRUE(Attr<bool>(c, "Truncate"));
  EXPECT_EQ(c.y.type(), DT_INT32);
}

TEST_F(WrappersTest, ComparisonsAreBool) {
  auto e = ops::Equal(root_, x_, 0.f, ops::Equal::IncompatibleShapeError(false));
  auto l = ops::Less(root_, x_, x_);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_FALSE(Attr<bool>(e, "incompatible_shape_error"));
  EXPECT_EQ(e.z.type(), DT_BOOL);
  EXPECT_EQ(l.z.type(), DT_BOOL);
  ops::LogicalAnd(root_, x_, true);
  EXPECT_THAT(root_.status().message(), HasSubstr("node 'LogicalAnd' (LogicalAnd)"));
}

TEST_F(WrappersTest, AddNSetsNAndT) {
  auto s = ops::AddN(root_, {x_, x_, x_});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<int64_t>(s, "N"), 3);
  EXPECT_EQ(Attr<DataType>(s, "T"), DT_FLOAT);
  EXPECT_EQ(s.node()->num_inputs(), 3);
}

TEST_F(WrappersTest, AddNOfMixedTypesFails) {
  auto s = ops::AddN(root_, {x_, ops::Cast(root_, x_, DT_DOUBLE)});
  EXPECT_EQ(s.node(), nullptr);
  EXPECT_THAT(root_.status().message(), HasSubstr("node 'AddN' (AddN)"));
  EXPECT_THAT(root_.status().message(), HasSubstr("float64"));
}

TEST_F(WrappersTest, PlaceholdersAndIdentities) {
  auto p = ops::Placeholder(root_, DT_INT64);
  auto d = ops::PlaceholderWithDefault(root_, x_, PartialTensorShape({-1, 3}));
  auto n = ops::IdentityN(root_, {x_, p});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(ShapeOf(p), "<unknown>");
  EXPECT_EQ(Attr<DataType>(d, "dtype"), DT_FLOAT);
  EXPECT_EQ(Attr<PartialTensorShape>(d, "shape").DebugString(), "[?,3]");
  ASSERT_EQ(n.output.size(), 2u);
  EXPECT_EQ(n[1].type(), DT_INT64);
  std::vector<DataType> types;
  ASSERT_TRUE(GetNodeAttr(n.operation.node()->attrs(), "T", &types).ok());
  EXPECT_THAT(types, ElementsAre(DT_FLOAT, DT_INT64));
}

TEST_F(WrappersTest, ShapeOpsUseConstantInputs) {
  auto r = ops::Reshape(root_, x_, {3, -1});
  auto shape = ops::Shape(root_, x_, ops::Shape::OutType(DT_INT64));
  auto filled = ops::Fill(root_, shape, 0.f);
  auto t = ops::Transpose(root_, x_, {1, 0});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(ShapeOf(r), "[3,2]");
  EXPECT_EQ(Attr<DataType>(r, "Tshape"), DT_INT32);
  EXPECT_EQ(shape.output.type(), DT_INT64);
  EXPECT_EQ(Attr<DataType>(filled, "index_type"), DT_INT64);
  EXPECT_EQ(ShapeOf(filled), "[2,3]");
  EXPECT_EQ(ShapeOf(t), "[3,2]");
  auto bad = ops::Reshape(root_.WithOpName("r"), x_, {4, 2});
  EXPECT_EQ(bad.node(), nullptr);
  EXPECT_THAT(root_.status().message(), HasSubstr("node 'r' (Reshape)"));
}

TEST_F(WrappersTest, ConcatStackUnstackSplit) {
  auto c = ops::Concat(root_, {x_, x_, x_}, 1);
  auto st = ops::Stack(root_, {x_, x_}, ops::Stack::Axis(1));
  auto un = ops::Unstack(root_, x_, 3, ops::Unstack::Axis(1));
  auto sp = ops::Split(root_, 1, x_, 3);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<int64_t>(c, "N"), 3);
  EXPECT_EQ(Attr<DataType>(c, "Tidx"), DT_INT32);
  EXPECT_EQ(ShapeOf(c), "[2,9]");
  EXPECT_EQ(Attr<int64_t>(st, "axis"), 1);
  EXPECT_EQ(ShapeOf(st), "[2,2,3]");
  ASSERT_EQ(un.output.size(), 3u);
  EXPECT_EQ(Attr<int64_t>(un[0], "num"), 3);
  EXPECT_EQ(ShapeOf(un[2]), "[2]");
  ASSERT_EQ(sp.output.size(), 3u);
  EXPECT_EQ(Attr<int64_t>(sp[0], "num_split"), 3);
  EXPECT_EQ(ShapeOf(sp[1]), "[2,1]");
  // ops::Pack and ops::Unpack are the same wrappers.
  auto pk = ops::Pack(root_, {x_});
  auto up = ops::Unpack(root_, x_, 2);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(pk.node()->type_string(), "Pack");
  EXPECT_EQ(up.operation.node()->type_string(), "Unpack");
}

TEST_F(WrappersTest, SlicingAttrs) {
  auto ss = ops::StridedSlice(root_, x_, {0, 1}, {1, 3}, {1, 1},
                              ops::StridedSlice::Attrs().BeginMask(2).ShrinkAxisMask(1));
  auto sq = ops::Squeeze(root_, ops::ExpandDims(root_, x_, -1), ops::Squeeze::Axis({2}));
  auto sl = ops::Slice(root_, x_, {0, 1}, {2, 2});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<int64_t>(ss, "begin_mask"), 2);
  EXPECT_EQ(Attr<int64_t>(ss, "shrink_axis_mask"), 1);
  EXPECT_EQ(Attr<int64_t>(ss, "end_mask"), 0);
  EXPECT_EQ(Attr<DataType>(ss, "Index"), DT_INT32);
  EXPECT_EQ(ShapeOf(ss), "[3]");
  std::vector<int64_t> dims;
  ASSERT_TRUE(GetNodeAttr(sq.node()->attrs(), "squeeze_dims", &dims).ok());
  EXPECT_THAT(dims, ElementsAre(2));
  EXPECT_EQ(ShapeOf(sq), "[2,3]");
  EXPECT_EQ(ShapeOf(sl), "[2,2]");
}

TEST_F(WrappersTest, GatherAndOneHot) {
  auto g = ops::GatherV2(root_, x_, {{0, 1}, {1, 0}}, 1);
  auto oh = ops::OneHot(root_, {0, 2}, 4, 1.f, 0.f, ops::OneHot::Axis(0));
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<DataType>(g, "Tparams"), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>(g, "Tindices"), DT_INT32);
  EXPECT_EQ(Attr<DataType>(g, "Taxis"), DT_INT32);
  EXPECT_EQ(Attr<int64_t>(g, "batch_dims"), 0);
  EXPECT_EQ(ShapeOf(g), "[2,2,2]");
  auto rows = ops::Gather(root_, x_, {1, 1, 0});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(rows.node()->type_string(), "GatherV2");
  EXPECT_EQ(ShapeOf(rows), "[3,3]");
  EXPECT_EQ(Attr<DataType>(oh, "TI"), DT_INT32);
  EXPECT_EQ(Attr<int64_t>(oh, "axis"), 0);
  EXPECT_EQ(ShapeOf(oh), "[4,2]");
}

TEST_F(WrappersTest, NnWrappers) {
  auto images = ops::Placeholder(root_, DT_FLOAT, ops::Placeholder::Shape({1, 3, 2, 2}));
  auto b = ops::BiasAdd(root_, images, {1.f, 2.f, 3.f}, ops::BiasAdd::DataFormat("NCHW"));
  auto xent = ops::SoftmaxCrossEntropyWithLogits(root_, x_, x_);
  auto sparse = ops::SparseSoftmaxCrossEntropyWithLogits(root_, x_, {0, 2});
  auto l2 = ops::L2Loss(root_, x_);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<std::string>(b, "data_format"), "NCHW");
  EXPECT_EQ(ShapeOf(b), "[1,3,2,2]");
  EXPECT_EQ(ShapeOf(xent.loss), "[2]");
  EXPECT_EQ(ShapeOf(xent.backprop), "[2,3]");
  EXPECT_EQ(Attr<DataType>(sparse.loss, "Tlabels"), DT_INT32);
  EXPECT_EQ(ShapeOf(l2), "[]");
  ops::BiasAdd(root_.WithOpName("bias"), x_, {1.f, 2.f});
  EXPECT_THAT(root_.status().message(), HasSubstr("node 'bias' (BiasAdd)"));
}

TEST_F(WrappersTest, RandomWrappers) {
  auto u = ops::RandomUniform(root_, {2, 3}, DT_DOUBLE, ops::RandomUniform::Seed(7).Seed2(9));
  auto n = ops::RandomNormal(root_, ops::Shape(root_, x_), DT_FLOAT);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(Attr<int64_t>(u, "seed"), 7);
  EXPECT_EQ(Attr<int64_t>(u, "seed2"), 9);
  EXPECT_EQ(Attr<DataType>(u, "T"), DT_INT32);
  EXPECT_EQ(u.output.type(), DT_DOUBLE);
  EXPECT_EQ(ShapeOf(u), "[2,3]");
  EXPECT_EQ(n.node()->type_string(), "RandomStandardNormal");
  EXPECT_EQ(ShapeOf(n), "[2,3]");
  ops::TruncatedNormal(root_, {2}, DT_INT32);
  EXPECT_THAT(root_.status().message(), HasSubstr("node 'TruncatedNormal' (TruncatedNormal)"));
}

TEST_F(WrappersTest, SelectAndRange) {
  auto sel = ops::Select(root_, ops::Greater(root_, x_, 0.f), x_, ops::ZerosLike(root_, x_));
  auto sel2 = ops::SelectV2(root_, {true, false, true}, x_, 0.f);
  auto r = ops::Range(root_, 0.f, 1.f, 0.25f);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(ShapeOf(sel), "[2,3]");
  EXPECT_EQ(ShapeOf(sel2), "[2,3]");
  EXPECT_EQ(Attr<DataType>(r, "Tidx"), DT_FLOAT);
  EXPECT_EQ(ShapeOf(r), "[4]");
}

}  // namespace
}  // namespace distflow
