#include "distflow/graph/subgraph.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/graph_constructor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

REGISTER_OP("SubgraphTestFloat").Output("o: float");
REGISTER_OP("SubgraphTestTwo").Output("a: float").Output("b: int32");
REGISTER_OP("SubgraphTestAdd").Input("a: float").Input("b: float").Output("c: float");
REGISTER_OP("SubgraphTestStateful").Input("a: float").SetIsStateful();
REGISTER_OP("SubgraphTestRefVar").Output("ref: Ref(float)").SetIsStateful();
REGISTER_OP("SubgraphTestAssign")
    .Input("ref: Ref(float)")
    .Input("v: float")
    .Output("o: Ref(float)");

NodeDef MakeNode(const std::string& name, const std::string& op,
                 std::vector<std::string> inputs = {}) {
  NodeDef def;
  def.set_name(name);
  def.set_op(op);
  for (auto& in : inputs) def.add_input(in);
  return def;
}

// a, b -> c = a + b -> s (stateful sink); t = two outputs; d = c + t:0.
GraphDef TestGraphDef() {
  GraphDef gdef;
  *gdef.add_node() = MakeNode("a", "SubgraphTestFloat");
  *gdef.add_node() = MakeNode("b", "SubgraphTestFloat");
  *gdef.add_node() = MakeNode("c", "SubgraphTestAdd", {"a", "b"});
  *gdef.add_node() = MakeNode("s", "SubgraphTestStateful", {"c", "^b"});
  *gdef.add_node() = MakeNode("t", "SubgraphTestTwo");
  *gdef.add_node() = MakeNode("d", "SubgraphTestAdd", {"c", "t:0"});
  return gdef;
}

DeviceAttributes ClientDevice() {
  DeviceAttributes d;
  d.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  d.set_device_type("CPU");
  d.set_incarnation(0x8000000000000123ULL);
  return d;
}

class SubgraphTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(ConvertGraphDefToGraph({}, TestGraphDef(), &g_).ok()); }

  absl::Status Rewrite(std::vector<std::string> feeds, std::vector<std::string> fetches,
                       std::vector<std::string> targets, bool function_convention = false) {
    return subgraph::RewriteGraphForExecution(&g_, feeds, fetches, targets, ClientDevice(),
                                              function_convention
                                                  ? subgraph::FeedFetchConvention::kCallFrame
                                                  : subgraph::FeedFetchConvention::kRendezvous,
                                              &meta_);
  }

  Node* Find(const std::string& name) {
    for (Node* n : g_.op_nodes()) {
      if (n->name() == name) return n;
    }
    return nullptr;
  }

  std::vector<std::string> OpNames() {
    std::vector<std::string> names;
    for (Node* n : g_.op_nodes()) names.push_back(n->name());
    return names;
  }

  // The "src:port" feeding data input `i` of node `name`.
  std::string InputOf(const std::string& name, int i) {
    const Edge* e;
    if (!Find(name)->input_edge(i, &e).ok()) return "";
    return absl::StrCat(e->src()->name(), ":", e->src_output());
  }

  // Every op node has a path from SOURCE and to SINK, and the GraphDef the
  // graph writes imports again.
  void ExpectWellFormed() {
    for (Node* n : g_.op_nodes()) {
      EXPECT_FALSE(n->in_edges().empty()) << n->name();
      EXPECT_FALSE(n->out_edges().empty()) << n->name();
    }
    GraphDef out;
    g_.ToGraphDef(&out);
    Graph again;
    absl::Status s = ConvertGraphDefToGraph({}, out, &again);
    EXPECT_TRUE(s.ok()) << s;
  }

  Graph g_;
  subgraph::RewriteGraphMetadata meta_;
};

