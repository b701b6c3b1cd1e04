// Rendezvous keys, LocalRendezvous/IntraProcessRendezvous semantics and
// CancellationManager.
#include "distflow/framework/rendezvous.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/intra_process_rendezvous.h"
#include "distflow/framework/cancellation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

Rendezvous::ParsedKey Key(const std::string& name, FrameAndIter f = {}) {
  Rendezvous::ParsedKey key;
  EXPECT_TRUE(Rendezvous::ParseKey(Rendezvous::CreateKey(kCpu0, 0xabc, kCpu1, name, f), &key).ok());
  return key;
}

TEST(RendezvousKeyTest, FormatIsExact) {
  EXPECT_EQ(Rendezvous::CreateKey(kCpu0, 0x1234abcdULL, kCpu1, "x:0", {3, 7}),
            absl::StrCat(kCpu0, ";000000001234abcd;", kCpu1, ";x:0;3:7"));
  EXPECT_EQ(Rendezvous::CreateKey("/job:a/replica:0/task:1/device:CPU:0", ~0ULL,
                                  "/job:b/replica:0/task:0/device:CPU:0", "edge_1_y", {}),
            "/job:a/replica:0/task:1/device:CPU:0;ffffffffffffffff;"
            "/job:b/replica:0/task:0/device:CPU:0;edge_1_y;0:0");
}

TEST(RendezvousKeyTest, ParseRoundTrip) {
  const std::string key = Rendezvous::CreateKey(kCpu0, 0xfeedULL, kCpu1, "a/b:1", {5, 9});
  Rendezvous::ParsedKey parsed;
  ASSERT_TRUE(Rendezvous::ParseKey(key, &parsed).ok());
  EXPECT_EQ(parsed.src_device, kCpu0);
  EXPECT_EQ(parsed.dst_device, kCpu1);
  EXPECT_EQ(parsed.src_incarnation, 0xfeedULL);
  EXPECT_EQ(parsed.edge_name, "a/b:1");
  EXPECT_EQ(parsed.frame_iter.frame_id, 5u);
  EXPECT_EQ(parsed.frame_iter.iter_id, 9);
  EXPECT_EQ(parsed.src.type, "CPU");
  EXPECT_EQ(parsed.dst.id, 1);
  EXPECT_EQ(parsed.FullKey(), key);
  // Copies own their buffer.
  Rendezvous::ParsedKey copy;
  {
    Rendezvous::ParsedKey tmp = parsed;
    copy = tmp;
  }
  EXPECT_EQ(copy.FullKey(), key);
  EXPECT_EQ(copy.edge_name, "a/b:1");
  EXPECT_EQ(copy.dst_device, kCpu1);
  EXPECT_EQ(copy.hash(), parsed.hash());
}

TEST(RendezvousKeyTest, MalformedKeysAreInvalidArgumentNamingTheKey) {
  const std::string inc = ";0000000000000001;";
  const std::vector<std::string> bad = {
      "",
      "a;b;c",
      absl::StrCat(kCpu0, inc, kCpu1, ";x;0:0;extra"),
      absl::StrCat(kCpu0, ";xyz;", kCpu1, ";x;0:0"),
      absl::StrCat(kCpu0, ";12345678901234567;", kCpu1, ";x;0:0"),
      absl::StrCat(kCpu0, inc, kCpu1, ";;0:0"),
      absl::StrCat(kCpu0, inc, kCpu1, ";x;0"),
      absl::StrCat(kCpu0, inc, kCpu1, ";x;a:b"),
      absl::StrCat(";0000000000000001;", kCpu1, ";x;0:0"),
      absl::StrCat("/job:a/bogus:3", inc, kCpu1, ";x;0:0"),
  };
  for (const std::string& k : bad) {
    Rendezvous::ParsedKey parsed;
    absl::Status s = Rendezvous::ParseKey(k, &parsed);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << k << " -> " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(k)) << k;
  }
}

