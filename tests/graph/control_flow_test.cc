// BuildControlFlowInfo: frames of well-formed loops, and an error naming the
// node for every malformed one.
#include "distflow/graph/control_flow.h"

#include "common_runtime/loop_test_graphs.h"
#include "distflow/core/status.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

absl::Status Info(const GraphDef& gdef, ControlFlowInfo* info, Graph* g) {
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, gdef, g));
  return BuildControlFlowInfo(*g, info);
}

const Node* Find(const Graph& g, const std::string& name) {
  for (const Node* n : g.op_nodes()) {
    if (n->name() == name) return n;
  }
  return nullptr;
}

TEST(ControlFlowInfoTest, NestedFrames) {
  Graph g;
  ControlFlowInfo info;
  ASSERT_TRUE(Info(test::NestedLoop({"", "", ""}, 3), &info, &g).ok());
  ASSERT_EQ(info.frames.size(), 3u);
  const int outer = info.node_frame[Find(g, "outer/Merge_0")->id()];
  const int inner = info.node_frame[Find(g, "inner/Merge_0")->id()];
  EXPECT_EQ(info.frames[outer].name, "outer/while_context");
  EXPECT_EQ(info.frames[outer].parent, 0);
  EXPECT_EQ(info.frames[outer].parallel_iterations, 3);
  EXPECT_EQ(info.frames[outer].loop_cond, Find(g, "outer/LoopCond"));
  EXPECT_EQ(info.frames[inner].parent, outer);
  // An Enter takes its input in the frame around; an Exit gives its output
  // there.
  const Node* enter = Find(g, "inner/Enter_0");
  EXPECT_EQ(info.node_frame[enter->id()], inner);
  EXPECT_EQ(info.InputFrame(enter), outer);
  EXPECT_EQ(info.OutputFrame(Find(g, "inner/Exit_1")), outer);
  EXPECT_EQ(info.node_frame[Find(g, "n")->id()], 0);
}

GraphDef Malformed(const std::string& mutation) {
  GraphDef g = test::SumLoop({"", "", ""});
  for (NodeDef& n : *g.mutable_node()) {
    if (mutation == "exit_outside" && n.name() == "sum/Exit_0") n.set_input(0, "i0");
    if (mutation == "mixed_frames" && n.name() == "sum/add_i") n.set_input(1, "i0");
    if (mutation == "parallel_zero" && n.name() == "sum/Enter_0") {
      (*n.mutable_attr())["parallel_iterations"].set_i(0);
    }
    if (mutation == "no_frame_name" && n.name() == "sum/Enter_1") {
      (*n.mutable_attr())["frame_name"].set_s("");
    }
  }
  return g;
}

TEST(ControlFlowInfoTest, MalformedLoopsAreErrorsNamingTheNode) {
  // (mutation, what the message names)
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"exit_outside", "sum/Exit_0"},
      {"mixed_frames", "different frames"},
      {"parallel_zero", "sum/Enter_0"},
      {"no_frame_name", "sum/Enter_1"}};
  for (const auto& [mutation, node] : cases) {
    Graph g;
    ControlFlowInfo info;
    absl::Status s = Info(Malformed(mutation), &info, &g);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << mutation << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(node)) << mutation;
  }
}

}  // namespace
}  // namespace distflow
