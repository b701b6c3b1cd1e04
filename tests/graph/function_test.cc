// Function instantiation (attr placeholders, defaults, FunctionDef input
// names, bad bodies) and the lowering pass (calls, If, Case, While, nesting,
// recursion), checked on the graphs they produce.
#include <map>
#include <string>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/function_body.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_io.h"
#include "distflow/graph/lower_functional_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// scale(x: T) -> y = x * x, with T bound per call (default float); add1
// calls scale by name; loop_forever calls itself.
constexpr char kLibrary[] = R"pb(
  library {
    function {
      signature {
        name: "square"
        input_arg { name: "x" type_attr: "T" }
        output_arg { name: "y" type_attr: "T" }
        attr {
          name: "T"
          type: "type"
          default_value { type: DT_FLOAT }
        }
      }
      node_def {
        name: "mul"
        op: "Mul"
        input: "x"
        input: "x"
        attr {
          key: "T"
          value { placeholder: "T" }
        }
      }
      ret { key: "y" value: "mul:z:0" }
    }
    function {
      signature {
        name: "add1"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
        control_output: "side"
      }
      node_def { name: "sq" op: "square" input: "x" }
      node_def {
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
      node_def {
        name: "add"
        op: "AddV2"
        input: "sq:y:0"
        input: "one:output:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node_def { name: "noop" op: "NoOp" input: "^add" }
      ret { key: "y" value: "add:z:0" }
      control_ret { key: "side" value: "noop" }
    }
    function {
      signature {
        name: "loop_forever"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      node_def { name: "again" op: "loop_forever" input: "x" }
      ret { key: "y" value: "again:y:0" }
    }
    function {
      signature {
        name: "neg"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      node_def {
        name: "n"
        op: "Neg"
        input: "x"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "y" value: "n:y:0" }
    }
    function {
      signature {
        name: "less5"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "b" type: DT_BOOL }
      }
      node_def {
        name: "five"
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
              float_val: 5
            }
          }
        }
      }
      node_def {
        name: "less"
        op: "Less"
        input: "x"
        input: "five:output:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "b" value: "less:z:0" }
    }
  }
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
)pb";

std::shared_ptr<const FunctionLibraryDefinition> Library() {
  GraphDef def;
  EXPECT_TRUE(ParseGraphDefText(kLibrary, &def).ok());
  auto lib = FunctionLibraryDefinition::Create(def.library());
  EXPECT_TRUE(lib.ok()) << lib.status();
  return *lib;
}

NameAttrList Func(const std::string& name, std::map<std::string, DataType> types = {}) {
  NameAttrList f;
  f.set_name(name);
  for (const auto& [k, v] : types) (*f.mutable_attr())[k].set_type(v);
  return f;
}

TEST(FunctionLibraryTest, RejectsBadLibraries) {
  FunctionDefLibrary lib;
  lib.add_function()->mutable_signature()->set_name("MatMul");
  EXPECT_THAT(FunctionLibraryDefinition::Create(lib).status().message(),
              HasSubstr("'MatMul' has the name of a registered op"));
  lib.mutable_function(0)->mutable_signature()->set_name("f");
  lib.add_function()->mutable_signature()->set_name("f");
  EXPECT_THAT(FunctionLibraryDefinition::Create(lib).status().message(),
              HasSubstr("'f' is defined twice"));
}

