#include "distflow/graph/graph_partition.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common_runtime/loop_test_graphs.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/graph_constructor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

REGISTER_OP("PartTestFloat").Output("o: float");
REGISTER_OP("PartTestTwo").Output("a: float").Output("b: float");
REGISTER_OP("PartTestInt").Output("o: int32");
REGISTER_OP("PartTestIntId").Input("i: int32").Output("o: int32");
REGISTER_OP("PartTestNeg").Input("x: float").Output("y: float");
REGISTER_OP("PartTestAdd").Input("a: float").Input("b: float").Output("c: float");
REGISTER_OP("PartTestVar").Output("ref: Ref(float)").SetIsStateful();
REGISTER_OP("PartTestAssign")
    .Input("ref: Ref(float)")
    .Input("value: float")
    .Output("out: Ref(float)");

// On the ACCEL device type PartTestFloat leaves its output in host memory
// while PartTestNeg reads device memory, so an edge between them on one
// ACCEL device needs a transfer.
class DummyKernel : public OpKernel {
 public:
  explicit DummyKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext*) override {}
};
REGISTER_KERNEL_BUILDER(Name("PartTestFloat").Device("ACCEL").HostMemory("o"), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PartTestNeg").Device("ACCEL"), DummyKernel);

constexpr char kA[] = "/job:w/replica:0/task:0/device:CPU:0";
constexpr char kB[] = "/job:w/replica:0/task:1/device:CPU:0";
constexpr char kC[] = "/job:w/replica:0/task:2/device:CPU:0";
constexpr char kAccel[] = "/job:w/replica:0/task:0/device:ACCEL:0";

NodeDef MakeNode(const std::string& name, const std::string& op, const std::string& device,
                 std::vector<std::string> inputs = {}) {
  NodeDef def;
  def.set_name(name);
  def.set_op(op);
  def.set_device(device);
  for (auto& in : inputs) def.add_input(in);
  return def;
}

template <typename T>
T Attr(const NodeDef& n, const std::string& name) {
  T value{};
  absl::Status s = GetNodeAttr(AttrSlice(n), name, &value);
  EXPECT_TRUE(s.ok()) << s;
  return value;
}

class PartitionTest : public ::testing::Test {
 protected:
  PartitionTest() {
    opts_.node_to_loc = SplitByDevice;
    opts_.new_name = [this](absl::string_view prefix) {
      return absl::StrCat(prefix, "/_p", next_id_++);
    };
    opts_.get_incarnation = [](const std::string& device) -> uint64_t {
      if (device == kA) return 11;
      if (device == kB) return 22;
      return 0xF000000000000001ULL;
    };
  }

  // Builds the graph with every node assigned to its requested device.
  void Build(std::vector<NodeDef> nodes) {
    GraphDef gdef;
    for (auto& n : nodes) *gdef.add_node() = n;
    graph_ = std::make_unique<Graph>();
    absl::Status s = ConvertGraphDefToGraph({}, gdef, graph_.get());
    ASSERT_TRUE(s.ok()) << s;
    for (Node* n : graph_->op_nodes()) {
      n->set_assigned_device_name(n->requested_device());
    }
  }

  // Partitions and checks what every partition must satisfy.
  void Run() {
    absl::Status s = Partition(opts_, graph_.get(), &parts_);
    ASSERT_TRUE(s.ok()) << s;
    for (const auto& [loc, gdef] : parts_) {
      for (const NodeDef& n : gdef.node()) {
        EXPECT_FALSE(absl::StartsWith(n.name(), "_SOURCE")) << loc;
        EXPECT_FALSE(absl::StartsWith(n.name(), "_SINK")) << loc;
        for (const std::string& in : n.input()) {
          EXPECT_FALSE(absl::StrContains(in, "_SOURCE")) << n.name();
        }
        // The partition's nodes run on its location.
        EXPECT_TRUE(absl::StartsWith(n.device(), loc)) << n.name() << " " << loc;
      }
      Graph g;
      absl::Status imported = ConvertGraphDefToGraph({}, gdef, &g);
      EXPECT_TRUE(imported.ok()) << loc << ": " << imported;
    }
  }

  const GraphDef& Part(const std::string& loc) { return parts_.at(loc); }

  static const NodeDef* Named(const GraphDef& g, const std::string& name) {
    for (const NodeDef& n : g.node()) {
      if (n.name() == name) return &n;
    }
    ADD_FAILURE() << "no node " << name;
    static const NodeDef empty;
    return &empty;
  }

  static std::vector<const NodeDef*> OfOp(const GraphDef& g, const std::string& op) {
    std::vector<const NodeDef*> out;
    for (const NodeDef& n : g.node()) {
      if (n.op() == op) out.push_back(&n);
    }
    return out;
  }

  static std::vector<std::string> Inputs(const NodeDef* n) {
    return {n->input().begin(), n->input().end()};
  }

  int EdgeId(const std::string& src, const std::string& dst) {
    for (const Edge* e : graph_->edges()) {
      if (e->src()->name() == src && e->dst()->name() == dst) return e->id();
    }
    return -1;
  }

  PartitionOptions opts_;
  int next_id_ = 0;
  std::unique_ptr<Graph> graph_;
  std::unordered_map<std::string, GraphDef> parts_;
};

TEST_F(PartitionTest, CrossDeviceDataEdgeBecomesSendAndRecv) {
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestNeg", kB, {"a"})});
  Run();
  ASSERT_EQ(parts_.size(), 2u);
  const GraphDef& pa = Part(kA);
  const GraphDef& pb = Part(kB);
  ASSERT_EQ(pa.node_size(), 2);
  ASSERT_EQ(pb.node_size(), 2);
  auto sends = OfOp(pa, "_Send");
  auto recvs = OfOp(pb, "_Recv");
  ASSERT_EQ(sends.size(), 1u);
  ASSERT_EQ(recvs.size(), 1u);
  const NodeDef& send = *sends[0];
  const NodeDef& recv = *recvs[0];
  EXPECT_THAT(Inputs(&send), ElementsAre("a"));
  EXPECT_THAT(Inputs(Named(pb, "b")), ElementsAre(recv.name()));
  EXPECT_THAT(Inputs(&recv), IsEmpty());
  const std::string tensor_name = absl::StrCat("edge_", EdgeId("a", "b"), "_a");
  for (const NodeDef* n : {&send, &recv}) {
    EXPECT_EQ(Attr<std::string>(*n, "tensor_name"), tensor_name);
    EXPECT_EQ(Attr<std::string>(*n, "send_device"), kA);
    EXPECT_EQ(Attr<std::string>(*n, "recv_device"), kB);
    EXPECT_EQ(Attr<int64_t>(*n, "send_device_incarnation"), 11);
    EXPECT_FALSE(Attr<bool>(*n, "client_terminated"));
  }
  EXPECT_EQ(Attr<DataType>(send, "T"), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>(recv, "tensor_type"), DT_FLOAT);
  EXPECT_EQ(send.device(), kA);
  EXPECT_EQ(recv.device(), kB);
  EXPECT_EQ(Named(pa, "a")->device(), kA);
  EXPECT_EQ(Named(pb, "b")->device(), kB);
}

TEST_F(PartitionTest, ConsumersInOnePartitionShareOneTransfer) {
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestNeg", kB, {"a"}),
         MakeNode("c", "PartTestNeg", kB, {"a"}), MakeNode("d", "PartTestNeg", kC, {"a"}),
         MakeNode("two", "PartTestTwo", kA), MakeNode("sum", "PartTestAdd", kB, {"two:0", "two:1"}),
         MakeNode("sum2", "PartTestAdd", kB, {"two:1", "two"})});
  Run();
  // a goes once to B and once to C; two:0 and two:1 are separate tensors.
  EXPECT_EQ(OfOp(Part(kA), "_Send").size(), 4u);
  auto recvs = OfOp(Part(kB), "_Recv");
  ASSERT_EQ(recvs.size(), 3u);
  EXPECT_EQ(OfOp(Part(kC), "_Recv").size(), 1u);
  const NodeDef* b = Named(Part(kB), "b");
  const NodeDef* c = Named(Part(kB), "c");
  EXPECT_EQ(Inputs(b), Inputs(c));
  const NodeDef* sum = Named(Part(kB), "sum");
  const NodeDef* sum2 = Named(Part(kB), "sum2");
  ASSERT_EQ(sum->input_size(), 2);
  EXPECT_NE(sum->input(0), sum->input(1));
  EXPECT_THAT(Inputs(sum2), ElementsAre(sum->input(1), sum->input(0)));
  // Every send has exactly one recv with its tensor name, in the partition
  // its recv_device names.
  std::map<std::string, int> names;
  for (const NodeDef* s : OfOp(Part(kA), "_Send")) {
    ++names[Attr<std::string>(*s, "tensor_name")];
  }
  for (const char* loc : {kB, kC}) {
    for (const NodeDef* r : OfOp(Part(loc), "_Recv")) {
      EXPECT_EQ(Attr<std::string>(*r, "recv_device"), loc);
      EXPECT_EQ(names[Attr<std::string>(*r, "tensor_name")]--, 1);
    }
  }
}

