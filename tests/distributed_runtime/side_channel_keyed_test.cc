// Keyed receives on the tensor side channel in one process: a real server
// whose keyed source the test plays, against the real client and against
// raw sockets. The reply comes when the source answers; a receiver's
// deadline, its cancellation and its hang-up all cancel the source's wait;
// no hello, a wrong token or no source are refused; the client starts a
// keyed receive only when a thread is free for it, and says when nothing
// could be reached (so gRPC may ask instead).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/side_channel_client.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loopback_socket.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kTask[] = "/job:worker/replica:0/task:3";
constexpr char kToken[] = "keyed-test-token";

grpc::ByteBuffer BufferOf(const std::string& bytes) {
  grpc::Slice s(bytes);
  return grpc::ByteBuffer(&s, 1);
}

// A float tensor of `n` elements holding 0, 1, 2, ...
Tensor Pattern(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = static_cast<float>(i);
  return t;
}

// The keyed source: holds each request until the test answers it.
class Source {
 public:
  struct Request {
    int64_t step_id;
    std::string key;
    CancellationManager* cm;
    SideChannelServer::KeyedDone done;
  };

  SideChannelServer::KeyedSource Fn() {
    return [this](int64_t step_id, const std::string& key, CancellationManager* cm,
                  SideChannelServer::KeyedDone done) {
      auto r = std::make_shared<Request>(Request{step_id, key, cm, std::move(done)});
      // A cancelled wait answers Cancelled, as a rendezvous does.
      const CancellationToken token = cm->get_cancellation_token();
      std::weak_ptr<Request> weak = r;
      if (!cm->RegisterCallback(token, [this, weak] {
            if (auto req = weak.lock()) {
              cancelled_.fetch_add(1);
              Answer(req, absl::CancelledError("rendezvous wait cancelled"));
            }
          })) {
        r->done(absl::CancelledError("cancelled already"), grpc::ByteBuffer(), Tensor());
        return;
      }
      absl::MutexLock lock(&mu_);
      pending_.push_back(r);
    };
  }

  // Waits (up to 20 s) for the next request.
  std::shared_ptr<Request> Next() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(this, &Source::HasPending), absl::Seconds(20));
    if (pending_.empty()) return nullptr;
    std::shared_ptr<Request> r = pending_.front();
    pending_.erase(pending_.begin());
    return r;
  }

  // Answers `r` once (later answers are dropped) as the worker does: a
  // large tensor's bytes follow the response.
  void Answer(const std::shared_ptr<Request>& r, const absl::Status& s,
              const Tensor& value = Tensor()) {
    grpc::ByteBuffer reply;
    Tensor follows;
    if (s.ok() && value.TotalBytes() >= kSideChannelFollowBytes) {
      SideChannelOffer offer;
      offer.follows = true;
      offer.payload_bytes = value.TotalBytes();
      EncodeRecvTensorOffer(value, offer, 0, &reply);
      follows = value;
    } else if (s.ok()) {
      EncodeRecvTensorResponse(value, false, 0, &reply);
    }
    Send(r, s, std::move(reply), follows);
  }
  // Answers `r` with an offer of `value` and `missing` bytes more than
  // its own, which never come.
  void AnswerShort(const std::shared_ptr<Request>& r, const Tensor& value, uint64_t missing) {
    grpc::ByteBuffer reply;
    SideChannelOffer offer;
    offer.follows = true;
    offer.payload_bytes = value.TotalBytes() + missing;
    Tensor claimed(value.dtype(), TensorShape({value.NumElements() +
                                               static_cast<int64_t>(missing / sizeof(float))}));
    EncodeRecvTensorOffer(claimed, offer, 0, &reply);
    Send(r, absl::OkStatus(), std::move(reply), value);
  }
  // Answers `r` with these bytes as the response.
  void AnswerRaw(const std::shared_ptr<Request>& r, const std::string& bytes) {
    Send(r, absl::OkStatus(), BufferOf(bytes), Tensor());
  }

  int cancelled() const { return cancelled_.load(); }
  // Waits up to 5 s for a first cancellation (the producer looks for a
  // hang-up every 100 ms); the count then.
  int WaitForCancelled() const {
    for (int i = 0; i < 500 && cancelled() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
    return cancelled();
  }

 private:
  void Send(const std::shared_ptr<Request>& r, const absl::Status& s, grpc::ByteBuffer reply,
            const Tensor& follows) {
    SideChannelServer::KeyedDone done;
    {
      absl::MutexLock lock(&mu_);
      if (r->done == nullptr) return;
      done = std::move(r->done);
      r->done = nullptr;
    }
    done(s, std::move(reply), follows);
  }

  bool HasPending() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !pending_.empty(); }

  absl::Mutex mu_;
  std::vector<std::shared_ptr<Request>> pending_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> cancelled_{0};
};

