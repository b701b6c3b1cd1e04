// The tensor side channel in one process: the ticket table, the wire
// format, the server against a real client and against raw sockets that
// misbehave, the client against a fake producer that stalls, lies or dies
// mid-transfer, the client's bounded fetcher threads, and the RecvTensor
// reply that carries an offer.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/side_channel_client.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/rpc/side_channel_tickets.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/worker.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loopback_socket.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kTask[] = "/job:worker/replica:0/task:7";

// A float tensor of `n` elements holding 0, 1, 2, ... (exact below 2^24).
Tensor Pattern(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  float* p = t.base<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
  return t;
}

// ---------------------------------------------------------------- tickets

TEST(SideChannelTicketsTest, RedeemedOnceOnly) {
  SideChannelTickets table({});
  const Tensor t = Pattern(1000);
  std::optional<SideChannelTicket> ticket = table.Issue(t);
  ASSERT_TRUE(ticket.has_value());
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.bytes(), 4000u);
  absl::StatusOr<Tensor> got = table.Redeem(*ticket);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->SharesBufferWith(t));  // a reference, not a copy
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.bytes(), 0u);
  got = table.Redeem(*ticket);
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
}

TEST(SideChannelTicketsTest, InventedTicketIsNotFound) {
  SideChannelTickets table({});
  std::optional<SideChannelTicket> real = table.Issue(Pattern(10));
  ASSERT_TRUE(real.has_value());
  SideChannelTicket invented = *real;
  invented[15] ^= 1;
  EXPECT_TRUE(absl::IsNotFound(table.Redeem(invented).status()));
  EXPECT_TRUE(absl::IsNotFound(table.Redeem(SideChannelTicket{}).status()));
  EXPECT_TRUE(table.Redeem(*real).ok());
}

TEST(SideChannelTicketsTest, TicketsAreRandom) {
  SideChannelTickets table({});
  const Tensor t = Pattern(1);
  std::optional<SideChannelTicket> a = table.Issue(t);
  std::optional<SideChannelTicket> b = table.Issue(t);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(*a, *b);
  EXPECT_NE(*a, SideChannelTicket{});
}

TEST(SideChannelTicketsTest, LapseAfterLifetime) {
  SideChannelTickets::Limits limits;
  limits.lifetime = absl::Seconds(10);
  SideChannelTickets table(limits);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  std::optional<SideChannelTicket> early = table.Issue(Pattern(10), t0);
  std::optional<SideChannelTicket> late = table.Issue(Pattern(10), t0 + absl::Seconds(5));
  ASSERT_TRUE(early.has_value() && late.has_value());
  table.Expire(t0 + absl::Seconds(11));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.bytes(), 40u);
  EXPECT_TRUE(absl::IsNotFound(table.Redeem(*early, t0 + absl::Seconds(11)).status()));
  EXPECT_TRUE(absl::IsNotFound(table.Redeem(*late, t0 + absl::Seconds(16)).status()));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.bytes(), 0u);
}

TEST(SideChannelTicketsTest, BoundedInCountAndBytes) {
  SideChannelTickets::Limits limits;
  limits.max_tickets = 2;
  limits.max_bytes = 1000;
  SideChannelTickets table(limits);
  EXPECT_FALSE(table.Issue(Pattern(251)).has_value());  // 1004 bytes
  std::optional<SideChannelTicket> a = table.Issue(Pattern(200));
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(table.Issue(Pattern(51)).has_value());  // 800 + 204 bytes
  ASSERT_TRUE(table.Issue(Pattern(50)).has_value());
  EXPECT_FALSE(table.Issue(Pattern(1)).has_value());  // a third ticket
  ASSERT_TRUE(table.Redeem(*a).ok());
  EXPECT_TRUE(table.Issue(Pattern(1)).has_value());
}

TEST(SideChannelTicketsTest, ManyRedeemedTicketsKeepTheTableSmall) {
  SideChannelTickets::Limits limits;
  limits.max_tickets = 4;
  SideChannelTickets table(limits);
  const Tensor t = Pattern(1);
  for (int i = 0; i < 10000; ++i) {
    std::optional<SideChannelTicket> ticket = table.Issue(t);
    ASSERT_TRUE(ticket.has_value()) << i;
    ASSERT_TRUE(table.Redeem(*ticket).ok());
  }
  EXPECT_EQ(table.size(), 0u);
}

// ------------------------------------------------------------------- wire

