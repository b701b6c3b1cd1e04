// RunGraph on a call stream (grpc_call_stream.h), between two real servers:
// one server's worker client calls the other's worker. Calls share one
// stream and get their own answers; a deadline and a cancel end a call at
// once and its step on the peer; a call id already running is refused; a
// stopped peer fails the calls on the stream and a restarted one serves the
// next; a stranger's call on a stream
// is refused as a unary call is; cross-task steps go on the stream. A
// GrpcSession's steps go on streams to the master (grpc_sync_call_streams.h)
// with a unary call's deadline, cancellation and restart behaviour.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/distributed_runtime/rpc/grpc_session.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/rpc/grpc_worker_client.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/graph/graph_io.h"
#include "distflow/master_service.grpc.pb.h"
#include "distflow/worker_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "queue_graph.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kPeerTask[] = "/job:worker/replica:0/task:1";

// `deq` waits on a queue nothing fills: a step that runs until cancelled.
constexpr char kBlockingGraph[] = R"pb(
  node {
    name: "q"
    op: "FIFOQueueV2"
    device: "/job:worker/replica:0/task:0/device:CPU:0"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
  node {
    name: "deq"
    op: "QueueDequeueV2"
    input: "q"
    device: "/job:worker/replica:0/task:0/device:CPU:0"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
)pb";

// A step's outcome, waited for.
struct Outcome {
  absl::Status status;
  absl::Notification done;
  StatusCallback Callback() {
    return [this](const absl::Status& s) {
      status = s;
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(30)); }
};

std::unique_ptr<GrpcServer> StartServer(const std::string& address, std::string token = "") {
  absl::StatusOr<ServerDef> def = MakeServerDef("worker=" + address, "worker", 0);
  EXPECT_TRUE(def.ok()) << def.status();
  if (!def.ok()) return nullptr;
  GrpcServerOptions options;
  options.token = std::move(token);
  auto server = GrpcServer::Create(*def, options);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  EXPECT_TRUE((*server)->Start().ok());
  return *std::move(server);
}

// The calls of `method` the server answered, and those of them that came on
// a call stream.
RpcStats::Row StatsRow(const GrpcServer& server, const std::string& method) {
  for (const RpcStats::Row& row : server.call_queue()->stats().Rows()) {
    if (row.method == method) return row;
  }
  return RpcStats::Row{method, -1, -1, 0, -1};
}
int64_t Calls(const GrpcServer& server, const std::string& method) {
  return StatsRow(server, method).calls;
}
int64_t Streamed(const GrpcServer& server, const std::string& method) {
  return StatsRow(server, method).streamed;
}

// Waits until `server` has answered `calls` calls of `method` (a call that
// was cancelled or timed out is counted once the server ended it, which may
// come after its caller moved on); true when it has, and no more.
bool CountReaches(const GrpcServer& server, const std::string& method, int64_t calls) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (Calls(server, method) < calls && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  return Calls(server, method) == calls;
}

// Waits until `server` runs no step.
bool NoStepRuns(GrpcServer* server) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    if (server->stats().running_steps.empty()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

class CallStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    caller_ = StartServer("127.0.0.1:0");
    peer_ = StartServer("127.0.0.1:0");
    ASSERT_NE(caller_, nullptr);
    ASSERT_NE(peer_, nullptr);
    Connect();
  }
  void TearDown() override {
    client_.reset();
    peer_.reset();
    caller_.reset();
    SetProcessToken("");
  }

  void Connect() {
    auto channel = NewGrpcChannel(absl::StrCat("127.0.0.1:", peer_->bound_port()));
    ASSERT_TRUE(channel.ok()) << channel.status();
    client_ = std::make_unique<GrpcWorkerClient>(kPeerTask, *channel, nullptr, "127.0.0.1",
                                                 caller_->call_queue());
  }

  // Registers the blocking graph on the peer: its handle.
  std::string RegisterBlockingGraph() {
    RegisterGraphRequest req;
    EXPECT_TRUE(ParseGraphDefText(kBlockingGraph, req.mutable_graph_def()).ok());
    RegisterGraphResponse resp;
    Outcome out;
    client_->RegisterGraphAsync(&req, &resp, nullptr, out.Callback());
    EXPECT_TRUE(out.Wait());
    EXPECT_TRUE(out.status.ok()) << out.status;
    return resp.graph_handle();
  }

  std::unique_ptr<GrpcServer> caller_;
  std::unique_ptr<GrpcServer> peer_;
  std::unique_ptr<GrpcWorkerClient> client_;
};

