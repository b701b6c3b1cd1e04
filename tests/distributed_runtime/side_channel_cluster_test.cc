// Two worker servers in this process on loopback: large tensors between
// them move over the tensor side channel and arrive intact; small, string
// and dead tensors need no ticket; once a reply has named the producer's
// side port, receives ask there by key; either end with the side channel
// off falls back to gRPC; a stranger on the side port changes nothing.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/distributed_runtime/rpc/grpc_session.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loopback_socket.h"

namespace distflow {
namespace {

// y = Identity(x) and bo = Identity(bi) cross from task 0 to task 1; s, a
// string made on task 0, is echoed on task 1; m = Merge on task 1 of a
// dead branch from task 0 and a constant.
constexpr char kGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "y"
    op: "Identity"
    input: "x"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "bi"
    op: "Placeholder"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_BOOL }
    }
  }
  node {
    name: "bo"
    op: "Identity"
    input: "bi"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_BOOL }
    }
  }
  node {
    name: "str"
    op: "Const"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_STRING }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_STRING
          tensor_shape { dim { size: 2 } }
          string_val: "beside"
          string_val: "grpc"
        }
      }
    }
  }
  node {
    name: "s"
    op: "Identity"
    input: "str"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_STRING }
    }
  }
  node {
    name: "v"
    op: "Const"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 3
        }
      }
    }
  }
  node {
    name: "pred"
    op: "Const"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_BOOL }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_BOOL
          tensor_shape {}
          bool_val: false
        }
      }
    }
  }
  node {
    name: "sw"
    op: "Switch"
    input: "v"
    input: "pred"
    device: "/job:worker/task:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "other"
    op: "Const"
    device: "/job:worker/task:1"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 7
        }
      }
    }
  }
  node {
    name: "m"
    op: "Merge"
    input: "sw:1"
    input: "other"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "N"
      value { i: 2 }
    }
  }
)pb";

// A float tensor of `n` elements holding 0, 1, 2, ... (exact below 2^24).
Tensor Pattern(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  float* p = t.base<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
  return t;
}

class SideChannelClusterTest : public ::testing::Test {
 protected:
  // Starts both tasks, with the side channel on or off in each; pushes
  // only when asked (they make the way of a small tensor vary by timing).
  void StartServers(bool side0, bool side1, bool push = false) {
    absl::Status last;
    for (int attempt = 0; attempt < 5; ++attempt) {
      servers_.clear();
      const std::string cluster =
          absl::StrCat("worker=127.0.0.1:", test::FreePort(), ",127.0.0.1:", test::FreePort());
      last = absl::OkStatus();
      for (int task : {0, 1}) {
        auto def = MakeServerDef(cluster, "worker", task);
        ASSERT_TRUE(def.ok()) << def.status();
        GrpcServerOptions options;
        options.tensor_side_channel = task == 0 ? side0 : side1;
        options.tensor_push = push;
        auto server = GrpcServer::Create(*def, options);
        ASSERT_TRUE(server.ok()) << server.status();
        last = (*server)->Start();
        if (!last.ok()) break;
        servers_.push_back(std::move(*server));
      }
      if (last.ok()) return;
    }
    FAIL() << last;
  }

  std::unique_ptr<GrpcSession> NewClusterSession() {
    SessionOptions opts;
    opts.target = servers_[0]->target();
    opts.config.set_operation_timeout_in_ms(60000);
    auto session = GrpcSession::Create(opts);
    EXPECT_TRUE(session.ok()) << session.status();
    GraphDef g;
    EXPECT_TRUE(ParseGraphDefText(kGraph, &g).ok());
    absl::Status s = (*session)->Create(g);
    EXPECT_TRUE(s.ok()) << s;
    return std::move(*session);
  }

  // Tensors task 0's side channel sent: fetched by ticket, and asked for
  // by key.
  int64_t Tickets() const {
    const SideChannelServer* side = servers_[0]->side_channel();
    return side == nullptr ? 0 : side->fetches_served();
  }
  int64_t Keyed() const {
    const SideChannelServer* side = servers_[0]->side_channel();
    return side == nullptr ? 0 : side->keyed_served();
  }
  int64_t Served() const { return Tickets() + Keyed(); }

