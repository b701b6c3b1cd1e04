#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"

namespace distflow {

ServerCallQueue::ServerCallQueue(grpc::ServerBuilder* builder)
    : cq_(builder->AddCompletionQueue()) {}

ServerCallQueue::~ServerCallQueue() { Shutdown(); }

void ServerCallQueue::Start() {
  {
    absl::MutexLock lock(&mu_);
    started_ = true;
  }
  for (auto& method : methods_) {
    for (int i = 0; i < method->pending; ++i) method->Post(this);
  }
  thread_ = std::thread([this] { Poll(); });
}

bool ServerCallQueue::PostIfRunning(const std::function<void()>& post) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return false;
  ++requests_waiting_;
  post();
  return true;
}

void ServerCallQueue::RequestAnswered(bool came) {
  absl::MutexLock lock(&mu_);
  --requests_waiting_;
  if (came) ++calls_running_;
}

void ServerCallQueue::CallEnded() {
  absl::MutexLock lock(&mu_);
  --calls_running_;
}

void ServerCallQueue::CallStarted() {
  absl::MutexLock lock(&mu_);
  ++calls_running_;
}

bool ServerCallQueue::AddClientCall(grpc::ClientContext* ctx, const std::function<void()>& start) {
  absl::MutexLock lock(&mu_);
  if (shutdown_ || !started_) return false;
  client_calls_.insert(ctx);
  start();
  return true;
}

bool ServerCallQueue::RunIfRunning(const std::function<void()>& op) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return false;
  op();
  return true;
}

void ServerCallQueue::RemoveClientCall(grpc::ClientContext* ctx) {
  absl::MutexLock lock(&mu_);
  client_calls_.erase(ctx);
}

bool ServerCallQueue::WaitUntilNoCalls(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return requests_waiting_ == 0 && calls_running_ == 0;
  };
  return mu_.AwaitWithDeadline(absl::Condition(&none), deadline);
}

void ServerCallQueue::Poll() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) {
    Tag* t = static_cast<Tag*>(tag);
    t->call->OnEvent(t->kind, ok);
  }
}

void ServerCallQueue::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
    // Their completions must come before the queue can drain.
    for (grpc::ClientContext* ctx : client_calls_) ctx->TryCancel();
    cq_->Shutdown();
  }
  if (thread_.joinable()) {
    thread_.join();
    return;
  }
  // Never started: nothing was posted, but the queue must still be drained.
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) {
  }
}

}  // namespace distflow