TEST_F(CallStreamTest, ManyCallsShareOneStreamAndEachGetsItsOwnAnswer) {
  constexpr int kCalls = 40;
  std::vector<RunGraphRequest> reqs(kCalls);
  std::vector<RunGraphResponse> resps(kCalls);
  std::vector<Outcome> outs(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    reqs[i].set_graph_handle(absl::StrCat("no-such-graph-", i));
    reqs[i].set_step_id(100 + i);
    client_->RunGraphAsync(&reqs[i], &resps[i], nullptr, outs[i].Callback());
  }
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(outs[i].Wait());
    EXPECT_FALSE(outs[i].status.ok());
    // The peer's own error, for this call's graph.
    EXPECT_THAT(outs[i].status.message(), HasSubstr(absl::StrCat("no-such-graph-", i, "'")))
        << outs[i].status;
  }
  EXPECT_EQ(Calls(*peer_, "RunGraph"), kCalls);
  EXPECT_EQ(Streamed(*peer_, "RunGraph"), kCalls);
}

TEST_F(CallStreamTest, ADeadlineEndsTheCallAndItsStepOnThePeer) {
  RunGraphRequest req;
  req.set_graph_handle(RegisterBlockingGraph());
  req.set_step_id(7);
  RunGraphResponse resp;
  CallOptions opts;
  opts.set_timeout_ms(300);
  Outcome out;
  client_->RunGraphAsync(&req, &resp, &opts, out.Callback());
  ASSERT_TRUE(out.Wait());
  EXPECT_EQ(out.status.code(), absl::StatusCode::kDeadlineExceeded) << out.status;
  EXPECT_THAT(out.status.message(), HasSubstr(absl::StrCat("RunGraph to ", kPeerTask)));
  // The deadline went with the call: the peer ends the step too.
  EXPECT_TRUE(NoStepRuns(peer_.get()));
  EXPECT_TRUE(CountReaches(*peer_, "RunGraph", 1));
  EXPECT_EQ(Streamed(*peer_, "RunGraph"), 1);
}

TEST_F(CallStreamTest, ACancelEndsTheCallAndItsStepOnThePeer) {
  RunGraphRequest req;
  req.set_graph_handle(RegisterBlockingGraph());
  req.set_step_id(8);
  RunGraphResponse resp;
  CallOptions opts;
  Outcome out;
  client_->RunGraphAsync(&req, &resp, &opts, out.Callback());
  // The step runs on the peer before it is cancelled.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (peer_->stats().running_steps.empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_FALSE(peer_->stats().running_steps.empty());
  opts.StartCancel();
  ASSERT_TRUE(out.Wait());
  EXPECT_EQ(out.status.code(), absl::StatusCode::kCancelled) << out.status;
  EXPECT_TRUE(NoStepRuns(peer_.get()));
  // The stream goes on carrying calls.
  RunGraphRequest next;
  next.set_graph_handle("no-such-graph");
  RunGraphResponse next_resp;
  Outcome next_out;
  client_->RunGraphAsync(&next, &next_resp, nullptr, next_out.Callback());
  ASSERT_TRUE(next_out.Wait());
  EXPECT_THAT(next_out.status.message(), HasSubstr("no-such-graph"));
  EXPECT_TRUE(CountReaches(*peer_, "RunGraph", 2));
  EXPECT_EQ(Streamed(*peer_, "RunGraph"), 2);
}

