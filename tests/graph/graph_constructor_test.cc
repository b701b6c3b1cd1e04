#include "distflow/graph/graph_constructor.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// A GraphDef as TensorFlow writes it in text form: consts in tensor_content
// and float_val/int_val form, list attrs and shape attrs.
constexpr char kTfGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value {
        shape {
          dim { size: -1 }
          dim { size: 2 }
        }
      }
    }
  }
  node {
    name: "w"
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
          tensor_shape {
            dim { size: 2 }
            dim { size: 1 }
          }
          tensor_content: "\000\000\200?\000\000\000@"
        }
      }
    }
  }
  node {
    name: "b"
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
          float_val: 0.5
        }
      }
    }
  }
  node {
    name: "mm"
    op: "MatMul"
    input: "x"
    input: "w"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "grad_a"
      value { b: false }
    }
    attr {
      key: "grad_b"
      value { b: false }
    }
    attr {
      key: "transpose_a"
      value { b: false }
    }
    attr {
      key: "transpose_b"
      value { b: false }
    }
  }
  node {
    name: "y"
    op: "AddV2"
    input: "mm"
    input: "b"
    device: "/job:localhost/replica:0/task:0/device:CPU:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "sq"
    op: "Squeeze"
    input: "y"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "squeeze_dims"
      value { list { i: 1 } }
    }
  }
  node {
    name: "perm"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape { dim { size: 2 } }
          int_val: 1
          int_val: 0
        }
      }
    }
  }
  node {
    name: "t"
    op: "Transpose"
    input: "mm"
    input: "perm"
    input: "^b"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "Tperm"
      value { type: DT_INT32 }
    }
  }
  versions { producer: 1087 }
)pb";

GraphDef ParseText(const std::string& text) {
  GraphDef g;
  absl::Status s = ParseGraphDefText(text, &g);
  EXPECT_TRUE(s.ok()) << s;
  return g;
}

absl::Status Import(const std::string& text) {
  GraphDef def;
  DF_RETURN_IF_ERROR(ParseGraphDefText(text, &def));
  Graph g;
  return ConvertGraphDefToGraph({}, def, &g);
}

TEST(GraphConstructorTest, TensorFlowTextGraphLoadsAndRoundTrips) {
  GraphDef original = ParseText(kTfGraph);
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, original, &g).ok());
  EXPECT_EQ(g.num_op_nodes(), 8);

  // Edges and types came from the inputs.
  Node* t = nullptr;
  Node* b = nullptr;
  for (Node* n : g.op_nodes()) {
    if (n->name() == "t") t = n;
    if (n->name() == "b") b = n;
  }
  ASSERT_NE(t, nullptr);
  int control = 0, data = 0;
  for (const Edge* e : t->in_edges()) (e->IsControlEdge() ? control : data)++;
  EXPECT_EQ(data, 2);
  EXPECT_EQ(control, 1);
  Tensor bval;
  ASSERT_TRUE(GetNodeAttr(b->attrs(), "value", &bval).ok());
  EXPECT_EQ(bval.scalar<float>(), 0.5f);

  GraphDef back;
  g.ToGraphDef(&back);
  EXPECT_EQ(SerializeGraphDefDeterministic(back), SerializeGraphDefDeterministic(original));

  // Binary round trip through a file.
  const std::string path = ::testing::TempDir() + "/graph.pb";
  ASSERT_TRUE(WriteGraphDefToFile(path, back, /*text=*/false).ok());
  GraphDef reread;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &reread).ok());
  EXPECT_EQ(SerializeGraphDefDeterministic(reread), SerializeGraphDefDeterministic(original));
}

TEST(GraphConstructorTest, TextFileLoads) {
  const std::string path = ::testing::TempDir() + "/graph.pbtxt";
  ASSERT_TRUE(WriteGraphDefToFile(path, ParseText(kTfGraph), /*text=*/true).ok());
  GraphDef g;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &g).ok());
  EXPECT_EQ(g.node_size(), 8);
}

TEST(GraphConstructorTest, DefaultAttrsAreFilled) {
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, ParseText(R"pb(
                                       node {
                                         name: "a"
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
                                               tensor_shape {
                                                 dim { size: 1 }
                                                 dim { size: 1 }
                                               }
                                               float_val: 1
                                             }
                                           }
                                         }
                                       }
                                       node {
                                         name: "m"
                                         op: "MatMul"
                                         input: "a"
                                         input: "a"
                                         attr {
                                           key: "T"
                                           value { type: DT_FLOAT }
                                         }
                                       }
                                     )pb"),
                                     &g)
                  .ok());
  for (Node* n : g.op_nodes()) {
    if (n->name() == "m") {
      bool ta = true;
      ASSERT_TRUE(GetNodeAttr(n->attrs(), "transpose_a", &ta).ok());
      EXPECT_FALSE(ta);
    }
  }
}