TEST(SideChannelWireTest, RequestAndReplyRoundTrip) {
  absl::StatusOr<SideChannelTicket> ticket = NewSideChannelTicket();
  ASSERT_TRUE(ticket.ok());
  std::array<char, kSideChannelRequestBytes> req;
  EncodeSideChannelRequest(*ticket, &req);
  SideChannelTicket back{};
  ASSERT_TRUE(DecodeSideChannelRequest(req, &back));
  EXPECT_EQ(back, *ticket);
  req[0] = 'x';
  EXPECT_FALSE(DecodeSideChannelRequest(req, &back));

  SideChannelReplyHeader h;
  h.ticket = *ticket;
  h.code = absl::StatusCode::kNotFound;
  h.message_bytes = 12;
  h.payload_bytes = (uint64_t{1} << 40) + 3;
  std::array<char, kSideChannelReplyHeaderBytes> head;
  EncodeSideChannelReplyHeader(h, &head);
  SideChannelReplyHeader got;
  ASSERT_TRUE(DecodeSideChannelReplyHeader(head, &got));
  EXPECT_EQ(got.ticket, h.ticket);
  EXPECT_EQ(got.code, h.code);
  EXPECT_EQ(got.message_bytes, 12u);
  EXPECT_EQ(got.payload_bytes, h.payload_bytes);

  h.message_bytes = kSideChannelMaxMessage + 1;
  EncodeSideChannelReplyHeader(h, &head);
  EXPECT_FALSE(DecodeSideChannelReplyHeader(head, &got));
  h.message_bytes = 0;
  EncodeSideChannelReplyHeader(h, &head);
  head[24] = 100;  // not a status code
  EXPECT_FALSE(DecodeSideChannelReplyHeader(head, &got));
}

TEST(SideChannelWireTest, TicketBytes) {
  SideChannelTicket t{};
  t[0] = 1;
  t[15] = 255;
  SideChannelTicket back{};
  ASSERT_TRUE(TicketFromBytes(TicketBytes(t), &back));
  EXPECT_EQ(back, t);
  EXPECT_FALSE(TicketFromBytes("short", &back));
}

// ---------------------------------------------------- server and client

std::unique_ptr<SideChannelServer> StartServer(SideChannelServer::Options options = {}) {
  options.host = "127.0.0.1";
  absl::StatusOr<std::unique_ptr<SideChannelServer>> s = SideChannelServer::Start(options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

absl::Status FetchInto(SideChannelClient* client, int port, const SideChannelTicket& ticket,
                       Tensor* dst, absl::Time deadline = absl::InfiniteFuture(),
                       CallOptions* opts = nullptr) {
  return client->Fetch("127.0.0.1", port, ticket, dst->raw_data(), dst->TotalBytes(), deadline,
                       opts, kTask);
}

// Offers a 4 MiB Pattern and fetches it through `client`; the fetch's
// status, or DataLoss when the bytes that came are not the pattern's.
absl::Status OfferAndFetchPattern(SideChannelServer* server, SideChannelClient* client) {
  constexpr int64_t kN = 1 << 20;
  const Tensor sent = Pattern(kN);
  Tensor got(DT_FLOAT, TensorShape({kN}));
  std::optional<SideChannelTicket> ticket = server->Offer(sent);
  if (!ticket.has_value()) return absl::InternalError("the server offered no ticket");
  DF_RETURN_IF_ERROR(FetchInto(client, server->port(), *ticket, &got));
  if (std::memcmp(got.raw_data(), sent.raw_data(), sent.TotalBytes()) != 0) {
    return absl::DataLossError("the fetched bytes differ from the offered ones");
  }
  return absl::OkStatus();
}

TEST(SideChannelWireTest, ReadWokenLateTakesEveryByteAndResetsTheLowWaterMark) {
  test::TcpPair pair;
  // 2.5 MiB in uneven pieces with pauses, so the reader waits mid-way and
  // its last wait is for less than the low-water bound.
  std::vector<char> sent(5 << 19);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 131 + 7);
  std::thread writer([&] {
    size_t off = 0;
    for (size_t piece : {size_t{1000}, size_t{700000}, size_t{1} << 20, size_t{3}}) {
      ASSERT_EQ(send(pair.writer, sent.data() + off, piece, 0), static_cast<ssize_t>(piece));
      off += piece;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_EQ(send(pair.writer, sent.data() + off, sent.size() - off, 0),
              static_cast<ssize_t>(sent.size() - off));
  });
  std::vector<char> got(sent.size());
  size_t moved = 0;
  int error = 0;
  EXPECT_EQ(ReadFullyWokenLate(pair.reader, got.data(), got.size(), absl::Now() + absl::Seconds(20),
                               absl::Seconds(20), 1 << 20, &moved, &error),
            IoOutcome::kDone);
  writer.join();
  EXPECT_EQ(moved, sent.size());
  EXPECT_TRUE(got == sent);
  int low_water = 0;
  socklen_t len = sizeof(low_water);
  ASSERT_EQ(getsockopt(pair.reader, SOL_SOCKET, SO_RCVLOWAT, &low_water, &len), 0);
  EXPECT_EQ(low_water, 1);
}

TEST(SideChannelWireTest, ReadWokenLateStallsWhenTheRestNeverComes) {
  test::TcpPair pair;
  std::vector<char> buf(1 << 20);
  ASSERT_EQ(send(pair.writer, buf.data(), 4096, 0), 4096);
  size_t moved = 0;
  int error = 0;
  EXPECT_EQ(ReadFullyWokenLate(pair.reader, buf.data(), buf.size(), absl::Now() + absl::Seconds(20),
                               absl::Milliseconds(200), 1 << 20, &moved, &error),
            IoOutcome::kStalled);
  EXPECT_EQ(moved, 4096u);
  int low_water = 0;
  socklen_t len = sizeof(low_water);
  ASSERT_EQ(getsockopt(pair.reader, SOL_SOCKET, SO_RCVLOWAT, &low_water, &len), 0);
  EXPECT_EQ(low_water, 1);
}

TEST(SideChannelServerTest, LargeTensorArrivesIntact) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  SideChannelClient client;
  const int64_t n = int64_t{8} << 20;  // 32 MiB
  const Tensor sent = Pattern(n);
  std::optional<SideChannelTicket> ticket = server->Offer(sent);
  ASSERT_TRUE(ticket.has_value());
  Tensor got(DT_FLOAT, TensorShape({n}));
  absl::Status s = FetchInto(&client, server->port(), *ticket, &got);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(std::memcmp(got.raw_data(), sent.raw_data(), sent.TotalBytes()), 0);
  EXPECT_EQ(got.flat<float>()[n - 1], static_cast<float>(n - 1));
  EXPECT_EQ(server->fetches_served(), 1);
  EXPECT_EQ(server->tickets().size(), 0u);
  EXPECT_EQ(client.IdleConnections("127.0.0.1", server->port()), 1);

  // The pooled connection serves the next fetch.
  const Tensor second = Pattern(1 << 20);
  ticket = server->Offer(second);
  ASSERT_TRUE(ticket.has_value());
  Tensor got2(DT_FLOAT, TensorShape({1 << 20}));
  s = FetchInto(&client, server->port(), *ticket, &got2);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got2.flat<float>()[12345], 12345.0f);
  EXPECT_EQ(client.IdleConnections("127.0.0.1", server->port()), 1);
}

