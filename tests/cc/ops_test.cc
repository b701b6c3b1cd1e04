// Operation, Output, Input (constants from scalars and nested initializer
// lists) and ops::Const.
#include "distflow/cc/ops.h"

#include <unordered_set>

#include "distflow/cc/ops/standard_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto flat = t.flat<T>();
  return std::vector<T>(flat.begin(), flat.end());
}

// The tensor held by a Const node.
Tensor ConstValue(const Output& out) {
  Tensor t;
  EXPECT_TRUE(GetNodeAttr(out.node()->attrs(), "value", &t).ok());
  return t;
}

TEST(InputTest, ScalarsGetTheirNaturalTypes) {
  EXPECT_EQ(Input(1).tensor().dtype(), DT_INT32);
  EXPECT_EQ(Input(int64_t{1}).tensor().dtype(), DT_INT64);
  EXPECT_EQ(Input(1u).tensor().dtype(), DT_UINT32);
  EXPECT_EQ(Input(uint8_t{1}).tensor().dtype(), DT_UINT8);
  EXPECT_EQ(Input(1.5f).tensor().dtype(), DT_FLOAT);
  EXPECT_EQ(Input(1.5).tensor().dtype(), DT_DOUBLE);
  EXPECT_EQ(Input(true).tensor().dtype(), DT_BOOL);
  EXPECT_EQ(Input("abc").tensor().dtype(), DT_STRING);
  EXPECT_EQ(Input(std::string("abc")).tensor().scalar<std::string>(), "abc");
  EXPECT_EQ(Input(7).tensor().dims(), 0);
  EXPECT_EQ(Input(7).tensor().scalar<int32_t>(), 7);
  EXPECT_EQ(Input(7).node(), nullptr);
}

TEST(InputTest, FlatList) {
  Input in({1.f, 2.f, 3.f});
  ASSERT_TRUE(in.status().ok()) << in.status();
  EXPECT_EQ(in.tensor().shape(), TensorShape({3}));
  EXPECT_THAT(Values<float>(in.tensor()), ElementsAre(1.f, 2.f, 3.f));
}

TEST(InputTest, NestedListIsAMatrix) {
  Input in({{1.f, 2.f}, {3.f, 4.f}});
  ASSERT_TRUE(in.status().ok()) << in.status();
  EXPECT_EQ(in.tensor().dtype(), DT_FLOAT);
  EXPECT_EQ(in.tensor().shape(), TensorShape({2, 2}));
  EXPECT_THAT(Values<float>(in.tensor()), ElementsAre(1.f, 2.f, 3.f, 4.f));
}

TEST(InputTest, ThreeLevelsAndOtherTypes) {
  Input ints({{{1, 2, 3}}, {{4, 5, 6}}});
  ASSERT_TRUE(ints.status().ok()) << ints.status();
  EXPECT_EQ(ints.tensor().shape(), TensorShape({2, 1, 3}));
  EXPECT_THAT(Values<int32_t>(ints.tensor()), ElementsAre(1, 2, 3, 4, 5, 6));

  Input bools({{true, false}, {false, true}});
  ASSERT_TRUE(bools.status().ok());
  EXPECT_THAT(Values<bool>(bools.tensor()), ElementsAre(true, false, false, true));

  Input strings({{"a", "b"}, {"c", "d"}});
  ASSERT_TRUE(strings.status().ok()) << strings.status();
  EXPECT_EQ(strings.tensor().shape(), TensorShape({2, 2}));
  EXPECT_THAT(Values<std::string>(strings.tensor()), ElementsAre("a", "b", "c", "d"));

  Input int64s({int64_t{1} << 40, int64_t{2}});
  EXPECT_EQ(int64s.tensor().dtype(), DT_INT64);
  EXPECT_THAT(Values<int64_t>(int64s.tensor()), ElementsAre(int64_t{1} << 40, 2));
}

TEST(InputTest, ListWithShape) {
  Input::Initializer init({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  ASSERT_TRUE(init.status.ok());
  EXPECT_EQ(init.tensor.shape(), TensorShape({3, 2}));
  Input::Initializer bad({1, 2, 3}, TensorShape({2, 2}));
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status.message(), HasSubstr("constant has 3 values but shape [2,2] needs 4"));
}

TEST(InputTest, RaggedListIsAnError) {
  Input in({{1.f, 2.f}, {3.f}});
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(in.status().message(),
              HasSubstr("ragged initializer list: element 1 has shape [1] but "
                        "element 0 has shape [2]"));
  Input deep({{{1}, {2}}, {{3}}});
  EXPECT_THAT(deep.status().message(), HasSubstr("ragged"));
}

TEST(InputTest, MixedTypesAreAnError) {
  Input in({1, 2.5f});
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(in.status().message(), HasSubstr("element 1 is float32 but element 0 is int32; all "
                                               "elements must have one type"));
}

TEST(InputTest, FromTensorAndOutput) {
  Tensor t = Tensor::FromVector<float>({1, 2});
  Input from_tensor(t);
  EXPECT_TRUE(from_tensor.tensor().SharesBufferWith(t));

  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, 1.f);
  Input from_output(c);
  EXPECT_EQ(from_output.node(), c.node());
  EXPECT_EQ(from_output.index(), 0);
}

