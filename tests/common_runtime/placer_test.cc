#include "distflow/common_runtime/placer.h"

#include <memory>
#include <string>
#include <vector>

#include "distflow/common_runtime/device_set.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/subgraph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceAttributes Device(const std::string& name, uint64_t incarnation = 1) {
  DeviceAttributes d;
  d.set_name(name);
  d.set_incarnation(incarnation);
  return d;
}

TEST(DeviceSetTest, KeepsAStablePreferenceOrder) {
  DeviceSet set;
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:1/device:CPU:0")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:0/device:ACCEL:0")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:0/device:CPU:10")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:0/cpu:2")).ok());
  EXPECT_THAT(set.DeviceNames(), ElementsAre("/job:w/replica:0/task:0/device:CPU:2",
                                             "/job:w/replica:0/task:0/device:CPU:10",
                                             "/job:w/replica:0/task:1/device:CPU:0",
                                             "/job:w/replica:0/task:0/device:ACCEL:0"));
  EXPECT_EQ(set.devices()[3]->device_type(), "ACCEL");
}

TEST(DeviceSetTest, LooksUpByNameAndMatchesPartialNames) {
  DeviceSet set;
  ASSERT_TRUE(set.AddDevice(Device("/job:ps/replica:0/task:0/device:CPU:0", 7)).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:0/device:CPU:0")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:0/device:CPU:1")).ok());
  const DeviceAttributes* ps = set.FindDeviceByName("/job:ps/replica:0/task:0/cpu:0");
  ASSERT_NE(ps, nullptr);
  EXPECT_EQ(ps->incarnation(), 7u);
  EXPECT_EQ(ps->device_type(), "CPU");
  EXPECT_EQ(set.FindDeviceByName("/job:ps/replica:0/task:1/device:CPU:0"), nullptr);
  EXPECT_EQ(set.FindDeviceByName("/job:ps"), nullptr);
  EXPECT_EQ(set.FindDeviceByName("garbage"), nullptr);

  ParsedDeviceName spec;
  ASSERT_TRUE(device_name::Parse("/job:w/device:CPU:*", &spec));
  auto matches = set.FindMatchingDevices(spec);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0]->name(), "/job:w/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(set.FindMatchingDevices(ParsedDeviceName()).size(), 3u);
}

TEST(DeviceSetTest, ClientDeviceDefaultsToTheFirstCpu) {
  DeviceSet set;
  EXPECT_EQ(set.client_device(), nullptr);
  ASSERT_TRUE(set.AddDevice(Device("/job:a/replica:0/task:0/device:ACCEL:0")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:b/replica:0/task:0/device:CPU:0")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:a/replica:0/task:0/device:CPU:0")).ok());
  EXPECT_EQ(set.client_device()->name(), "/job:a/replica:0/task:0/device:CPU:0");
  ASSERT_TRUE(set.SetClientDevice("/job:b/replica:0/task:0/device:CPU:0").ok());
  EXPECT_EQ(set.client_device()->name(), "/job:b/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(set.SetClientDevice("/job:c/replica:0/task:0/device:CPU:0").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceSetTest, RejectsBadDevices) {
  DeviceSet set;
  ASSERT_TRUE(set.AddDevice(Device("/job:a/replica:0/task:0/device:CPU:0")).ok());
  absl::Status s = set.AddDevice(Device("/job:a/replica:0/task:0/device:CPU:0"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("already"));
  s = set.AddDevice(Device("/job:a/device:CPU:1"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:a/device:CPU:1"));
  DeviceAttributes wrong_type = Device("/job:a/replica:0/task:0/device:CPU:1");
  wrong_type.set_device_type("GPU");
  EXPECT_EQ(set.AddDevice(wrong_type).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(set.size(), 1);
}

// Test ops; "ACCEL" is a second device type with kernels for some of them.
class DummyKernel : public OpKernel {
 public:
  explicit DummyKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext*) override {}
};

REGISTER_OP("PlacerTestFloat").Output("o: float");
REGISTER_OP("PlacerTestCpuOnly").Input("a: float").Output("o: float");
REGISTER_OP("PlacerTestAccelOnly").Output("o: float");
REGISTER_OP("PlacerTestNoKernel").Output("o: float");
REGISTER_OP("PlacerTestVar").Output("ref: Ref(float)").SetIsStateful();
REGISTER_OP("PlacerTestAssign")
    .Input("ref: Ref(float)")
    .Input("value: float")
    .Output("out: Ref(float)");
REGISTER_OP("PlacerTestHandle").Output("h: resource").SetIsStateful();
REGISTER_OP("PlacerTestRead").Input("h: resource").Output("v: float");

REGISTER_KERNEL_BUILDER(Name("PlacerTestFloat").Device(kDeviceCpu), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestFloat").Device("ACCEL"), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestCpuOnly").Device(kDeviceCpu), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestAccelOnly").Device("ACCEL"), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestVar").Device(kDeviceCpu), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestVar").Device("ACCEL"), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestAssign").Device(kDeviceCpu), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestAssign").Device("ACCEL"), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestHandle").Device(kDeviceCpu), DummyKernel);
REGISTER_KERNEL_BUILDER(Name("PlacerTestRead").Device(kDeviceCpu), DummyKernel);

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kAccel0[] = "/job:localhost/replica:0/task:0/device:ACCEL:0";
constexpr char kPs0[] = "/job:ps/replica:0/task:0/device:CPU:0";

