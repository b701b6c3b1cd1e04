// Functions at run time: TF2-style graphs (calls, If, Case, While, an If
// inside a loop body) through a session on one and on three devices, and the function library
// runtime a kernel calls through (cached instantiations, arguments and results, and a kernel with a
// `func` attr).
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/local_function_library_runtime.h"
#include "distflow/common_runtime/session.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

GraphDef ReadExample(const std::string& name) {
  GraphDef def;
  const absl::Status s =
      ReadGraphDefFromFile(std::string(DISTFLOW_EXAMPLES_DIR) + "/" + name, &def);
  EXPECT_TRUE(s.ok()) << s;
  return def;
}

std::unique_ptr<Session> MakeSession(const GraphDef& def, int devices) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = devices;
  auto session = NewSession(options);
  EXPECT_TRUE(session.ok()) << session.status();
  const absl::Status s = (*session)->Create(def);
  EXPECT_TRUE(s.ok()) << s;
  return *std::move(session);
}

TEST(FunctionSessionTest, StatefulPartitionedCallOfNestedFunctions) {
  auto session = MakeSession(ReadExample("function_call.pbtxt"), 1);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(3)}}, {"out"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 10.0f);
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(-0.5)}}, {"out"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.25f);
}

// Runs functional_cond.pbtxt for each (x, i) and returns (if_out, case_out).
std::vector<std::pair<float, float>> RunCond(const GraphDef& def, int devices) {
  auto session = MakeSession(def, devices);
  std::vector<std::pair<float, float>> results;
  for (auto [x, i] : std::vector<std::pair<float, int32_t>>{{3, 0}, {3, 1}, {-2, 2}, {-2, 7}}) {
    std::vector<Tensor> out;
    const absl::Status s =
        session->Run({{"x", Tensor::Scalar<float>(x)}, {"i", Tensor::Scalar<int32_t>(i)}},
                     {"if_out", "case_out"}, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return results;
    results.emplace_back(out[0].scalar<float>(), out[1].scalar<float>());
  }
  return results;
}

TEST(FunctionSessionTest, IfAndCaseTakeTheRightBranch) {
  const std::vector<std::pair<float, float>> expected{{6, 4}, {6, 30}, {2, 2}, {2, 2}};
  EXPECT_EQ(RunCond(ReadExample("functional_cond.pbtxt"), 1), expected);
}

TEST(FunctionSessionTest, BranchesSpreadOverThreeDevicesGiveTheSameValues) {
  GraphDef def = ReadExample("functional_cond.pbtxt");
  // Each branch body runs on its own device, the caller on CPU:0.
  const char* devices[] = {"/device:CPU:1", "/device:CPU:2"};
  int k = 0;
  for (FunctionDef& f : *def.mutable_library()->mutable_function()) {
    for (NodeDef& n : *f.mutable_node_def()) n.set_device(devices[k % 2]);
    ++k;
  }
  for (NodeDef& n : *def.mutable_node()) n.set_device("/device:CPU:0");
  const std::vector<std::pair<float, float>> expected{{6, 4}, {6, 30}, {2, 2}, {2, 2}};
  EXPECT_EQ(RunCond(def, 3), RunCond(ReadExample("functional_cond.pbtxt"), 1));
  EXPECT_EQ(RunCond(def, 3), expected);
}

TEST(FunctionSessionTest, RecursionFailsTheRunWithAClearError) {
  GraphDef def;
  ASSERT_TRUE(ParseGraphDefText(R"pb(
                                  node {
                                    name: "x"
                                    op: "Placeholder"
                                    attr {
                                      key: "dtype"
                                      value { type: DT_FLOAT }
                                    }
                                  }
                                  node { name: "call" op: "f" input: "x" }
                                  library {
                                    function {
                                      signature {
                                        name: "f"
                                        input_arg { name: "x" type: DT_FLOAT }
                                        output_arg { name: "y" type: DT_FLOAT }
                                      }
                                      node_def { name: "g_call" op: "g" input: "x" }
                                      ret { key: "y" value: "g_call:y:0" }
                                    }
                                    function {
                                      signature {
                                        name: "g"
                                        input_arg { name: "x" type: DT_FLOAT }
                                        output_arg { name: "y" type: DT_FLOAT }
                                      }
                                      node_def { name: "f_call" op: "f" input: "x" }
                                      ret { key: "y" value: "f_call:y:0" }
                                    }
                                  })pb",
                                &def)
                  .ok());
  auto session = MakeSession(def, 1);
  std::vector<Tensor> out;
  const absl::Status s = session->Run({{"x", Tensor::Scalar<float>(1)}}, {"call"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("calls itself recursively (f -> g -> f)"));
}

// Runs functional_while.pbtxt's graph for x = 1.5: (while_out, count).
std::pair<float, int32_t> RunWhile(const GraphDef& def, int devices) {
  auto session = MakeSession(def, devices);
  std::vector<Tensor> out;
  const absl::Status s =
      session->Run({{"x", Tensor::Scalar<float>(1.5)}}, {"while_out", "count"}, {}, &out);
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return {0, 0};
  return {out[0].scalar<float>(), out[1].scalar<int32_t>()};
}

TEST(FunctionSessionTest, WhileRunsAsALoop) {
  EXPECT_EQ(RunWhile(ReadExample("functional_while.pbtxt"), 1), std::make_pair(48.0f, 5));
}

TEST(FunctionSessionTest, WhileSpreadOverThreeDevicesGivesTheSameValues) {
  GraphDef def = ReadExample("functional_while.pbtxt");
  // The condition on CPU:2, the body on CPU:1, the loop itself on CPU:0.
  for (FunctionDef& f : *def.mutable_library()->mutable_function()) {
    const bool is_cond = f.signature().name() == "while_cond_69";
    for (NodeDef& n : *f.mutable_node_def()) {
      n.set_device(is_cond ? "/device:CPU:2" : "/device:CPU:1");
    }
  }
  for (NodeDef& n : *def.mutable_node()) n.set_device("/device:CPU:0");
  EXPECT_EQ(RunWhile(def, 3), RunWhile(ReadExample("functional_while.pbtxt"), 1));
  EXPECT_EQ(RunWhile(def, 3), std::make_pair(48.0f, 5));
}

TEST(FunctionSessionTest, IfInsideAWhileBody) {
  // The body becomes: acc = i < 2 ? acc * 2 : acc + 1, through a call of a
  // function holding a StatelessIf (branches from functional_cond.pbtxt).
  GraphDef def = ReadExample("functional_while.pbtxt");
  const GraphDef branches = ReadExample("functional_cond.pbtxt");
  for (const FunctionDef& f : branches.library().function()) {
    *def.mutable_library()->add_function() = f;
  }
  FunctionDef* step = def.mutable_library()->add_function();
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        signature {
          name: "step"
          input_arg { name: "i" type: DT_INT32 }
          input_arg { name: "acc" type: DT_FLOAT }
          output_arg { name: "out" type: DT_FLOAT }
        }
        node_def {
          name: "two"
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
                tensor_shape {}
                int_val: 2
              }
            }
          }
        }
        node_def {
          name: "lt"
          op: "Less"
          input: "i"
          input: "two:output:0"
          attr {
            key: "T"
            value { type: DT_INT32 }
          }
        }
        node_def {
          name: "cond"
          op: "StatelessIf"
          input: "lt:z:0"
          input: "acc"
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
            value { func { name: "cond_true_39" } }
          }
          attr {
            key: "else_branch"
            value { func { name: "switch_case_branch0_55" } }
          }
        }
        ret { key: "out" value: "cond:output:0" })pb",
      step));
  for (FunctionDef& f : *def.mutable_library()->mutable_function()) {
    if (f.signature().name() != "while_body_70") continue;
    for (NodeDef& n : *f.mutable_node_def()) {
      if (n.name() != "mul") continue;
      n.set_op("step");
      n.clear_attr();
      n.clear_input();
      n.add_input("while_loop_counter");
      n.add_input("while_placeholder");
    }
    for (NodeDef& n : *f.mutable_node_def()) {
      if (n.name() == "Identity_1") n.set_input(0, "mul:out:0");
    }
  }
  // 1.5 -> 3 -> 6 -> 7 -> 8 -> 9.
  EXPECT_EQ(RunWhile(def, 1), std::make_pair(9.0f, 5));
  EXPECT_EQ(RunWhile(def, 3), std::make_pair(9.0f, 5));
}

class FunctionLibraryRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto devices = CreateCpuDevices(ConfigProto(), "/job:localhost/replica:0/task:0");
    ASSERT_TRUE(devices.ok());
    device_ = std::move((*devices)[0]);
    GraphDef def = ReadExample("functional_cond.pbtxt");
    FunctionDef* poly = def.mutable_library()->add_function();
    ASSERT_TRUE(
        google::protobuf::TextFormat::ParseFromString(R"pb(
                                                        signature {
                                                          name: "twice"
                                                          input_arg { name: "x" type_attr: "T" }
                                                          output_arg { name: "y" type_attr: "T" }
                                                          attr { name: "T" type: "type" }
                                                        }
                                                        node_def {
                                                          name: "add"
                                                          op: "AddV2"
                                                          input: "x"
                                                          input: "x"
                                                          attr {
                                                            key: "T"
                                                            value { placeholder: "T" }
                                                          }
                                                        }
                                                        ret { key: "y" value: "add:z:0" })pb",
                                                      poly));
    auto lib = FunctionLibraryDefinition::Create(def.library());
    ASSERT_TRUE(lib.ok()) << lib.status();
    runtime_ = std::make_unique<LocalFunctionLibraryRuntime>(device_.get(), *lib);
  }

  NameAttrList Func(const std::string& name, DataType t = DT_INVALID) {
    NameAttrList f;
    f.set_name(name);
    if (t != DT_INVALID) (*f.mutable_attr())["T"].set_type(t);
    return f;
  }

  std::unique_ptr<Device> device_;
  std::unique_ptr<LocalFunctionLibraryRuntime> runtime_;
};

