// The calls a server serves on its completion queue (RunStep, RunCallable,
// RunGraph, RecvTensor, GetStatus), reached with plain stubs: strangers are
// refused, a caller that gives up cancels its step, a burst of calls larger
// than the requests posted is all served, Stop ends calls in flight at the
// end of its grace period, and a call that ends within it gets its own answer.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/graph/graph_io.h"
#include "distflow/master_service.grpc.pb.h"
#include "distflow/worker_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "queue_graph.h"

namespace distflow {
namespace {

using test::kQueueGraph;
using ::testing::HasSubstr;

class CallQueuesTest : public ::testing::Test {
 protected:
  // A server given a token makes it the process's: take it back, so the
  // tests after this one in the same process start without one.
  void TearDown() override {
    server_.reset();
    SetProcessToken("");
  }

  void StartServer(std::string token = "") {
    absl::StatusOr<ServerDef> def = MakeServerDef("worker=127.0.0.1:0", "worker", 0);
    ASSERT_TRUE(def.ok()) << def.status();
    GrpcServerOptions options;
    options.token = std::move(token);
    auto server = GrpcServer::Create(*def, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_TRUE(server_->Start().ok());
    // A plain channel: no process token, as a stranger's.
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->bound_port()),
                                   grpc::InsecureChannelCredentials());
    master_ = MasterService::NewStub(channel_);
    worker_ = WorkerService::NewStub(channel_);
  }

  std::string CreateQueueSession() {
    CreateSessionRequest req;
    EXPECT_TRUE(ParseGraphDefText(kQueueGraph, req.mutable_graph_def()).ok());
    CreateSessionResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status s = master_->CreateSession(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.session_handle();
  }

  // A step fetching `fetch` (or running `target`) within `timeout`.
  grpc::Status Step(const std::string& handle, const std::string& fetch, const std::string& target,
                    std::chrono::milliseconds timeout, RunStepResponse* resp,
                    grpc::ClientContext* ctx = nullptr) {
    RunStepRequest req;
    req.set_session_handle(handle);
    if (!fetch.empty()) req.add_fetch(fetch);
    if (!target.empty()) req.add_target(target);
    grpc::ClientContext own;
    if (ctx == nullptr) ctx = &own;
    ctx->set_deadline(std::chrono::system_clock::now() + timeout);
    return master_->RunStep(ctx, req, resp);
  }

  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<MasterService::Stub> master_;
  std::unique_ptr<WorkerService::Stub> worker_;
};

TEST_F(CallQueuesTest, StrangersAreRefusedOnEveryQueueServedMethod) {
  StartServer("queue-test-token");
  const auto deadline = [] { return std::chrono::system_clock::now() + std::chrono::seconds(10); };
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    RunStepRequest req;
    req.set_session_handle("any");
    RunStepResponse resp;
    grpc::Status s = master_->RunStep(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr("requires a token"));
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    RunCallableRequest req;
    RunCallableResponse resp;
    grpc::Status s = master_->RunCallable(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    RunGraphRequest req;
    req.set_graph_handle("any");
    RunGraphResponse resp;
    grpc::Status s = worker_->RunGraph(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    ctx.AddMetadata("x-distflow-token", "wrong");
    GetStatusRequest req;
    GetStatusResponse resp;
    grpc::Status s = worker_->GetStatus(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    EXPECT_EQ(resp.device_attributes_size(), 0);
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    RecvTensorRequest req;
    req.set_step_id(1);
    req.set_rendezvous_key("/job:worker/replica:0/task:0/device:CPU:0;0;x;0:0");
    RecvTensorResponse resp;
    grpc::Status s = worker_->RecvTensor(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
}

TEST_F(CallQueuesTest, MalformedRecvTensorRequestIsAnError) {
  StartServer();
  grpc::GenericStub generic(channel_);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const char garbage[] = "\xff\xff\xff\xff not a protobuf";
  grpc::Slice slice(garbage, sizeof(garbage) - 1);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  generic.UnaryCall(&ctx, "/distflow.WorkerService/RecvTensor", grpc::StubOptions(), &request,
                    &response, [&](grpc::Status s) {
                      status = s;
                      done.Notify();
                    });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("malformed RecvTensorRequest"));
}

TEST_F(CallQueuesTest, ACallerThatGivesUpCancelsItsStep) {
  StartServer();
  const std::string handle = CreateQueueSession();
  ASSERT_FALSE(handle.empty());
  // The dequeue waits on the empty queue until its caller's deadline. The
  // master sets no step deadline of its own: only the call's end can stop it.
  RunStepResponse resp;
  grpc::Status s = Step(handle, "deq", "", std::chrono::milliseconds(300), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  // A caller that cancels outright.
  {
    grpc::ClientContext ctx;
    std::thread canceller([&ctx] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ctx.TryCancel();
    });
    s = Step(handle, "deq", "", std::chrono::seconds(30), &resp, &ctx);
    canceller.join();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
  }
  // Had either abandoned step lived on, it would take the 7 enqueued now and
  // the next dequeue would wait in vain.
  ASSERT_TRUE(Step(handle, "", "enq", std::chrono::seconds(30), &resp).ok());
  s = Step(handle, "deq", "", std::chrono::seconds(30), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.tensor_size(), 1);
  Tensor value;
  ASSERT_TRUE(TensorFromProto(resp.tensor(0).tensor(), &value).ok());
  EXPECT_EQ(value.flat<float>()[0], 7.0f);
}

TEST_F(CallQueuesTest, ABurstLargerThanThePostedRequestsIsAllServed) {
  StartServer();
  constexpr int kThreads = 24;
  constexpr int kCalls = 20;
  std::atomic<int> served{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        GetStatusRequest req;
        GetStatusResponse resp;
        if (worker_->GetStatus(&ctx, req, &resp).ok() && resp.device_attributes_size() > 0) {
          served++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(served.load(), kThreads * kCalls);
}

TEST_F(CallQueuesTest, StopEndsStepsInFlight) {
  StartServer();
  const std::string handle = CreateQueueSession();
  ASSERT_FALSE(handle.empty());
  constexpr int kBlocked = 6;
  std::atomic<int> ended{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kBlocked; ++i) {
    threads.emplace_back([&] {
      RunStepResponse resp;
      grpc::Status s = Step(handle, "deq", "", std::chrono::seconds(60), &resp);
      if (!s.ok()) ended++;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  server_->Stop(absl::Milliseconds(200));
  for (auto& t : threads) t.join();
  EXPECT_EQ(ended.load(), kBlocked);
  server_.reset();
}

TEST_F(CallQueuesTest, StopLetsACallInFlightEndWithItsOwnAnswer) {
  StartServer();
  const std::string handle = CreateQueueSession();
  ASSERT_FALSE(handle.empty());
  // A step that waits on an empty queue until its own deadline passes.
  grpc::Status status;
  std::thread step([&] {
    RunStepRequest req;
    req.set_session_handle(handle);
    req.add_fetch("deq");
    req.mutable_options()->set_timeout_in_ms(500);
    RunStepResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    status = master_->RunStep(&ctx, req, &resp);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The grace period outlasts the step: the server answers it before its
  // connections close.
  server_->Stop(absl::Seconds(30));
  step.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_code() << ": " << status.error_message();
  server_.reset();
}

}  // namespace
}  // namespace distflow
