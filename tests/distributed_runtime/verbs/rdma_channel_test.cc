// The verbs protocol between two channels of this process over the real
// shared-memory provider: every message type, buffer growth through one
// channel, string and dead tensors, producer errors, cancellation while a
// write is due, the buffer-size limit, a malformed message and a peer that
// goes away.
#include "distflow/distributed_runtime/verbs/rdma_channel.h"

#include <map>
#include <string>
#include <utility>

#include "absl/synchronization/notification.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/verbs/shm_provider.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kConsumer[] = "/job:worker/replica:0/task:1";
constexpr char kProducer[] = "/job:worker/replica:0/task:0";

// The producer's tensors: a request waits until its (step, key) is
// produced, like a rendezvous.
class FakeSource {
 public:
  void Request(int64_t step, const std::string& key, TensorDone done) {
    absl::ReleasableMutexLock lock(&mu_);
    auto it = produced_.find({step, key});
    if (it != produced_.end()) {
      Produced p = it->second;
      lock.Release();
      done(p.status, p.tensor, p.is_dead);
      return;
    }
    waiting_[{step, key}] = std::move(done);
  }
  void Produce(int64_t step, const std::string& key, absl::Status status, Tensor t,
               bool is_dead = false) {
    TensorDone done;
    {
      absl::MutexLock lock(&mu_);
      auto it = waiting_.find({step, key});
      if (it == waiting_.end()) {
        produced_[{step, key}] = Produced{status, t, is_dead};
        return;
      }
      done = std::move(it->second);
      waiting_.erase(it);
    }
    done(status, t, is_dead);
  }
  bool IsWaiting(int64_t step, const std::string& key) {
    absl::MutexLock lock(&mu_);
    return waiting_.contains({step, key});
  }

 private:
  struct Produced {
    absl::Status status;
    Tensor tensor;
    bool is_dead;
  };
  absl::Mutex mu_;
  std::map<std::pair<int64_t, std::string>, TensorDone> waiting_;
  std::map<std::pair<int64_t, std::string>, Produced> produced_;
};

struct Received {
  absl::Notification done;
  absl::Status status;
  Tensor tensor;
  bool is_dead = false;
  TensorDone Callback() {
    return [this](const absl::Status& s, const Tensor& t, bool dead) {
      status = s;
      tensor = t;
      is_dead = dead;
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(30)); }
};

class RdmaChannelTest : public ::testing::Test {
 protected:
  void SetUp() override { Connect(uint64_t{1} << 30); }

  void Connect(uint64_t max_buffer_bytes) {
    // Channels go before the providers their connections belong to.
    consumer_.reset();
    producer_.reset();
    consumer_provider_ = *ShmProvider::Create();
    producer_provider_ = *ShmProvider::Create();
    RdmaChannel::Options c;
    c.local_task = kConsumer;
    c.remote_task = kProducer;
    c.max_tensor_buffer_bytes = max_buffer_bytes;
    c.source = [](int64_t, const std::string&, TensorDone done) {
      done(errors::NotFound("the consumer produces nothing"), Tensor(), false);
    };
    RdmaChannel::Options p;
    p.local_task = kProducer;
    p.remote_task = kConsumer;
    p.source = [this](int64_t step, const std::string& key, TensorDone done) {
      source_.Request(step, key, std::move(done));
    };
    consumer_ = *RdmaChannel::Create(consumer_provider_.get(), c);
    producer_ = *RdmaChannel::Create(producer_provider_.get(), p);
    // The consumer asks; the producer answers (and dials).
    GetRemoteAddressRequest req;
    consumer_->FillLocalAddress(&req);
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    ASSERT_TRUE(
        producer_->Connect(req.endpoint(), req.message_buffer(), req.ack_buffer(), deadline).ok());
    GetRemoteAddressResponse resp;
    producer_->FillLocalAddress(&resp);
    ASSERT_TRUE(
        consumer_->Connect(resp.endpoint(), resp.message_buffer(), resp.ack_buffer(), deadline)
            .ok());
  }