TEST(GraphConstructorTest, UnknownOp) {
  absl::Status s = Import(R"pb(node { name: "n" op: "FancyOp" })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op 'FancyOp' is not registered"));
  EXPECT_THAT(s.message(), HasSubstr("node 'n'"));
}

TEST(GraphConstructorTest, MissingInputNode) {
  absl::Status s = Import(R"pb(
    node {
      name: "i"
      op: "Identity"
      input: "ghost"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'i': input 'ghost' names a missing node 'ghost'"));
}

TEST(GraphConstructorTest, MissingOutputIndex) {
  absl::Status s = Import(R"pb(
    node {
      name: "c"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "value"
        value { tensor { dtype: DT_FLOAT float_val: 1 } }
      }
    }
    node {
      name: "i"
      op: "Identity"
      input: "c:3"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    })pb");
  EXPECT_THAT(s.message(),
              HasSubstr("node 'i': input 'c:3' names output 3 of node 'c' which has 1 outputs"));
}

TEST(GraphConstructorTest, DuplicateNames) {
  absl::Status s = Import(R"pb(node { name: "n" op: "NoOp" }
                               node { name: "n" op: "NoOp" })pb");
  EXPECT_THAT(s.message(), HasSubstr("duplicate node name 'n'"));
}

TEST(GraphConstructorTest, DtypeMismatch) {
  absl::Status s = Import(R"pb(
    node {
      name: "c"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value { tensor { dtype: DT_INT32 int_val: 1 } }
      }
    }
    node {
      name: "i"
      op: "Identity"
      input: "c"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("node 'i': input 0 ('c') expects float32 but 'c' produces int32"));
}

TEST(GraphConstructorTest, Cycle) {
  absl::Status s = Import(R"pb(
    node {
      name: "a"
      op: "Identity"
      input: "b"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "b"
      op: "Identity"
      input: "a"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("cycle through node"));
}

TEST(GraphConstructorTest, MalformedDevice) {
  absl::Status s = Import(R"pb(node { name: "n" op: "NoOp" device: "/job:w/task:x" })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'n' (NoOp) has malformed device name '/job:w/task:x'"));
}

TEST(GraphConstructorTest, BadAttrs) {
  absl::Status s = Import(R"pb(
    node {
      name: "m"
      op: "MatMul"
      attr {
        key: "T"
        value { type: DT_STRING }
      }
    })pb");
  EXPECT_THAT(s.message(), HasSubstr("attr 'T' has value string which is not in the allowed list"));
  s = Import(R"pb(node {
                    name: "m"
                    op: "NoOp"
                    attr {
                      key: "bogus"
                      value { i: 1 }
                    }
                  })pb");
  EXPECT_THAT(s.message(), HasSubstr("has attr 'bogus' which op 'NoOp' does not define"));
  s = Import(R"pb(node {
                    name: "c"
                    op: "Const"
                    attr {
                      key: "dtype"
                      value { i: 3 }
                    }
                  })pb");
  EXPECT_THAT(s.message(), HasSubstr("attr 'dtype': expected a value of type type"));
  s = Import(R"pb(node {
                    name: "i"
                    op: "Identity"
                    attr {
                      key: "T"
                      value { type: DT_FLOAT }
                    }
                  })pb");
  EXPECT_THAT(s.message(), HasSubstr("expects 1 data inputs but has 0"));
}

TEST(GraphConstructorTest, MalformedText) {
  GraphDef g;
  absl::Status s = ParseGraphDefText("node { name: \"x\" op: }", &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("line 1"));
  s = ReadGraphDefFromFile("/nonexistent/graph.pb", &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
}

TEST(GraphConstructorTest, FailureLeavesGraphUntouched) {
  Graph g;
  EXPECT_FALSE(ConvertGraphDefToGraph({}, ParseText(R"pb(node { name: "a" op: "NoOp" }
                                                         node { name: "b" op: "Nope" })pb"),
                                      &g)
                   .ok());
  EXPECT_EQ(g.num_op_nodes(), 0);
}

// Restores the process's graph node limit when a test is done with it.
class MaxGraphNodesTest : public ::testing::Test {
 protected:
  void TearDown() override { SetMaxGraphNodes(kDefaultMaxGraphNodes); }
};

TEST_F(MaxGraphNodesTest, GraphsOverTheLimitAreRefusedNamingIt) {
  const GraphDef three = ParseText(R"pb(node { name: "a" op: "NoOp" }
                                        node { name: "b" op: "NoOp" }
                                        node { name: "c" op: "NoOp" })pb");
  EXPECT_EQ(MaxGraphNodes(), kDefaultMaxGraphNodes);
  SetMaxGraphNodes(2);
  Graph g;
  absl::Status s = ConvertGraphDefToGraph({}, three, &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("graph has 3 nodes, more than the limit of 2 nodes per graph"));
  EXPECT_THAT(s.message(), HasSubstr("--max-graph-nodes"));
  EXPECT_EQ(g.num_op_nodes(), 0);

  // Exactly at the limit, and with the limit lifted by the options or by 0.
  SetMaxGraphNodes(3);
  ASSERT_TRUE(ConvertGraphDefToGraph({}, three, &g).ok());
  EXPECT_EQ(g.num_op_nodes(), 3);
  SetMaxGraphNodes(1);
  GraphConstructorOptions unlimited;
  unlimited.max_nodes = 0;
  Graph g2;
  EXPECT_TRUE(ConvertGraphDefToGraph(unlimited, three, &g2).ok());
  SetMaxGraphNodes(0);
  Graph g3;
  EXPECT_TRUE(ConvertGraphDefToGraph({}, three, &g3).ok());
}

// Import builds the graph once and hands it over: nodes, edges and the
// SOURCE/SINK wiring of the result are the graph's own, and it can be
// copied and extended afterwards.
TEST(GraphConstructorTest, ImportedGraphIsWholeAndCopyable) {
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, ParseText(kTfGraph), &g).ok());
  for (const Edge* e : g.edges()) {
    EXPECT_EQ(g.FindNodeId(e->src()->id()), e->src());
    EXPECT_EQ(g.FindNodeId(e->dst()->id()), e->dst());
  }
  EXPECT_EQ(g.source_node()->name(), "_SOURCE");
  Graph copy;
  copy.Copy(g);
  GraphDef a, b;
  g.ToGraphDef(&a);
  copy.ToGraphDef(&b);
  EXPECT_EQ(SerializeGraphDefDeterministic(a), SerializeGraphDefDeterministic(b));
  NodeDef extra;
  extra.set_name("extra");
  extra.set_op("NoOp");
  absl::StatusOr<Node*> n = copy.AddNode(extra);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ((*n)->def().name(), "extra");
  EXPECT_EQ(copy.num_op_nodes(), g.num_op_nodes() + 1);
}