TEST(FunctionBodyTest, BindsPlaceholdersFromCallAndDefaults) {
  auto lib = Library();
  auto ints = InstantiateFunctionBody(lib, Func("square", {{"T", DT_INT32}}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ((*ints)->arg_types, DataTypeVector{DT_INT32});
  EXPECT_EQ((*ints)->ret_types, DataTypeVector{DT_INT32});
  const Node* ret = (*ints)->ret_nodes[0];
  const Node* mul = nullptr;
  ASSERT_TRUE(ret->input_node(0, &mul).ok());
  EXPECT_EQ(mul->name(), "mul");
  EXPECT_EQ(mul->input_type(0), DT_INT32);

  auto floats = InstantiateFunctionBody(lib, Func("square"));
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_EQ((*floats)->arg_types, DataTypeVector{DT_FLOAT});
}

TEST(FunctionBodyTest, ControlRetsAndNestedCallsResolve) {
  auto body = InstantiateFunctionBody(Library(), Func("add1"));
  ASSERT_TRUE(body.ok()) << body.status();
  ASSERT_EQ((*body)->control_ret_nodes.size(), 1u);
  EXPECT_EQ((*body)->control_ret_nodes[0]->name(), "noop");
  const Node* add = nullptr;
  ASSERT_TRUE((*body)->ret_nodes[0]->input_node(0, &add).ok());
  const Node* sq = nullptr;
  ASSERT_TRUE(add->input_node(0, &sq).ok());
  EXPECT_EQ(sq->type_string(), "square");
  EXPECT_EQ(sq->output_type(0), DT_FLOAT);
}

// A library holding one function "f"(x: float) -> y with `body` as its nodes
// and `ret` as its result.
std::shared_ptr<const FunctionLibraryDefinition> OneFunction(const std::string& body,
                                                             const std::string& ret) {
  GraphDef def;
  const std::string text = R"pb(library { function { signature {
                                            name: "f"
                                            input_arg { name: "x" type: DT_FLOAT }
                                            output_arg { name: "y" type: DT_FLOAT }
                                            attr { name: "U" type: "type" }
                                          })pb" +
                           body + " ret { key: \"y\" value: \"" + ret + "\" } } }";
  EXPECT_TRUE(ParseGraphDefText(text, &def).ok()) << text;
  auto lib = FunctionLibraryDefinition::Create(def.library());
  EXPECT_TRUE(lib.ok()) << lib.status();
  return *lib;
}

TEST(FunctionBodyTest, BadBodiesNameTheFunctionAndNode) {
  const std::string neg = R"pb(node_def {
                                 name: "n"
                                 op: "Neg"
                                 input: "INPUT"
                                 attr { key: "T" value { PLACE } }
                               })pb";
  auto make = [&](const std::string& input, const std::string& place, const std::string& ret) {
    std::string body = neg;
    body.replace(body.find("INPUT"), 5, input);
    body.replace(body.find("PLACE"), 5, place);
    return OneFunction(body, ret);
  };
  struct Case {
    std::string input, place, ret, attr_u, expected;
  };
  const Case cases[] = {
      {"missing", "type: DT_FLOAT", "n:y:0", "float",
       "function 'f': node 'n': input 'missing' names a missing node 'missing'"},
      {"x", "type: DT_FLOAT", "n:nope:0", "float", "node 'n' (Neg) has no output arg 'nope'"},
      {"x", "type: DT_FLOAT", "n:y:3", "float", "output arg 'y' of node 'n' has 1 tensors"},
      {"x", "placeholder: \"V\"", "n:y:0", "float",
       "function 'f': node 'n' attr 'T': attr placeholder '$V' is not bound"},
      {"x", "placeholder: \"U\"", "n:y:0", "int32", "expects int32 but gets float"},
      {"x", "type: DT_FLOAT", "x:y:0", "float", "input 'x:y:0' is malformed"},
  };
  for (const Case& c : cases) {
    auto lib = make(c.input, c.place, c.ret);
    NameAttrList f = Func("f");
    (*f.mutable_attr())["U"].set_type(c.attr_u == "float" ? DT_FLOAT : DT_INT32);
    auto body = InstantiateFunctionBody(lib, f);
    ASSERT_FALSE(body.ok()) << c.expected;
    EXPECT_THAT(body.status().message(), HasSubstr(c.expected));
  }
  auto unknown_op = OneFunction(R"pb(node_def { name: "n" op: "NoSuchOp" input: "x" })pb", "n:y:0");
  NameAttrList f = Func("f", {{"U", DT_FLOAT}});
  auto body = InstantiateFunctionBody(unknown_op, f);
  EXPECT_EQ(body.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(body.status().message(), HasSubstr("function 'f': node 'n'"));
  EXPECT_THAT(body.status().message(), HasSubstr("'NoSuchOp' is not registered"));

  auto no_attr = InstantiateFunctionBody(unknown_op, Func("f"));
  EXPECT_THAT(no_attr.status().message(),
              HasSubstr("function 'f': attr 'U' is not given by the call and has no default"));
  EXPECT_EQ(InstantiateFunctionBody(unknown_op, Func("g")).status().code(),
            absl::StatusCode::kNotFound);
}

