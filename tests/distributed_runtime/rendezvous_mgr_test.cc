// RendezvousMgr's steps that only receives asked for: bounded in number,
// dropped when their last receive ends, kept once their run claims them.
#include "distflow/distributed_runtime/rendezvous_mgr.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/framework/cancellation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kTask[] = "/job:worker/replica:0/task:0";

Rendezvous::ParsedKey Key(const std::string& edge, std::string* storage) {
  *storage = absl::StrCat(kTask, "/device:CPU:0;0000000000000001;/job:worker/replica:0/task:1",
                          "/device:CPU:0;", edge, ";0:0");
  Rendezvous::ParsedKey key;
  EXPECT_TRUE(Rendezvous::ParseKey(*storage, &key).ok());
  return key;
}

TEST(RendezvousMgrTest, UnclaimedStepsAreBoundedAndDroppedWithTheirLastReceive) {
  RendezvousMgr mgr(kTask);
  constexpr int64_t kMax = static_cast<int64_t>(RendezvousMgr::kMaxUnclaimedSteps);
  for (int64_t step = 0; step < kMax; ++step) ASSERT_TRUE(mgr.FindForReceive(step).ok()) << step;
  EXPECT_EQ(mgr.NumSteps(), static_cast<size_t>(kMax));
  absl::StatusOr<RefPtr<RemoteRendezvous>> refused = mgr.FindForReceive(kMax);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("steps it was never asked to run"));
  // A step already there is no new step.
  EXPECT_TRUE(mgr.FindForReceive(7).ok());
  mgr.EndReceive(7);
  EXPECT_EQ(mgr.NumSteps(), static_cast<size_t>(kMax));
  // Its last receive over, a step goes and makes room.
  mgr.EndReceive(7);
  EXPECT_EQ(mgr.NumSteps(), static_cast<size_t>(kMax - 1));
  EXPECT_TRUE(mgr.FindForReceive(kMax).ok());
  for (int64_t step = 0; step <= kMax; ++step) {
    if (step != 7) mgr.EndReceive(step);
  }
  EXPECT_EQ(mgr.NumSteps(), 0u);
}

TEST(RendezvousMgrTest, ClaimedStepsStayAfterTheirReceives) {
  RendezvousMgr mgr(kTask);
  ASSERT_TRUE(mgr.FindForReceive(1).ok());
  mgr.Find(1);  // the step's RunGraph
  mgr.EndReceive(1);
  EXPECT_EQ(mgr.NumSteps(), 1u);
  mgr.Cleanup(1);
  EXPECT_EQ(mgr.NumSteps(), 0u);
}

// A receive whose caller went away (its call's CancellationManager) ends
// with Cancelled, and the step it alone held is gone.
TEST(RendezvousMgrTest, CancelledReceiveDropsItsStep) {
  RendezvousMgr mgr(kTask);
  CancellationManager cm;
  absl::StatusOr<RefPtr<RemoteRendezvous>> r = mgr.FindForReceive(5);
  ASSERT_TRUE(r.ok());
  std::string storage;
  Rendezvous::Args args;
  args.cancellation_manager = &cm;
  absl::Status got;
  bool called = false;
  (*r)->RecvLocalAsync(Key("x", &storage), args,
                       [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                           const Tensor&, bool) {
                         got = s;
                         called = true;
                         mgr.EndReceive(5);
                       });
  r = absl::StatusOr<RefPtr<RemoteRendezvous>>();
  EXPECT_FALSE(called);
  EXPECT_EQ(mgr.NumSteps(), 1u);
  cm.StartCancel();
  EXPECT_TRUE(called);
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled) << got;
  EXPECT_EQ(mgr.NumSteps(), 0u);
}

}  // namespace
}  // namespace distflow
