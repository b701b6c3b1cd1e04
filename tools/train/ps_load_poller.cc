#include "train/ps_load_poller.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/worker.pb.h"
#include "distflow/worker_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

PsLoadPoller::PsLoadPoller(std::string ps_job, std::vector<Task> tasks, absl::Duration period)
    : ps_job_(std::move(ps_job)), tasks_(std::move(tasks)), period_(period) {
  loads_.resize(tasks_.size());
  for (size_t i = 0; i < tasks_.size(); ++i) loads_[i].task = tasks_[i].task;
  thread_ = std::thread([this] { Run(); });
}

PsLoadPoller::~PsLoadPoller() {
  stop_.Notify();
  thread_.join();
}

std::vector<PsLoad> PsLoadPoller::loads() const {
  absl::MutexLock l(&mu_);
  return loads_;
}

void PsLoadPoller::Run() {
  // A frozen task delays the others' next answer by a call's deadline, and
  // the poller's end by no more; a busy one on a loaded machine still
  // answers within it.
  const absl::Duration deadline = absl::Seconds(3);
  std::vector<std::unique_ptr<WorkerService::Stub>> stubs(tasks_.size());
  std::vector<std::chrono::steady_clock::time_point> answered_at(tasks_.size());
  do {
    for (size_t i = 0; i < tasks_.size() && !stop_.HasBeenNotified(); ++i) {
      const std::string name = absl::StrCat("/job:", ps_job_, "/replica:0/task:", tasks_[i].task,
                                            " at ", tasks_[i].address);
      absl::Status status;
      GetStatusResponse resp;
      if (stubs[i] == nullptr) {
        absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = NewGrpcChannel(tasks_[i].address);
        if (channel.ok()) {
          stubs[i] = WorkerService::NewStub(*channel);
        } else {
          status = channel.status();
        }
      }
      if (stubs[i] != nullptr) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoMilliseconds(deadline));
        status = FromGrpcStatus(stubs[i]->GetStatus(&context, GetStatusRequest(), &resp));
      }
      const auto now = std::chrono::steady_clock::now();
      absl::MutexLock l(&mu_);
      PsLoad& load = loads_[i];
      load.polled = true;
      if (!status.ok()) {
        load.answered = false;
        load.error = absl::StrCat(name, ": ", status.message().substr(0, 300));
        load.bytes_per_second = -1;
        continue;
      }
      const int64_t before = load.bytes_sent + load.bytes_received;
      const int64_t after = resp.tensor_bytes_sent() + resp.tensor_bytes_received();
      const double seconds = std::chrono::duration<double>(now - answered_at[i]).count();
      load.bytes_per_second =
          load.answered && after >= before && seconds > 0 ? (after - before) / seconds : -1;
      load.answered = true;
      load.ever_answered = true;
      load.error.clear();
      load.variables = resp.variables();
      load.variable_bytes = resp.variable_bytes();
      load.bytes_sent = resp.tensor_bytes_sent();
      load.bytes_received = resp.tensor_bytes_received();
      answered_at[i] = now;
    }
  } while (!stop_.WaitForNotificationWithTimeout(period_));
}

}  // namespace distflow