// The graph of kLibrary's library plus `nodes`, lowered.
absl::StatusOr<std::unique_ptr<Graph>> Lowered(const std::string& nodes) {
  GraphDef def;
  if (!ParseGraphDefText(std::string(kLibrary) + nodes, &def).ok()) {
    return absl::InvalidArgumentError("bad test graph");
  }
  auto g = std::make_unique<Graph>();
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, def, g.get()));
  DF_RETURN_IF_ERROR(LowerFunctionalOps(g.get()));
  return g;
}

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node* n : g.op_nodes()) ++counts[n->type_string()];
  return counts;
}

const Node* Named(const Graph& g, const std::string& name) {
  for (const Node* n : g.op_nodes()) {
    if (n->name() == name) return n;
  }
  return nullptr;
}

TEST(LowerFunctionalOpsTest, InlinesNestedCallsKeepingConsumersAndControlDeps) {
  auto g = Lowered(R"pb(
    node {
      name: "call"
      op: "StatefulPartitionedCall"
      input: "x"
      device: "/device:CPU:0"
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "f"
        value { func { name: "add1" } }
      }
    }
    node {
      name: "out"
      op: "Identity"
      input: "call"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node { name: "after" op: "NoOp" input: "^call" })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto counts = OpCounts(**g);
  EXPECT_EQ(counts.count("StatefulPartitionedCall"), 0u);
  EXPECT_EQ(counts.count("add1"), 0u);
  EXPECT_EQ(counts.count("square"), 0u);
  EXPECT_EQ(counts["Mul"], 1);
  const Node* out = Named(**g, "out");
  const Node* add = nullptr;
  ASSERT_TRUE(out->input_node(0, &add).ok());
  EXPECT_EQ(add->name(), "call/add");
  EXPECT_EQ(add->requested_device(), "/device:CPU:0");
  const Node* mul = Named(**g, "call/sq/mul");
  ASSERT_NE(mul, nullptr);
  // The control dependent waits for the body, side effects included.
  const Node* after = Named(**g, "after");
  const Node* done = nullptr;
  for (const Edge* e : after->in_edges()) {
    if (e->IsControlEdge() && e->src()->IsOp()) done = e->src();
  }
  ASSERT_NE(done, nullptr);
  bool waits_for_side_effect = false;
  for (const Edge* e : done->in_edges()) {
    waits_for_side_effect |= e->src()->name() == "call/noop";
  }
  EXPECT_TRUE(waits_for_side_effect);
}

TEST(LowerFunctionalOpsTest, IfBecomesSwitchAndMerge) {
  auto g = Lowered(R"pb(
    node {
      name: "p"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_BOOL }
      }
    }
    node {
      name: "if"
      op: "If"
      input: "p"
      input: "x"
      attr {
        key: "Tcond"
        value { type: DT_BOOL }
      }
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "then_branch"
        value { func { name: "square" } }
      }
      attr {
        key: "else_branch"
        value { func { name: "neg" } }
      }
    }
    node {
      name: "out"
      op: "Identity"
      input: "if"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto counts = OpCounts(**g);
  EXPECT_EQ(counts["Switch"], 2);  // the predicate's and x's
  EXPECT_EQ(counts["Merge"], 1);
  EXPECT_EQ(counts.count("If"), 0u);
  const Node* merge = nullptr;
  ASSERT_TRUE(Named(**g, "out")->input_node(0, &merge).ok());
  EXPECT_EQ(merge->type_string(), "Merge");
  const Node* else_out = nullptr;
  const Node* then_out = nullptr;
  ASSERT_TRUE(merge->input_node(0, &else_out).ok());
  ASSERT_TRUE(merge->input_node(1, &then_out).ok());
  EXPECT_EQ(else_out->name(), "if/else/n");
  EXPECT_EQ(then_out->name(), "if/then/mul");
}