// A keyed receive's outcome, waited for.
struct Outcome {
  absl::Notification done;
  absl::Status status;
  Tensor tensor;
  bool is_dead = false;
  bool sent = false;

  // `a`, landing here.
  SideChannelClient::KeyedArgs Into(SideChannelClient::KeyedArgs a) {
    a.tensor = &tensor;
    a.is_dead = &is_dead;
    return a;
  }
  SideChannelClient::KeyedDone Fn() {
    return [this](const absl::Status& s, bool was_sent) {
      status = s;
      sent = was_sent;
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(20)); }
};

class KeyedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SideChannelServer::Options o;
    o.host = "127.0.0.1";
    o.token = kToken;
    auto s = SideChannelServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    server_->SetKeyedSource(source_.Fn());
  }

  SideChannelClient::KeyedArgs Args(const std::string& key, int64_t step = 5) {
    SideChannelClient::KeyedArgs a;
    a.host = "127.0.0.1";
    a.port = server_->port();
    a.step_id = step;
    a.key = key;
    a.token = kToken;
    a.task = kTask;
    return a;
  }

  void ExpectCancelFreesTheWait(SideChannelClient* client);
  void ExpectSourceErrorReachesTheReceiver(SideChannelClient* client);
  void StartAWatchedWait(SideChannelClient* client, Outcome* out,
                         std::shared_ptr<Source::Request>* request);
  void Warm(SideChannelClient* client);
  void ReceiveUntilTheDeadline(SideChannelClient* client, Outcome* out);
  // A keyed receive of `key` through `client` that the source answers
  // with `value`, waited for.
  void ReceiveAnswered(SideChannelClient* client, const std::string& key, const Tensor& value,
                       Outcome* out) {
    ASSERT_TRUE(client->TryRecvAsync(out->Into(Args(key)), out->Fn()));
    std::shared_ptr<Source::Request> r = source_.Next();
    ASSERT_NE(r, nullptr);
    source_.Answer(r, absl::OkStatus(), value);
    ASSERT_TRUE(out->Wait());
  }

  Source source_;
  std::unique_ptr<SideChannelServer> server_;
};

TEST_F(KeyedTest, ReplyComesWhenTheSourceAnswers) {
  SideChannelClient client;
  for (int i = 0; i < 3; ++i) {
    Outcome out;
    ASSERT_TRUE(client.TryRecvAsync(out.Into(Args("edge;" + std::to_string(i), 40 + i)), out.Fn()));
    std::shared_ptr<Source::Request> r = source_.Next();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->step_id, 40 + i);
    EXPECT_EQ(r->key, "edge;" + std::to_string(i));
    EXPECT_FALSE(out.done.HasBeenNotified());  // waits for the tensor
    // 1 000 bytes in the response; 71 000 and 141 000 after it.
    const Tensor sent = Pattern(250 + 17500 * i);
    source_.Answer(r, absl::OkStatus(), sent);
    ASSERT_TRUE(out.Wait());
    ASSERT_TRUE(out.status.ok()) << out.status;
    EXPECT_TRUE(out.sent);
    EXPECT_FALSE(out.is_dead);
    ASSERT_EQ(out.tensor.NumElements(), sent.NumElements());
    EXPECT_EQ(std::memcmp(out.tensor.raw_data(), sent.raw_data(), sent.TotalBytes()), 0);
  }
  EXPECT_EQ(server_->keyed_served(), 3);
  // One connection carried all three, greeted once.
  EXPECT_EQ(client.IdleConnections("127.0.0.1", server_->port()), 1);
}