TEST(OutputTest, NamesTypesAndHash) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root.WithOpName("x"), {{1.f, 2.f}, {3.f, 4.f}});
  auto parts = ops::Unstack(root.WithOpName("parts"), x, 2);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(x.name(), "x:0");
  EXPECT_EQ(parts[1].name(), "parts:1");
  EXPECT_EQ(parts[1].type(), DT_FLOAT);
  EXPECT_EQ(parts[1].op(), parts.operation);
  EXPECT_EQ(parts.operation.num_inputs(), 1);
  EXPECT_EQ(parts.operation.input(0), x);
  EXPECT_EQ(parts.operation.input_type(0), DT_FLOAT);
  EXPECT_EQ(parts.operation.num_outputs(), 2);
  EXPECT_EQ(parts.operation.output(1), parts[1]);
  std::unordered_set<Output, OutputHash> set = {x, parts[0], parts[1], parts[0]};
  EXPECT_EQ(set.size(), 3u);
}

TEST(ConstTest, BuildsConstNodeWithValueAndDtype) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, {{1, 2, 3}, {4, 5, 6}});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(c.node()->name(), "Const");
  EXPECT_EQ(c.node()->type_string(), "Const");
  DataType dtype;
  ASSERT_TRUE(GetNodeAttr(c.node()->attrs(), "dtype", &dtype).ok());
  EXPECT_EQ(dtype, DT_INT32);
  Tensor value = ConstValue(c);
  EXPECT_EQ(value.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<int32_t>(value), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(root.refiner()->OutputShape(c.node(), 0).DebugString(), "[2,3]");
  EXPECT_NE(root.refiner()->ConstantValue(c.node(), 0), nullptr);
  EXPECT_EQ(ops::Const(root, "s").node()->name(), "Const_1");
}

TEST(ConstTest, FillsOrReshapesToShape) {
  Scope root = Scope::NewRootScope();
  auto filled = ops::Const(root, 7.f, {2, 3});
  auto reshaped = ops::Const(root, {1, 2, 3, 4, 5, 6}, {3, 2});
  auto strings = ops::Const(root, "z", {2});
  ASSERT_TRUE(root.ok()) << root.status();
  Tensor f = ConstValue(filled);
  EXPECT_EQ(f.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<float>(f), ElementsAre(7, 7, 7, 7, 7, 7));
  Tensor r = ConstValue(reshaped);
  EXPECT_EQ(r.shape(), TensorShape({3, 2}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Values<std::string>(ConstValue(strings)), ElementsAre("z", "z"));
}

TEST(ConstTest, CountThatNeitherFillsNorReshapesIsAnError) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, {1, 2, 3}, {2, 2});
  EXPECT_EQ(c.node(), nullptr);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(root.status().message(),
              HasSubstr("a value of shape [3] (3 elements) can neither fill "
                        "nor be reshaped to [2,2]"));
}

TEST(ConstTest, RaggedValueRecordedInScope) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, {{1, 2}, {3}});
  EXPECT_EQ(c.node(), nullptr);
  EXPECT_THAT(root.status().message(), HasSubstr("Const 'Const': ragged initializer list"));
  EXPECT_EQ(root.graph()->num_op_nodes(), 0);
}

TEST(ConstTest, ConstantInputsBecomeConstNodes) {
  Scope root = Scope::NewRootScope();
  auto m = ops::MatMul(root, {{1.f, 2.f}}, {{3.f}, {4.f}});
  ASSERT_TRUE(root.ok()) << root.status();
  Output a = m.operation.input(0);
  Output b = m.operation.input(1);
  EXPECT_EQ(a.node()->type_string(), "Const");
  EXPECT_EQ(a.node()->name(), "Const/Const");
  EXPECT_EQ(b.node()->name(), "Const_1/Const");
  EXPECT_EQ(ConstValue(b).shape(), TensorShape({2, 1}));
  EXPECT_EQ(root.refiner()->OutputShape(m.node(), 0).DebugString(), "[1,1]");
}

TEST(ConstTest, RaggedInputNamesTheOpAndInput) {
  Scope root = Scope::NewRootScope();
  auto add = ops::Add(root, {1.f, 2.f}, {{1.f, 2.f}, {3.f}});
  EXPECT_EQ(add.node(), nullptr);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(root.status().message(),
              HasSubstr("constant for input 1 of Add: ragged initializer list"));
  // Not even the Const for the good input is left behind.
  EXPECT_EQ(root.graph()->num_op_nodes(), 0);
}

TEST(ConstTest, NullOutputAsInputIsAnError) {
  Scope root = Scope::NewRootScope();
  auto id = ops::Identity(root, Output());
  EXPECT_EQ(id.node(), nullptr);
  EXPECT_THAT(root.status().message(), HasSubstr("null Output"));
}

}  // namespace
}  // namespace distflow
