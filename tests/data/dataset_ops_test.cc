// The dataset ops run in a session, checked against hand-computed element
// sequences: order, batching remainders, shuffle determinism by seed,
// repeat, take/skip, prefetch, zip, and OutOfRange at the end.
#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/dataset.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/resource_handle.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Runs the iterator's initializer, then GetNext until OutOfRange; returns
// every element's tensors.
std::vector<std::vector<Tensor>> Drain(const Scope& /*scope*/, const ClientSession& session,
                                       const DatasetIterator& it, int max_elements = 10000) {
  std::vector<std::vector<Tensor>> out;
  absl::Status s = session.Run({}, {}, {it.initializer}, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  for (int i = 0; i < max_elements; ++i) {
    std::vector<Tensor> element;
    s = session.Run(it.next, &element);
    if (s.code() == absl::StatusCode::kOutOfRange) {
      EXPECT_THAT(s.message(), HasSubstr("End of sequence"));
      return out;
    }
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return out;
    out.push_back(element);
  }
  ADD_FAILURE() << "no end of sequence after " << max_elements << " elements";
  return out;
}

// Component 0 of each element, as int64 scalars.
std::vector<int64_t> Scalars(const std::vector<std::vector<Tensor>>& elements) {
  std::vector<int64_t> v;
  for (const auto& e : elements) v.push_back(e[0].scalar<int64_t>());
  return v;
}

TEST(DatasetOpsTest, RangeYieldsItsSequence) {
  Scope root = Scope::NewRootScope();
  DatasetIterator up = Dataset::Range(root, 3, 10, 3).MakeIterator();
  DatasetIterator down = Dataset::Range(root, 5, 0, -2).MakeIterator();
  DatasetIterator empty = Dataset::Range(root, 5, 5).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  EXPECT_THAT(Scalars(Drain(root, session, up)), ElementsAre(3, 6, 9));
  EXPECT_THAT(Scalars(Drain(root, session, down)), ElementsAre(5, 3, 1));
  EXPECT_THAT(Scalars(Drain(root, session, empty)), ElementsAre());
}

TEST(DatasetOpsTest, RangeRejectsAZeroStep) {
  Scope root = Scope::NewRootScope();
  DatasetIterator it = Dataset::Range(root, 0, 5, 0).MakeIterator();
  ClientSession session(root);
  absl::Status s = session.Run({}, {}, {it.initializer}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("step"));
}

TEST(DatasetOpsTest, TensorSlicesYieldRowsOfEveryComponent) {
  Scope root = Scope::NewRootScope();
  auto features = ops::Const(root, {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
  auto labels = ops::Const(root, {7, 8, 9});
  DatasetIterator it = Dataset::FromTensorSlices(root, {features, labels}).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<std::vector<Tensor>> e = Drain(root, session, it);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[1][0].DebugString(), "Tensor<type: float32 shape: [2] values: [3 4]>");
  EXPECT_EQ(e[2][1].DebugString(), "Tensor<type: int32 shape: [] values: 9>");
}

TEST(DatasetOpsTest, TensorSlicesNeedEqualRowCounts) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {1, 2, 3});
  auto b = ops::Const(root, {1, 2});
  DatasetIterator it = Dataset::FromTensorSlices(root.WithOpName("slices"), {a, b}).MakeIterator();
  ClientSession session(root);
  absl::Status s = session.Run({}, {}, {it.initializer}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("slices"));
}

TEST(DatasetOpsTest, BatchKeepsOrDropsTheRemainder) {
  Scope root = Scope::NewRootScope();
  Dataset range = Dataset::Range(root, 0, 7);
  DatasetIterator keep = range.Batch(3).MakeIterator();
  DatasetIterator drop = range.Batch(3, /*drop_remainder=*/true).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<std::vector<Tensor>> k = Drain(root, session, keep);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0][0].DebugString(), "Tensor<type: int64 shape: [3] values: [0 1 2]>");
  EXPECT_EQ(k[1][0].DebugString(), "Tensor<type: int64 shape: [3] values: [3 4 5]>");
  EXPECT_EQ(k[2][0].DebugString(), "Tensor<type: int64 shape: [1] values: [6]>");
  std::vector<std::vector<Tensor>> d = Drain(root, session, drop);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1][0].DebugString(), "Tensor<type: int64 shape: [3] values: [3 4 5]>");
}

