// TF Serving's JSON for tensors and predict bodies: shapes from nesting,
// {"b64"} strings both ways, float forms, and the errors for bad values.
#include "distflow/serving/tensor_json.h"

#include <limits>

#include "distflow/example.pb.h"
#include "distflow/serving/example_json.h"
#include "distflow/serving/predict_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string Json(const Tensor& t, bool binary = false) {
  std::string out;
  AppendTensorJson(t, binary, &out);
  return out;
}

TEST(TensorJsonTest, ValuesShapesAndDtypes) {
  auto t = TensorFromJson(json::parse("[[1, 2.5], [3, -4]]"), DT_FLOAT, "input 'x'");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape({2, 2}));
  EXPECT_THAT(t->flat<float>(), ::testing::ElementsAre(1, 2.5f, 3, -4));
  EXPECT_EQ(Json(*t), "[[1.0,2.5],[3.0,-4.0]]");

  auto i = TensorFromJson(json::parse("[127, -128]"), DT_INT8, "input 'i'");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(Json(*i), "[127,-128]");
  EXPECT_THAT(
      std::string(TensorFromJson(json::parse("[128]"), DT_INT8, "input 'i'").status().message()),
      HasSubstr("input 'i': expected integers in range for int8, got 128"));
  EXPECT_THAT(
      std::string(TensorFromJson(json::parse("[1.5]"), DT_INT64, "input 'i'").status().message()),
      HasSubstr("expected integers for int64, got 1.5"));
  EXPECT_THAT(
      std::string(
          TensorFromJson(json::parse("[[1], [2, 3]]"), DT_FLOAT, "input 'x'").status().message()),
      HasSubstr(
          "input 'x': ragged list (expected a list of 1 elements at depth 1, got 2 elements)"));
  auto b = TensorFromJson(json::parse("[true, false]"), DT_BOOL, "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Json(*b), "[true,false]");
  EXPECT_EQ(Json(Tensor::Scalar<double>(0.1)), "0.1");
  EXPECT_EQ(Json(Tensor::Scalar<float>(0.1f)), "0.1");  // float's shortest form
}

TEST(TensorJsonTest, NonFiniteFloatsBothWays) {
  auto t = TensorFromJson(json::parse(R"(["NaN", "Infinity", "-Infinity", 1])"), DT_FLOAT, "x");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Json(*t), "[NaN,Infinity,-Infinity,1.0]");
  EXPECT_FALSE(TensorFromJson(json::parse(R"(["nan"])"), DT_FLOAT, "x").ok());
}

TEST(TensorJsonTest, BinaryStringsBothWays) {
  // "\x00\xff" as base64 is "AP8="; padding may be left out.
  auto t = TensorFromJson(json::parse(R"([{"b64": "AP8="}, {"b64": "aGk"}, "plain"])"), DT_STRING,
                          "input 's'");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<std::string>()[0], std::string("\x00\xff", 2));
  EXPECT_EQ(t->flat<std::string>()[1], "hi");
  EXPECT_EQ(t->flat<std::string>()[2], "plain");
  // Bytes that are not UTF-8 go out as b64 whatever the key; "_bytes" keys
  // always do; other strings are JSON strings, escaped.
  EXPECT_EQ(Json(*t), R"([{"b64":"AP8="},"hi","plain"])");
  EXPECT_EQ(Json(*t, /*binary=*/true), R"([{"b64":"AP8="},{"b64":"aGk="},{"b64":"cGxhaW4="}])");
  EXPECT_EQ(Json(Tensor::Scalar<std::string>("a\"b\n\x01")), R"("a\"b\n\u0001")");
  EXPECT_TRUE(IsBinaryOutputKey("image_bytes"));
  EXPECT_FALSE(IsBinaryOutputKey("bytes_out"));

  EXPECT_THAT(std::string(TensorFromJson(json::parse(R"([{"b64": "!!"}])"), DT_STRING, "input 's'")
                              .status()
                              .message()),
              HasSubstr("input 's': \"b64\" holds no valid base64"));
  EXPECT_THAT(std::string(TensorFromJson(json::parse(R"([{"b64": "AA", "x": 1}])"), DT_STRING, "s")
                              .status()
                              .message()),
              HasSubstr("must be {\"b64\": \"...\"}"));
}

TEST(TensorJsonTest, ParseJsonObjectBoundsDepth) {
  EXPECT_TRUE(ParseJsonObject(R"({"a": [[1]]})").ok());
  const std::string deep = "{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_THAT(std::string(ParseJsonObject(deep).status().message()), HasSubstr("nests"));
  EXPECT_THAT(std::string(ParseJsonObject("[1]").status().message()),
              HasSubstr("must be a JSON object, got array"));
  EXPECT_THAT(std::string(ParseJsonObject("{").status().message()), HasSubstr("malformed JSON"));
}

