#include "distflow/distributed_runtime/rpc/grpc_call_queues.h"

namespace distflow {

ServerCallQueues::ServerCallQueues(grpc::ServerBuilder* builder, int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) queues_.push_back(builder->AddCompletionQueue());
}

ServerCallQueues::~ServerCallQueues() { Shutdown(); }

void ServerCallQueues::Start() {
  {
    absl::MutexLock lock(&mu_);
    started_ = true;
  }
  for (auto& cq : queues_) {
    for (auto& method : methods_) {
      for (int i = 0; i < method->pending; ++i) method->Post(this, cq.get());
    }
  }
  for (auto& cq : queues_) threads_.emplace_back([this, q = cq.get()] { Poll(q); });
}

bool ServerCallQueues::PostIfRunning(const std::function<void()>& post) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return false;
  post();
  return true;
}

void ServerCallQueues::Poll(grpc::ServerCompletionQueue* cq) {
  void* tag = nullptr;
  bool ok = false;
  while (cq->Next(&tag, &ok)) {
    Tag* t = static_cast<Tag*>(tag);
    t->call->OnEvent(t->kind, ok);
  }
}

void ServerCallQueues::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
    // Their completions must come before the queues can drain.
    for (grpc::ClientContext* ctx : client_calls_) ctx->TryCancel();
    for (auto& cq : queues_) cq->Shutdown();
  }
  for (std::thread& t : threads_) t.join();
  const bool polled = !threads_.empty();
  threads_.clear();
  if (!polled) {
    // Nothing was posted, but the queues must still be drained.
    for (auto& cq : queues_) {
      void* tag = nullptr;
      bool ok = false;
      while (cq->Next(&tag, &ok)) {
      }
    }
  }
}

}  // namespace distflow
