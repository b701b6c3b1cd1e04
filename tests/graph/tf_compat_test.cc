// TensorFlow's graph semantics where they depend on more than one node: an
// old graph's empty Placeholder shape means "unknown", and feeding a tensor
// that a ref input takes is an error only when that consumer is kept.
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_io.h"
#include "distflow/graph/subgraph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kPlaceholder[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape {} }
    }
  }
)pb";

PartialTensorShape PlaceholderShape(const std::string& versions) {
  GraphDef def;
  EXPECT_TRUE(ParseGraphDefText(std::string(kPlaceholder) + versions, &def).ok());
  Graph g;
  EXPECT_TRUE(ConvertGraphDefToGraph({}, def, &g).ok());
  PartialTensorShape shape;
  EXPECT_TRUE(GetNodeAttr(g.op_nodes()[0]->attrs(), "shape", &shape).ok());
  return shape;
}

// GraphDef version 22 is the first whose Placeholders can say "scalar"
// (TensorFlow's versions.h); TF Serving's half_plus_three, written at 21,
// has shape {} on a placeholder of batches (its _output_shapes: unknown).
TEST(TfCompatTest, EmptyPlaceholderShapeUpToVersion21IsUnknown) {
  EXPECT_TRUE(PlaceholderShape("").unknown_rank());
  EXPECT_TRUE(PlaceholderShape("versions { producer: 20 }").unknown_rank());
  EXPECT_TRUE(PlaceholderShape("versions { producer: 21 }").unknown_rank());
  const PartialTensorShape scalar = PlaceholderShape("versions { producer: 22 }");
  EXPECT_FALSE(scalar.unknown_rank());
  EXPECT_EQ(scalar.dims(), 0);
}

// v is a ref variable; Assign takes it by reference, Identity reads it.
constexpr char kRefGraph[] = R"pb(
  node {
    name: "v"
    op: "VariableV2"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape {} }
    }
  }
  node {
    name: "one"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 1
        }
      }
    }
  }
  node {
    name: "assign"
    op: "Assign"
    input: "v"
    input: "one"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "read"
    op: "Identity"
    input: "v"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  versions { producer: 27 }
)pb";

TEST(TfCompatTest, FeedingARefConsumedTensorFailsOnlyWhenTheConsumerIsKept) {
  GraphDef def;
  ASSERT_TRUE(ParseGraphDefText(kRefGraph, &def).ok());
  DeviceAttributes client;
  client.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  client.set_device_type("CPU");
  {
    Graph g;
    ASSERT_TRUE(ConvertGraphDefToGraph({}, def, &g).ok());
    EXPECT_TRUE(subgraph::RewriteGraphForExecution(&g, {"v"}, {"read"}, {}, client,
                                                   subgraph::FeedFetchConvention::kRendezvous)
                    .ok());
  }
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, def, &g).ok());
  const absl::Status s = subgraph::RewriteGraphForExecution(
      &g, {"v"}, {"read"}, {"assign"}, client, subgraph::FeedFetchConvention::kRendezvous);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'assign' consumes it as a reference"));
}

}  // namespace
}  // namespace distflow