// A keyed receive through `client` whose source fails ends with the
// source's error, naming the producer's task.
void KeyedTest::ExpectSourceErrorReachesTheReceiver(SideChannelClient* client) {
  Outcome out;
  ASSERT_TRUE(client->TryRecvAsync(out.Into(Args("edge")), out.Fn()));
  std::shared_ptr<Source::Request> r = source_.Next();
  ASSERT_NE(r, nullptr);
  source_.Answer(r, absl::AbortedError("step 5 was aborted"));
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsAborted(out.status)) << out.status;
  EXPECT_THAT(out.status.message(), HasSubstr("step 5 was aborted"));
  EXPECT_THAT(out.status.message(), HasSubstr(kTask));
}

TEST_F(KeyedTest, SourceErrorReachesTheReceiver) {
  SideChannelClient client;
  ExpectSourceErrorReachesTheReceiver(&client);
}

TEST_F(KeyedTest, ReplyThatIsNoRecvTensorResponseIsDataLoss) {
  SideChannelClient client;
  Outcome out;
  ASSERT_TRUE(client.TryRecvAsync(out.Into(Args("edge")), out.Fn()));
  std::shared_ptr<Source::Request> r = source_.Next();
  ASSERT_NE(r, nullptr);
  source_.AnswerRaw(r, std::string(64, '\xff'));
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsDataLoss(out.status)) << out.status;
  EXPECT_THAT(out.status.message(), HasSubstr(kTask));
}

// A keyed receive through `client`, 300 ms from its deadline, of a tensor
// that never comes: it ends DeadlineExceeded.
void KeyedTest::ReceiveUntilTheDeadline(SideChannelClient* client, Outcome* out) {
  SideChannelClient::KeyedArgs a = Args("never");
  a.deadline = absl::Now() + absl::Milliseconds(300);
  ASSERT_TRUE(client->TryRecvAsync(out->Into(a), out->Fn()));
  ASSERT_TRUE(out->Wait());
  EXPECT_TRUE(absl::IsDeadlineExceeded(out->status)) << out->status;
}

TEST_F(KeyedTest, DeadlineCancelsTheProducersWait) {
  SideChannelClient client;
  Outcome out;
  ASSERT_NO_FATAL_FAILURE(ReceiveUntilTheDeadline(&client, &out));
  // The producer gave up at the same time and freed its wait.
  EXPECT_EQ(source_.WaitForCancelled(), 1);
}

// Cancels a keyed receive through `client` while its producer waits; the
// receiver ends Cancelled and the producer's wait is cancelled after it.
void KeyedTest::ExpectCancelFreesTheWait(SideChannelClient* client) {
  Outcome out;
  CallOptions opts;
  SideChannelClient::KeyedArgs a = Args("never");
  a.opts = &opts;
  ASSERT_TRUE(client->TryRecvAsync(out.Into(a), out.Fn()));
  std::shared_ptr<Source::Request> r = source_.Next();
  ASSERT_NE(r, nullptr);
  opts.StartCancel();
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsCancelled(out.status)) << out.status;
  EXPECT_EQ(source_.WaitForCancelled(), 1);  // it saw the hang-up
}

TEST_F(KeyedTest, CancelledReceiverFreesTheProducersWait) {
  SideChannelClient client;
  ExpectCancelFreesTheWait(&client);
}

TEST_F(KeyedTest, CancelOnAPooledConnectionFreesTheProducersWait) {
  SideChannelClient client;
  // A first receive leaves a connection pooled: the next request leaves
  // from the caller's thread.
  ASSERT_NO_FATAL_FAILURE(Warm(&client));
  ExpectCancelFreesTheWait(&client);
}

// Leaves one connection of `client` pooled, so that its next keyed
// receive waits on the watcher.
void KeyedTest::Warm(SideChannelClient* client) {
  Outcome warm;
  ASSERT_NO_FATAL_FAILURE(ReceiveAnswered(client, "warm", Pattern(3), &warm));
  ASSERT_TRUE(warm.status.ok()) << warm.status;
  ASSERT_EQ(client->IdleConnections("127.0.0.1", server_->port()), 1);
}