TEST(DatasetOpsTest, BatchStacksRowsOfStringsAndMatrices) {
  Scope root = Scope::NewRootScope();
  Tensor words(DT_STRING, TensorShape({3}));
  words.flat<std::string>()[0] = "a";
  words.flat<std::string>()[1] = "bb";
  words.flat<std::string>()[2] = "ccc";
  auto m = ops::Const(root, {{1, 2}, {3, 4}, {5, 6}});
  DatasetIterator it =
      Dataset::FromTensorSlices(root, {ops::Const(root, words), m}).Batch(2).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<std::vector<Tensor>> e = Drain(root, session, it);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0][0].DebugString(), "Tensor<type: string shape: [2] values: [\"a\" \"bb\"]>");
  EXPECT_EQ(e[0][1].DebugString(), "Tensor<type: int32 shape: [2,2] values: [[1 2][3 4]]>");
  EXPECT_EQ(e[1][1].DebugString(), "Tensor<type: int32 shape: [1,2] values: [[5 6]]>");
}

TEST(DatasetOpsTest, BatchRejectsANonPositiveSize) {
  Scope root = Scope::NewRootScope();
  DatasetIterator it = Dataset::Range(root, 0, 4).Batch(0).MakeIterator();
  ClientSession session(root);
  absl::Status s = session.Run({}, {}, {it.initializer}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("batch_size"));
}

TEST(DatasetOpsTest, RepeatTakeAndSkip) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 3);
  DatasetIterator twice = r.Repeat(2).MakeIterator();
  DatasetIterator forever_take = r.Repeat().Take(7).MakeIterator();
  DatasetIterator skip = r.Skip(1).MakeIterator();
  DatasetIterator skip_all = r.Skip(-1).MakeIterator();
  DatasetIterator skip_more = r.Skip(5).MakeIterator();
  DatasetIterator take_all = r.Take(-1).MakeIterator();
  DatasetIterator empty_forever = Dataset::Range(root, 0, 0).Repeat().MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  EXPECT_THAT(Scalars(Drain(root, session, twice)), ElementsAre(0, 1, 2, 0, 1, 2));
  EXPECT_THAT(Scalars(Drain(root, session, forever_take)), ElementsAre(0, 1, 2, 0, 1, 2, 0));
  EXPECT_THAT(Scalars(Drain(root, session, skip)), ElementsAre(1, 2));
  EXPECT_THAT(Scalars(Drain(root, session, skip_all)), ElementsAre());
  EXPECT_THAT(Scalars(Drain(root, session, skip_more)), ElementsAre());
  EXPECT_THAT(Scalars(Drain(root, session, take_all)), ElementsAre(0, 1, 2));
  EXPECT_THAT(Scalars(Drain(root, session, empty_forever)), ElementsAre());
}

TEST(DatasetOpsTest, OutOfRangeRepeatsAfterTheEndAndReinitializingRestarts) {
  Scope root = Scope::NewRootScope();
  DatasetIterator it = Dataset::Range(root, 0, 2).MakeIterator();
  ClientSession session(root);
  EXPECT_THAT(Scalars(Drain(root, session, it)), ElementsAre(0, 1));
  std::vector<Tensor> out;
  EXPECT_EQ(session.Run(it.next, &out).code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(Scalars(Drain(root, session, it)), ElementsAre(0, 1));
}

TEST(DatasetOpsTest, GetNextBeforeMakeIteratorIsFailedPrecondition) {
  Scope root = Scope::NewRootScope();
  DatasetIterator it = Dataset::Range(root, 0, 2).MakeIterator();
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run(it.next, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("not been initialized"));
}

TEST(DatasetOpsTest, ShuffleIsAPermutationDeterminedByTheSeed) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 20);
  DatasetIterator a = r.Shuffle(20, 42).MakeIterator();
  DatasetIterator b = r.Shuffle(20, 42).MakeIterator();
  DatasetIterator c = r.Shuffle(20, 43).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const std::vector<int64_t> va = Scalars(Drain(root, session, a));
  const std::vector<int64_t> vb = Scalars(Drain(root, session, b));
  const std::vector<int64_t> vc = Scalars(Drain(root, session, c));
  std::vector<int64_t> sorted = va;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(20);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
  EXPECT_NE(va, expected);
  EXPECT_EQ(va, vb);  // same seeds, same first order
  EXPECT_NE(va, vc);
}