TEST(SideChannelServerTest, ConcurrentFetchesUseSeveralConnections) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  SideChannelClient::Options options;
  options.max_idle_per_peer = 4;
  SideChannelClient client(options);
  constexpr int kFetches = 6;
  const int64_t n = 1 << 20;
  std::vector<Tensor> sent, got;
  std::vector<SideChannelTicket> tickets;
  for (int i = 0; i < kFetches; ++i) {
    sent.push_back(Pattern(n));
    sent.back().flat<float>()[0] = static_cast<float>(-i);
    tickets.push_back(*server->Offer(sent.back()));
    got.emplace_back(DT_FLOAT, TensorShape({n}));
  }
  std::vector<absl::Status> status(kFetches);
  std::vector<std::thread> threads;
  for (int i = 0; i < kFetches; ++i) {
    threads.emplace_back(
        [&, i] { status[i] = FetchInto(&client, server->port(), tickets[i], &got[i]); });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kFetches; ++i) {
    ASSERT_TRUE(status[i].ok()) << status[i];
    EXPECT_EQ(got[i].flat<float>()[0], static_cast<float>(-i));
    EXPECT_EQ(got[i].flat<float>()[n - 1], static_cast<float>(n - 1));
  }
  EXPECT_GE(client.IdleConnections("127.0.0.1", server->port()), 1);
  EXPECT_LE(client.IdleConnections("127.0.0.1", server->port()), 4);
}

TEST(SideChannelServerTest, SmallAndStringTensorsAreNotOffered) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(server->Offer(Pattern(1000)).has_value());
  Tensor strings(DT_STRING, TensorShape({1 << 20}));
  EXPECT_FALSE(server->Offer(strings).has_value());
  EXPECT_EQ(server->tickets().size(), 0u);
}

TEST(SideChannelServerTest, ReplayedTicketIsRefused) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  SideChannelClient client;
  const Tensor sent = Pattern(1 << 20);
  std::optional<SideChannelTicket> ticket = server->Offer(sent);
  ASSERT_TRUE(ticket.has_value());
  Tensor got(DT_FLOAT, TensorShape({1 << 20}));
  ASSERT_TRUE(FetchInto(&client, server->port(), *ticket, &got).ok());
  absl::Status s = FetchInto(&client, server->port(), *ticket, &got);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr(kTask));
  // The refusal closed that connection; the server serves the next ticket.
  ticket = server->Offer(sent);
  ASSERT_TRUE(ticket.has_value());
  s = FetchInto(&client, server->port(), *ticket, &got);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got.flat<float>()[777], 777.0f);
}

TEST(SideChannelServerTest, InventedTicketGetsNotFoundAndTheConnectionCloses) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const Tensor sent = Pattern(1 << 20);
  std::optional<SideChannelTicket> real = server->Offer(sent);
  ASSERT_TRUE(real.has_value());
  const int fd = test::Dial(server->port());
  ASSERT_GE(fd, 0);
  SideChannelTicket invented = *real;
  invented[3] ^= 0x40;
  std::array<char, kSideChannelRequestBytes> req;
  EncodeSideChannelRequest(invented, &req);
  ASSERT_EQ(send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  bool closed = false;
  const std::string reply = test::ReadUntilClosed(fd, &closed);
  close(fd);
  EXPECT_TRUE(closed);
  ASSERT_GE(reply.size(), kSideChannelReplyHeaderBytes);
  std::array<char, kSideChannelReplyHeaderBytes> head;
  std::memcpy(head.data(), reply.data(), head.size());
  SideChannelReplyHeader h;
  ASSERT_TRUE(DecodeSideChannelReplyHeader(head, &h));
  EXPECT_EQ(h.code, absl::StatusCode::kNotFound);
  EXPECT_EQ(h.payload_bytes, 0u);
  EXPECT_EQ(reply.size(), kSideChannelReplyHeaderBytes + h.message_bytes);  // nothing served
  // The real ticket still works.
  SideChannelClient client;
  Tensor got(DT_FLOAT, TensorShape({1 << 20}));
  absl::Status s = FetchInto(&client, server->port(), *real, &got);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got.flat<float>()[99], 99.0f);
}