// Every op node hangs between SOURCE and SINK by exactly one edge each way
// where it has no other, however many leaves there are (SINK's in-edges are
// added without a duplicate scan, which made wide graphs quadratic).
TEST(GraphConstructorTest, ManyLeavesEachGetOneSinkEdge) {
  GraphDef def;
  constexpr int kLeaves = 5000;
  for (int i = 0; i < kLeaves; ++i) {
    NodeDef* n = def.add_node();
    n->set_name(absl::StrCat("leaf", i));
    n->set_op("NoOp");
  }
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, def, &g).ok());
  // SOURCE -> SINK, then SOURCE -> leaf and leaf -> SINK for each.
  EXPECT_EQ(g.num_edges(), 1 + 2 * kLeaves);
  EXPECT_EQ(static_cast<int>(g.sink_node()->in_edges().size()), 1 + kLeaves);
  for (Node* n : g.op_nodes()) {
    ASSERT_EQ(n->in_edges().size(), 1u);
    ASSERT_EQ(n->out_edges().size(), 1u);
    EXPECT_TRUE(n->in_edges()[0]->src()->IsSource());
    EXPECT_TRUE(n->out_edges()[0]->dst()->IsSink());
  }
}

// A node's control inputs import in linear time (each new one used to scan
// the edges before it): 100 000 distinct sources, every one named twice,
// give one control edge each.
TEST(GraphConstructorTest, ManyControlInputsGiveOneEdgePerSource) {
  GraphDef def;
  constexpr int kSources = 100000;
  NodeDef* sink = nullptr;
  for (int i = 0; i < kSources; ++i) {
    NodeDef* n = def.add_node();
    n->set_name(absl::StrCat("src", i));
    n->set_op("NoOp");
  }
  sink = def.add_node();
  sink->set_name("all");
  sink->set_op("NoOp");
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kSources; ++i) sink->add_input(absl::StrCat("^src", i));
  }
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, def, &g).ok());
  const Node* all = nullptr;
  for (const Node* n : g.op_nodes()) {
    if (n->name() == "all") all = n;
  }
  ASSERT_NE(all, nullptr);
  ASSERT_EQ(static_cast<int>(all->in_edges().size()), kSources);
  std::vector<bool> seen(kSources, false);
  for (const Edge* e : all->in_edges()) {
    ASSERT_TRUE(e->IsControlEdge());
    int i = -1;
    ASSERT_TRUE(absl::SimpleAtoi(absl::string_view(e->src()->name()).substr(3), &i));
    EXPECT_FALSE(seen[i]) << e->src()->name();
    seen[i] = true;
  }
}

// A node whose types cannot be resolved is not added.
TEST(GraphConstructorTest, AddNodeFailureAddsNothing) {
  Graph g;
  NodeDef bad;
  bad.set_name("n");
  bad.set_op("AddN");
  AddNodeAttr("T", DT_FLOAT, &bad);
  AddNodeAttr("N", int64_t{-1}, &bad);
  const int ids = g.num_node_ids();
  EXPECT_FALSE(g.AddNode(bad).ok());
  EXPECT_EQ(g.num_node_ids(), ids);
  EXPECT_EQ(g.num_op_nodes(), 0);
}

}  // namespace
}  // namespace distflow
