// ResourceMgr, ResourceHandle and DT_RESOURCE tensors, and the resource
// variable kernels: create/assign/read across steps, the errors users see
// (uninitialized read, wrong dtype, wrong shape), copy-on-write snapshots,
// gather and scatter-add.
#include <algorithm>
#include <string>
#include <vector>

#include "distflow/kernels/var.h"
#include "state_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectError;
using test::ExpectTensorEqual;
using test::StateKernelRunner;

class Counter : public ResourceBase {
 public:
  explicit Counter(int v) : value(v) {}
  std::string DebugString() const override { return absl::StrCat("Counter ", value); }
  int value;
};

class Other : public ResourceBase {
 public:
  std::string DebugString() const override { return "Other"; }
};

TEST(ResourceMgrTest, CreateLookupDeleteCleanup) {
  ResourceMgr rm;
  EXPECT_EQ(rm.default_container(), "localhost");
  ASSERT_TRUE(rm.Create<Counter>("", "c", new Counter(1)).ok());
  ExpectError(rm.Create<Counter>("localhost", "c", new Counter(2)),
              absl::StatusCode::kAlreadyExists, {"localhost/c"});
  // Same name, other type: a separate resource.
  ASSERT_TRUE(rm.Create<Other>("", "c", new Other).ok());

  absl::StatusOr<RefPtr<Counter>> c = rm.Lookup<Counter>("localhost", "c");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->value, 1);
  ExpectError(rm.Lookup<Counter>("", "missing").status(), absl::StatusCode::kNotFound,
              {"localhost/missing", "Counter"});

  int created = 0;
  auto make = [&]() -> absl::StatusOr<Counter*> {
    ++created;
    return new Counter(7);
  };
  auto first = rm.LookupOrCreate<Counter>("other", "d", make);
  auto second = rm.LookupOrCreate<Counter>("other", "d", make);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(created, 1);
  auto failing = rm.LookupOrCreate<Counter>(
      "other", "e", []() -> absl::StatusOr<Counter*> { return errors::Aborted("no"); });
  EXPECT_EQ(failing.status().code(), absl::StatusCode::kAborted);

  EXPECT_TRUE(rm.Delete<Counter>("", "c").ok());
  EXPECT_EQ(rm.Delete<Counter>("", "c").code(), absl::StatusCode::kNotFound);
  // The caller's reference outlives the manager's.
  EXPECT_EQ((*c)->value, 1);
  EXPECT_TRUE(rm.Lookup<Other>("", "c").ok());

  EXPECT_TRUE(rm.Cleanup("other").ok());
  EXPECT_FALSE(rm.Lookup<Counter>("other", "d").ok());
  EXPECT_TRUE(rm.Cleanup("never_there").ok());
  EXPECT_THAT(rm.DebugString(), ::testing::HasSubstr("localhost/c"));
}

TEST(ResourceMgrTest, ListsEveryResourceAndAVariablesBytes) {
  ResourceMgr rm;
  ASSERT_TRUE(rm.Create<Counter>("", "c", new Counter(1)).ok());
  Var* v = new Var(DT_FLOAT);
  ASSERT_TRUE(rm.Create<Var>("box", "w", v).ok());
  EXPECT_EQ(v->MemoryUsed(), 0);  // uninitialized
  {
    absl::MutexLock l(v->mu());
    *v->tensor() = Tensor(DT_FLOAT, TensorShape({3, 5}));
  }
  std::vector<ResourceMgr::Listed> listed = rm.List();
  ASSERT_EQ(listed.size(), 2u);
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.container < b.container; });
  EXPECT_EQ(listed[0].container, "box");
  EXPECT_EQ(listed[0].name, "w");
  EXPECT_EQ(listed[0].resource->MemoryUsed(), 3 * 5 * 4);
  EXPECT_EQ(listed[1].container, "localhost");
  EXPECT_EQ(listed[1].name, "c");
  EXPECT_EQ(listed[1].resource->MemoryUsed(), 0);  // a type that does not say
  // A listed resource outlives its deletion from the manager.
  ASSERT_TRUE(rm.Delete<Var>("box", "w").ok());
  EXPECT_EQ(listed[0].resource->MemoryUsed(), 60);
  EXPECT_EQ(rm.List().size(), 1u);
}