TEST_F(KeyedTest, WatchedReceivesTakeRepliesOfEverySizeAndErrors) {
  SideChannelClient client;
  ASSERT_NO_FATAL_FAILURE(Warm(&client));
  const int64_t watched_before = client.keyed_watched();
  // In the reply, just past it, and far past what one read takes.
  for (int elements : {1, 20000, 1 << 20}) {
    Outcome out;
    ASSERT_TRUE(client.TryRecvAsync(out.Into(Args("edge")), out.Fn()));
    std::shared_ptr<Source::Request> r = source_.Next();
    ASSERT_NE(r, nullptr);
    const Tensor sent = Pattern(elements);
    source_.Answer(r, absl::OkStatus(), sent);
    ASSERT_TRUE(out.Wait());
    ASSERT_TRUE(out.status.ok()) << out.status;
    ASSERT_EQ(out.tensor.NumElements(), elements);
    EXPECT_EQ(std::memcmp(out.tensor.raw_data(), sent.raw_data(), sent.TotalBytes()), 0);
  }
  ExpectSourceErrorReachesTheReceiver(&client);
  EXPECT_EQ(client.keyed_watched() - watched_before, 4);
}

TEST_F(KeyedTest, WatchedReceiveWhoseTensorStopsComingIsUnavailable) {
  SideChannelClient::Options o;
  o.stall_timeout = absl::Milliseconds(300);
  SideChannelClient client(o);
  ASSERT_NO_FATAL_FAILURE(Warm(&client));
  Outcome out;
  ASSERT_TRUE(client.TryRecvAsync(out.Into(Args("edge")), out.Fn()));
  std::shared_ptr<Source::Request> r = source_.Next();
  ASSERT_NE(r, nullptr);
  source_.AnswerShort(r, Pattern(1 << 16), 4096);  // 256 KiB of 260
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsUnavailable(out.status)) << out.status;
  EXPECT_THAT(out.status.message(), HasSubstr("stalled"));
  EXPECT_THAT(out.status.message(), HasSubstr("262144 of 266240 bytes"));
  EXPECT_THAT(out.status.message(), HasSubstr(kTask));
  EXPECT_FALSE(out.tensor.IsInitialized());
  // That connection is not pooled again; the next receive works.
  EXPECT_EQ(client.IdleConnections("127.0.0.1", server_->port()), 0);
  Outcome next;
  ASSERT_NO_FATAL_FAILURE(ReceiveAnswered(&client, "next", Pattern(5), &next));
  EXPECT_TRUE(next.status.ok()) << next.status;
}

TEST_F(KeyedTest, WatchedReceiveEndsAtItsDeadline) {
  SideChannelClient client;
  ASSERT_NO_FATAL_FAILURE(Warm(&client));
  Outcome out;
  ASSERT_NO_FATAL_FAILURE(ReceiveUntilTheDeadline(&client, &out));
  EXPECT_THAT(out.status.message(), HasSubstr(kTask));
  EXPECT_EQ(client.keyed_watched(), 1);
  EXPECT_EQ(source_.WaitForCancelled(), 1);
}

// Starts a keyed receive through `client` that waits on the watcher for a
// tensor that never comes; holds its request in *request (to be cancelled).
void KeyedTest::StartAWatchedWait(SideChannelClient* client, Outcome* out,
                                  std::shared_ptr<Source::Request>* request) {
  ASSERT_NO_FATAL_FAILURE(Warm(client));
  ASSERT_TRUE(client->TryRecvAsync(out->Into(Args("never")), out->Fn()));
  *request = source_.Next();
  ASSERT_NE(*request, nullptr);
  EXPECT_EQ(client->keyed_watched(), 1);
}

TEST_F(KeyedTest, ShutdownEndsAWatchedReceive) {
  SideChannelClient client;
  Outcome out;
  std::shared_ptr<Source::Request> r;
  ASSERT_NO_FATAL_FAILURE(StartAWatchedWait(&client, &out, &r));
  client.Shutdown();
  ASSERT_TRUE(out.done.HasBeenNotified());  // ended within Shutdown
  EXPECT_TRUE(absl::IsCancelled(out.status)) << out.status;
  EXPECT_EQ(source_.WaitForCancelled(), 1);
  Outcome later;
  EXPECT_FALSE(client.TryRecvAsync(later.Into(Args("later")), later.Fn()));
}

TEST_F(KeyedTest, WatchedReceiveWhoseProducerStopsIsUnavailable) {
  SideChannelClient client;
  Outcome out;
  std::shared_ptr<Source::Request> r;
  ASSERT_NO_FATAL_FAILURE(StartAWatchedWait(&client, &out, &r));
  server_->Stop();
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsUnavailable(out.status)) << out.status;
  EXPECT_THAT(out.status.message(), HasSubstr(kTask));
  // Nothing answered and nothing listens: gRPC may ask.
  EXPECT_FALSE(out.sent);
  EXPECT_EQ(source_.WaitForCancelled(), 1);
}