  // Waits (bounded) until the consumer has no buffer with a write due.
  bool WaitIdle() {
    for (int i = 0; i < 3000; ++i) {
      if (consumer_->NumBusyTensorBuffers() == 0) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  FakeSource source_;
  std::unique_ptr<ShmProvider> consumer_provider_, producer_provider_;
  std::shared_ptr<RdmaChannel> consumer_, producer_;
};

TEST_F(RdmaChannelTest, FloatTensorCrosses) {
  source_.Produce(1, "a", absl::OkStatus(), Tensor::FromVector<float>({1, 2, 3}));
  Received r;
  consumer_->RecvTensor(1, "a", r.Callback());
  ASSERT_TRUE(r.Wait());
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_FALSE(r.is_dead);
  ASSERT_EQ(r.tensor.NumElements(), 3);
  EXPECT_EQ(r.tensor.flat<float>()[2], 3.0f);
  EXPECT_TRUE(WaitIdle());
}

TEST_F(RdmaChannelTest, RequestBeforeProduceIsDeferred) {
  Received r;
  consumer_->RecvTensor(7, "late", r.Callback());
  for (int i = 0; i < 3000 && !source_.IsWaiting(7, "late"); ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(source_.IsWaiting(7, "late"));
  EXPECT_FALSE(r.done.HasBeenNotified());
  source_.Produce(7, "late", absl::OkStatus(), Tensor::FromVector<int64_t>({42}));
  ASSERT_TRUE(r.Wait());
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.tensor.flat<int64_t>()[0], 42);
}

TEST_F(RdmaChannelTest, BufferGrowsFromOneKibToSixtyFourMib) {
  const std::vector<int64_t> sizes = {256, 16 << 20, 256};  // floats: 1 KiB, 64 MiB, 1 KiB
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<float> values(sizes[i]);
    for (int64_t j = 0; j < sizes[i]; ++j) values[j] = static_cast<float>(j % 1000) + i;
    source_.Produce(10 + i, "x", absl::OkStatus(), Tensor::FromVector<float>(values));
    Received r;
    consumer_->RecvTensor(10 + i, "x", r.Callback());
    ASSERT_TRUE(r.Wait());
    ASSERT_TRUE(r.status.ok()) << r.status;
    ASSERT_EQ(r.tensor.NumElements(), sizes[i]);
    EXPECT_EQ(r.tensor.flat<float>()[sizes[i] - 1], values.back());
    EXPECT_EQ(r.tensor.flat<float>()[0], values[0]);
  }
  EXPECT_EQ(consumer_->NumTensorBuffers(), 1);
  EXPECT_TRUE(WaitIdle());
}

TEST_F(RdmaChannelTest, HeldTensorsKeepTheirBytes) {
  // Each received tensor lives in the buffer it was written to: receiving
  // the next one must not overwrite it.
  std::vector<Tensor> kept;
  for (int step = 0; step < 4; ++step) {
    source_.Produce(step, "k", absl::OkStatus(),
                    Tensor::FromVector<float>(std::vector<float>(100, step)));
    Received r;
    consumer_->RecvTensor(step, "k", r.Callback());
    ASSERT_TRUE(r.Wait());
    ASSERT_TRUE(r.status.ok()) << r.status;
    kept.push_back(r.tensor);
  }
  for (int step = 0; step < 4; ++step) EXPECT_EQ(kept[step].flat<float>()[99], step);
}

TEST_F(RdmaChannelTest, StringTensorCrosses) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.flat<std::string>()[0] = "hello";
  t.flat<std::string>()[1] = std::string(5000, 'z');
  source_.Produce(1, "s", absl::OkStatus(), t);
  Received r;
  consumer_->RecvTensor(1, "s", r.Callback());
  ASSERT_TRUE(r.Wait());
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.tensor.dtype(), DT_STRING);
  EXPECT_EQ(r.tensor.flat<std::string>()[0], "hello");
  EXPECT_EQ(r.tensor.flat<std::string>()[1].size(), 5000u);
}

TEST_F(RdmaChannelTest, DeadTensorCrosses) {
  source_.Produce(1, "d", absl::OkStatus(), Tensor(), /*is_dead=*/true);
  Received r;
  consumer_->RecvTensor(1, "d", r.Callback());
  ASSERT_TRUE(r.Wait());
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.is_dead);
}

TEST_F(RdmaChannelTest, BoolAndEmptyTensorsCross) {
  Tensor bools(DT_BOOL, TensorShape({3}));
  bools.flat<bool>()[0] = true;
  bools.flat<bool>()[1] = false;
  bools.flat<bool>()[2] = true;
  source_.Produce(1, "b", absl::OkStatus(), bools);
  source_.Produce(1, "e", absl::OkStatus(), Tensor(DT_FLOAT, TensorShape({0, 3})));
  Received b, e;
  consumer_->RecvTensor(1, "b", b.Callback());
  consumer_->RecvTensor(1, "e", e.Callback());
  ASSERT_TRUE(b.Wait());
  ASSERT_TRUE(e.Wait());
  ASSERT_TRUE(b.status.ok()) << b.status;
  ASSERT_TRUE(e.status.ok()) << e.status;
  EXPECT_TRUE(b.tensor.flat<bool>()[2]);
  EXPECT_FALSE(b.tensor.flat<bool>()[1]);
  EXPECT_EQ(e.tensor.shape(), TensorShape({0, 3}));
}

TEST_F(RdmaChannelTest, ProducerErrorReachesTheConsumer) {
  source_.Produce(3, "x", errors::Aborted("step 3 was aborted"), Tensor());
  Received r;
  consumer_->RecvTensor(3, "x", r.Callback());
  ASSERT_TRUE(r.Wait());
  EXPECT_TRUE(absl::IsAborted(r.status)) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr(kProducer));
  EXPECT_THAT(r.status.message(), HasSubstr("step 3 was aborted"));
  EXPECT_TRUE(WaitIdle());
  // The channel still works.
  source_.Produce(4, "x", absl::OkStatus(), Tensor::FromVector<float>({5}));
  Received ok;
  consumer_->RecvTensor(4, "x", ok.Callback());
  ASSERT_TRUE(ok.Wait());
  EXPECT_TRUE(ok.status.ok()) << ok.status;
}