  // Sends x of `n` elements through y and checks every element.
  void ExpectPatternCrosses(GrpcSession* session, int64_t n) {
    const Tensor x = Pattern(n);
    std::vector<Tensor> out;
    absl::Status s = session->Run({{"x", x}}, {"y"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out[0].dtype(), DT_FLOAT);
    ASSERT_EQ(out[0].NumElements(), n);
    EXPECT_EQ(std::memcmp(out[0].raw_data(), x.raw_data(), x.TotalBytes()), 0);
    EXPECT_EQ(out[0].flat<float>()[n - 1], static_cast<float>(n - 1));
  }

  std::vector<std::unique_ptr<GrpcServer>> servers_;
};

constexpr int64_t kLarge = int64_t{8} << 20;  // 32 MiB of floats

TEST_F(SideChannelClusterTest, LargeTensorsCrossOverTheSideChannel) {
  StartServers(true, true);
  ASSERT_NE(servers_[0]->side_channel(), nullptr);
  auto session = NewClusterSession();
  for (int step = 0; step < 3; ++step) {
    const int64_t before = Served();
    ExpectPatternCrosses(session.get(), kLarge - step);
    EXPECT_EQ(Served(), before + 1) << "step " << step;
  }
  // The first by ticket after a RecvTensor; the others by key.
  EXPECT_EQ(Tickets(), 1);
  EXPECT_EQ(Keyed(), 2);
}

TEST_F(SideChannelClusterTest, LargeBoolTensorCrosses) {
  StartServers(true, true);
  auto session = NewClusterSession();
  Tensor bi(DT_BOOL, TensorShape({4 << 20}));
  for (int64_t i = 0; i < bi.NumElements(); ++i) bi.flat<bool>()[i] = i % 3 == 0;
  std::vector<Tensor> out;
  const int64_t before = Served();
  absl::Status s = session->Run({{"bi", bi}}, {"bo"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Served(), before + 1);
  ASSERT_EQ(out[0].NumElements(), bi.NumElements());
  EXPECT_EQ(std::memcmp(out[0].raw_data(), bi.raw_data(), bi.TotalBytes()), 0);
}

TEST_F(SideChannelClusterTest, SmallStringAndDeadTensorsNeedNoTicket) {
  StartServers(true, true);
  auto session = NewClusterSession();
  const int64_t before = Tickets();
  ExpectPatternCrosses(session.get(), 1000);
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"s", "m", "m:1"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<std::string>()[0], "beside");
  EXPECT_EQ(out[0].flat<std::string>()[1], "grpc");
  EXPECT_EQ(out[1].scalar<float>(), 7.0f);  // the dead branch crossed as dead
  EXPECT_EQ(out[2].scalar<int32_t>(), 1);
  EXPECT_EQ(Tickets(), before);
}

TEST_F(SideChannelClusterTest, ReceivesGoByKeyOnceAReplyNamedThePort) {
  StartServers(true, true);
  auto session = NewClusterSession();
  const SideChannelServer* side = servers_[0]->side_channel();
  ASSERT_NE(side, nullptr);
  // The first receive asks over gRPC; its reply names the side port.
  ExpectPatternCrosses(session.get(), 1000);
  const int64_t keyed = side->keyed_served();
  for (int step = 0; step < 5; ++step) ExpectPatternCrosses(session.get(), 1000 + step);
  EXPECT_EQ(side->keyed_served(), keyed + 5);
  // Strings and dead tensors cross by key as well, intact.
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"s", "m", "m:1"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<std::string>()[0], "beside");
  EXPECT_EQ(out[1].scalar<float>(), 7.0f);
  EXPECT_EQ(out[2].scalar<int32_t>(), 1);
  EXPECT_EQ(side->keyed_served(), keyed + 7);
  // A large one's bytes follow its keyed reply: no ticket.
  const int64_t tickets = Tickets();
  ExpectPatternCrosses(session.get(), kLarge);
  EXPECT_EQ(Tickets(), tickets);
  EXPECT_EQ(side->keyed_served(), keyed + 8);
}

