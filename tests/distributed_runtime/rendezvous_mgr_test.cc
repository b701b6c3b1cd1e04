// RendezvousMgr's steps that only receives asked for: bounded in number,
// dropped when their last receive ends, kept once their run claims them.
// And pushes: a producer offers a value no receive is asking for yet; a
// receive takes a value pushed before it, or one that comes while it asks.
#include "distflow/distributed_runtime/rendezvous_mgr.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/worker_cache.h"
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

// A receive that asks after its step was cleaned up (its request was
// overtaken by a push that ended the step) is refused at once and makes no
// step that nothing would ever answer.
TEST(RendezvousMgrTest, ReceiveForACleanedUpStepIsRefused) {
  RendezvousMgr mgr(kTask);
  mgr.Find(6);
  mgr.Cleanup(6);
  absl::StatusOr<RefPtr<RemoteRendezvous>> late = mgr.FindForReceive(6);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kCancelled) << late.status();
  EXPECT_THAT(late.status().message(), HasSubstr("cleaned up"));
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

// Records what the rendezvous pushes.
class RecordingPusher : public TensorPusher {
 public:
  bool TryPush(const std::string& task, int64_t step_id, absl::string_view key, const Tensor& value,
               bool is_dead) override {
    pushes.push_back({task, step_id, std::string(key), value, is_dead});
    return true;
  }
  struct Push {
    std::string task;
    int64_t step_id;
    std::string key;
    Tensor value;
    bool is_dead;
  };
  std::vector<Push> pushes;
};