TEST_F(SubgraphTest, FeedBecomesClientRecvAndFetchBecomesClientSend) {
  ASSERT_TRUE(Rewrite({"a:0"}, {"c:0"}, {}).ok());
  // a is replaced by its recv; s, t and d are not needed.
  EXPECT_THAT(OpNames(), UnorderedElementsAre("b", "c", "a/_recv_0", "c/_send_0"));
  EXPECT_EQ(InputOf("c", 0), "a/_recv_0:0");
  EXPECT_EQ(InputOf("c", 1), "b:0");
  EXPECT_EQ(InputOf("c/_send_0", 0), "c:0");

  const std::string client = ClientDevice().name();
  Node* recv = Find("a/_recv_0");
  EXPECT_EQ(recv->type_string(), "_Recv");
  EXPECT_EQ(recv->assigned_device_name(), client);
  EXPECT_EQ(recv->requested_device(), client);
  std::string s;
  bool b;
  int64_t i;
  DataType t;
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "tensor_name", &s).ok());
  EXPECT_EQ(s, "a:0");
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "send_device", &s).ok());
  EXPECT_EQ(s, client);
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "recv_device", &s).ok());
  EXPECT_EQ(s, client);
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "send_device_incarnation", &i).ok());
  EXPECT_EQ(static_cast<uint64_t>(i), ClientDevice().incarnation());
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "client_terminated", &b).ok());
  EXPECT_TRUE(b);
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "tensor_type", &t).ok());
  EXPECT_EQ(t, DT_FLOAT);

  Node* send = Find("c/_send_0");
  EXPECT_EQ(send->type_string(), "_Send");
  EXPECT_EQ(send->assigned_device_name(), client);
  ASSERT_TRUE(GetNodeAttr(send->attrs(), "tensor_name", &s).ok());
  EXPECT_EQ(s, "c:0");
  ASSERT_TRUE(GetNodeAttr(send->attrs(), "client_terminated", &b).ok());
  EXPECT_TRUE(b);
  ASSERT_TRUE(GetNodeAttr(send->attrs(), "T", &t).ok());
  EXPECT_EQ(t, DT_FLOAT);

  EXPECT_THAT(meta_.feed_node_names, ElementsAre("a/_recv_0"));
  EXPECT_THAT(meta_.fetch_node_names, ElementsAre("c/_send_0"));
  EXPECT_THAT(meta_.feed_types, ElementsAre(DT_FLOAT));
  EXPECT_THAT(meta_.fetch_types, ElementsAre(DT_FLOAT));
  ExpectWellFormed();
}

TEST_F(SubgraphTest, TensorNameKeepsTheCallersSpellingAndIndexPicksOutput) {
  ASSERT_TRUE(Rewrite({"t:1"}, {"t:1", "d"}, {}).ok());
  Node* recv = Find(meta_.feed_node_names[0]);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->name(), "t/_recv_1");
  DataType t;
  ASSERT_TRUE(GetNodeAttr(recv->attrs(), "tensor_type", &t).ok());
  EXPECT_EQ(t, DT_INT32);
  std::string name;
  ASSERT_TRUE(GetNodeAttr(Find("d/_send_0")->attrs(), "tensor_name", &name).ok());
  EXPECT_EQ(name, "d");
  EXPECT_THAT(meta_.fetch_types, ElementsAre(DT_INT32, DT_FLOAT));
  // t:0 still feeds d, so t stays.
  EXPECT_NE(Find("t"), nullptr);
  ExpectWellFormed();
}

TEST_F(SubgraphTest, FetchingAFedTensorReturnsTheFedValue) {
  ASSERT_TRUE(Rewrite({"c:0"}, {"c:0"}, {}).ok());
  EXPECT_EQ(InputOf("c/_send_0", 0), "c/_recv_0:0");
  // Nothing needs the real c any more.
  EXPECT_THAT(OpNames(), UnorderedElementsAre("c/_recv_0", "c/_send_0"));
  ExpectWellFormed();
}

TEST_F(SubgraphTest, TargetsKeepTheirDataAndControlInputs) {
  ASSERT_TRUE(Rewrite({}, {}, {"s"}).ok());
  EXPECT_THAT(OpNames(), UnorderedElementsAre("a", "b", "c", "s"));
  ExpectWellFormed();
}

TEST_F(SubgraphTest, NothingRequestedPrunesEverything) {
  ASSERT_TRUE(Rewrite({}, {}, {}).ok());
  EXPECT_EQ(g_.num_op_nodes(), 0);
}

TEST_F(SubgraphTest, BadNamesAreInvalidArgumentAndLeaveTheGraphAlone) {
  struct Case {
    std::vector<std::string> feeds, fetches, targets;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"nope:0"}, {"c"}, {}, "feed 'nope:0'"}, {{}, {"c:1"}, {}, "fetch 'c:1'"},
      {{"a", "a:0"}, {"c"}, {}, "feed 'a:0'"},  {{}, {"c", "c:0"}, {}, "fetch 'c:0'"},
      {{}, {"c"}, {"ghost"}, "target 'ghost'"}, {{"^a"}, {"c"}, {}, "feed '^a'"},
      {{}, {"c:x"}, {}, "fetch 'c:x'"},
  };
  for (const Case& c : cases) {
    const int before = g_.num_nodes();
    absl::Status s = Rewrite(c.feeds, c.fetches, c.targets);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
    EXPECT_EQ(g_.num_nodes(), before);
  }
}