TEST(SideChannelServerTest, GarbageAndSilenceCloseTheConnection) {
  SideChannelServer::Options options;
  options.first_request_timeout = absl::Milliseconds(200);
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  const Tensor sent = Pattern(1 << 20);
  std::optional<SideChannelTicket> ticket = server->Offer(sent);
  ASSERT_TRUE(ticket.has_value());

  // Not our protocol: closed, nothing sent.
  int fd = test::Dial(server->port());
  ASSERT_GE(fd, 0);
  const std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, garbage.data(), garbage.size(), 0), static_cast<ssize_t>(garbage.size()));
  bool closed = false;
  EXPECT_EQ(test::ReadUntilClosed(fd, &closed), "");
  EXPECT_TRUE(closed);
  close(fd);

  // Half a request, then silence: closed after the first-request timeout.
  fd = test::Dial(server->port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, "dfscREQ1", 8, 0), 8);
  EXPECT_EQ(test::ReadUntilClosed(fd, &closed), "");
  EXPECT_TRUE(closed);
  close(fd);

  // Connects and closes at once.
  fd = test::Dial(server->port());
  ASSERT_GE(fd, 0);
  close(fd);

  // The server still serves, and the ticket was not spent.
  SideChannelClient client;
  Tensor got(DT_FLOAT, TensorShape({1 << 20}));
  absl::Status s = FetchInto(&client, server->port(), *ticket, &got);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got.flat<float>()[4242], 4242.0f);
}

TEST(SideChannelServerTest, ConnectionsBeyondTheCapAreClosed) {
  SideChannelServer::Options options;
  options.max_connections = 1;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  // The one slot holds a receiver's pooled connection, authenticated by the
  // ticket it presented.
  SideChannelClient client;
  absl::Status fetched = OfferAndFetchPattern(server.get(), &client);
  ASSERT_TRUE(fetched.ok()) << fetched;
  ASSERT_EQ(client.IdleConnections("127.0.0.1", server->port()), 1);
  // Another connection ends closed without an answer.
  const int extra = test::Dial(server->port());
  ASSERT_GE(extra, 0);
  std::array<char, kSideChannelRequestBytes> req;
  EncodeSideChannelRequest(SideChannelTicket{}, &req);
  send(extra, req.data(), req.size(), MSG_NOSIGNAL);
  bool closed = false;
  EXPECT_EQ(test::ReadUntilClosed(extra, &closed), "");
  EXPECT_TRUE(closed);
  close(extra);
}

// Strangers that take every slot and say nothing cannot keep a receiver
// out: its connection takes the slot of the oldest silent one.
TEST(SideChannelServerTest, SilentConnectionsGiveWayToAReceiver) {
  SideChannelServer::Options options;
  options.max_connections = 4;
  options.first_request_timeout = absl::Seconds(30);  // the strangers would hold on
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  std::vector<int> silent;
  for (int i = 0; i < options.max_connections; ++i) {
    silent.push_back(test::Dial(server->port()));
    ASSERT_GE(silent.back(), 0);
  }
  SideChannelClient client;
  absl::Status fetched = OfferAndFetchPattern(server.get(), &client);
  ASSERT_TRUE(fetched.ok()) << fetched;
  // The oldest stranger was closed to make room.
  bool closed = false;
  EXPECT_EQ(test::ReadUntilClosed(silent[0], &closed), "");
  EXPECT_TRUE(closed);
  for (int fd : silent) close(fd);
}

TEST(SideChannelServerTest, PooledConnectionClosedByTheServerIsReplaced) {
  SideChannelServer::Options options;
  options.idle_timeout = absl::Milliseconds(50);
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  SideChannelClient client;
  const Tensor sent = Pattern(1 << 20);
  Tensor got(DT_FLOAT, TensorShape({1 << 20}));
  for (int i = 0; i < 3; ++i) {
    std::optional<SideChannelTicket> ticket = server->Offer(sent);
    ASSERT_TRUE(ticket.has_value());
    absl::Status s = FetchInto(&client, server->port(), *ticket, &got);
    ASSERT_TRUE(s.ok()) << "fetch " << i << ": " << s;
    EXPECT_EQ(got.flat<float>()[i], static_cast<float>(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server drops it
  }
}

TEST(SideChannelServerTest, StopFailsLaterOffersAndConnections) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  server->Stop();
  EXPECT_FALSE(server->Offer(Pattern(1 << 20)).has_value());
  server.reset();
  SideChannelClient client;
  Tensor got(DT_FLOAT, TensorShape({1 << 20}));
  absl::Status s = FetchInto(&client, port, SideChannelTicket{}, &got);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr(kTask));
}

// ------------------------------------------------ client vs a fake producer