NodeDef MakeNode(const std::string& name, const std::string& op,
                 std::vector<std::string> inputs = {}, const std::string& device = "",
                 std::vector<std::string> colocate_with = {}) {
  NodeDef def;
  def.set_name(name);
  def.set_op(op);
  def.set_device(device);
  for (auto& in : inputs) def.add_input(in);
  if (!colocate_with.empty()) {
    std::vector<std::string> classes;
    for (auto& c : colocate_with) classes.push_back("loc:@" + c);
    AddNodeAttr("_class", classes, &def);
  }
  return def;
}

class PlacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {kCpu0, kCpu1, kAccel0, kPs0}) {
      ASSERT_TRUE(devices_.AddDevice(Device(name)).ok());
    }
  }

  // Builds a fresh graph from `nodes` and places it.
  absl::Status Place(std::vector<NodeDef> nodes, bool soft = false,
                     const std::string& default_device = "") {
    GraphDef gdef;
    for (auto& n : nodes) *gdef.add_node() = n;
    graph_ = std::make_unique<Graph>();
    absl::Status s = ConvertGraphDefToGraph({}, gdef, graph_.get());
    if (!s.ok()) return s;
    return Placer(graph_.get(), &devices_, default_device, soft, false, &stateful_).Run();
  }

  std::string DeviceOf(const std::string& name) {
    for (Node* n : graph_->op_nodes()) {
      if (n->name() == name) return n->assigned_device_name();
    }
    return "<missing>";
  }

  DeviceSet devices_;
  std::unique_ptr<Graph> graph_;
  StatefulPlacements stateful_;
};

TEST_F(PlacerTest, UnconstrainedNodesGoToTheDefaultOrFirstDevice) {
  ASSERT_TRUE(
      Place({MakeNode("a", "PlacerTestFloat"), MakeNode("b", "PlacerTestCpuOnly", {"a"})}).ok());
  EXPECT_EQ(DeviceOf("a"), kCpu0);
  EXPECT_EQ(DeviceOf("b"), kCpu0);

  ASSERT_TRUE(Place({MakeNode("a", "PlacerTestFloat"), MakeNode("b", "PlacerTestCpuOnly", {"a"})},
                    false, "/job:ps")
                  .ok());
  EXPECT_EQ(DeviceOf("a"), kPs0);
  EXPECT_EQ(DeviceOf("b"), kPs0);

  // A default the node cannot use is ignored.
  ASSERT_TRUE(Place({MakeNode("x", "PlacerTestFloat"), MakeNode("a", "PlacerTestCpuOnly", {"x"})},
                    false, "/device:ACCEL:0")
                  .ok());
  EXPECT_EQ(DeviceOf("x"), kAccel0);
  EXPECT_EQ(DeviceOf("a"), kCpu0);
  // Only ACCEL has a kernel, so the first ACCEL device wins.
  ASSERT_TRUE(Place({MakeNode("x", "PlacerTestAccelOnly")}).ok());
  EXPECT_EQ(DeviceOf("x"), kAccel0);
}

