// Pushes on the tensor side channel in one process: the real pusher against
// a real server whose push sink the test plays. A push lands whole (values,
// strings, dead tensors); the route comes from a keyed receive's hello; a
// push without a good hello reaches no sink; what the pusher cannot send at
// once (no route, too large, a stopped receiver) it declines, and it finds
// a receiver that comes back on a new port once told.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/side_channel_client.h"
#include "distflow/distributed_runtime/rpc/side_channel_pusher.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "gtest/gtest.h"
#include "loopback_socket.h"

namespace distflow {
namespace {

constexpr char kToken[] = "push-test-token";
constexpr char kReceiver[] = "/job:worker/replica:0/task:1";

// What the receiver's push sink got.
class Sink {
 public:
  struct Push {
    int64_t step_id;
    std::string key;
    Tensor value;
    bool is_dead;
  };
  SideChannelServer::PushSink Fn() {
    return [this](int64_t step_id, const std::string& key, absl::string_view payload) {
      grpc::Slice slice(payload.data(), payload.size());
      grpc::ByteBuffer bytes(&slice, 1);
      Push p{step_id, key, Tensor(), false};
      int64_t start = 0;
      EXPECT_TRUE(DecodeRecvTensorResponse(bytes, &p.value, &p.is_dead, &start).ok());
      absl::MutexLock lock(&mu_);
      pushes_.push_back(std::move(p));
    };
  }
  // Waits up to 20 s for the n-th push; false when it did not come.
  bool WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pushes_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20));
  }
  std::vector<Push> pushes() {
    absl::MutexLock lock(&mu_);
    return pushes_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Push> pushes_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<SideChannelServer> StartReceiver(Sink* sink, const std::string& token = kToken) {
  SideChannelServer::Options o;
  o.host = "127.0.0.1";
  o.token = token;
  auto s = SideChannelServer::Start(o);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  (*s)->SetPushSink(sink->Fn());
  return std::move(*s);
}

SideChannelPusher::Options PushOptions() {
  SideChannelPusher::Options o;
  o.token = kToken;
  return o;
}

// The first push may find its connection still being made: it is tried
// until one goes (a few milliseconds on loopback).
bool PushSoon(SideChannelPusher* pusher, int64_t step, const std::string& key, const Tensor& v,
              bool is_dead = false) {
  for (int i = 0; i < 2000; ++i) {
    if (pusher->TryPush(kReceiver, step, key, v, is_dead)) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return false;
}

TEST(SideChannelPushTest, PushesLandWholeInTheSink) {
  Sink sink;
  auto receiver = StartReceiver(&sink);
  ASSERT_NE(receiver, nullptr);
  SideChannelPusher pusher(PushOptions());
  EXPECT_FALSE(pusher.TryPush(kReceiver, 1, "k", Tensor::Scalar<float>(1.0f), false))
      << "no route yet";
  pusher.Learn(kReceiver, "127.0.0.1", receiver->port());
  Tensor floats(DT_FLOAT, TensorShape({1000}));
  for (int i = 0; i < 1000; ++i) floats.flat<float>()[i] = static_cast<float>(i);
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.flat<std::string>()[0] = "pushed";
  strings.flat<std::string>()[1] = std::string(300, 'x');
  ASSERT_TRUE(PushSoon(&pusher, 7, "a;key", floats));
  ASSERT_TRUE(pusher.TryPush(kReceiver, 8, "b;key", strings, false));
  ASSERT_TRUE(pusher.TryPush(kReceiver, 9, "c;key", Tensor(), true));
  ASSERT_TRUE(sink.WaitFor(3));
  std::vector<Sink::Push> got = sink.pushes();
  EXPECT_EQ(got[0].step_id, 7);
  EXPECT_EQ(got[0].key, "a;key");
  ASSERT_EQ(got[0].value.NumElements(), 1000);
  EXPECT_EQ(got[0].value.flat<float>()[999], 999.0f);
  EXPECT_EQ(got[1].value.flat<std::string>()[0], "pushed");
  EXPECT_EQ(got[1].value.flat<std::string>()[1], std::string(300, 'x'));
  EXPECT_TRUE(got[2].is_dead);
  EXPECT_EQ(receiver->pushes_received(), 3);
  EXPECT_EQ(pusher.pushes_sent(), 3);
  // Over max_tensor_bytes: declined.
  Tensor big(DT_FLOAT, TensorShape({(16 << 10) / 4 + 1}));
  EXPECT_FALSE(pusher.TryPush(kReceiver, 10, "d;key", big, false));
}

TEST(SideChannelPushTest, KeyedHelloTeachesTheRoute) {
  Sink sink;
  auto receiver = StartReceiver(&sink);  // the receiver's own side channel
  ASSERT_NE(receiver, nullptr);
  // The producer's side channel, whose route listener the test plays.
  SideChannelServer::Options o;
  o.host = "127.0.0.1";
  o.token = kToken;
  auto producer = SideChannelServer::Start(o);
  ASSERT_TRUE(producer.ok());
  absl::Notification heard;
  std::string heard_key, heard_host;
  int heard_port = 0;
  (*producer)->SetRouteListener([&](const std::string& key, const std::string& host, int port) {
    heard_key = key;
    heard_host = host;
    heard_port = port;
    heard.Notify();
  });
  (*producer)->SetKeyedSource(
      [](int64_t, const std::string&, CancellationManager*, SideChannelServer::KeyedDone done) {
        grpc::ByteBuffer reply;
        EncodeRecvTensorResponse(Tensor::Scalar<float>(4.0f), false, 0, &reply);
        done(absl::OkStatus(), std::move(reply), Tensor());
      });
  SideChannelClient client;
  client.SetOwnPort(receiver->port());
  Tensor tensor;
  bool is_dead = false;
  absl::Notification done;
  SideChannelClient::KeyedArgs a;
  a.host = "127.0.0.1";
  a.port = (*producer)->port();
  a.step_id = 3;
  a.key = "edge;key";
  a.token = kToken;
  a.task = "/job:worker/replica:0/task:0";
  a.tensor = &tensor;
  a.is_dead = &is_dead;
  ASSERT_TRUE(client.TryRecvAsync(a, [&](const absl::Status& s, bool) {
    EXPECT_TRUE(s.ok()) << s;
    done.Notify();
  }));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_TRUE(heard.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(heard_key, "edge;key");
  EXPECT_EQ(heard_host, "127.0.0.1");
  EXPECT_EQ(heard_port, receiver->port());
  EXPECT_EQ(tensor.scalar<float>(), 4.0f);
}

TEST(SideChannelPushTest, PushWithoutAGoodHelloReachesNoSink) {
  Sink sink;
  auto receiver = StartReceiver(&sink);
  ASSERT_NE(receiver, nullptr);
  // No hello at all: the connection closes with nothing read into a sink.
  const int fd = test::Dial(receiver->port());
  grpc::ByteBuffer payload;
  EncodeRecvTensorResponse(Tensor::Scalar<float>(1.0f), false, 0, &payload);
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(payload.Dump(&slices).ok());
  std::string body;
  for (const grpc::Slice& s : slices)
    body.append(reinterpret_cast<const char*>(s.begin()), s.size());
  std::array<char, kSideChannelRequestBytes> head;
  EncodeSideChannelPush(1, 3, static_cast<uint32_t>(body.size()), &head);
  std::string frame(head.data(), head.size());
  frame += "k;x" + body;
  ASSERT_EQ(send(fd, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
  bool closed = false;
  test::ReadUntilClosed(fd, &closed);
  close(fd);
  EXPECT_TRUE(closed);
  // The wrong token: refused at the hello.
  SideChannelPusher::Options wrong;
  wrong.token = "not-the-token";
  SideChannelPusher stranger(wrong);
  stranger.Learn(kReceiver, "127.0.0.1", receiver->port());
  PushSoon(&stranger, 2, "k;y", Tensor::Scalar<float>(2.0f));
  // An oversized push head is not our protocol.
  EncodeSideChannelPush(1, 3, kSideChannelMaxPush + 1, &head);
  SideChannelRequestHead decoded;
  EXPECT_FALSE(DecodeSideChannelRequestHead(head, &decoded));
  // What a member pushes after all that still lands, alone.
  SideChannelPusher member(PushOptions());
  member.Learn(kReceiver, "127.0.0.1", receiver->port());
  ASSERT_TRUE(PushSoon(&member, 3, "k;z", Tensor::Scalar<float>(3.0f)));
  ASSERT_TRUE(sink.WaitFor(1));
  absl::SleepFor(absl::Milliseconds(100));
  std::vector<Sink::Push> got = sink.pushes();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].key, "k;z");
}

TEST(SideChannelPushTest, ReceiverThatComesBackOnANewPortIsFoundOnceTold) {
  Sink first_sink;
  auto first = StartReceiver(&first_sink);
  ASSERT_NE(first, nullptr);
  SideChannelPusher pusher(PushOptions());
  pusher.Learn(kReceiver, "127.0.0.1", first->port());
  ASSERT_TRUE(PushSoon(&pusher, 1, "k;a", Tensor::Scalar<float>(1.0f)));
  ASSERT_TRUE(first_sink.WaitFor(1));
  first->Stop();
  // The receiver is gone: pushes are declined (or lost, which a push may
  // be), never waited on.
  for (int i = 0; i < 5; ++i)
    pusher.TryPush(kReceiver, 2, "k;b", Tensor::Scalar<float>(2.0f), false);
  Sink second_sink;
  auto second = StartReceiver(&second_sink);
  ASSERT_NE(second, nullptr);
  pusher.Learn(kReceiver, "127.0.0.1", second->port());
  ASSERT_TRUE(PushSoon(&pusher, 3, "k;c", Tensor::Scalar<float>(3.0f)));
  ASSERT_TRUE(second_sink.WaitFor(1));
  EXPECT_EQ(second_sink.pushes()[0].key, "k;c");
}

}  // namespace
}  // namespace distflow