TEST_F(RdmaChannelTest, CancelWhileTheWriteIsDueLeavesNoBusyBuffer) {
  Received r;
  const uint64_t id = consumer_->RecvTensor(5, "c", r.Callback());
  for (int i = 0; i < 3000 && !source_.IsWaiting(5, "c"); ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  consumer_->CancelRecv(id, errors::Cancelled("step 5 aborted"));
  ASSERT_TRUE(r.done.HasBeenNotified());
  EXPECT_TRUE(absl::IsCancelled(r.status));
  EXPECT_EQ(consumer_->NumBusyTensorBuffers(), 1);
  // The producer's step ends too (here: the tensor arrives anyway).
  source_.Produce(5, "c", absl::OkStatus(), Tensor::FromVector<float>({1}));
  EXPECT_TRUE(WaitIdle());
  source_.Produce(6, "c", absl::OkStatus(), Tensor::FromVector<float>({2}));
  Received next;
  consumer_->RecvTensor(6, "c", next.Callback());
  ASSERT_TRUE(next.Wait());
  ASSERT_TRUE(next.status.ok()) << next.status;
  EXPECT_EQ(next.tensor.flat<float>()[0], 2.0f);
}

TEST_F(RdmaChannelTest, BufferLargerThanTheMaximumIsRefused) {
  Connect(1 << 20);
  source_.Produce(1, "big", absl::OkStatus(), Tensor(DT_FLOAT, TensorShape({1 << 20})));
  Received r;
  consumer_->RecvTensor(1, "big", r.Callback());
  ASSERT_TRUE(r.Wait());
  EXPECT_TRUE(absl::IsResourceExhausted(r.status)) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr(kProducer));
  EXPECT_THAT(r.status.message(), HasSubstr("maximum"));
  EXPECT_TRUE(WaitIdle());
  // Smaller tensors of the same key still cross.
  source_.Produce(2, "big", absl::OkStatus(), Tensor::FromVector<float>({3}));
  Received ok;
  consumer_->RecvTensor(2, "big", ok.Callback());
  ASSERT_TRUE(ok.Wait());
  EXPECT_TRUE(ok.status.ok()) << ok.status;
}

TEST_F(RdmaChannelTest, PeerGoneFailsPendingReceives) {
  Received r;
  consumer_->RecvTensor(1, "never", r.Callback());
  producer_.reset();
  producer_provider_.reset();
  ASSERT_TRUE(r.Wait());
  EXPECT_TRUE(absl::IsUnavailable(r.status)) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr(kProducer));
  Received after;
  consumer_->RecvTensor(2, "never", after.Callback());
  ASSERT_TRUE(after.Wait());
  EXPECT_FALSE(after.status.ok());
}

// A peer that writes garbage into the message buffer: the channel fails
// with DataLoss naming the peer, and nothing crashes.
TEST(RdmaChannelMalformedTest, GarbageMessageFailsTheChannel) {
  auto consumer_provider = *ShmProvider::Create();
  auto rogue_provider = *ShmProvider::Create();
  RdmaChannel::Options c;
  c.local_task = kConsumer;
  c.remote_task = kProducer;
  c.source = [](int64_t, const std::string&, TensorDone done) {
    done(errors::NotFound("none"), Tensor(), false);
  };
  std::shared_ptr<RdmaChannel> consumer = *RdmaChannel::Create(consumer_provider.get(), c);
  std::unique_ptr<VerbsConnection> rogue =
      *rogue_provider->CreateConnection([](const Completion&) {});
  GetRemoteAddressRequest req;
  consumer->FillLocalAddress(&req);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  ASSERT_TRUE(rogue->Connect(req.endpoint(), deadline).ok());
  ASSERT_TRUE(rogue->PostRecv(16).ok());
  auto ack = *rogue_provider->RegisterMemory(RdmaChannel::kMessageBufferBytes);
  RdmaRegion message_buffer, ack_buffer;
  message_buffer.set_addr(ack->info().addr);
  message_buffer.set_rkey(ack->info().rkey);
  message_buffer.set_size(ack->info().size);
  ack_buffer = message_buffer;
  ASSERT_TRUE(consumer->Connect(rogue->endpoint(), message_buffer, ack_buffer, deadline).ok());
  Received r;
  consumer->RecvTensor(1, "k", r.Callback());
  RemoteRegionInfo target{req.message_buffer().addr(), req.message_buffer().rkey(),
                          req.message_buffer().size()};
  std::unique_ptr<RemoteRegion> remote = *rogue->AttachRemote(target);
  const std::string garbage = "\xff\xff\x00\x00this is not a message";
  const absl::Span<const char> src[] = {{garbage.data(), garbage.size()}};
  ASSERT_TRUE(rogue->PostWriteWithImm(src, *remote, 0, RdmaChannel::kMessageImm, 1).ok());
  ASSERT_TRUE(r.Wait());
  EXPECT_TRUE(absl::IsDataLoss(r.status)) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr(kProducer));
  EXPECT_FALSE(consumer->status().ok());
  rogue->Close();
}

}  // namespace
}  // namespace distflow