// A peer whose RecvTensor calls wait until the test answers them.
class PendingPeer : public WorkerInterface {
 public:
  explicit PendingPeer(std::string task) : task_(std::move(task)) {}
  const std::string& task() const override { return task_; }
#define DF_UNUSED_CALL(Name, Req, Resp)                                      \
  void Name(const Req*, Resp*, CallOptions*, StatusCallback done) override { \
    done(absl::UnimplementedError(#Name));                                   \
  }
  DF_UNUSED_CALL(GetStatusAsync, GetStatusRequest, GetStatusResponse)
  DF_UNUSED_CALL(CreateWorkerSessionAsync, CreateWorkerSessionRequest, CreateWorkerSessionResponse)
  DF_UNUSED_CALL(DeleteWorkerSessionAsync, DeleteWorkerSessionRequest, DeleteWorkerSessionResponse)
  DF_UNUSED_CALL(RegisterGraphAsync, RegisterGraphRequest, RegisterGraphResponse)
  DF_UNUSED_CALL(DeregisterGraphAsync, DeregisterGraphRequest, DeregisterGraphResponse)
  DF_UNUSED_CALL(RunGraphAsync, RunGraphRequest, RunGraphResponse)
  DF_UNUSED_CALL(CleanupGraphAsync, CleanupGraphRequest, CleanupGraphResponse)
  DF_UNUSED_CALL(CleanupAllAsync, CleanupAllRequest, CleanupAllResponse)
#undef DF_UNUSED_CALL
  void RecvTensorAsync(int64_t, const std::string& key, Tensor* tensor, bool* is_dead, CallOptions*,
                       StatusCallback done) override {
    asked->push_back(key);
    *tensor = Tensor::Scalar<float>(3.0f);
    *is_dead = false;
    pending->push_back(std::move(done));
  }
  std::shared_ptr<std::vector<std::string>> asked = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::vector<StatusCallback>> pending =
      std::make_shared<std::vector<StatusCallback>>();

 private:
  std::string task_;
};

// The consumer side of these tests is task 1 and its producer task 0.
constexpr char kConsumer[] = "/job:worker/replica:0/task:1";

struct Consumer {
  PendingPeer* peer = nullptr;
  std::shared_ptr<WorkerCache> cache;
};

Consumer MakeConsumerCache() {
  Consumer c;
  auto peer = std::make_unique<PendingPeer>(kTask);
  c.peer = peer.get();
  auto spec = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");
  EXPECT_TRUE(spec.ok());
  auto owned = std::make_shared<std::unique_ptr<PendingPeer>>(std::move(peer));
  c.cache = std::make_shared<WorkerCache>(
      *spec,
      [owned](const std::string& task,
              const std::string&) -> absl::StatusOr<std::unique_ptr<WorkerInterface>> {
        if (task != kTask || *owned == nullptr) return absl::NotFoundError(task);
        return std::unique_ptr<WorkerInterface>(std::move(*owned));
      });
  return c;
}

struct Received {
  bool called = false;
  absl::Status status;
  Tensor value;
};

Rendezvous::DoneCallback Into(Received* r) {
  return [r](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
             const Tensor& v, bool) {
    EXPECT_FALSE(r->called) << "done ran twice";
    r->called = true;
    r->status = s;
    r->value = v;
  };
}

TEST(RendezvousPushTest, ProducerPushesWhatNobodyAsksForYet) {
  auto pusher = std::make_shared<RecordingPusher>();
  RendezvousMgr mgr(kTask);
  PushSetup setup;
  setup.pusher = pusher;
  mgr.SetPush(setup);
  RefPtr<RemoteRendezvous> r = mgr.Find(9);
  std::string k1, k2;
  ASSERT_TRUE(
      r->Send(Key("early", &k1), Rendezvous::Args(), Tensor::Scalar<float>(1.0f), false).ok());
  ASSERT_EQ(pusher->pushes.size(), 1u);
  EXPECT_EQ(pusher->pushes[0].task, kConsumer);
  EXPECT_EQ(pusher->pushes[0].step_id, 9);
  EXPECT_EQ(pusher->pushes[0].key, k1);
  EXPECT_EQ(pusher->pushes[0].value.scalar<float>(), 1.0f);
  // A peer's receive that waits already takes the value: nothing pushed.
  Received asked;
  r->RecvLocalAsync(Key("late", &k2), Rendezvous::Args(), Into(&asked));
  ASSERT_TRUE(
      r->Send(Key("late", &k2), Rendezvous::Args(), Tensor::Scalar<float>(2.0f), false).ok());
  EXPECT_TRUE(asked.called);
  EXPECT_EQ(asked.value.scalar<float>(), 2.0f);
  EXPECT_EQ(pusher->pushes.size(), 1u);
  // A pushed value still answers a peer that asks after all.
  Received after;
  r->RecvLocalAsync(Key("early", &k1), Rendezvous::Args(), Into(&after));
  EXPECT_TRUE(after.called);
  EXPECT_EQ(after.value.scalar<float>(), 1.0f);
  mgr.Cleanup(9);
}

// Makes `mgr` keep the tensors producers push to it (with no pusher of its
// own).
void AcceptPushes(RendezvousMgr* mgr) {
  PushSetup setup;
  setup.accept = true;
  mgr->SetPush(setup);
}

TEST(RendezvousPushTest, ReceiveTakesAValuePushedBeforeItWithoutAsking) {
  Consumer c = MakeConsumerCache();
  RendezvousMgr mgr(kConsumer);
  AcceptPushes(&mgr);
  std::string k;
  Key("x", &k);
  // The push comes before the step's run: the step is made for it.
  EXPECT_TRUE(mgr.DeliverPushed(4, k, Tensor::Scalar<float>(5.0f), false));
  EXPECT_EQ(mgr.PushedBytesHeld(), 4);
  EXPECT_FALSE(mgr.DeliverPushed(4, k, Tensor::Scalar<float>(6.0f), false))
      << "a second push of a key";
  RefPtr<RemoteRendezvous> r = mgr.Find(4);
  r->Initialize(c.cache);
  Received got;
  r->RecvAsync(Key("x", &k), Rendezvous::Args(), Into(&got));
  EXPECT_TRUE(got.called);
  EXPECT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.value.scalar<float>(), 5.0f);
  EXPECT_TRUE(c.peer->asked->empty());
  EXPECT_EQ(mgr.PushedBytesHeld(), 0);
  mgr.Cleanup(4);
}

TEST(RendezvousPushTest, PushThatComesWhileAskingAnswersAndTheReplyIsDropped) {
  Consumer c = MakeConsumerCache();
  auto asked = c.peer->asked;
  auto pending = c.peer->pending;
  RendezvousMgr mgr(kConsumer);
  AcceptPushes(&mgr);
  RefPtr<RemoteRendezvous> r = mgr.Find(2);
  r->Initialize(c.cache);
  Received got;
  std::string k;
  {
    // The step's manager goes once the receive is answered, as a step's
    // does when it ends.
    auto cm = std::make_unique<CancellationManager>();
    Rendezvous::Args args;
    args.cancellation_manager = cm.get();
    r->RecvAsync(Key("x", &k), args, Into(&got));
    ASSERT_EQ(asked->size(), 1u);
    EXPECT_FALSE(got.called);
    EXPECT_FALSE(mgr.DeliverPushed(2, k, Tensor::Scalar<float>(8.0f), false))
        << "handed over, not kept";
    EXPECT_TRUE(got.called);
    EXPECT_EQ(got.value.scalar<float>(), 8.0f);
  }
  // The reply comes after the step's manager is gone: it is dropped.
  ASSERT_EQ(pending->size(), 1u);
  (*pending)[0](absl::OkStatus());
  pending->clear();  // its callback holds the step
  EXPECT_EQ(got.value.scalar<float>(), 8.0f);
  EXPECT_EQ(mgr.PushedBytesHeld(), 0);
  mgr.Cleanup(2);
}

TEST(RendezvousPushTest, ReplyBeforeThePushAnswersAndThePushIsFreedWithTheStep) {
  Consumer c = MakeConsumerCache();
  auto pending = c.peer->pending;
  RendezvousMgr mgr(kConsumer);
  AcceptPushes(&mgr);
  RefPtr<RemoteRendezvous> r = mgr.Find(3);
  r->Initialize(c.cache);
  Received got;
  std::string k;
  CancellationManager cm;
  Rendezvous::Args args;
  args.cancellation_manager = &cm;
  r->RecvAsync(Key("x", &k), args, Into(&got));
  ASSERT_EQ(pending->size(), 1u);
  (*pending)[0](absl::OkStatus());
  pending->clear();  // its callback holds the step
  EXPECT_TRUE(got.called);
  EXPECT_EQ(got.value.scalar<float>(), 3.0f);
  // A push that comes late is kept until the step ends.
  EXPECT_TRUE(mgr.DeliverPushed(3, k, Tensor::Scalar<float>(9.0f), false));
  EXPECT_EQ(mgr.PushedBytesHeld(), 4);
  mgr.Cleanup(3);
  EXPECT_EQ(mgr.PushedBytesHeld(), 0);
}

TEST(RendezvousPushTest, PushesAreDroppedPastTheirBoundsOrWhenNotAccepted) {
  RendezvousMgr off(kConsumer);
  std::string k;
  Key("x", &k);
  EXPECT_FALSE(off.DeliverPushed(1, k, Tensor::Scalar<float>(1.0f), false));
  EXPECT_EQ(off.NumSteps(), 0u);
  RendezvousMgr mgr(kConsumer);
  AcceptPushes(&mgr);
  // Over kMaxPushedBytes held: dropped, the step not made.
  Tensor big(DT_FLOAT, TensorShape({RendezvousMgr::kMaxPushedBytes / 4 + 1}));
  EXPECT_FALSE(mgr.DeliverPushed(1, k, big, false));
  EXPECT_EQ(mgr.NumSteps(), 0u);
  EXPECT_EQ(mgr.PushedBytesHeld(), 0);
  // Over kMaxUnclaimedSteps: dropped.
  constexpr int64_t kMax = static_cast<int64_t>(RendezvousMgr::kMaxUnclaimedSteps);
  for (int64_t step = 0; step < kMax; ++step) {
    ASSERT_TRUE(mgr.DeliverPushed(step, k, Tensor::Scalar<float>(1.0f), false)) << step;
  }
  EXPECT_FALSE(mgr.DeliverPushed(kMax, k, Tensor::Scalar<float>(1.0f), false));
  EXPECT_EQ(mgr.PushedBytesHeld(), 4 * kMax);
  mgr.CleanupAll();
  EXPECT_EQ(mgr.PushedBytesHeld(), 0);
  // A push read after its step was cleaned up does not make the step anew.
  mgr.Find(kMax + 1);
  mgr.Cleanup(kMax + 1);
  EXPECT_FALSE(mgr.DeliverPushed(kMax + 1, k, Tensor::Scalar<float>(1.0f), false));
  EXPECT_EQ(mgr.NumSteps(), 0u);
}

}  // namespace
}  // namespace distflow