TEST_F(FunctionLibraryRuntimeTest, HandlesAreCachedPerInstantiation) {
  auto a = runtime_->Instantiate(Func("twice", DT_FLOAT));
  auto b = runtime_->Instantiate(Func("twice", DT_FLOAT));
  auto c = runtime_->Instantiate(Func("twice", DT_INT32));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status() << c.status();
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(runtime_->num_instantiations(), 2u);
  EXPECT_EQ(*runtime_->ret_types(*c), DataTypeVector{DT_INT32});
  EXPECT_EQ(runtime_->ret_types(99), nullptr);
}

TEST_F(FunctionLibraryRuntimeTest, RunsWithArguments) {
  auto twice = runtime_->Instantiate(Func("twice", DT_INT32));
  ASSERT_TRUE(twice.ok()) << twice.status();
  std::vector<Tensor> rets;
  ASSERT_TRUE(runtime_->RunSync({}, *twice, {Tensor::Scalar<int32_t>(21)}, &rets).ok());
  ASSERT_EQ(rets.size(), 1u);
  EXPECT_EQ(rets[0].scalar<int32_t>(), 42);

  auto branch = runtime_->Instantiate(Func("switch_case_branch1_56"));
  ASSERT_TRUE(branch.ok()) << branch.status();
  ASSERT_TRUE(runtime_->RunSync({}, *branch, {Tensor::Scalar<float>(1.5)}, &rets).ok());
  EXPECT_EQ(rets[0].scalar<float>(), 15.0f);
}

TEST_F(FunctionLibraryRuntimeTest, BadCallsAreErrors) {
  EXPECT_EQ(runtime_->Instantiate(Func("nope")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(runtime_->Instantiate(Func("twice")).status().message(),
              HasSubstr("attr 'T' is not given by the call and has no default"));
  auto twice = runtime_->Instantiate(Func("twice", DT_FLOAT));
  ASSERT_TRUE(twice.ok());
  std::vector<Tensor> rets;
  EXPECT_THAT(runtime_->RunSync({}, *twice, {}, &rets).message(),
              HasSubstr("function 'twice' takes 1 arguments but was called with 0"));
  const absl::Status wrong_type =
      runtime_->RunSync({}, *twice, {Tensor::Scalar<int32_t>(1)}, &rets);
  EXPECT_THAT(wrong_type.message(), HasSubstr("function 'twice': argument 0 must be float"))
      << wrong_type;
  EXPECT_THAT(wrong_type.message(), HasSubstr("but is int32"));
  EXPECT_EQ(runtime_->RunSync({}, 1234, {}, &rets).code(), absl::StatusCode::kInvalidArgument);
}

// A kernel with a `func` attr: y = f(x), through its function library.
REGISTER_OP("FunctionTestApply")
    .Input("x: float")
    .Output("y: float")
    .Attr("f: func")
    .SetShapeFn(UnknownShape);

class FunctionTestApplyOp : public OpKernel {
 public:
  explicit FunctionTestApplyOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    const AttrValue* f = nullptr;
    OP_REQUIRES_OK(ctx, AttrSlice(ctx->def()).Find("f", &f));
    OP_REQUIRES(ctx, ctx->function_library() != nullptr,
                errors::FailedPrecondition("no function library"));
    auto handle = ctx->function_library()->Instantiate(f->func());
    OP_REQUIRES_OK(ctx, handle.status());
    handle_ = *handle;
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<Tensor> rets;
    FunctionLibraryRuntime::CallOptions options;
    options.step_id = ctx->step_id();
    options.cancellation_manager = ctx->cancellation_manager();
    options.runner = ctx->params()->runner;
    OP_REQUIRES_OK(ctx, ctx->function_library()->RunSync(options, handle_, {ctx->input(0)}, &rets));
    ctx->set_output(0, rets[0]);
  }

 private:
  FunctionLibraryRuntime::Handle handle_ = -1;
};

REGISTER_KERNEL_BUILDER(Name("FunctionTestApply").Device(kDeviceCpu), FunctionTestApplyOp);

TEST(FunctionKernelTest, AKernelCallsALibraryFunction) {
  GraphDef extra;
  ASSERT_TRUE(ParseGraphDefText(R"pb(
                                  node {
                                    name: "applied"
                                    op: "FunctionTestApply"
                                    input: "x"
                                    attr {
                                      key: "f"
                                      value { func { name: "__inference_square_plus_one_24" } }
                                    }
                                  })pb",
                                &extra)
                  .ok());
  GraphDef merged = ReadExample("function_call.pbtxt");
  *merged.add_node() = extra.node(0);
  auto session = MakeSession(merged, 1);
  std::vector<Tensor> out;
  const absl::Status s = session->Run({{"x", Tensor::Scalar<float>(4)}}, {"applied"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 17.0f);
}

}  // namespace
}  // namespace distflow