class RendezvousTest : public ::testing::Test {
 protected:
  RendezvousTest() {
    ConfigProto config;
    (*config.mutable_device_count())["CPU"] = 2;
    config.set_intra_op_parallelism_threads(1);
    auto devices = CreateCpuDevices(config, "/job:localhost/replica:0/task:0");
    EXPECT_TRUE(devices.ok());
    mgr_ = std::make_unique<DeviceMgr>(*std::move(devices));
    rendez_.reset(new IntraProcessRendezvous(mgr_.get()));
  }

  std::unique_ptr<DeviceMgr> mgr_;
  RefPtr<Rendezvous> rendez_;
};

TEST_F(RendezvousTest, SendThenRecv) {
  Rendezvous::Args args;
  ASSERT_TRUE(rendez_->Send(Key("a"), args, Tensor::Scalar<int64_t>(42), false).ok());
  Tensor v;
  bool dead = true;
  ASSERT_TRUE(rendez_->Recv(Key("a"), args, &v, &dead).ok());
  EXPECT_FALSE(dead);
  EXPECT_EQ(v.scalar<int64_t>(), 42);
}

TEST_F(RendezvousTest, RecvThenSendRunsCallbackOnSenderThread) {
  std::thread::id cb_thread;
  int64_t got = 0;
  bool called = false;
  rendez_->RecvAsync(Key("a"), {},
                     [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                         const Tensor& v, bool dead) {
                       EXPECT_TRUE(s.ok());
                       EXPECT_TRUE(dead);
                       got = v.scalar<int64_t>();
                       cb_thread = std::this_thread::get_id();
                       called = true;
                     });
  EXPECT_FALSE(called);
  std::thread sender([&] {
    EXPECT_TRUE(rendez_->Send(Key("a"), {}, Tensor::Scalar<int64_t>(7), true).ok());
    EXPECT_TRUE(called);
    EXPECT_EQ(cb_thread, std::this_thread::get_id());
  });
  sender.join();
  EXPECT_EQ(got, 7);
}

TEST_F(RendezvousTest, KeysInOtherFramesAreDistinct) {
  ASSERT_TRUE(rendez_->Send(Key("a", {0, 0}), {}, Tensor::Scalar<int64_t>(1), false).ok());
  ASSERT_TRUE(rendez_->Send(Key("a", {0, 1}), {}, Tensor::Scalar<int64_t>(2), false).ok());
  Tensor v;
  bool dead;
  ASSERT_TRUE(rendez_->Recv(Key("a", {0, 1}), {}, &v, &dead).ok());
  EXPECT_EQ(v.scalar<int64_t>(), 2);
  ASSERT_TRUE(rendez_->Recv(Key("a", {0, 0}), {}, &v, &dead).ok());
  EXPECT_EQ(v.scalar<int64_t>(), 1);
}

TEST_F(RendezvousTest, DuplicateSendIsAborted) {
  ASSERT_TRUE(rendez_->Send(Key("a"), {}, Tensor::Scalar<int64_t>(1), false).ok());
  absl::Status s = rendez_->Send(Key("a"), {}, Tensor::Scalar<int64_t>(2), false);
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(";a;0:0"));
  // The first value is still there.
  Tensor v;
  bool dead;
  ASSERT_TRUE(rendez_->Recv(Key("a"), {}, &v, &dead).ok());
  EXPECT_EQ(v.scalar<int64_t>(), 1);
}

TEST_F(RendezvousTest, DuplicateRecvIsAborted) {
  absl::Status first_status = absl::UnknownError("not called");
  rendez_->RecvAsync(Key("a"), {},
                     [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                         const Tensor&, bool) { first_status = s; });
  absl::Status second_status = absl::UnknownError("not called");
  rendez_->RecvAsync(Key("a"), {},
                     [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                         const Tensor&, bool) { second_status = s; });
  EXPECT_TRUE(absl::IsAborted(second_status)) << second_status;
  ASSERT_TRUE(rendez_->Send(Key("a"), {}, Tensor::Scalar<int64_t>(1), false).ok());
  EXPECT_TRUE(first_status.ok()) << first_status;
}