TEST_F(PartitionTest, CrossDeviceControlEdgeSendsADummyConst) {
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestFloat", kB, {"^a"}),
         MakeNode("c", "PartTestFloat", kB, {"^a"})});
  Run();
  const GraphDef& pa = Part(kA);
  const GraphDef& pb = Part(kB);
  auto consts = OfOp(pa, "Const");
  auto sends = OfOp(pa, "_Send");
  ASSERT_EQ(consts.size(), 1u);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_THAT(Inputs(consts[0]), ElementsAre("^a"));
  EXPECT_EQ(Attr<DataType>(*consts[0], "dtype"), DT_FLOAT);
  Tensor value;
  ASSERT_TRUE(GetNodeAttr(AttrSlice(*consts[0]), "value", &value).ok());
  EXPECT_EQ(value.dtype(), DT_FLOAT);
  EXPECT_EQ(value.shape(), TensorShape({0}));
  EXPECT_EQ(consts[0]->device(), kA);
  EXPECT_THAT(Inputs(sends[0]), ElementsAre(consts[0]->name()));
  EXPECT_EQ(Attr<DataType>(*sends[0], "T"), DT_FLOAT);

  auto recvs = OfOp(pb, "_Recv");
  auto ids = OfOp(pb, "Identity");
  ASSERT_EQ(recvs.size(), 1u);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(Attr<DataType>(*recvs[0], "tensor_type"), DT_FLOAT);
  EXPECT_EQ(Attr<std::string>(*recvs[0], "tensor_name"),
            Attr<std::string>(*sends[0], "tensor_name"));
  EXPECT_THAT(Inputs(ids[0]), ElementsAre(recvs[0]->name()));
  EXPECT_EQ(ids[0]->device(), kB);
  const std::string control = "^" + ids[0]->name();
  EXPECT_THAT(Inputs(Named(pb, "b")), ElementsAre(control));
  EXPECT_THAT(Inputs(Named(pb, "c")), ElementsAre(control));
}