// Once task 1 has asked task 0 by key (its hello names its own side
// channel's port), task 0 pushes the small tensors task 1 is not asking for
// yet. Whichever way each comes, every step gets its values intact.
TEST_F(SideChannelClusterTest, SmallTensorsArePushedOnceTheReceiverSaidWhereItListens) {
  StartServers(true, true, /*push=*/true);
  auto session = NewClusterSession();
  const SideChannelServer* consumer = servers_[1]->side_channel();
  ASSERT_NE(consumer, nullptr);
  int steps = 0;
  // Whether a push or the receive's request comes first is up to timing;
  // within a few steps a push does.
  for (; steps < 200 && consumer->pushes_received() == 0; ++steps) {
    ExpectPatternCrosses(session.get(), 1000 + steps);
  }
  EXPECT_GT(consumer->pushes_received(), 0) << "after " << steps << " steps";
  for (int step = 0; step < 20; ++step) ExpectPatternCrosses(session.get(), 100 + step);
  // Strings and dead tensors too.
  std::vector<Tensor> out;
  for (int step = 0; step < 5; ++step) {
    absl::Status s = session->Run({}, {"s", "m", "m:1"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].flat<std::string>()[0], "beside");
    EXPECT_EQ(out[1].scalar<float>(), 7.0f);
    EXPECT_EQ(out[2].scalar<int32_t>(), 1);
  }
  // Once task 0 knows the way, steps go by push, not by key.
  EXPECT_GT(consumer->pushes_received(), 20);
  EXPECT_TRUE(session->Close().ok());
}

TEST_F(SideChannelClusterTest, OffEverywhereIsAllGrpc) {
  StartServers(false, false);
  EXPECT_EQ(servers_[0]->side_channel(), nullptr);
  EXPECT_EQ(servers_[1]->side_channel(), nullptr);
  auto session = NewClusterSession();
  ExpectPatternCrosses(session.get(), kLarge);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"s", "m"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<std::string>()[1], "grpc");
}

TEST_F(SideChannelClusterTest, ProducerWithoutSideChannelIsReadOverGrpc) {
  StartServers(false, true);
  auto session = NewClusterSession();
  ExpectPatternCrosses(session.get(), kLarge);
}

TEST_F(SideChannelClusterTest, ConsumerWithoutSideChannelIsServedOverGrpc) {
  StartServers(true, false);
  auto session = NewClusterSession();
  const int64_t before = Served();
  ExpectPatternCrosses(session.get(), kLarge);
  EXPECT_EQ(Served(), before);  // the consumer never asked
}

// True iff the peer closes `fd` within 20 s.
bool ClosedByPeer(int fd) {
  bool closed = false;
  test::ReadUntilClosed(fd, &closed);
  return closed;
}

TEST_F(SideChannelClusterTest, StrangersOnTheSidePortGetNothing) {
  StartServers(true, true);
  const SideChannelServer* side = servers_[0]->side_channel();
  ASSERT_NE(side, nullptr);
  auto session = NewClusterSession();
  ExpectPatternCrosses(session.get(), kLarge);
  auto dial = [&] { return test::Dial(side->port()); };
  // Garbage.
  int fd = dial();
  const std::string junk(64, '\x7f');
  send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
  EXPECT_TRUE(ClosedByPeer(fd));
  close(fd);
  // A well-formed request with an invented ticket.
  fd = dial();
  SideChannelTicket invented{};
  invented.fill(0xab);
  std::array<char, kSideChannelRequestBytes> req;
  EncodeSideChannelRequest(invented, &req);
  send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  EXPECT_TRUE(ClosedByPeer(fd));
  close(fd);
  // The server still serves, over the side channel.
  const int64_t before = Served();
  ExpectPatternCrosses(session.get(), kLarge);
  EXPECT_EQ(Served(), before + 1);
}

}  // namespace
}  // namespace distflow