// A one-connection producer on loopback that reads the request and then
// does what the test says.
class FakeProducer {
 public:
  // `behave(fd, ticket)` runs on the producer's thread with the connection.
  explicit FakeProducer(std::function<void(int, const SideChannelTicket&)> behave)
      : behave_(std::move(behave)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(listen_fd_, 4);
    thread_ = std::thread([this] {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::array<char, kSideChannelRequestBytes> req;
      size_t got = 0;
      while (got < req.size()) {
        const ssize_t n = recv(fd, req.data() + got, req.size() - got, 0);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
      SideChannelTicket ticket{};
      if (got == req.size()) DecodeSideChannelRequest(req, &ticket);
      behave_(fd, ticket);
      close(fd);
    });
  }
  ~FakeProducer() {
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }

  // Sends a success header for `bytes` bytes, then the first `send` of
  // them.
  static void SendHeaderAndSome(int fd, const SideChannelTicket& ticket, uint64_t bytes,
                                size_t send_bytes) {
    SideChannelReplyHeader h;
    h.ticket = ticket;
    h.payload_bytes = bytes;
    std::array<char, kSideChannelReplyHeaderBytes> head;
    EncodeSideChannelReplyHeader(h, &head);
    send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    std::vector<char> payload(send_bytes, 7);
    send(fd, payload.data(), payload.size(), MSG_NOSIGNAL);
  }
  // Blocks until the client closes the connection (or 20 s).
  static void WaitForClose(int fd) {
    bool closed;
    test::ReadUntilClosed(fd, &closed);
  }

 private:
  std::function<void(int, const SideChannelTicket&)> behave_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

constexpr uint64_t kFakeBytes = 4 << 20;

TEST(SideChannelClientTest, DeadlineMidTransfer) {
  FakeProducer producer([](int fd, const SideChannelTicket& t) {
    FakeProducer::SendHeaderAndSome(fd, t, kFakeBytes, kFakeBytes / 2);
    FakeProducer::WaitForClose(fd);
  });
  SideChannelClient client;
  std::vector<char> dst(kFakeBytes);
  absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                dst.size(), absl::Now() + absl::Milliseconds(300), nullptr, kTask);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr(kTask));
  EXPECT_EQ(client.IdleConnections("127.0.0.1", producer.port()), 0);
}

TEST(SideChannelClientTest, CancelMidTransfer) {
  FakeProducer producer([](int fd, const SideChannelTicket& t) {
    FakeProducer::SendHeaderAndSome(fd, t, kFakeBytes, kFakeBytes / 2);
    FakeProducer::WaitForClose(fd);
  });
  SideChannelClient client;
  CallOptions opts;
  std::vector<char> dst(kFakeBytes);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    opts.StartCancel();
  });
  absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                dst.size(), absl::InfiniteFuture(), &opts, kTask);
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr(kTask));
}

TEST(SideChannelClientTest, CancelledBeforeTheFetch) {
  SideChannelClient client;
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  std::optional<SideChannelTicket> ticket = server->Offer(Pattern(1 << 20));
  ASSERT_TRUE(ticket.has_value());
  CallOptions opts;
  opts.StartCancel();
  Tensor got(DT_FLOAT, TensorShape({1 << 20}));
  absl::Status s = FetchInto(&client, server->port(), *ticket, &got, absl::InfiniteFuture(), &opts);
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
}

TEST(SideChannelClientTest, StalledProducerIsUnavailable) {
  FakeProducer producer([](int fd, const SideChannelTicket& t) {
    FakeProducer::SendHeaderAndSome(fd, t, kFakeBytes, 1000);
    FakeProducer::WaitForClose(fd);
  });
  SideChannelClient::Options options;
  options.stall_timeout = absl::Milliseconds(200);
  SideChannelClient client(options);
  std::vector<char> dst(kFakeBytes);
  absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                dst.size(), absl::InfiniteFuture(), nullptr, kTask);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("stalled"));
  EXPECT_THAT(s.message(), HasSubstr(kTask));
}

TEST(SideChannelClientTest, ProducerDiesMidTransfer) {
  FakeProducer producer([](int fd, const SideChannelTicket& t) {
    FakeProducer::SendHeaderAndSome(fd, t, kFakeBytes, kFakeBytes / 4);
  });
  SideChannelClient client;
  std::vector<char> dst(kFakeBytes);
  absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                dst.size(), absl::InfiniteFuture(), nullptr, kTask);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr(kTask));
  EXPECT_THAT(s.message(), HasSubstr("closed"));
}

TEST(SideChannelClientTest, ReplyThatBreaksTheProtocolIsDataLoss) {
  // A size other than the one the RecvTensor reply announced.
  {
    FakeProducer producer([](int fd, const SideChannelTicket& t) {
      FakeProducer::SendHeaderAndSome(fd, t, kFakeBytes + 4, 0);
      FakeProducer::WaitForClose(fd);
    });
    SideChannelClient client;
    std::vector<char> dst(kFakeBytes);
    absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                  dst.size(), absl::InfiniteFuture(), nullptr, kTask);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  }
  // Another ticket echoed.
  {
    FakeProducer producer([](int fd, const SideChannelTicket&) {
      FakeProducer::SendHeaderAndSome(fd, SideChannelTicket{9}, kFakeBytes, 0);
      FakeProducer::WaitForClose(fd);
    });
    SideChannelClient client;
    std::vector<char> dst(kFakeBytes);
    absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                  dst.size(), absl::InfiniteFuture(), nullptr, kTask);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  }
  // Garbage.
  {
    FakeProducer producer([](int fd, const SideChannelTicket&) {
      const std::string junk(100, 'z');
      send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
      FakeProducer::WaitForClose(fd);
    });
    SideChannelClient client;
    std::vector<char> dst(kFakeBytes);
    absl::Status s = client.Fetch("127.0.0.1", producer.port(), SideChannelTicket{1}, dst.data(),
                                  dst.size(), absl::InfiniteFuture(), nullptr, kTask);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  }
}