TEST_F(RendezvousTest, StartAbortFailsWaitersAndLaterCalls) {
  std::vector<absl::Status> results(3, absl::UnknownError("not called"));
  for (int i = 0; i < 3; ++i) {
    rendez_->RecvAsync(
        Key(absl::StrCat("k", i)), {},
        [&results, i](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                      const Tensor&, bool) { results[i] = s; });
  }
  rendez_->StartAbort(errors::Internal("first"));
  rendez_->StartAbort(errors::Unavailable("second"));
  for (const absl::Status& s : results) {
    EXPECT_TRUE(absl::IsInternal(s)) << s;
    EXPECT_EQ(s.message(), "first");
  }
  absl::Status send = rendez_->Send(Key("x"), {}, Tensor::Scalar<int64_t>(1), false);
  EXPECT_TRUE(absl::IsInternal(send)) << send;
  Tensor v;
  bool dead;
  absl::Status recv = rendez_->Recv(Key("y"), {}, &v, &dead);
  EXPECT_TRUE(absl::IsInternal(recv)) << recv;
  EXPECT_EQ(recv.message(), "first");
}

TEST_F(RendezvousTest, CallbacksRunOutsideTheLock) {
  // The callback of "a" sends "b" and receives "c" on the same rendezvous;
  // under the table lock this would deadlock.
  bool got_c = false;
  rendez_->RecvAsync(
      Key("a"), {},
      [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&, const Tensor&,
          bool) {
        ASSERT_TRUE(s.ok());
        EXPECT_TRUE(rendez_->Send(Key("b"), {}, Tensor::Scalar<int64_t>(2), false).ok());
        rendez_->RecvAsync(Key("c"), {},
                           [&](const absl::Status& s2, const Rendezvous::Args&,
                               const Rendezvous::Args&, const Tensor& v, bool) {
                             EXPECT_TRUE(s2.ok());
                             got_c = v.scalar<int64_t>() == 3;
                           });
      });
  ASSERT_TRUE(rendez_->Send(Key("c"), {}, Tensor::Scalar<int64_t>(3), false).ok());
  ASSERT_TRUE(rendez_->Send(Key("a"), {}, Tensor::Scalar<int64_t>(1), false).ok());
  EXPECT_TRUE(got_c);
  Tensor v;
  bool dead;
  ASSERT_TRUE(rendez_->Recv(Key("b"), {}, &v, &dead).ok());
  EXPECT_EQ(v.scalar<int64_t>(), 2);
  // StartAbort's callbacks may call back in too.
  bool aborted_cb = false;
  rendez_->RecvAsync(
      Key("d"), {},
      [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&, const Tensor&,
          bool) {
        EXPECT_FALSE(s.ok());
        EXPECT_FALSE(rendez_->Send(Key("e"), {}, Tensor::Scalar<int64_t>(1), false).ok());
        aborted_cb = true;
      });
  rendez_->StartAbort(errors::Aborted("stop"));
  EXPECT_TRUE(aborted_cb);
}

TEST_F(RendezvousTest, CancelledRecvFailsAndFreesTheKey) {
  CancellationManager cm;
  Rendezvous::Args args;
  args.cancellation_manager = &cm;
  absl::Status status = absl::UnknownError("not called");
  rendez_->RecvAsync(Key("a"), args,
                     [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                         const Tensor&, bool) { status = s; });
  cm.StartCancel();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  // A receive after cancellation fails at once.
  absl::Status late = absl::UnknownError("not called");
  rendez_->RecvAsync(Key("b"), args,
                     [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                         const Tensor&, bool) { late = s; });
  EXPECT_TRUE(absl::IsCancelled(late)) << late;
  // The key is free again for a receiver without the manager.
  ASSERT_TRUE(rendez_->Send(Key("a"), {}, Tensor::Scalar<int64_t>(5), false).ok());
  Tensor v;
  bool dead;
  ASSERT_TRUE(rendez_->Recv(Key("a"), {}, &v, &dead).ok());
  EXPECT_EQ(v.scalar<int64_t>(), 5);
}

TEST_F(RendezvousTest, RecvTimesOut) {
  Tensor v;
  bool dead;
  absl::Status s = rendez_->Recv(Key("never"), {}, &v, &dead, /*timeout_ms=*/20);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
}