TEST_F(PartitionTest, MemoryTypeChangeOnOneDeviceOrdersSendBeforeRecv) {
  opts_.enable_bfloat16_sendrecv = true;  // never applies within a device
  Build({MakeNode("x", "PartTestFloat", kAccel), MakeNode("y", "PartTestNeg", kAccel, {"x"})});
  Run();
  ASSERT_EQ(parts_.size(), 1u);
  const GraphDef& p = Part(kAccel);
  auto sends = OfOp(p, "_Send");
  auto recvs = OfOp(p, "_Recv");
  ASSERT_EQ(sends.size(), 1u);
  ASSERT_EQ(recvs.size(), 1u);
  EXPECT_THAT(OfOp(p, "Cast"), IsEmpty());
  EXPECT_THAT(Inputs(sends[0]), ElementsAre("x"));
  EXPECT_THAT(Inputs(recvs[0]), ElementsAre("^" + sends[0]->name()));
  EXPECT_THAT(Inputs(Named(p, "y")), ElementsAre(recvs[0]->name()));
  EXPECT_EQ(Attr<std::string>(*recvs[0], "send_device"), kAccel);
  EXPECT_EQ(Attr<std::string>(*recvs[0], "recv_device"), kAccel);
}

TEST_F(PartitionTest, RecvOfARefValueWaitsForTheConsumersOtherInputs) {
  Build({MakeNode("v", "PartTestVar", kA), MakeNode("w", "PartTestFloat", kA),
         MakeNode("x", "PartTestFloat", kB), MakeNode("r1", "PartTestAdd", kB, {"v", "x"}),
         MakeNode("r2", "PartTestAdd", kB, {"v", "w"}),
         MakeNode("r3", "PartTestAdd", kB, {"w", "x"})});
  Run();
  const GraphDef& pb = Part(kB);
  // Reads of a ref are never shared: one transfer for each reader.
  EXPECT_EQ(OfOp(Part(kA), "_Send").size(), 3u);
  ASSERT_EQ(OfOp(pb, "_Recv").size(), 3u);
  const NodeDef* r1 = Named(pb, "r1");
  const NodeDef* r2 = Named(pb, "r2");
  const NodeDef* r3 = Named(pb, "r3");
  const NodeDef* v_for_r1 = Named(pb, r1->input(0));
  const NodeDef* v_for_r2 = Named(pb, r2->input(0));
  EXPECT_NE(v_for_r1->name(), v_for_r2->name());
  EXPECT_EQ(Attr<DataType>(*v_for_r1, "tensor_type"), DT_FLOAT);
  // The read of v waits for the other input of its consumer.
  EXPECT_THAT(Inputs(v_for_r1), ElementsAre("^x"));
  const std::string w_recv = r2->input(1);
  EXPECT_THAT(Inputs(v_for_r2), ElementsAre("^" + w_recv));
  // w's recv is shared by r2 and r3 and has no read control itself.
  EXPECT_EQ(r3->input(0), w_recv);
  EXPECT_THAT(Inputs(Named(pb, w_recv)), IsEmpty());
}