TEST(SubgraphRefTest, FeedingATensorReadByARefInputFails) {
  GraphDef gdef;
  *gdef.add_node() = MakeNode("v", "SubgraphTestRefVar");
  *gdef.add_node() = MakeNode("x", "SubgraphTestFloat");
  *gdef.add_node() = MakeNode("assign", "SubgraphTestAssign", {"v", "x"});
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, gdef, &g).ok());
  absl::Status s =
      subgraph::RewriteGraphForExecution(&g, {"v:0"}, {}, {"assign"}, ClientDevice(),
                                         subgraph::FeedFetchConvention::kRendezvous, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("assign"));
  // Fetching the ref output sends its value type.
  subgraph::RewriteGraphMetadata meta;
  ASSERT_TRUE(subgraph::RewriteGraphForExecution(&g, {}, {"assign:0"}, {}, ClientDevice(),
                                                 subgraph::FeedFetchConvention::kRendezvous, &meta)
                  .ok());
  EXPECT_THAT(meta.fetch_types, ElementsAre(DT_FLOAT));
}

// Placeholder and the function-convention ops live in a private registry so
// the test does not depend on (or clash with) the real op definitions.
class PrivateOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Register(OpDefBuilder("Placeholder").Output("output: dtype").Attr("dtype: type"));
    Register(OpDefBuilder("Add2").Input("a: float").Input("b: float").Output("c: float"));
    Register(OpDefBuilder("Sink1").Input("a: float").SetIsStateful());
    Register(OpDefBuilder("_Arg").Output("output: T").Attr("T: type").Attr("index: int"));
    Register(OpDefBuilder("_Retval").Input("input: T").Attr("T: type").Attr("index: int"));
    GraphDef gdef;
    NodeDef p = MakeNode("p", "Placeholder");
    AddNodeAttr("dtype", DT_FLOAT, &p);
    *gdef.add_node() = p;
    *gdef.add_node() = MakeNode("q", "Placeholder");
    AddNodeAttr("dtype", DT_FLOAT, gdef.mutable_node(1));
    *gdef.add_node() = MakeNode("sum", "Add2", {"p", "q"});
    *gdef.add_node() = MakeNode("after", "Sink1", {"q", "^p"});
    ASSERT_TRUE(ConvertGraphDefToGraph({}, gdef, &g_).ok());
  }
  void Register(const OpDefBuilder& b) {
    OpRegistrationData data;
    absl::Status s = b.Finalize(&data);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(ops_.Register(std::move(data)).ok());
  }
  Node* Find(const std::string& name) {
    for (Node* n : g_.op_nodes()) {
      if (n->name() == name) return n;
    }
    return nullptr;
  }

  OpRegistry ops_;
  Graph g_{&ops_};
};

TEST_F(PrivateOpsTest, FedPlaceholderHandsItsControlEdgesToTheRecv) {
  ASSERT_TRUE(ops_.LookUp("_Recv") == nullptr);
  // _Send/_Recv are missing from this registry: a clear error, no change.
  absl::Status s =
      subgraph::RewriteGraphForExecution(&g_, {"p:0"}, {}, {"after"}, ClientDevice(),
                                         subgraph::FeedFetchConvention::kRendezvous, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(Find("p"), nullptr);

  Register(OpDefBuilder("_Recv")
               .Output("tensor: tensor_type")
               .Attr("tensor_type: type")
               .Attr("tensor_name: string")
               .Attr("send_device: string")
               .Attr("send_device_incarnation: int")
               .Attr("recv_device: string")
               .Attr("client_terminated: bool = false"));
  ASSERT_TRUE(subgraph::RewriteGraphForExecution(&g_, {"p:0"}, {}, {"after"}, ClientDevice(),
                                                 subgraph::FeedFetchConvention::kRendezvous,
                                                 nullptr)
                  .ok());
  EXPECT_EQ(Find("p"), nullptr);
  Node* after = Find("after");
  bool has_recv_control = false;
  for (const Edge* e : after->in_edges()) {
    if (e->IsControlEdge() && e->src()->name() == "p/_recv_0") has_recv_control = true;
  }
  EXPECT_TRUE(has_recv_control);
}

TEST_F(PrivateOpsTest, FunctionConventionUsesArgAndRetval) {
  subgraph::RewriteGraphMetadata meta;
  ASSERT_TRUE(subgraph::RewriteGraphForExecution(&g_, {"q:0", "p:0"}, {"sum:0"}, {}, ClientDevice(),
                                                 subgraph::FeedFetchConvention::kCallFrame, &meta)
                  .ok());
  EXPECT_THAT(meta.feed_node_names, ElementsAre("q/_arg_0_0", "p/_arg_0_1"));
  EXPECT_THAT(meta.fetch_node_names, ElementsAre("sum/_retval_0_0"));
  Node* arg = Find("p/_arg_0_1");
  ASSERT_NE(arg, nullptr);
  EXPECT_EQ(arg->type_string(), "_Arg");
  int64_t index;
  ASSERT_TRUE(GetNodeAttr(arg->attrs(), "index", &index).ok());
  EXPECT_EQ(index, 1);
  Node* ret = Find("sum/_retval_0_0");
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(ret->type_string(), "_Retval");
  EXPECT_EQ(g_.num_op_nodes(), 4);
}

}  // namespace
}  // namespace distflow
