// RendezvousMgr's steps that only receives asked for: bounded in number,
// dropped when their last receive ends, kept once their run claims them.
// RemoteRendezvous's pushes: a small remote Send is pushed unless its
// consumer asked first, a pushed tensor completes a receive with no RPC,
// and what a step keeps of pushes is bounded.
#include "distflow/distributed_runtime/rendezvous_mgr.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor_proto.h"
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

// ----------------------------------------------------------------- pushes

constexpr char kConsumerTask[] = "/job:worker/replica:0/task:1";

// What a rendezvous asked of its peers.
struct PeerLog {
  int recv_tensor_calls = 0;
  std::vector<PushTensorRequest> pushes;
};

// A peer task that records pushes and fails every RecvTensor (Unavailable).
class FakePeer : public WorkerInterface {
 public:
  FakePeer(std::string task, PeerLog* log, bool can_push)
      : task_(std::move(task)), log_(log), can_push_(can_push) {}
  const std::string& task() const override { return task_; }
  void GetStatusAsync(const GetStatusRequest*, GetStatusResponse*, CallOptions*,
                      StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void CreateWorkerSessionAsync(const CreateWorkerSessionRequest*, CreateWorkerSessionResponse*,
                                CallOptions*, StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest*, DeleteWorkerSessionResponse*,
                                CallOptions*, StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void RegisterGraphAsync(const RegisterGraphRequest*, RegisterGraphResponse*, CallOptions*,
                          StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void DeregisterGraphAsync(const DeregisterGraphRequest*, DeregisterGraphResponse*, CallOptions*,
                            StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void RunGraphAsync(const RunGraphRequest*, RunGraphResponse*, CallOptions*,
                     StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void CleanupGraphAsync(const CleanupGraphRequest*, CleanupGraphResponse*, CallOptions*,
                         StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void CleanupAllAsync(const CleanupAllRequest*, CleanupAllResponse*, CallOptions*,
                       StatusCallback done) override {
    done(errors::Unimplemented("fake"));
  }
  void RecvTensorAsync(int64_t, const std::string&, Tensor*, bool*, CallOptions*,
                       StatusCallback done) override {
    ++log_->recv_tensor_calls;
    done(errors::Unavailable("the fake peer serves nothing"));
  }
  bool CanPushTensor() const override { return can_push_; }
  void PushTensorAsync(const PushTensorRequest* req, PushTensorResponse*, CallOptions*,
                       StatusCallback done) override {
    log_->pushes.push_back(*req);
    done(absl::OkStatus());
  }

 private:
  const std::string task_;
  PeerLog* const log_;
  const bool can_push_;
};

std::shared_ptr<WorkerCache> FakeCache(PeerLog* log, bool can_push) {
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return std::make_shared<WorkerCache>(
      *cluster,
      [log, can_push](const std::string& task,
                      const std::string&) -> absl::StatusOr<std::unique_ptr<WorkerInterface>> {
        return std::make_unique<FakePeer>(task, log, can_push);
      });
}

Tensor Floats(int64_t n, float value) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (float& x : t.flat<float>()) x = value;
  return t;
}

struct Received {
  bool called = false;
  absl::Status status;
  Tensor value;
  bool is_dead = false;
};

Rendezvous::DoneCallback Into(Received* r) {
  return [r](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
             const Tensor& value, bool is_dead) {
    r->called = true;
    r->status = s;
    r->value = value;
    r->is_dead = is_dead;
  };
}

TEST(RemoteRendezvousPushTest, SmallSendIsPushedAndThePushNeedsNoRecvTensor) {
  PeerLog log;
  std::shared_ptr<WorkerCache> cache = FakeCache(&log, true);
  std::string storage;
  const Rendezvous::ParsedKey key = Key("small", &storage);  // task 0 -> task 1

  RendezvousMgr producer(kTask);
  RefPtr<RemoteRendezvous> sender = producer.Find(3);
  sender->Initialize(cache);
  ASSERT_TRUE(sender->Send(key, Rendezvous::Args(), Floats(16, 2.5f), false).ok());
  ASSERT_EQ(log.pushes.size(), 1u);
  const PushTensorRequest& push = log.pushes[0];
  EXPECT_EQ(push.step_id(), 3);
  EXPECT_EQ(push.rendezvous_key(), storage);
  Tensor carried;
  ASSERT_TRUE(TensorFromProto(push.tensor(), &carried).ok());
  ASSERT_EQ(carried.NumElements(), 16);
  EXPECT_EQ(carried.flat<float>()[15], 2.5f);

  // The consumer gets the push before its run (an unclaimed step), then
  // receives it without asking anyone.
  RendezvousMgr consumer(kConsumerTask);
  absl::StatusOr<RefPtr<RemoteRendezvous>> early = consumer.FindForPush(3);
  ASSERT_TRUE(early.ok()) << early.status();
  ASSERT_TRUE((*early)->AcceptPush(key, carried, false).ok());
  RefPtr<RemoteRendezvous> receiver = consumer.Find(3);
  EXPECT_EQ(receiver.get(), early->get());
  receiver->Initialize(cache);
  Received got;
  receiver->RecvAsync(key, Rendezvous::Args(), Into(&got));
  ASSERT_TRUE(got.called);
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.value.flat<float>()[0], 2.5f);
  EXPECT_EQ(log.recv_tensor_calls, 0);

  // A push is taken once: the same key again, and a key never pushed, ask.
  Received again;
  receiver->RecvAsync(key, Rendezvous::Args(), Into(&again));
  EXPECT_EQ(log.recv_tensor_calls, 1);
  EXPECT_EQ(again.status.code(), absl::StatusCode::kUnavailable) << again.status;
  std::string other_storage;
  Received other;
  receiver->RecvAsync(Key("other", &other_storage), Rendezvous::Args(), Into(&other));
  EXPECT_EQ(log.recv_tensor_calls, 2);
  EXPECT_EQ(other.status.code(), absl::StatusCode::kUnavailable) << other.status;
}

TEST(RemoteRendezvousPushTest, DeadTensorsArePushedToo) {
  PeerLog log;
  std::shared_ptr<WorkerCache> cache = FakeCache(&log, true);
  std::string storage;
  const Rendezvous::ParsedKey key = Key("dead", &storage);
  RendezvousMgr producer(kTask);
  RefPtr<RemoteRendezvous> sender = producer.Find(4);
  sender->Initialize(cache);
  ASSERT_TRUE(sender->Send(key, Rendezvous::Args(), Tensor(), true).ok());
  ASSERT_EQ(log.pushes.size(), 1u);
  EXPECT_TRUE(log.pushes[0].is_dead());

  RendezvousMgr consumer(kConsumerTask);
  RefPtr<RemoteRendezvous> receiver = consumer.Find(4);
  ASSERT_TRUE(receiver->AcceptPush(key, Tensor(), true).ok());
  receiver->Initialize(cache);
  Received got;
  receiver->RecvAsync(key, Rendezvous::Args(), Into(&got));
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_TRUE(got.is_dead);
  EXPECT_EQ(log.recv_tensor_calls, 0);
}

TEST(RemoteRendezvousPushTest, LargeAskedForOrUnpushableTensorsAreNotPushed) {
  PeerLog log;
  std::shared_ptr<WorkerCache> cache = FakeCache(&log, true);
  RendezvousMgr producer(kTask);
  RefPtr<RemoteRendezvous> sender = producer.Find(5);
  sender->Initialize(cache);

  std::string large_storage;
  const int64_t too_many = static_cast<int64_t>(RemoteRendezvous::kMaxPushBytes / 4) + 1;
  ASSERT_TRUE(
      sender->Send(Key("large", &large_storage), Rendezvous::Args(), Floats(too_many, 1), false)
          .ok());
  EXPECT_TRUE(log.pushes.empty());

  // The consumer's RecvTensor came first: it gets the tensor, no push.
  std::string asked_storage;
  const Rendezvous::ParsedKey asked = Key("asked", &asked_storage);
  Received served;
  sender->RecvLocalAsync(asked, Rendezvous::Args(), Into(&served));
  ASSERT_TRUE(sender->Send(asked, Rendezvous::Args(), Floats(4, 3), false).ok());
  EXPECT_TRUE(served.called);
  EXPECT_TRUE(log.pushes.empty());

  // Strings are not pushed; nor is anything over a transport without push.
  std::string strings_storage;
  ASSERT_TRUE(sender
                  ->Send(Key("strings", &strings_storage), Rendezvous::Args(),
                         Tensor(DT_STRING, TensorShape({2})), false)
                  .ok());
  EXPECT_TRUE(log.pushes.empty());
  PeerLog no_push_log;
  RefPtr<RemoteRendezvous> plain = producer.Find(6);
  plain->Initialize(FakeCache(&no_push_log, false));
  std::string small_storage;
  ASSERT_TRUE(
      plain->Send(Key("small", &small_storage), Rendezvous::Args(), Floats(4, 1), false).ok());
  EXPECT_TRUE(no_push_log.pushes.empty());
}

TEST(RemoteRendezvousPushTest, PushesAreBounded) {
  RendezvousMgr consumer(kConsumerTask);
  // Steps made by pushes take at most half of the unclaimed steps' room.
  const int64_t half = static_cast<int64_t>(RendezvousMgr::kMaxUnclaimedSteps / 2);
  for (int64_t step = 0; step < half; ++step) {
    ASSERT_TRUE(consumer.FindForPush(step).ok()) << step;
  }
  absl::StatusOr<RefPtr<RemoteRendezvous>> refused = consumer.FindForPush(half);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(consumer.FindForPush(0).ok());        // already there
  EXPECT_TRUE(consumer.FindForReceive(half).ok());  // receives still have room
  consumer.CleanupAll();

  // A step keeps kMaxPushedBytesPerStep of pushed tensors.
  RefPtr<RemoteRendezvous> r = consumer.Find(1);
  const int64_t floats = static_cast<int64_t>(RemoteRendezvous::kMaxPushBytes / 4);
  const int64_t fit = RemoteRendezvous::kMaxPushedBytesPerStep /
                      static_cast<int64_t>(RemoteRendezvous::kMaxPushBytes);
  std::vector<std::string> storage(fit + 1);
  for (int64_t i = 0; i < fit; ++i) {
    ASSERT_TRUE(
        r->AcceptPush(Key(absl::StrCat("t", i), &storage[i]), Floats(floats, 1), false).ok())
        << i;
  }
  absl::Status full = r->AcceptPush(Key("one_more", &storage[fit]), Floats(floats, 1), false);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_THAT(full.message(), HasSubstr("one_more"));
  // After the step is over, pushes get the reason.
  consumer.Cleanup(1);
  std::string late_storage;
  absl::Status late = r->AcceptPush(Key("late", &late_storage), Floats(1, 1), false);
  EXPECT_EQ(late.code(), absl::StatusCode::kCancelled) << late;
}

}  // namespace
}  // namespace distflow