TEST_F(PartitionTest, RefInputFromAnotherPartitionIsAnError) {
  Build({MakeNode("v", "PartTestVar", kA), MakeNode("x", "PartTestFloat", kB),
         MakeNode("assign", "PartTestAssign", kB, {"v", "x"})});
  absl::Status s = Partition(opts_, graph_.get(), &parts_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'assign'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'v'"));
}

TEST_F(PartitionTest, Bfloat16OnTheWireCastsFloatEdgesOnly) {
  opts_.enable_bfloat16_sendrecv = true;
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestNeg", kB, {"a"}),
         MakeNode("i", "PartTestInt", kA), MakeNode("j", "PartTestIntId", kB, {"i", "^a"})});
  Run();
  const GraphDef& pa = Part(kA);
  const GraphDef& pb = Part(kB);
  auto casts_a = OfOp(pa, "Cast");
  auto casts_b = OfOp(pb, "Cast");
  ASSERT_EQ(casts_a.size(), 1u);
  ASSERT_EQ(casts_b.size(), 1u);
  const NodeDef& to_bf16 = *casts_a[0];
  EXPECT_THAT(Inputs(&to_bf16), ElementsAre("a"));
  EXPECT_EQ(Attr<DataType>(to_bf16, "SrcT"), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>(to_bf16, "DstT"), DT_BFLOAT16);
  EXPECT_FALSE(Attr<bool>(to_bf16, "Truncate"));
  EXPECT_EQ(to_bf16.device(), kA);

  const NodeDef* float_send = nullptr;
  for (const NodeDef* s : OfOp(pa, "_Send")) {
    if (s->input(0) == to_bf16.name()) float_send = s;
  }
  ASSERT_NE(float_send, nullptr);
  EXPECT_EQ(Attr<DataType>(*float_send, "T"), DT_BFLOAT16);

  const NodeDef& to_float = *casts_b[0];
  EXPECT_EQ(Attr<DataType>(to_float, "SrcT"), DT_BFLOAT16);
  EXPECT_EQ(Attr<DataType>(to_float, "DstT"), DT_FLOAT);
  EXPECT_FALSE(Attr<bool>(to_float, "Truncate"));
  EXPECT_EQ(to_float.device(), kB);
  const NodeDef* float_recv = Named(pb, to_float.input(0));
  EXPECT_EQ(float_recv->op(), "_Recv");
  EXPECT_EQ(Attr<DataType>(*float_recv, "tensor_type"), DT_BFLOAT16);
  EXPECT_THAT(Inputs(Named(pb, "b")), ElementsAre(to_float.name()));

  // The int32 edge and the control edge travel as they are.
  const NodeDef* j = Named(pb, "j");
  ASSERT_EQ(j->input_size(), 2);
  const NodeDef* int_recv = Named(pb, j->input(0));
  EXPECT_EQ(int_recv->op(), "_Recv");
  EXPECT_EQ(Attr<DataType>(*int_recv, "tensor_type"), DT_INT32);
  const NodeDef* control_id = Named(pb, j->input(1).substr(1));
  EXPECT_EQ(control_id->op(), "Identity");
  EXPECT_EQ(Attr<DataType>(*Named(pb, control_id->input(0)), "tensor_type"), DT_FLOAT);
}