TEST_F(RendezvousTest, UnknownDeviceIsInvalidArgument) {
  Rendezvous::ParsedKey key;
  ASSERT_TRUE(Rendezvous::ParseKey(Rendezvous::CreateKey("/job:other/replica:0/task:0/device:CPU:0",
                                                         1, kCpu0, "t", {}),
                                   &key)
                  .ok());
  absl::Status s = rendez_->Send(key, {}, Tensor::Scalar<int64_t>(1), false);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:other"));
}

TEST_F(RendezvousTest, ManyThreadsSendAndReceive) {
  constexpr int kThreads = 4;
  constexpr int kKeys = 500;
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        const std::string name = absl::StrCat("k", i);
        if (t % 2 == 0) {
          ASSERT_TRUE(
              rendez_->Send(Key(absl::StrCat(name, "_", t)), {}, Tensor::Scalar<int64_t>(i), false)
                  .ok());
        } else {
          Tensor v;
          bool dead;
          ASSERT_TRUE(rendez_->Recv(Key(absl::StrCat(name, "_", t - 1)), {}, &v, &dead).ok());
          sum += v.scalar<int64_t>();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(sum.load(), 2 * (kKeys * (kKeys - 1) / 2));
}

TEST(CancellationManagerTest, CallbacksRunOnceAndLateRegistrationFails) {
  CancellationManager cm;
  int calls = 0;
  CancellationToken a = cm.get_cancellation_token();
  CancellationToken b = cm.get_cancellation_token();
  EXPECT_TRUE(cm.RegisterCallback(a, [&] { ++calls; }));
  EXPECT_TRUE(cm.RegisterCallback(b, [&] { calls += 10; }));
  EXPECT_TRUE(cm.DeregisterCallback(b));
  EXPECT_FALSE(cm.IsCancelled());
  cm.StartCancel();
  cm.StartCancel();
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(cm.RegisterCallback(cm.get_cancellation_token(), [&] { ++calls; }));
  EXPECT_FALSE(cm.DeregisterCallback(a));
  EXPECT_EQ(calls, 1);
}

TEST(CancellationManagerTest, DeregisterInsideCallbackDoesNotWait) {
  CancellationManager cm;
  CancellationToken a = cm.get_cancellation_token();
  CancellationToken b = cm.get_cancellation_token();
  bool ran = false;
  EXPECT_TRUE(cm.RegisterCallback(a, [&] {
    cm.DeregisterCallback(b);
    ran = true;
  }));
  EXPECT_TRUE(cm.RegisterCallback(b, [] {}));
  cm.StartCancel();
  EXPECT_TRUE(ran);
}

TEST(DeviceMgrTest, LookupByFullAndShortNames) {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 3;
  auto devices = CreateCpuDevices(config, "/job:localhost/replica:0/task:0");
  ASSERT_TRUE(devices.ok());
  DeviceMgr mgr(*std::move(devices));
  ASSERT_EQ(mgr.ListDevices().size(), 3u);
  for (const char* name :
       {"/job:localhost/replica:0/task:0/device:CPU:2", "/device:CPU:2", "CPU:2", "/cpu:2"}) {
    auto d = mgr.LookupDevice(name);
    ASSERT_TRUE(d.ok()) << name << ": " << d.status();
    EXPECT_EQ((*d)->name(), "/job:localhost/replica:0/task:0/device:CPU:2");
  }
  EXPECT_TRUE(absl::IsNotFound(mgr.LookupDevice("/device:CPU:7").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(mgr.LookupDevice("/device:CPU").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(mgr.LookupDevice("not a device").status()));
  // Incarnations are random and distinct.
  EXPECT_NE(mgr.ListDevices()[0]->incarnation(), 0u);
  EXPECT_NE(mgr.ListDevices()[0]->incarnation(), mgr.ListDevices()[1]->incarnation());
  EXPECT_EQ(mgr.HostCPU(), mgr.ListDevices()[0]);
  EXPECT_EQ(mgr.ListDeviceAttributes()[1].device_type(), "CPU");
}

}  // namespace
}  // namespace distflow