TEST_F(KeyedTest, WrongTokenIsUnauthenticated) {
  SideChannelClient client;
  Outcome out;
  SideChannelClient::KeyedArgs a = Args("edge");
  a.token = "not-the-token";
  ASSERT_TRUE(client.TryRecvAsync(out.Into(a), out.Fn()));
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsUnauthenticated(out.status)) << out.status;
  EXPECT_EQ(server_->keyed_served(), 0);
}

// The reply header the server sends on `fd` and the message after it, then
// true iff it closes the connection (all within 20 s).
bool ReadErrorAndClose(int fd, SideChannelReplyHeader* header, std::string* message) {
  bool closed = false;
  const std::string got = test::ReadUntilClosed(fd, &closed);
  if (!closed) return false;
  if (got.size() < kSideChannelReplyHeaderBytes) return false;
  std::array<char, kSideChannelReplyHeaderBytes> head;
  std::memcpy(head.data(), got.data(), head.size());
  if (!DecodeSideChannelReplyHeader(head, header)) return false;
  *message = got.substr(head.size());
  return true;
}

TEST_F(KeyedTest, KeyedRequestWithoutHelloIsRefused) {
  const int fd = test::Dial(server_->port());
  const std::string key = "edge";
  std::array<char, kSideChannelRequestBytes> head;
  EncodeSideChannelKeyed(5, static_cast<uint32_t>(key.size()), 0, &head);
  std::string request(head.data(), head.size());
  request += key;
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  SideChannelReplyHeader reply;
  std::string message;
  ASSERT_TRUE(ReadErrorAndClose(fd, &reply, &message));
  close(fd);
  EXPECT_EQ(reply.code, absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(message, HasSubstr("hello"));
  EXPECT_EQ(server_->keyed_served(), 0);
}

TEST_F(KeyedTest, OverlongKeyClosesTheConnection) {
  const int fd = test::Dial(server_->port());
  std::array<char, kSideChannelRequestBytes> head;
  EncodeSideChannelKeyed(5, kSideChannelMaxKey + 1, 0, &head);
  SideChannelRequestHead decoded;
  EXPECT_FALSE(DecodeSideChannelRequestHead(head, &decoded));
  send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  SideChannelReplyHeader reply;
  std::string message;
  EXPECT_FALSE(ReadErrorAndClose(fd, &reply, &message));  // closed with nothing sent
  close(fd);
}

// A producer the test writes by hand: it answers each request it reads
// with the next of `replies`, byte for byte, pausing `pause` (or until the
// test ends) before the last reply's second half.
class RawProducer {
 public:
  RawProducer(std::vector<std::string> replies, absl::Duration pause)
      : replies_(std::move(replies)), pause_(pause) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = test::LoopbackAddress(0);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 4), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RawProducer() {
    done_.Notify();
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }

  // A whole keyed reply carrying `t`.
  static std::string Reply(const Tensor& t) {
    grpc::ByteBuffer response;
    EncodeRecvTensorResponse(t, false, 0, &response);
    std::vector<grpc::Slice> slices;
    EXPECT_TRUE(response.Dump(&slices).ok());
    std::string body;
    for (const grpc::Slice& s : slices)
      body.append(reinterpret_cast<const char*>(s.begin()), s.size());
    SideChannelReplyHeader header;
    header.payload_bytes = body.size();
    std::array<char, kSideChannelReplyHeaderBytes> head;
    EncodeSideChannelReplyHeader(header, &head);
    return std::string(head.data(), head.size()) + body;
  }

 private:
  void Serve() {
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    for (size_t i = 0; i < replies_.size(); ++i) {
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, 20000) != 1) break;
      char request[4096];
      if (recv(fd, request, sizeof(request), 0) <= 0) break;  // one request, whole
      const std::string& reply = replies_[i];
      const size_t half = reply.size() / 2;
      send(fd, reply.data(), half, MSG_NOSIGNAL);
      if (i + 1 == replies_.size() && done_.WaitForNotificationWithTimeout(pause_)) break;
      send(fd, reply.data() + half, reply.size() - half, MSG_NOSIGNAL);
    }
    done_.WaitForNotificationWithTimeout(absl::Seconds(30));
    close(fd);
  }

  std::vector<std::string> replies_;
  const absl::Duration pause_;
  int listen_fd_ = -1;
  int port_ = 0;
  absl::Notification done_;
  std::thread thread_;
};

