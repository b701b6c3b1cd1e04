// GraphToFunctionDef: placeholders become arguments, other nodes keep their
// definitions with inputs in the function form, outputs become rets; what
// cannot be a function is an error naming it.
#include "distflow/graph/graph_to_function.h"

#include <string>

#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// x, y: placeholders; parts = Unpack(x) (2 outputs); sum = parts:1 + y,
// after `gate` (a NoOp); stray: a placeholder no caller feeds.
constexpr char kGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape { dim { size: 2 } } }
    }
  }
  node {
    name: "y"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "parts"
    op: "Unpack"
    input: "x"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "num"
      value { i: 2 }
    }
  }
  node { name: "gate" op: "NoOp" }
  node {
    name: "sum"
    op: "AddV2"
    input: "parts:1"
    input: "y"
    input: "^gate"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
)pb";

const Node* Named(const Graph& g, const std::string& name) {
  for (const Node* n : g.op_nodes()) {
    if (n->name() == name) return n;
  }
  return nullptr;
}

class GraphToFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GraphDef def;
    ASSERT_TRUE(ParseGraphDefText(kGraph, &def).ok());
    ASSERT_TRUE(ConvertGraphDefToGraph({}, def, &g_).ok());
  }
  Graph g_;
};

TEST_F(GraphToFunctionTest, ArgumentsNodesAndOutputsInTheFunctionForm) {
  absl::StatusOr<FunctionDef> f =
      GraphToFunctionDef(g_, "f", {Named(g_, "x"), Named(g_, "y")},
                         {{Named(g_, "sum"), 0}, {Named(g_, "parts"), 0}, {Named(g_, "y"), 0}});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->signature().input_arg_size(), 2);
  EXPECT_EQ(f->signature().input_arg(0).name(), "arg0");
  EXPECT_EQ(f->signature().input_arg(1).type(), DT_FLOAT);
  ASSERT_EQ(f->node_def_size(), 3);  // parts, gate, sum
  const NodeDef* sum = nullptr;
  for (const NodeDef& n : f->node_def()) {
    if (n.name() == "sum") sum = &n;
    if (n.name() == "parts") {
      EXPECT_THAT(n.input(), ::testing::ElementsAre("arg0"));
    }
  }
  ASSERT_NE(sum, nullptr);
  EXPECT_THAT(sum->input(), ::testing::ElementsAre("parts:output:1", "arg1", "^gate"));
  ASSERT_EQ(f->signature().output_arg_size(), 3);
  EXPECT_EQ(f->ret().at("output0"), "sum:z:0");
  EXPECT_EQ(f->ret().at("output1"), "parts:output:0");
  EXPECT_EQ(f->ret().at("output2"), "arg1");  // an argument returned as it is
}

TEST_F(GraphToFunctionTest, WhatCannotBeAFunctionIsNamed) {
  // y is a placeholder but not an argument.
  absl::StatusOr<FunctionDef> f = GraphToFunctionDef(g_, "f", {Named(g_, "x")}, {});
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(f.status().message(), HasSubstr("placeholder 'y' is not one of its arguments"));
  f = GraphToFunctionDef(g_, "f", {Named(g_, "x"), Named(g_, "sum")}, {});
  EXPECT_THAT(f.status().message(), HasSubstr("argument 1 (sum) is not a Placeholder"));
  f = GraphToFunctionDef(g_, "f", {Named(g_, "x"), Named(g_, "x")}, {});
  EXPECT_THAT(f.status().message(), HasSubstr("'x' is given as an argument twice"));
  f = GraphToFunctionDef(g_, "f", {Named(g_, "x"), Named(g_, "y")}, {{Named(g_, "parts"), 5}});
  EXPECT_THAT(f.status().message(), HasSubstr("output 0 is not a tensor of the graph"));
}

}  // namespace
}  // namespace distflow