TEST(SideChannelClientTest, NobodyListening) {
  int port;
  {
    FakeProducer producer([](int, const SideChannelTicket&) {});
    port = producer.port();
    const int fd = test::Dial(port);  // lets the producer's thread finish
    if (fd >= 0) close(fd);
  }
  SideChannelClient client;
  std::vector<char> dst(16);
  absl::Status s = client.Fetch("127.0.0.1", port, SideChannelTicket{1}, dst.data(), dst.size(),
                                absl::InfiniteFuture(), nullptr, kTask);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("cannot connect"));
  EXPECT_THAT(s.message(), HasSubstr(kTask));
}

// ------------------------------------------ fetches on the client's threads

SideChannelClient::FetchArgs FetchArgsFor(int port, const SideChannelTicket& ticket, void* dst,
                                          uint64_t bytes, CallOptions* opts = nullptr) {
  SideChannelClient::FetchArgs a;
  a.host = "127.0.0.1";
  a.port = port;
  a.ticket = ticket;
  a.dst = dst;
  a.bytes = bytes;
  a.opts = opts;
  a.task = kTask;
  return a;
}

// The statuses FetchAsync's callbacks report, each called once.
class Outcomes {
 public:
  SideChannelClient::FetchDone Next() {
    absl::MutexLock lock(&mu_);
    const size_t i = statuses_.size();
    statuses_.emplace_back();
    ran_.push_back(0);
    return [this, i](const absl::Status& s) {
      absl::MutexLock lock(&mu_);
      statuses_[i] = s;
      ++ran_[i];
    };
  }
  // Waits until every callback handed out has run; each one's status.
  std::vector<absl::Status> WaitAll() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &Outcomes::AllRanLocked));
    for (int r : ran_) EXPECT_EQ(r, 1);
    return statuses_;
  }
  bool Ran(size_t i) {
    absl::MutexLock lock(&mu_);
    return ran_[i] > 0;
  }

 private:
  bool AllRanLocked() const {
    for (int r : ran_) {
      if (r == 0) return false;
    }
    return true;
  }
  absl::Mutex mu_;
  std::vector<absl::Status> statuses_ ABSL_GUARDED_BY(mu_);
  std::vector<int> ran_ ABSL_GUARDED_BY(mu_);
};

TEST(SideChannelFetchPoolTest, ManyConcurrentFetchesCompleteOnFewThreads) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  SideChannelClient::Options options;
  options.fetch_threads = 2;
  SideChannelClient client(options);
  constexpr int kFetches = 24;
  const int64_t n = 1 << 18;  // 1 MiB each
  std::vector<Tensor> sent, got;
  for (int i = 0; i < kFetches; ++i) {
    sent.push_back(Pattern(n));
    sent.back().flat<float>()[0] = static_cast<float>(-i);
    got.emplace_back(DT_FLOAT, TensorShape({n}));
  }
  Outcomes outcomes;
  for (int i = 0; i < kFetches; ++i) {
    std::optional<SideChannelTicket> ticket = server->Offer(sent[i]);
    ASSERT_TRUE(ticket.has_value());
    client.FetchAsync(FetchArgsFor(server->port(), *ticket, got[i].raw_data(), got[i].TotalBytes()),
                      outcomes.Next());
  }
  std::vector<absl::Status> status = outcomes.WaitAll();
  for (int i = 0; i < kFetches; ++i) {
    ASSERT_TRUE(status[i].ok()) << i << ": " << status[i];
    EXPECT_EQ(got[i].flat<float>()[0], static_cast<float>(-i));
    EXPECT_EQ(got[i].flat<float>()[n - 1], static_cast<float>(n - 1));
  }
  EXPECT_EQ(server->fetches_served(), kFetches);
  // Two threads use two connections at most.
  EXPECT_GE(client.IdleConnections("127.0.0.1", server->port()), 1);
  EXPECT_LE(client.IdleConnections("127.0.0.1", server->port()), 2);
}

// A producer that takes the request and then sends nothing until the
// client closes; `connected` is notified once it has the request.
std::unique_ptr<FakeProducer> SilentProducer(absl::Notification* connected) {
  return std::make_unique<FakeProducer>([connected](int fd, const SideChannelTicket&) {
    connected->Notify();
    FakeProducer::WaitForClose(fd);
  });
}

