// The lowering pass bounds what it would inline before it inlines: a call
// bomb (calls within calls, 4^15 nodes from a request of a few KB) is
// ResourceExhausted with not one node made, and a seeded mutation run over
// random call trees shows the rule both ways: what is certainly past the
// limit is refused untouched, what is certainly far below it is lowered.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/lower_functional_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// f0(x) = Identity(x); f<i>(x) calls f<i-1> fanout[i-1] times in a chain.
// The graph feeds a Placeholder to one call of the top function.
GraphDef CallTree(const std::vector<int>& fanout) {
  const std::string x_name = "x";
  GraphDef g;
  FunctionDefLibrary* lib = g.mutable_library();
  auto signature = [](FunctionDef* f, const std::string& name) {
    f->mutable_signature()->set_name(name);
    auto* in = f->mutable_signature()->add_input_arg();
    in->set_name("x");
    in->set_type(DT_FLOAT);
    auto* out = f->mutable_signature()->add_output_arg();
    out->set_name("y");
    out->set_type(DT_FLOAT);
  };
  FunctionDef* f0 = lib->add_function();
  signature(f0, "f0");
  NodeDef* id = f0->add_node_def();
  id->set_name("id");
  id->set_op("Identity");
  id->add_input(x_name);
  (*id->mutable_attr())["T"].set_type(DT_FLOAT);
  (*f0->mutable_ret())["y"] = "id:output:0";
  for (size_t level = 1; level <= fanout.size(); ++level) {
    FunctionDef* f = lib->add_function();
    signature(f, absl::StrCat("f", level));
    std::string prev = x_name;
    for (int c = 0; c < fanout[level - 1]; ++c) {
      NodeDef* call = f->add_node_def();
      call->set_name(absl::StrCat("c", c));
      call->set_op(absl::StrCat("f", level - 1));
      call->add_input(prev);
      prev = absl::StrCat("c", c, ":y:0");
    }
    (*f->mutable_ret())["y"] = prev;
  }
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  NodeDef* top = g.add_node();
  top->set_name("call");
  top->set_op(absl::StrCat("f", fanout.size()));
  top->add_input(x_name);
  return g;
}

TEST(LoweringBoundTest, CallBombIsRefusedBeforeANodeIsMade) {
  const GraphDef def = CallTree(std::vector<int>(15, 4));  // 4^15 = 2^30 Identity nodes
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, def, &g).ok());
  const int before = g.num_node_ids();
  absl::Status s = LowerFunctionalOps(&g);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("node 'call' (f15)"));
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("past the limit of ", kMaxLoweredNodes)));
  EXPECT_EQ(g.num_node_ids(), before);
}

// Random call trees from a fixed seed. `identities` (the Identity nodes the
// tree inlines, fewer than it makes) above the limit must be refused
// untouched; a tree whose every inlined node count, overheads included, is
// far below the limit must lower.
TEST(LoweringBoundTest, SeededCallTreesAreLoweredOrRefusedUntouched) {
  std::mt19937 rng(20260126);
  int refused = 0, lowered = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<int> fanout(std::uniform_int_distribution<int>(1, 14)(rng));
    double identities = 1;
    for (int& k : fanout) {
      k = std::uniform_int_distribution<int>(1, 5)(rng);
      identities *= k;
    }
    // Each inlined call adds a few nodes of its own (argument and result
    // Identity, NoOps) beside its body, and there are fewer calls than
    // twice the Identity nodes: 64 per Identity is far more than a tree
    // makes. Trees between the two zones are not run: lowering them may
    // really make millions of nodes.
    const bool past = identities > kMaxLoweredNodes;
    const bool far_below = identities * 64 < kMaxLoweredNodes / 16;
    if (!past && !far_below) continue;
    Graph g;
    ASSERT_TRUE(ConvertGraphDefToGraph({}, CallTree(fanout), &g).ok());
    const int before = g.num_node_ids();
    absl::Status s = LowerFunctionalOps(&g);
    if (past) {
      EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << round << ": " << s;
      EXPECT_EQ(g.num_node_ids(), before) << round;
      ++refused;
    } else {
      EXPECT_TRUE(s.ok()) << round << ": " << s;
      ++lowered;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(lowered, 0);
}

}  // namespace
}  // namespace distflow