// Keyed receives from a RawProducer, the first on a new connection and
// the rest on it pooled; the outcome of the last.
void ReceiveFromRaw(const RawProducer& producer, int receives, SideChannelClient* client,
                    Outcome* last) {
  SideChannelClient::KeyedArgs a;
  a.host = "127.0.0.1";
  a.port = producer.port();
  a.key = "edge";
  a.token = kToken;
  a.task = kTask;
  for (int i = 0; i + 1 < receives; ++i) {
    Outcome out;
    ASSERT_TRUE(client->TryRecvAsync(out.Into(a), out.Fn()));
    ASSERT_TRUE(out.Wait());
    ASSERT_TRUE(out.status.ok()) << out.status;
  }
  ASSERT_TRUE(client->TryRecvAsync(last->Into(a), last->Fn()));
  ASSERT_TRUE(last->Wait());
}

TEST(KeyedClientTest, WatchedReplyThatComesInPiecesIsTakenWhole) {
  const Tensor sent = Pattern(8000);  // 32 000 bytes in the reply itself
  RawProducer producer({RawProducer::Reply(Pattern(2)), RawProducer::Reply(sent)},
                       absl::Milliseconds(50));
  SideChannelClient client;
  Outcome out;
  ReceiveFromRaw(producer, 2, &client, &out);
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(client.keyed_watched(), 1);
  ASSERT_EQ(out.tensor.NumElements(), sent.NumElements());
  EXPECT_EQ(std::memcmp(out.tensor.raw_data(), sent.raw_data(), sent.TotalBytes()), 0);
}

TEST(KeyedClientTest, WatchedReplyThatStopsHalfwayIsUnavailable) {
  SideChannelClient::Options o;
  o.stall_timeout = absl::Milliseconds(300);
  SideChannelClient client(o);
  // The second reply's second half would come long after the stall bound.
  RawProducer producer({RawProducer::Reply(Pattern(2)), RawProducer::Reply(Pattern(8000))},
                       absl::Seconds(20));
  Outcome out;
  ReceiveFromRaw(producer, 2, &client, &out);
  EXPECT_TRUE(absl::IsUnavailable(out.status)) << out.status;
  EXPECT_THAT(out.status.message(), HasSubstr("stalled"));
  EXPECT_THAT(out.status.message(), HasSubstr("reading a keyed reply"));
  EXPECT_THAT(out.status.message(), HasSubstr(kTask));
  EXPECT_EQ(client.IdleConnections("127.0.0.1", producer.port()), 0);
}

TEST(KeyedClientTest, NothingListeningMeansNotSent) {
  const int port = test::FreePort();  // nobody listens there
  SideChannelClient client;
  SideChannelClient::KeyedArgs a;
  a.host = "127.0.0.1";
  a.port = port;
  a.key = "edge";
  a.task = kTask;
  Outcome out;
  ASSERT_TRUE(client.TryRecvAsync(out.Into(a), out.Fn()));
  ASSERT_TRUE(out.Wait());
  EXPECT_TRUE(absl::IsUnavailable(out.status)) << out.status;
  EXPECT_FALSE(out.sent);  // gRPC may ask instead
}

TEST_F(KeyedTest, ProducerWithNoSlotLeftMeansNotSent) {
  SideChannelServer::Options o;
  o.host = "127.0.0.1";
  o.token = kToken;
  o.max_connections = 1;
  auto full = SideChannelServer::Start(o);
  ASSERT_TRUE(full.ok()) << full.status();
  Source source;
  (*full)->SetKeyedSource(source.Fn());
  SideChannelClient::KeyedArgs a = Args("holds the slot");
  a.port = (*full)->port();
  // One receiver's connection, authenticated, waits in the only slot.
  SideChannelClient first_client;
  Outcome first;
  ASSERT_TRUE(first_client.TryRecvAsync(first.Into(a), first.Fn()));
  std::shared_ptr<Source::Request> r = source.Next();
  ASSERT_NE(r, nullptr);
  // Another's is closed on accept, before it could ask: gRPC may.
  SideChannelClient second_client;
  Outcome second;
  a.key = "no room";
  ASSERT_TRUE(second_client.TryRecvAsync(second.Into(a), second.Fn()));
  ASSERT_TRUE(second.Wait());
  EXPECT_TRUE(absl::IsUnavailable(second.status)) << second.status;
  EXPECT_FALSE(second.sent);
  source.Answer(r, absl::OkStatus(), Pattern(1));
  ASSERT_TRUE(first.Wait());
  EXPECT_TRUE(first.status.ok()) << first.status;
}