TEST(ResourceHandleTest, ProtoRoundTripAndTensor) {
  ResourceHandle h = ResourceHandle::Make<Counter>(test::kStateTestDevice, "ctr", "w");
  h.set_dtypes_and_shapes({{DT_FLOAT, PartialTensorShape({2, -1})}});
  ResourceHandleProto proto;
  h.AsProto(&proto);
  ResourceHandle back;
  ASSERT_TRUE(back.FromProto(proto).ok());
  EXPECT_EQ(back.name(), "w");
  EXPECT_EQ(back.container(), "ctr");
  EXPECT_EQ(back.device(), test::kStateTestDevice);
  EXPECT_EQ(back.hash_code(), ResourceTypeIndex::Make<Counter>().hash_code);
  EXPECT_THAT(back.maybe_type_name(), ::testing::HasSubstr("Counter"));
  ASSERT_EQ(back.dtypes_and_shapes().size(), 1u);
  EXPECT_EQ(back.dtypes_and_shapes()[0].dtype, DT_FLOAT);
  EXPECT_TRUE(back.dtypes_and_shapes()[0].shape.IsIdenticalTo(PartialTensorShape({2, -1})));

  Tensor t(DT_RESOURCE, TensorShape({3}));
  t.flat<ResourceHandle>()[1] = h;
  Tensor copy = t.DeepCopy();
  t.flat<ResourceHandle>()[1].set_name("changed");
  EXPECT_EQ(copy.flat<ResourceHandle>()[1].name(), "w");
  Tensor row = copy.Slice(1, 2);
  EXPECT_EQ(row.flat<ResourceHandle>()[0].name(), "w");
  EXPECT_THAT(copy.DebugString(), ::testing::HasSubstr("name=w"));
}

// A runner with helpers for one float variable "w" of shape [2].
class ResourceVariableTest : public ::testing::Test {
 protected:
  Tensor Handle(const std::string& name = "w", DataType dtype = DT_FLOAT,
                PartialTensorShape shape = PartialTensorShape({2})) {
    return r_.RunOne("VarHandleOp", {}, {{"dtype", dtype}, {"shape", shape}, {"shared_name", name}},
                     "handle_" + name);
  }
  absl::Status Assign(const Tensor& handle, const Tensor& value) {
    return r_.Run("AssignVariableOp", {handle, value}, {{"dtype", value.dtype()}}).status();
  }
  absl::StatusOr<Tensor> Read(const Tensor& handle, DataType dtype = DT_FLOAT) {
    DF_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        r_.Run("ReadVariableOp", {handle}, {{"dtype", dtype}}));
    return out[0];
  }
  StateKernelRunner r_;
};

TEST_F(ResourceVariableTest, HandleNamesTheVariable) {
  Tensor h = Handle();
  ASSERT_EQ(h.dtype(), DT_RESOURCE);
  ASSERT_EQ(h.dims(), 0);
  const ResourceHandle& rh = h.scalar<ResourceHandle>();
  EXPECT_EQ(rh.name(), "w");
  EXPECT_EQ(rh.container(), "localhost");
  EXPECT_EQ(rh.device(), test::kStateTestDevice);
  // Empty shared_name: the node's name.
  Tensor anon = r_.RunOne("VarHandleOp", {},
                          {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({})}}, "my_var");
  EXPECT_EQ(anon.scalar<ResourceHandle>().name(), "my_var");
}