// Options for a client with one fetcher thread, which a silent producer
// keeps busy for as long as the test needs.
SideChannelClient::Options OneThread(absl::Duration max_wait_to_start, int max_waiting = 256) {
  SideChannelClient::Options options;
  options.fetch_threads = 1;
  options.max_waiting_fetches = max_waiting;
  options.stall_timeout = absl::Hours(1);
  options.max_wait_to_start = max_wait_to_start;
  return options;
}

// Starts a fetch from `producer` on the client's one thread and returns
// once the producer has its request.
void OccupyTheThread(SideChannelClient* client, FakeProducer* producer,
                     absl::Notification* connected, std::vector<char>* dst, Outcomes* outcomes) {
  client->FetchAsync(FetchArgsFor(producer->port(), SideChannelTicket{1}, dst->data(), dst->size()),
                     outcomes->Next());
  connected->WaitForNotification();
}

TEST(SideChannelFetchPoolTest, ShutdownCutsRunningAndWaitingFetches) {
  absl::Notification connected;
  std::unique_ptr<FakeProducer> producer = SilentProducer(&connected);
  SideChannelClient client(OneThread(absl::Hours(1)));
  constexpr int kFetches = 4;
  std::vector<std::vector<char>> dst(kFetches, std::vector<char>(kFakeBytes));
  Outcomes outcomes;
  for (int i = 0; i < kFetches; ++i) {
    client.FetchAsync(
        FetchArgsFor(producer->port(), SideChannelTicket{1}, dst[i].data(), kFakeBytes),
        outcomes.Next());
  }
  connected.WaitForNotification();  // one runs, three wait
  client.Shutdown();
  std::vector<absl::Status> status = outcomes.WaitAll();
  for (const absl::Status& s : status) {
    EXPECT_TRUE(absl::IsCancelled(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr(kTask));
  }
  Outcomes later;
  client.FetchAsync(FetchArgsFor(producer->port(), SideChannelTicket{1}, dst[0].data(), 16),
                    later.Next());
  status = later.WaitAll();
  EXPECT_TRUE(absl::IsCancelled(status[0])) << status[0];
  EXPECT_THAT(status[0].message(), HasSubstr("shut down"));
}

TEST(SideChannelFetchPoolTest, FullQueueRefusesAndCancelledWaiterEnds) {
  std::vector<char> dst(kFakeBytes);
  absl::Notification connected;
  std::unique_ptr<FakeProducer> producer = SilentProducer(&connected);
  SideChannelClient client(OneThread(absl::Hours(1), /*max_waiting=*/1));
  Outcomes outcomes;
  OccupyTheThread(&client, producer.get(), &connected, &dst, &outcomes);
  CallOptions opts;
  client.FetchAsync(
      FetchArgsFor(producer->port(), SideChannelTicket{2}, dst.data(), dst.size(), &opts),
      outcomes.Next());
  client.FetchAsync(FetchArgsFor(producer->port(), SideChannelTicket{3}, dst.data(), dst.size()),
                    outcomes.Next());
  EXPECT_TRUE(outcomes.Ran(2));  // refused at once
  EXPECT_FALSE(outcomes.Ran(1));
  opts.StartCancel();
  EXPECT_TRUE(outcomes.Ran(1));  // a cancelled waiter ends at once
  client.Shutdown();
  std::vector<absl::Status> status = outcomes.WaitAll();
  EXPECT_TRUE(absl::IsCancelled(status[0])) << status[0];
  EXPECT_TRUE(absl::IsCancelled(status[1])) << status[1];
  EXPECT_TRUE(absl::IsResourceExhausted(status[2])) << status[2];
  EXPECT_THAT(status[2].message(), HasSubstr("wait for a thread already"));
}

TEST(SideChannelFetchPoolTest, WaiterThatNoThreadTakesInTimeFails) {
  std::vector<char> dst(kFakeBytes);
  absl::Notification connected;
  std::unique_ptr<FakeProducer> producer = SilentProducer(&connected);
  SideChannelClient client(OneThread(absl::Milliseconds(50)));
  Outcomes outcomes;
  OccupyTheThread(&client, producer.get(), &connected, &dst, &outcomes);
  Outcomes waiting;
  client.FetchAsync(FetchArgsFor(producer->port(), SideChannelTicket{2}, dst.data(), dst.size()),
                    waiting.Next());
  std::vector<absl::Status> status = waiting.WaitAll();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status[0])) << status[0];
  EXPECT_THAT(status[0].message(), HasSubstr("no tensor side channel fetcher was free"));
  EXPECT_THAT(status[0].message(), HasSubstr(kTask));
  client.Shutdown();
  outcomes.WaitAll();
}

// ---------------------------------------------------- RecvTensor reply

TEST(SideChannelCodingTest, OfferRoundTrip) {
  Tensor t(DT_FLOAT, TensorShape({3, 1000}));
  SideChannelOffer offer;
  offer.ticket[0] = 42;
  offer.port = 4321;
  offer.payload_bytes = t.TotalBytes();
  grpc::ByteBuffer buf;
  EncodeRecvTensorOffer(t, offer, 99, &buf);
  Tensor got;
  bool is_dead = true;
  int64_t start = 0;
  std::optional<SideChannelOffer> back;
  absl::Status s = DecodeRecvTensorResponse(buf, &got, &is_dead, &start, &back);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->ticket, offer.ticket);
  EXPECT_EQ(back->port, 4321);
  EXPECT_EQ(back->payload_bytes, t.TotalBytes());
  EXPECT_FALSE(is_dead);
  EXPECT_EQ(start, 99);
  EXPECT_EQ(got.dtype(), DT_FLOAT);
  EXPECT_EQ(got.shape(), t.shape());
  EXPECT_NE(got.raw_data(), nullptr);

  // A caller that did not ask for an offer refuses one.
  s = DecodeRecvTensorResponse(buf, &got, &is_dead, &start);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
}