TEST_F(KeyedTest, NoFreeThreadMeansNotStarted) {
  SideChannelClient::Options o;
  o.max_keyed = 1;
  SideChannelClient client(o);
  Outcome first;
  ASSERT_TRUE(client.TryRecvAsync(first.Into(Args("first")), first.Fn()));
  std::shared_ptr<Source::Request> r = source_.Next();
  ASSERT_NE(r, nullptr);
  Outcome second;
  EXPECT_FALSE(client.TryRecvAsync(second.Into(Args("second")), second.Fn()));
  EXPECT_FALSE(second.done.HasBeenNotified());
  source_.Answer(r, absl::OkStatus(), Pattern(1));
  ASSERT_TRUE(first.Wait());
  EXPECT_TRUE(first.status.ok()) << first.status;
  // Free again.
  Outcome third;
  ASSERT_NO_FATAL_FAILURE(ReceiveAnswered(&client, "third", Pattern(2), &third));
  EXPECT_EQ(third.tensor.NumElements(), 2);
}

TEST_F(KeyedTest, KeyedReceivesLeaveTheFetchersFree) {
  SideChannelClient::Options o;
  o.fetch_threads = 1;
  o.max_keyed = 2;
  SideChannelClient client(o);
  // Two keyed receives wait for producers, holding a thread each.
  Outcome first, second;
  ASSERT_TRUE(client.TryRecvAsync(first.Into(Args("first")), first.Fn()));
  ASSERT_TRUE(client.TryRecvAsync(second.Into(Args("second")), second.Fn()));
  std::shared_ptr<Source::Request> r1 = source_.Next();
  std::shared_ptr<Source::Request> r2 = source_.Next();
  ASSERT_NE(r1, nullptr);
  ASSERT_NE(r2, nullptr);
  // A ticket's fetch still gets a thread of its own at once.
  const Tensor sent = Pattern(1 << 18);  // 1 MiB: offered
  std::optional<SideChannelTicket> ticket = server_->Offer(sent);
  ASSERT_TRUE(ticket.has_value());
  Tensor got(DT_FLOAT, sent.shape());
  absl::Notification fetched;
  absl::Status fetch_status;
  SideChannelClient::FetchArgs f;
  f.host = "127.0.0.1";
  f.port = server_->port();
  f.ticket = *ticket;
  f.dst = got.raw_data();
  f.bytes = got.TotalBytes();
  f.task = kTask;
  client.FetchAsync(f, [&](const absl::Status& s) {
    fetch_status = s;
    fetched.Notify();
  });
  ASSERT_TRUE(fetched.WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_TRUE(fetch_status.ok()) << fetch_status;
  EXPECT_EQ(std::memcmp(got.raw_data(), sent.raw_data(), sent.TotalBytes()), 0);
  source_.Answer(r1, absl::OkStatus(), Pattern(1));
  source_.Answer(r2, absl::OkStatus(), Pattern(1));
  ASSERT_TRUE(first.Wait());
  ASSERT_TRUE(second.Wait());
}

TEST_F(KeyedTest, StopEndsAWaitingReceive) {
  SideChannelClient client;
  Outcome out;
  ASSERT_TRUE(client.TryRecvAsync(out.Into(Args("never")), out.Fn()));
  std::shared_ptr<Source::Request> r = source_.Next();
  ASSERT_NE(r, nullptr);
  server_->Stop();
  ASSERT_TRUE(out.Wait());
  // Closed with no reply: gRPC may ask (a stopping server refuses that too).
  EXPECT_TRUE(absl::IsUnavailable(out.status)) << out.status;
  EXPECT_EQ(source_.WaitForCancelled(), 1);
}

}  // namespace
}  // namespace distflow