TEST(DatasetOpsTest, ShuffleReshufflesEachIterationUnlessTold) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 20);
  DatasetIterator re = r.Shuffle(20, 7).Repeat(2).MakeIterator();
  DatasetIterator same = r.Shuffle(20, 7, 0, /*reshuffle_each_iteration=*/false).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const std::vector<int64_t> two = Scalars(Drain(root, session, re));
  ASSERT_EQ(two.size(), 40u);
  const std::vector<int64_t> first(two.begin(), two.begin() + 20);
  const std::vector<int64_t> second(two.begin() + 20, two.end());
  EXPECT_NE(first, second);
  EXPECT_EQ(std::set<int64_t>(second.begin(), second.end()).size(), 20u);
  // Re-initialising continues the sequence of orders rather than restarting it.
  const std::vector<int64_t> e1 = Scalars(Drain(root, session, same));
  const std::vector<int64_t> e2 = Scalars(Drain(root, session, same));
  EXPECT_EQ(e1, e2);
}

TEST(DatasetOpsTest, ShuffleWithASmallBufferMovesElementsOnlyLocally) {
  Scope root = Scope::NewRootScope();
  DatasetIterator it = Dataset::Range(root, 0, 100).Shuffle(2, 1).MakeIterator();
  ClientSession session(root);
  const std::vector<int64_t> v = Scalars(Drain(root, session, it));
  ASSERT_EQ(v.size(), 100u);
  // With a buffer of 2, element i comes out no earlier than position i - 1.
  for (size_t pos = 0; pos < v.size(); ++pos) EXPECT_LE(v[pos], static_cast<int64_t>(pos) + 1);
}

TEST(DatasetOpsTest, PrefetchKeepsOrderAndStopsWhenTheIteratorGoes) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 50);
  DatasetIterator p = r.Batch(4).Prefetch(2).MakeIterator();
  DatasetIterator auto_tune = r.Prefetch().MakeIterator();
  DatasetIterator none = r.Prefetch(0).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<std::vector<Tensor>> e = Drain(root, session, p);
  ASSERT_EQ(e.size(), 13u);
  EXPECT_EQ(e[12][0].DebugString(), "Tensor<type: int64 shape: [2] values: [48 49]>");
  std::vector<int64_t> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(Scalars(Drain(root, session, auto_tune)), expected);
  EXPECT_EQ(Scalars(Drain(root, session, none)), expected);
  // A pass abandoned halfway (re-initialised, then the session closed) stops
  // its producer; the test ends without waiting on it.
  ASSERT_TRUE(session.Run({}, {}, {p.initializer}, nullptr).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(p.next, &out).ok());
  ASSERT_TRUE(session.Run({}, {}, {p.initializer}, nullptr).ok());
}

TEST(DatasetOpsTest, ZipPairsElementsUntilTheShorterEnds) {
  Scope root = Scope::NewRootScope();
  Dataset a = Dataset::Range(root, 0, 5);
  Dataset b = Dataset::Range(root, 10, 13);
  DatasetIterator it = Dataset::Zip(root, {a, b}).MakeIterator();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<std::vector<Tensor>> e = Drain(root, session, it);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[2][0].scalar<int64_t>(), 2);
  EXPECT_EQ(e[2][1].scalar<int64_t>(), 12);
}