TEST_F(PartitionTest, DropsSourceAndSinkAndWritesAssignedDevices) {
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestNeg", kA, {"a"}),
         MakeNode("lonely", "PartTestFloat", kB)});
  // The assigned device wins over the requested one.
  for (Node* n : graph_->op_nodes()) {
    n->set_requested_device("/device:CPU:*");
  }
  Run();
  EXPECT_THAT(Inputs(Named(Part(kA), "a")), IsEmpty());
  EXPECT_THAT(Inputs(Named(Part(kA), "b")), ElementsAre("a"));
  EXPECT_EQ(Named(Part(kA), "b")->device(), kA);
  EXPECT_EQ(Named(Part(kB), "lonely")->device(), kB);
  EXPECT_EQ(Part(kA).node_size() + Part(kB).node_size(), 3);
  EXPECT_EQ(Part(kA).versions().producer(), graph_->versions().producer());
}

TEST_F(PartitionTest, NodesMustBePlacedAndOptionsComplete) {
  Build({MakeNode("a", "PartTestFloat", kA)});
  graph_->op_nodes()[0]->set_assigned_device_name("");
  absl::Status s = Partition(opts_, graph_.get(), &parts_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'a'"));
  graph_->op_nodes()[0]->set_assigned_device_name("/job:");
  EXPECT_EQ(Partition(opts_, graph_.get(), &parts_).code(), absl::StatusCode::kInvalidArgument);
  graph_->op_nodes()[0]->set_assigned_device_name(kA);
  opts_.new_name = nullptr;
  EXPECT_EQ(Partition(opts_, graph_.get(), &parts_).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PartitionTest, PartitionByTaskKeepsEdgesWithinATask) {
  opts_.node_to_loc = SplitByTask;
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestNeg", kAccel, {"a"}),
         MakeNode("c", "PartTestNeg", kB, {"b"})});
  Run();
  const std::string task0 = "/job:w/replica:0/task:0";
  const std::string task1 = "/job:w/replica:0/task:1";
  ASSERT_EQ(parts_.size(), 2u);
  EXPECT_THAT(Inputs(Named(Part(task0), "b")), ElementsAre("a"));
  EXPECT_EQ(OfOp(Part(task0), "_Send").size(), 1u);
  const NodeDef* recv = OfOp(Part(task1), "_Recv")[0];
  EXPECT_EQ(Attr<std::string>(*recv, "send_device"), kAccel);
  EXPECT_EQ(Attr<int64_t>(*recv, "send_device_incarnation"),
            static_cast<int64_t>(0xF000000000000001ULL));

  const std::vector<std::string> devices = {kA, kB, kAccel};
  EXPECT_TRUE(ValidatePartitions(parts_, devices).ok());
}

TEST_F(PartitionTest, ValidatePartitionsNamesAMissingLocation) {
  Build({MakeNode("a", "PartTestFloat", kA), MakeNode("b", "PartTestNeg", kB, {"a"})});
  Run();
  EXPECT_TRUE(ValidatePartitions(parts_, {kA, kB}).ok());
  absl::Status s = ValidatePartitions(parts_, {kA, kC});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(kB));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kC));

  std::unordered_map<std::string, GraphDef> bogus;
  bogus["nonsense"];
  s = ValidatePartitions(bogus, {kA});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'nonsense'"));
}