TEST_F(ResourceVariableTest, AssignReadAcrossSteps) {
  Tensor h = Handle();
  ASSERT_TRUE(Assign(h, AsTensor<float>({1, 2})).ok());
  // A later "step" with a fresh handle kernel sees the same variable.
  Tensor h2 = Handle();
  auto v = Read(h2);
  ASSERT_TRUE(v.ok()) << v.status();
  ExpectTensorEqual(AsTensor<float>({1, 2}), *v);

  r_.RunOk("AssignAddVariableOp", {h2, AsTensor<float>({10, 20})}, {{"dtype", DT_FLOAT}});
  ExpectTensorEqual(AsTensor<float>({11, 22}), *Read(h));
  r_.RunOk("AssignSubVariableOp", {h, AsTensor<float>({1, 1})}, {{"dtype", DT_FLOAT}});
  ExpectTensorEqual(AsTensor<float>({10, 21}), *Read(h));
  ASSERT_TRUE(Assign(h, AsTensor<float>({5, 6})).ok());
  ExpectTensorEqual(AsTensor<float>({5, 6}), *Read(h));
}

TEST_F(ResourceVariableTest, ReadSnapshotDoesNotChangeAfterUpdate) {
  Tensor h = Handle();
  Tensor value = AsTensor<float>({1, 2});
  ASSERT_TRUE(Assign(h, value).ok());
  Tensor before = *Read(h);
  r_.RunOk("AssignAddVariableOp", {h, AsTensor<float>({1, 1})}, {{"dtype", DT_FLOAT}});
  ExpectTensorEqual(AsTensor<float>({1, 2}), before);
  ExpectTensorEqual(AsTensor<float>({1, 2}), value);
  ExpectTensorEqual(AsTensor<float>({2, 3}), *Read(h));
}

TEST_F(ResourceVariableTest, UninitializedReadNamesTheVariable) {
  Tensor h = Handle("weights");
  auto v = Read(h);
  ExpectError(v.status(), absl::StatusCode::kFailedPrecondition,
              {"Variable 'weights'", "localhost", "uninitialized"});
  auto add = r_.Run("AssignAddVariableOp", {h, AsTensor<float>({1, 1})}, {{"dtype", DT_FLOAT}});
  ExpectError(add.status(), absl::StatusCode::kFailedPrecondition, {"'weights'", "uninitialized"});
  auto init = r_.RunOne("VarIsInitializedOp", {h}, {});
  EXPECT_FALSE(init.scalar<bool>());
  ASSERT_TRUE(Assign(h, AsTensor<float>({0, 0})).ok());
  EXPECT_TRUE(r_.RunOne("VarIsInitializedOp", {h}, {}).scalar<bool>());
}

TEST_F(ResourceVariableTest, AssignWrongDtypeIsInvalidArgument) {
  Tensor h = Handle("w");
  absl::Status s = Assign(h, AsTensor<int32_t>({1, 2}));
  ExpectError(s, absl::StatusCode::kInvalidArgument, {"'w'", "int32", "float32"});
  ASSERT_TRUE(Assign(h, AsTensor<float>({1, 2})).ok());
  // A handle declaring another dtype for the same variable.
  Tensor other = Handle("w", DT_INT32);
  ExpectError(Assign(other, AsTensor<int32_t>({1, 2})), absl::StatusCode::kInvalidArgument,
              {"'w'", "int32", "float32"});
  ExpectError(Read(h, DT_INT32).status(), absl::StatusCode::kInvalidArgument,
              {"'w'", "int32", "float32"});
  ExpectTensorEqual(AsTensor<float>({1, 2}), *Read(h));
}

TEST_F(ResourceVariableTest, AssignWrongShapeNamesBothShapes) {
  Tensor h = Handle("w");
  absl::Status s = Assign(h, AsTensor<float>({1, 2, 3}));
  ExpectError(s, absl::StatusCode::kInvalidArgument, {"'w'", "[3]", "[2]"});
  ASSERT_TRUE(Assign(h, AsTensor<float>({1, 2})).ok());
  auto add = r_.Run("AssignAddVariableOp", {h, AsTensor<float>({1, 2, 3})}, {{"dtype", DT_FLOAT}});
  ExpectError(add.status(), absl::StatusCode::kInvalidArgument, {"'w'", "[3]", "[2]"});
  ExpectTensorEqual(AsTensor<float>({1, 2}), *Read(h));
  // An unknown declared shape takes any value.
  Tensor free = Handle("free", DT_FLOAT, PartialTensorShape());
  EXPECT_TRUE(Assign(free, AsTensor<float>({1, 2, 3}, {3, 1})).ok());
}