TEST(SideChannelCodingTest, PlainReplyHasNoOffer) {
  const Tensor t = Pattern(10);
  grpc::ByteBuffer buf;
  EncodeRecvTensorResponse(t, false, 0, &buf);
  Tensor got;
  bool is_dead;
  int64_t start;
  std::optional<SideChannelOffer> offer;
  ASSERT_TRUE(DecodeRecvTensorResponse(buf, &got, &is_dead, &start, &offer).ok());
  EXPECT_FALSE(offer.has_value());
  EXPECT_EQ(got.flat<float>()[9], 9.0f);
}

// Builds a reply by hand: the offer first, then the tensor (as the
// encoder writes it).
grpc::ByteBuffer HandMadeOffer(const RecvTensorSideChannel& side, const TensorProto& tensor,
                               bool dead = false) {
  RecvTensorResponse a;
  *a.mutable_side_channel() = side;
  RecvTensorResponse b;
  *b.mutable_tensor() = tensor;
  b.set_is_dead(dead);
  const std::string bytes = a.SerializeAsString() + b.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

TEST(SideChannelCodingTest, PayloadThatFollowsRoundTrip) {
  const Tensor sent = Pattern(70000);
  SideChannelOffer offer;
  offer.follows = true;
  offer.payload_bytes = sent.TotalBytes();
  grpc::ByteBuffer buf;
  EncodeRecvTensorOffer(sent, offer, 0, &buf);
  Tensor got;
  bool is_dead = true;
  int64_t start = 0;
  std::optional<SideChannelOffer> decoded;
  ASSERT_TRUE(DecodeRecvTensorResponse(buf, &got, &is_dead, &start, &decoded).ok());
  EXPECT_FALSE(is_dead);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded->follows);
  EXPECT_EQ(decoded->port, 0);
  EXPECT_EQ(decoded->payload_bytes, sent.TotalBytes());
  EXPECT_EQ(got.shape(), sent.shape());  // allocated, its bytes to come
}

TEST(SideChannelCodingTest, BadOffersAreDataLoss) {
  RecvTensorSideChannel side;
  side.set_ticket(std::string(16, 'k'));
  side.set_port(1234);
  side.set_payload_bytes(4000);
  TensorProto tensor;
  tensor.set_dtype(DT_FLOAT);
  tensor.mutable_tensor_shape()->add_dim()->set_size(1000);
  auto decode = [](const grpc::ByteBuffer& buf) {
    Tensor got;
    bool is_dead;
    int64_t start;
    std::optional<SideChannelOffer> offer;
    return DecodeRecvTensorResponse(buf, &got, &is_dead, &start, &offer);
  };
  EXPECT_TRUE(decode(HandMadeOffer(side, tensor)).ok());

  RecvTensorSideChannel wrong = side;
  wrong.set_payload_bytes(4004);  // not dtype size x elements
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(wrong, tensor))));
  wrong = side;
  wrong.set_ticket("short");
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(wrong, tensor))));
  wrong = side;
  wrong.set_port(70000);
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(wrong, tensor))));
  wrong = side;
  wrong.set_follows(true);  // bytes that follow carry no ticket, no port
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(wrong, tensor))));

  TensorProto with_content = tensor;
  with_content.set_tensor_content(std::string(4000, '\0'));
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(side, with_content))));
  TensorProto strings = tensor;
  strings.set_dtype(DT_STRING);
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(side, strings))));
  TensorProto huge = tensor;
  huge.mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 62);
  RecvTensorSideChannel huge_side = side;
  huge_side.set_payload_bytes(INT64_MAX);
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(huge_side, huge))));
  EXPECT_TRUE(absl::IsDataLoss(decode(HandMadeOffer(side, tensor, /*dead=*/true))));

  // The offer after the tensor.
  RecvTensorResponse after;
  *after.mutable_tensor() = tensor;
  *after.mutable_side_channel() = side;
  grpc::Slice slice(after.SerializeAsString());  // protobuf writes field 1 first
  EXPECT_TRUE(absl::IsDataLoss(decode(grpc::ByteBuffer(&slice, 1))));
}

TEST(SideChannelCodingTest, BoolsAreCanonical) {
  Tensor t(DT_BOOL, TensorShape({4}));
  auto* bytes = static_cast<unsigned char*>(t.raw_data());
  bytes[0] = 0;
  bytes[1] = 1;
  bytes[2] = 2;
  bytes[3] = 255;
  CanonicalizeBools(&t);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 1);
  EXPECT_EQ(bytes[2], 1);
  EXPECT_EQ(bytes[3], 1);
}

}  // namespace
}  // namespace distflow