// Loop ops come from a private registry; partitioning needs no kernels for
// CPU nodes.
TEST(PartitionLoopTest, LoopsAcrossDevicesNeedALoopCond) {
  OpRegistry ops;
  for (const OpDefBuilder& b :
       {OpDefBuilder("Src").Output("o: float"),
        OpDefBuilder("Enter")
            .Input("data: T")
            .Output("output: T")
            .Attr("T: type")
            .Attr("frame_name: string")
            .Attr("is_constant: bool = false")
            .Attr("parallel_iterations: int = 10"),
        OpDefBuilder("Body").Input("x: float").Output("y: float"),
        OpDefBuilder("Exit").Input("data: T").Output("output: T").Attr("T: type")}) {
    OpRegistrationData data;
    ASSERT_TRUE(b.Finalize(&data).ok());
    ASSERT_TRUE(ops.Register(std::move(data)).ok());
  }
  GraphDef gdef;
  *gdef.add_node() = MakeNode("src", "Src", kA);
  *gdef.add_node() = MakeNode("enter", "Enter", kA, {"src"});
  *gdef.add_node() = MakeNode("body", "Body", kB, {"enter"});
  *gdef.add_node() = MakeNode("body2", "Body", kC, {"body"});
  *gdef.add_node() = MakeNode("exit", "Exit", kC, {"body2"});
  *gdef.add_node() = MakeNode("after", "Body", kA, {"exit"});
  for (NodeDef& n : *gdef.mutable_node()) {
    if (n.op() == "Enter" || n.op() == "Exit") AddNodeAttr("T", DT_FLOAT, &n);
    if (n.op() == "Enter") AddNodeAttr("frame_name", "loop", &n);
  }
  Graph g(&ops);
  ASSERT_TRUE(ConvertGraphDefToGraph({}, gdef, &g).ok());
  for (Node* n : g.op_nodes()) n->set_assigned_device_name(n->requested_device());
  PartitionOptions opts;
  opts.node_to_loc = SplitByDevice;
  int id = 0;
  opts.new_name = [&id](absl::string_view p) { return absl::StrCat(p, "/_", id++); };
  opts.get_incarnation = [](const std::string&) -> uint64_t { return 1; };
  std::unordered_map<std::string, GraphDef> parts;
  // The body spans B and C: C needs a copy of the loop, driven by the
  // LoopCond this frame lacks.
  absl::Status s = Partition(opts, &g, &parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'loop'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("LoopCond"));

  // The Enter moved to its consumer's device, and the rest of the loop on
  // one device: only the edges into and out of the frame cross devices.
  for (Node* n : g.op_nodes()) {
    if (n->name() == "body2" || n->name() == "exit") n->set_assigned_device_name(kB);
  }
  ASSERT_TRUE(Partition(opts, &g, &parts).ok());
  EXPECT_EQ(parts.size(), 2u);
  bool enter_on_b = false;
  for (const NodeDef& n : parts[kB].node()) enter_on_b |= n.name() == "enter";
  EXPECT_TRUE(enter_on_b);
}

// A loop whose body spans three devices: each device that receives values
// inside the frame gets one control loop, its _Recvs hang off that loop's
// Merge, and partitioning the result again (as a worker does after the
// master) adds nothing.
TEST(PartitionLoopTest, EachDeviceGetsOneControlLoop) {
  Graph g;
  ASSERT_TRUE(ConvertGraphDefToGraph({}, test::SumLoop({kA, kB, kC}), &g).ok());
  for (Node* n : g.op_nodes()) {
    n->set_assigned_device_name(n->requested_device().empty() ? kA : n->requested_device());
  }
  PartitionOptions opts;
  opts.node_to_loc = SplitByDevice;
  int id = 0;
  opts.new_name = [&id](absl::string_view p) { return absl::StrCat(p, "/_", id++); };
  opts.get_incarnation = [](const std::string&) -> uint64_t { return 1; };
  std::unordered_map<std::string, GraphDef> parts;
  ASSERT_TRUE(Partition(opts, &g, &parts).ok());
  ASSERT_EQ(parts.size(), 3u);
  auto count_loops = [](const GraphDef& gdef) {
    int merges = 0;
    for (const NodeDef& n : gdef.node()) merges += n.attr().count("_control_loop");
    return merges;
  };
  for (const char* device : {kA, kB, kC}) {
    const GraphDef& part = parts[device];
    EXPECT_EQ(count_loops(part), 1) << device;
    std::string merge;
    for (const NodeDef& n : part.node()) {
      if (n.attr().count("_control_loop")) merge = n.name();
    }
    for (const NodeDef& n : part.node()) {
      if (n.op() != "_Recv") continue;
      // Every value crossing devices here is computed inside the loop.
      EXPECT_THAT(std::vector<std::string>(n.input().begin(), n.input().end()),
                  ::testing::Contains("^" + merge))
          << device << " " << n.name();
    }
  }
  const int nodes = g.num_op_nodes();
  const int edges = g.num_edges();
  ASSERT_TRUE(Partition(opts, &g, &parts).ok());
  EXPECT_EQ(g.num_op_nodes(), nodes);
  EXPECT_EQ(g.num_edges(), edges);
}

}  // namespace
}  // namespace distflow