SignatureDef TwoInputs() {
  SignatureDef sig;
  (*sig.mutable_inputs())["a"].set_dtype(DT_FLOAT);
  (*sig.mutable_inputs())["s"].set_dtype(DT_STRING);
  return sig;
}

TEST(PredictJsonTest, RowAndColumnarRequestsAndReplies) {
  json body = json::parse(R"({"instances": [{"a": [1, 2], "s": {"b64": "aGk="}},
                                            {"a": [3, 4], "s": "yo"}]})");
  auto in = ReadPredictInputs(body, TwoInputs());
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->format, JsonFormat::kRow);
  ASSERT_EQ(in->inputs.size(), 2u);
  EXPECT_EQ(in->inputs[0].first, "a");
  EXPECT_EQ(in->inputs[0].second.shape(), TensorShape({2, 2}));
  EXPECT_THAT(in->inputs[1].second.flat<std::string>(), ::testing::ElementsAre("hi", "yo"));

  const std::vector<Tensor> outs = {Tensor::FromVector<float>({1, 2}),
                                    Tensor::FromVector<std::string>({"p", "q"})};
  EXPECT_EQ(
      *WritePredictOutputs(JsonFormat::kRow, {"y", "z_bytes"}, outs),
      R"({"predictions":[{"y":1.0,"z_bytes":{"b64":"cA=="}},{"y":2.0,"z_bytes":{"b64":"cQ=="}}]})");
  EXPECT_EQ(*WritePredictOutputs(JsonFormat::kColumnar, {"y", "z"}, outs),
            R"({"outputs":{"y":[1.0,2.0],"z":["p","q"]}})");
  EXPECT_EQ(*WritePredictOutputs(JsonFormat::kColumnar, {"y"}, {outs[0]}),
            R"({"outputs":[1.0,2.0]})");
  EXPECT_THAT(std::string(WritePredictOutputs(JsonFormat::kRow, {"y", "w"},
                                              {outs[0], Tensor::FromVector<float>({1, 2, 3})})
                              .status()
                              .message()),
              HasSubstr("different numbers of rows"));

  json bad = json::parse(R"({"instances": [{"a": [1]}, {"s": "x"}]})");
  EXPECT_THAT(std::string(ReadPredictInputs(bad, TwoInputs()).status().message()),
              HasSubstr("instance 1 lacks input 'a', which instance 0 has"));
  json bare = json::parse(R"({"inputs": [1, 2]})");
  EXPECT_THAT(std::string(ReadPredictInputs(bare, TwoInputs()).status().message()),
              HasSubstr("the signature has 2 inputs: name them"));
}

TEST(ExampleJsonTest, FeaturesBecomeTfExamples) {
  const json body = json::parse(R"({"context": {"c": "ctx", "x": 9},
      "examples": [{"x": 1.5, "ids": [1, 2], "img": {"b64": "AP8="}}, {"f": [1, 2.5]}]})");
  auto t = ReadExamples(body);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->NumElements(), 2);
  Example e0, e1;
  ASSERT_TRUE(e0.ParseFromString(t->flat<std::string>()[0]));
  ASSERT_TRUE(e1.ParseFromString(t->flat<std::string>()[1]));
  const auto& f0 = e0.features().feature();
  EXPECT_THAT(f0.at("x").float_list().value(), ::testing::ElementsAre(1.5f));  // own wins
  EXPECT_THAT(f0.at("ids").int64_list().value(), ::testing::ElementsAre(1, 2));
  EXPECT_EQ(f0.at("img").bytes_list().value(0), std::string("\x00\xff", 2));
  EXPECT_EQ(f0.at("c").bytes_list().value(0), "ctx");
  EXPECT_THAT(e1.features().feature().at("x").int64_list().value(), ::testing::ElementsAre(9));
  EXPECT_THAT(e1.features().feature().at("f").float_list().value(),
              ::testing::ElementsAre(1.0f, 2.5f));

  EXPECT_EQ(*WriteRegressResults(Tensor::FromVector<float>({2.5, 3}), 2),
            R"({"results":[2.5,3.0]})");
  Tensor classes = Tensor::FromVector<std::string>({"a", "b"}, TensorShape({1, 2}));
  Tensor scores = Tensor::FromVector<float>({0.25, 0.75}, TensorShape({1, 2}));
  EXPECT_EQ(*WriteClassifyResults(&classes, &scores, 1),
            R"({"results":[[["a",0.25],["b",0.75]]]})");
}

}  // namespace
}  // namespace distflow