TEST_F(CallStreamTest, AStoppedPeerFailsTheCallsOnTheStreamAndARestartedOneServesTheNext) {
  const int port = peer_->bound_port();
  RunGraphRequest req;
  req.set_graph_handle(RegisterBlockingGraph());
  req.set_step_id(9);
  RunGraphResponse resp;
  Outcome out;
  client_->RunGraphAsync(&req, &resp, nullptr, out.Callback());
  while (peer_->stats().running_steps.empty()) absl::SleepFor(absl::Milliseconds(10));
  peer_->Stop(absl::Milliseconds(200));
  peer_.reset();
  ASSERT_TRUE(out.Wait());
  EXPECT_FALSE(out.status.ok());
  EXPECT_THAT(out.status.message(), HasSubstr(kPeerTask)) << out.status;
  // A new task on the same port: the client's next call reaches it on a
  // new stream.
  peer_ = StartServer(absl::StrCat("127.0.0.1:", port));
  ASSERT_NE(peer_, nullptr);
  absl::Status last;
  for (int attempt = 0; attempt < 100; ++attempt) {
    RunGraphRequest next;
    next.set_graph_handle("no-such-graph");
    RunGraphResponse next_resp;
    Outcome next_out;
    client_->RunGraphAsync(&next, &next_resp, nullptr, next_out.Callback());
    ASSERT_TRUE(next_out.Wait());
    last = next_out.status;
    // The peer's own answer, not the transport's.
    if (absl::StrContains(last.message(), "no-such-graph")) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_THAT(last.message(), HasSubstr("no-such-graph")) << last;
  EXPECT_GE(Streamed(*peer_, "RunGraph"), 1);
}

TEST_F(CallStreamTest, ARunningCallsIdIsRefusedAndACancelMessageEndsItsCall) {
  const std::string handle = RegisterBlockingGraph();
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", peer_->bound_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = WorkerService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub->RunGraphStream(&ctx);
  RunGraphStreamRequest blocked;
  blocked.set_call_id(1);
  blocked.mutable_request()->set_graph_handle(handle);
  blocked.mutable_request()->set_step_id(11);
  ASSERT_TRUE(stream->Write(blocked));
  // The same id again, while call 1 waits on its queue.
  RunGraphStreamRequest again = blocked;
  again.mutable_request()->set_step_id(12);
  ASSERT_TRUE(stream->Write(again));
  RunGraphStreamResponse reply;
  ASSERT_TRUE(stream->Read(&reply));
  EXPECT_EQ(reply.call_id(), 1u);
  EXPECT_EQ(reply.code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT)) << reply.message();
  EXPECT_THAT(reply.message(), HasSubstr("call 1 is already running on this stream"));
  // The cancel ends call 1 and its step; its reply still comes.
  RunGraphStreamRequest cancel;
  cancel.set_call_id(1);
  cancel.set_cancel(true);
  ASSERT_TRUE(stream->Write(cancel));
  ASSERT_TRUE(stream->Read(&reply));
  EXPECT_EQ(reply.call_id(), 1u);
  EXPECT_EQ(reply.code(), static_cast<int>(grpc::StatusCode::CANCELLED)) << reply.message();
  EXPECT_TRUE(NoStepRuns(peer_.get()));
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_FALSE(stream->Read(&reply));
  grpc::Status end = stream->Finish();
  EXPECT_TRUE(end.ok()) << end.error_message();
}

TEST_F(CallStreamTest, AStrangersCallOnAStreamIsRefused) {
  client_.reset();
  peer_ = StartServer("127.0.0.1:0", "stream-test-token");
  ASSERT_NE(peer_, nullptr);
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", peer_->bound_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = WorkerService::NewStub(channel);
  for (const char* token : {"", "wrong"}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (*token != '\0') ctx.AddMetadata(kTokenMetadataKey, token);
    auto stream = stub->RunGraphStream(&ctx);
    RunGraphStreamRequest msg;
    msg.set_call_id(1);
    msg.mutable_request()->set_graph_handle("any");
    ASSERT_TRUE(stream->Write(msg));
    // A cancel of a call that is not running changes nothing.
    RunGraphStreamRequest cancel;
    cancel.set_call_id(5);
    cancel.set_cancel(true);
    ASSERT_TRUE(stream->Write(cancel));
    RunGraphStreamResponse reply;
    ASSERT_TRUE(stream->Read(&reply));
    EXPECT_EQ(reply.call_id(), 1u);
    EXPECT_EQ(reply.code(), static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) << reply.message();
    EXPECT_FALSE(reply.has_response());
    ASSERT_TRUE(stream->WritesDone());
    // The server ends the stream once its calls are answered.
    EXPECT_FALSE(stream->Read(&reply));
    grpc::Status end = stream->Finish();
    EXPECT_TRUE(end.ok()) << end.error_message();
  }
}

// A step whose graph is partly on another task: the master's RunGraph to it
// and task 0's receive from it go on streams, and the result is right.
TEST(CallStreamClusterTest, CrossTaskStepsAndTheirReceivesGoOnStreams) {
  // Fixed ports: each task must know the other's.
  std::vector<std::unique_ptr<GrpcServer>> servers;
  std::vector<int> ports;
  for (int i = 0; i < 2; ++i) {
    auto probe = StartServer("127.0.0.1:0");
    ASSERT_NE(probe, nullptr);
    ports.push_back(probe->bound_port());
  }
  const std::string spec = absl::StrCat("worker=127.0.0.1:", ports[0], ",127.0.0.1:", ports[1]);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<ServerDef> def = MakeServerDef(spec, "worker", i);
    ASSERT_TRUE(def.ok()) << def.status();
    // Every receive goes over gRPC: no side channel.
    GrpcServerOptions options;
    options.tensor_side_channel = false;
    auto server = GrpcServer::Create(*def, options);
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->Start().ok());
    servers.push_back(*std::move(server));
  }
  // c = a + a on task 0, `a` on task 1: a tensor crosses each step. The
  // client talks to task 0's master.
  constexpr char kAddGraph[] = R"pb(
    node {
      name: "a"
      op: "Const"
      device: "/job:worker/replica:0/task:1"
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
      name: "c"
      op: "AddV2"
      input: "a"
      input: "a"
      device: "/job:worker/replica:0/task:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
  )pb";
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", ports[0]), grpc::InsecureChannelCredentials());
  auto master = MasterService::NewStub(channel);
  CreateSessionRequest create;
  ASSERT_TRUE(ParseGraphDefText(kAddGraph, create.mutable_graph_def()).ok());
  CreateSessionResponse session;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status s = master->CreateSession(&ctx, create, &session);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  constexpr int kSteps = 5;
  for (int i = 0; i < kSteps; ++i) {
    RunStepRequest req;
    req.set_session_handle(session.session_handle());
    req.add_fetch("c:0");
    RunStepResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status s = master->RunStep(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.tensor_size(), 1);
    Tensor value;
    ASSERT_TRUE(TensorFromProto(resp.tensor(0).tensor(), &value).ok());
    EXPECT_EQ(value.flat<float>()[0], 6.0f);
  }
  EXPECT_GE(Streamed(*servers[1], "RunGraph"), kSteps);
  EXPECT_EQ(Streamed(*servers[1], "RunGraph"), Calls(*servers[1], "RunGraph"));
  EXPECT_GE(Streamed(*servers[1], "RecvTensor"), kSteps);
  EXPECT_EQ(Streamed(*servers[1], "RecvTensor"), Calls(*servers[1], "RecvTensor"));
}