TEST_F(ResourceVariableTest, DestroyResource) {
  Tensor h = Handle();
  ASSERT_TRUE(Assign(h, AsTensor<float>({1, 2})).ok());
  r_.RunOk("DestroyResourceOp", {h}, {});
  ExpectError(Read(h).status(), absl::StatusCode::kFailedPrecondition, {"'w'"});
  r_.RunOk("DestroyResourceOp", {h}, {});  // ignore_lookup_error
  auto strict = r_.Run("DestroyResourceOp", {h}, {{"ignore_lookup_error", false}});
  EXPECT_EQ(strict.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ResourceVariableTest, HandleOfAnotherDeviceIsRejected) {
  Tensor h = Handle();
  ResourceHandle moved = h.scalar<ResourceHandle>();
  moved.set_device("/job:ps/replica:0/task:1/device:CPU:0");
  Tensor other(DT_RESOURCE, TensorShape());
  other.scalar<ResourceHandle>() = moved;
  ExpectError(Assign(other, AsTensor<float>({1, 2})), absl::StatusCode::kInvalidArgument,
              {"'w'", "/job:ps/replica:0/task:1"});
}

TEST_F(ResourceVariableTest, GatherAndScatterAdd) {
  Tensor h = Handle("emb", DT_FLOAT, PartialTensorShape({3, 2}));
  ASSERT_TRUE(Assign(h, AsTensor<float>({0, 1, 10, 11, 20, 21}, {3, 2})).ok());
  Tensor g = r_.RunOne("ResourceGather", {h, AsTensor<int32_t>({2, 0, 2})},
                       {{"dtype", DT_FLOAT}, {"Tindices", DT_INT32}});
  ExpectTensorEqual(AsTensor<float>({20, 21, 0, 1, 20, 21}, {3, 2}), g);
  Tensor g2 = r_.RunOne("ResourceGather", {h, AsTensor<int64_t>({1}, {1, 1})},
                        {{"dtype", DT_FLOAT}, {"Tindices", DT_INT64}});
  ExpectTensorEqual(AsTensor<float>({10, 11}, {1, 1, 2}), g2);
  auto bad = r_.Run("ResourceGather", {h, AsTensor<int32_t>({3})},
                    {{"dtype", DT_FLOAT}, {"Tindices", DT_INT32}});
  ExpectError(bad.status(), absl::StatusCode::kInvalidArgument, {"'emb'", "indices[0] = 3"});

  r_.RunOk("ResourceScatterAdd",
           {h, AsTensor<int32_t>({0, 2, 0}), AsTensor<float>({1, 1, 2, 2, 3, 3}, {3, 2})},
           {{"dtype", DT_FLOAT}, {"Tindices", DT_INT32}});
  ExpectTensorEqual(AsTensor<float>({4, 5, 10, 11, 22, 23}, {3, 2}), *Read(h));
  // A bad index changes no row.
  auto bad_add = r_.Run("ResourceScatterAdd",
                        {h, AsTensor<int32_t>({1, 5}), AsTensor<float>({1, 1, 1, 1}, {2, 2})},
                        {{"dtype", DT_FLOAT}, {"Tindices", DT_INT32}});
  ExpectError(bad_add.status(), absl::StatusCode::kInvalidArgument, {"indices[1] = 5"});
  auto bad_shape =
      r_.Run("ResourceScatterAdd", {h, AsTensor<int32_t>({1}), AsTensor<float>({1, 1, 1}, {1, 3})},
             {{"dtype", DT_FLOAT}, {"Tindices", DT_INT32}});
  ExpectError(bad_shape.status(), absl::StatusCode::kInvalidArgument, {"[1,2]", "[1,3]"});
  ExpectTensorEqual(AsTensor<float>({4, 5, 10, 11, 22, 23}, {3, 2}), *Read(h));
}

}  // namespace
}  // namespace distflow