TEST_F(PlacerTest, ExplicitFullAndPartialDevicesAreHonoured) {
  ASSERT_TRUE(Place({MakeNode("a", "PlacerTestFloat", {}, kCpu1),
                     MakeNode("b", "PlacerTestFloat", {}, "/device:ACCEL:0"),
                     MakeNode("c", "PlacerTestFloat", {}, "/job:ps"),
                     MakeNode("d", "PlacerTestFloat", {}, "/cpu:1")})
                  .ok());
  EXPECT_EQ(DeviceOf("a"), kCpu1);
  EXPECT_EQ(DeviceOf("b"), kAccel0);
  EXPECT_EQ(DeviceOf("c"), kPs0);
  EXPECT_EQ(DeviceOf("d"), kCpu1);
}

TEST_F(PlacerTest, DeviceWithoutKernelFailsUnlessSoftPlacement) {
  auto nodes = [] {
    return std::vector<NodeDef>{
        MakeNode("x", "PlacerTestFloat"),
        MakeNode("b", "PlacerTestCpuOnly", {"x"}, "/job:localhost/device:ACCEL:0")};
  };
  absl::Status s = Place(nodes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'b'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:localhost/device:ACCEL:0"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("[CPU]"));
  EXPECT_EQ(DeviceOf("b"), "");  // nothing assigned on error

  ASSERT_TRUE(Place(nodes(), /*soft=*/true).ok());
  EXPECT_EQ(DeviceOf("b"), kCpu0);  // the job part of the request still holds
}

TEST_F(PlacerTest, MissingDevicesFailAndSoftPlacementOnlyRelaxesTypeAndId) {
  absl::Status s = Place({MakeNode("a", "PlacerTestFloat", {}, "/device:CPU:7")});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/device:CPU:7"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("no such device"));
  ASSERT_TRUE(Place({MakeNode("a", "PlacerTestFloat", {}, "/device:CPU:7")}, true).ok());
  EXPECT_EQ(DeviceOf("a"), kCpu0);

  s = Place({MakeNode("a", "PlacerTestFloat", {}, "/job:ghost")}, true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:ghost"));

  s = Place({MakeNode("a", "PlacerTestFloat", {}, "/job:ps")}, true);
  EXPECT_TRUE(s.ok());
}

TEST_F(PlacerTest, MalformedDeviceAndMissingKernelAreErrors) {
  GraphDef gdef;
  *gdef.add_node() = MakeNode("a", "PlacerTestFloat");
  graph_ = std::make_unique<Graph>();
  ASSERT_TRUE(ConvertGraphDefToGraph({}, gdef, graph_.get()).ok());
  graph_->op_nodes()[0]->set_requested_device("/jobb:x");
  absl::Status s = Placer(graph_.get(), &devices_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/jobb:x"));

  s = Place({MakeNode("n", "PlacerTestNoKernel")}, true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'n'"));

  DeviceSet empty;
  EXPECT_EQ(Placer(graph_.get(), &empty).Run().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Placer(graph_.get(), &devices_, "not a device").Run().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(PlacerTest, ColocationGroupsShareOneDevice) {
  ASSERT_TRUE(Place({MakeNode("a", "PlacerTestFloat", {}, kCpu1),
                     MakeNode("b", "PlacerTestFloat", {}, "", {"a"}),
                     // c and d name a node that is not in the graph.
                     MakeNode("c", "PlacerTestFloat", {}, "", {"gone"}),
                     MakeNode("d", "PlacerTestFloat", {}, "/device:ACCEL:0", {"gone"}),
                     // e joins both groups, merging them.
                     MakeNode("e", "PlacerTestFloat", {}, "", {"x"}),
                     MakeNode("x", "PlacerTestFloat", {}, "/job:ps")})
                  .ok());
  EXPECT_EQ(DeviceOf("b"), kCpu1);
  EXPECT_EQ(DeviceOf("c"), kAccel0);
  EXPECT_EQ(DeviceOf("d"), kAccel0);
  EXPECT_EQ(DeviceOf("e"), kPs0);
  EXPECT_EQ(DeviceOf("x"), kPs0);
}

TEST_F(PlacerTest, ConflictingRequestsInAGroupNameBothNodes) {
  auto nodes = [](const std::string& b_device) {
    return std::vector<NodeDef>{MakeNode("a", "PlacerTestFloat", {}, kCpu0),
                                MakeNode("b", "PlacerTestFloat", {}, b_device, {"a"})};
  };
  absl::Status s = Place(nodes(kCpu1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'a'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'b'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kCpu0));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kCpu1));
  // Soft placement resolves a device id conflict, never a job conflict.
  ASSERT_TRUE(Place(nodes(kCpu1), true).ok());
  EXPECT_EQ(DeviceOf("a"), DeviceOf("b"));
  EXPECT_EQ(Place(nodes(kPs0), true).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlacerTest, GroupNeedsOneDeviceTypeForAllMembers) {
  absl::Status s = Place(
      {MakeNode("a", "PlacerTestAccelOnly"), MakeNode("b", "PlacerTestCpuOnly", {"a"}, "", {"a"})},
      true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'a'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'b'"));
}

TEST_F(PlacerTest, RefAndResourceConsumersSitWithTheirProducer) {
  ASSERT_TRUE(Place({MakeNode("v", "PlacerTestVar", {}, "/job:ps"),
                     MakeNode("init", "PlacerTestFloat", {}, "/device:ACCEL:0"),
                     MakeNode("assign", "PlacerTestAssign", {"v", "init"}),
                     MakeNode("h", "PlacerTestHandle", {}, kCpu1),
                     MakeNode("read", "PlacerTestRead", {"h"})})
                  .ok());
  EXPECT_EQ(DeviceOf("assign"), kPs0);
  EXPECT_EQ(DeviceOf("init"), kAccel0);
  EXPECT_EQ(DeviceOf("read"), kCpu1);

  // The consumer's request must agree with its resource.
  absl::Status s = Place({MakeNode("h", "PlacerTestHandle", {}, kCpu1),
                          MakeNode("read", "PlacerTestRead", {"h"}, kPs0)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'read'"));
}

TEST_F(PlacerTest, StatefulNodesKeepTheirDeviceAcrossRuns) {
  ASSERT_TRUE(Place({MakeNode("v", "PlacerTestVar", {}, kCpu1),
                     MakeNode("x", "PlacerTestFloat", {}, kCpu1)})
                  .ok());
  EXPECT_EQ(stateful_.size(), 1u);
  EXPECT_EQ(stateful_["v"], kCpu1);
  // Next run: the request is gone, the placement stays.
  ASSERT_TRUE(Place({MakeNode("v", "PlacerTestVar"), MakeNode("x", "PlacerTestFloat")}).ok());
  EXPECT_EQ(DeviceOf("v"), kCpu1);
  EXPECT_EQ(DeviceOf("x"), kCpu0);
  // A new request that contradicts the earlier placement is an error.
  absl::Status s = Place({MakeNode("v", "PlacerTestVar", {}, kPs0)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("earlier run"));
  EXPECT_EQ(stateful_["v"], kCpu1);
}

TEST_F(PlacerTest, AssignedDevicesConflictInAGroup) {
  GraphDef gdef;
  *gdef.add_node() = MakeNode("a", "PlacerTestFloat");
  *gdef.add_node() = MakeNode("b", "PlacerTestFloat", {}, "", {"a"});
  graph_ = std::make_unique<Graph>();
  ASSERT_TRUE(ConvertGraphDefToGraph({}, gdef, graph_.get()).ok());
  graph_->op_nodes()[0]->set_assigned_device_name(kCpu0);
  graph_->op_nodes()[1]->set_assigned_device_name(kCpu1);
  absl::Status s = Placer(graph_.get(), &devices_, "", true).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'a'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'b'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kCpu0));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kCpu1));
}

TEST_F(PlacerTest, ClientTerminatedSendRecvKeepTheirDevice) {
  GraphDef gdef;
  *gdef.add_node() = MakeNode("a", "PlacerTestFloat");
  *gdef.add_node() = MakeNode("b", "PlacerTestCpuOnly", {"a"}, "/device:CPU:1");
  graph_ = std::make_unique<Graph>();
  ASSERT_TRUE(ConvertGraphDefToGraph({}, gdef, graph_.get()).ok());
  DeviceAttributes client = *devices_.FindDeviceByName(kPs0);
  ASSERT_TRUE(subgraph::RewriteGraphForExecution(graph_.get(), {"a:0"}, {"b:0"}, {}, client,
                                                 subgraph::FeedFetchConvention::kRendezvous,
                                                 nullptr)
                  .ok());
  ASSERT_TRUE(Placer(graph_.get(), &devices_, kAccel0, false, true, &stateful_).Run().ok());
  EXPECT_EQ(DeviceOf("a/_recv_0"), kPs0);
  EXPECT_EQ(DeviceOf("b/_send_0"), kPs0);
  EXPECT_EQ(DeviceOf("b"), kCpu1);
  EXPECT_TRUE(stateful_.empty());
}

}  // namespace
}  // namespace distflow