std::unique_ptr<GrpcSession> QueueSession(const GrpcServer& server) {
  SessionOptions options;
  options.target = absl::StrCat("grpc://127.0.0.1:", server.bound_port());
  auto session = GrpcSession::Create(options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return nullptr;
  GraphDef graph;
  EXPECT_TRUE(ParseGraphDefText(test::kQueueGraph, &graph).ok());
  EXPECT_TRUE((*session)->Create(graph).ok());
  return *std::move(session);
}

TEST(SessionStreamTest, ADeadlineAndACancelEndTheStepAndTheSessionGoesOn) {
  auto server = StartServer("127.0.0.1:0");
  ASSERT_NE(server, nullptr);
  auto session = QueueSession(*server);
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  RunOptions timed;
  timed.set_timeout_in_ms(300);
  absl::Status s = session->Run(timed, {}, {"deq:0"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  ASSERT_TRUE(NoStepRuns(server.get()));
  {
    std::thread canceller([&] {
      // Once the step runs.
      while (server->stats().running_steps.empty()) absl::SleepFor(absl::Milliseconds(10));
      ASSERT_TRUE(session->CancelRunningSteps().ok());
    });
    s = session->Run(RunOptions(), {}, {"deq:0"}, {}, &out, nullptr);
    canceller.join();
    EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  }
  // Had either abandoned step lived on, it would take the 7 enqueued now
  // and the next dequeue would wait in vain.
  ASSERT_TRUE(session->Run(RunOptions(), {}, {}, {"enq"}, &out, nullptr).ok());
  s = session->Run(RunOptions(), {}, {"deq:0"}, {}, &out, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flat<float>()[0], 7.0f);
  EXPECT_TRUE(CountReaches(*server, "RunStep", 4));
  EXPECT_EQ(Streamed(*server, "RunStep"), 4);
}

TEST(SessionStreamTest, ARestartedMasterIsReachedOnANewStream) {
  auto server = StartServer("127.0.0.1:0");
  ASSERT_NE(server, nullptr);
  const int port = server->bound_port();
  auto session = QueueSession(*server);
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run(RunOptions(), {}, {}, {"enq"}, &out, nullptr).ok());
  server.reset();
  server = StartServer(absl::StrCat("127.0.0.1:", port));
  ASSERT_NE(server, nullptr);
  // The idle stream died with the old master; the step reaches the new one,
  // which knows no such session.
  absl::Status s;
  for (int attempt = 0; attempt < 100; ++attempt) {
    s = session->Run(RunOptions(), {}, {}, {"enq"}, &out, nullptr);
    if (s.code() != absl::StatusCode::kUnavailable) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_THAT(s.message(), HasSubstr("is not found on this master"));
}

TEST(SessionStreamTest, CallablesGoOnTheirOwnStream) {
  auto server = StartServer("127.0.0.1:0");
  ASSERT_NE(server, nullptr);
  auto session = QueueSession(*server);
  ASSERT_NE(session, nullptr);
  CallableOptions options;
  options.add_fetch("v:0");
  GrpcSession::CallableHandle handle = 0;
  ASSERT_TRUE(session->MakeCallable(options, &handle).ok());
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out;
    absl::Status s = session->RunCallable(handle, {}, &out, nullptr);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].flat<float>()[0], 7.0f);
  }
  EXPECT_EQ(Calls(*server, "RunCallable"), 3);
  EXPECT_EQ(Streamed(*server, "RunCallable"), 3);
  // A callable the master does not know is the master's error.
  std::vector<Tensor> out;
  absl::Status s = session->RunCallable(handle + 1000, {}, &out, nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), absl::StatusCode::kUnavailable) << s;
}

}  // namespace
}  // namespace distflow