TEST(DatasetOpsTest, AnonymousIteratorAndDelete) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 3);
  ops::AnonymousIteratorV2 it(root, r.structure());
  ops::MakeIterator make(root, r.handle(), it.handle);
  ops::IteratorGetNext next(root.WithControlDependencies({make.operation}), it.handle,
                            r.structure());
  ops::DeleteIterator del(root.WithControlDependencies({next.operation}), it.handle, it.deleter);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({}, next.components, {del.operation}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 0);
}

TEST(DatasetOpsTest, IteratorRejectsADatasetOfAnotherStructure) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 3);
  ops::IteratorV2 it(root, "it", {{DT_FLOAT}, {PartialTensorShape({})}});
  ops::MakeIterator make(root, r.handle(), it.handle);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  absl::Status s = session.Run({}, {}, {make.operation}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("int64"));
}

TEST(DatasetOpsTest, DeleteIteratorNeedsTheHandlesOwnDeleter) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 3);
  ops::AnonymousIteratorV2 a(root, r.structure());
  ops::AnonymousIteratorV2 b(root, r.structure());
  ops::DeleteIterator del(root.WithOpName("del"), a.handle, b.deleter);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  absl::Status s = session.Run({}, {}, {del.operation}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not the deleter"));
}

}  // namespace
}  // namespace distflow

namespace distflow {
namespace {

TEST(IteratorStringHandleTest, AHandleFedBackReadsTheSameIterator) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 4);
  DatasetIterator it = r.MakeIterator("shared");
  auto string_handle = ops::IteratorToStringHandle(root, it.handle);
  auto fed = ops::Placeholder(root.WithOpName("fed"), DT_STRING);
  ops::IteratorFromStringHandleV2 from(root, fed, r.structure());
  ops::IteratorGetNext next(root, from.handle, r.structure());
  // A Range's structure is one int64 scalar; asking for float is refused.
  ops::IteratorFromStringHandleV2 wrong(root.WithOpName("wrong"), fed,
                                        {{DT_FLOAT}, {PartialTensorShape({})}});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({}, {string_handle}, {it.initializer}, &out).ok());
  const Tensor handle = out[0];
  ASSERT_EQ(handle.dtype(), DT_STRING);
  // Reads through the handle and through the iterator itself interleave.
  ASSERT_TRUE(session.Run({{fed, handle}}, next.components, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 0);
  ASSERT_TRUE(session.Run(it.next, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 1);
  ASSERT_TRUE(session.Run({{fed, handle}}, next.components, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 2);

  absl::Status s = session.Run({{fed, handle}}, {wrong.handle}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("another iterator structure"));
}

TEST(IteratorStringHandleTest, GarbageAndForeignHandlesAreRefused) {
  Scope root = Scope::NewRootScope();
  Dataset r = Dataset::Range(root, 0, 4);
  auto fed = ops::Placeholder(root.WithOpName("fed"), DT_STRING);
  ops::IteratorFromStringHandleV2 from(root.WithOpName("from"), fed, r.structure());
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<Tensor> out;

  Tensor garbage(DT_STRING, TensorShape());
  garbage.scalar<std::string>() = "\xff\xfe not a handle";
  absl::Status s = session.Run({{fed, garbage}}, {from.handle}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'from'"));

  // A well-formed handle of an iterator on another task's device.
  ResourceHandleProto proto;
  proto.set_device("/job:worker/replica:0/task:7/device:CPU:0");
  proto.set_name("it");
  Tensor foreign(DT_STRING, TensorShape());
  foreign.scalar<std::string>() = proto.SerializeAsString();
  s = session.Run({{fed, foreign}}, {from.handle}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("task:7"));

  Tensor vector(DT_STRING, TensorShape({2}));
  s = session.Run({{fed, vector}}, {from.handle}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("string scalar"));
}

}  // namespace
}  // namespace distflow