TEST(LowerFunctionalOpsTest, NonBoolPredicateIsAnError) {
  auto g = Lowered(R"pb(
    node {
      name: "if"
      op: "StatelessIf"
      input: "x"
      input: "x"
      attr {
        key: "Tcond"
        value { type: DT_FLOAT }
      }
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "then_branch"
        value { func { name: "square" } }
      }
      attr {
        key: "else_branch"
        value { func { name: "neg" } }
      }
    })pb");
  EXPECT_THAT(g.status().message(), HasSubstr("node 'if' (StatelessIf): the predicate is float"));
}

TEST(LowerFunctionalOpsTest, CaseBecomesSwitchNAndMerge) {
  auto g = Lowered(R"pb(
    node {
      name: "i"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
    }
    node {
      name: "case"
      op: "Case"
      input: "i"
      input: "x"
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "branches"
        value {
          list {
            func { name: "square" }
            func { name: "neg" }
            func { name: "add1" }
          }
        }
      }
    })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto counts = OpCounts(**g);
  EXPECT_EQ(counts["_SwitchN"], 2);
  EXPECT_EQ(counts["Merge"], 1);
  const Node* sw = Named(**g, "case/_switch0");
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->num_outputs(), 3);
}

TEST(LowerFunctionalOpsTest, MismatchedBranchTypesAreErrors) {
  auto g = Lowered(R"pb(
    node {
      name: "i"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
    }
    node {
      name: "case"
      op: "Case"
      input: "i"
      input: "x"
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "branches"
        value {
          list {
            func { name: "square" }
            func { name: "less5" }
          }
        }
      }
    })pb");
  EXPECT_THAT(g.status().message(),
              HasSubstr("result 0 of function 'less5' is bool but the caller expects float"));
}

TEST(LowerFunctionalOpsTest, RecursionIsAnErrorNotAStackOverflow) {
  auto g = Lowered(R"pb(
    node { name: "call" op: "loop_forever" input: "x" })pb");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("function 'loop_forever' calls itself recursively "
                                              "(loop_forever -> loop_forever)"));
}

TEST(LowerFunctionalOpsTest, MissingFunctionNamesTheNode) {
  auto g = Lowered(R"pb(
    node {
      name: "call"
      op: "PartitionedCall"
      input: "x"
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "f"
        value { func { name: "nowhere" } }
      }
    })pb");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'call' (PartitionedCall)"));
  EXPECT_THAT(g.status().message(), HasSubstr("function 'nowhere' is not in the graph's library"));
}

TEST(LowerFunctionalOpsTest, WhileBecomesALoopInItsOwnFrame) {
  auto g = Lowered(R"pb(
    node {
      name: "loop"
      op: "While"
      input: "x"
      attr {
        key: "T"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "cond"
        value { func { name: "less5" } }
      }
      attr {
        key: "body"
        value { func { name: "add1" } }
      }
      attr {
        key: "parallel_iterations"
        value { i: 3 }
      }
    }
    node {
      name: "out"
      op: "Identity"
      input: "loop"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto counts = OpCounts(**g);
  EXPECT_EQ(counts["Enter"], 1);
  EXPECT_EQ(counts["Merge"], 1);
  EXPECT_EQ(counts["Switch"], 1);
  EXPECT_EQ(counts["LoopCond"], 1);
  EXPECT_EQ(counts["NextIteration"], 1);
  EXPECT_EQ(counts["Exit"], 1);
  const Node* enter = Named(**g, "loop/_enter0");
  ASSERT_NE(enter, nullptr);
  std::string frame;
  int64_t parallel = 0;
  ASSERT_TRUE(GetNodeAttr(enter->attrs(), "frame_name", &frame).ok());
  ASSERT_TRUE(GetNodeAttr(enter->attrs(), "parallel_iterations", &parallel).ok());
  EXPECT_EQ(frame, "loop");
  EXPECT_EQ(parallel, 3);
  const Node* exit = nullptr;
  ASSERT_TRUE(Named(**g, "out")->input_node(0, &exit).ok());
  EXPECT_EQ(exit->type_string(), "Exit");
  // The body's constant sits in the loop frame: it waits on the body's inputs.
  const Node* one = Named(**g, "loop/body/one");
  ASSERT_NE(one, nullptr);
  bool in_frame = false;
  for (const Edge* e : one->in_edges()) in_frame |= e->src()->name() == "loop/body/_input_control";
  EXPECT_TRUE(in_frame);
}

}  // namespace
}  // namespace distflow
