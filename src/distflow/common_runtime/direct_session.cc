#include "distflow/common_runtime/direct_session.h"

#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/executor_set.h"
#include "distflow/common_runtime/intra_process_rendezvous.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/common_runtime/step_watchdog.h"
#include "distflow/core/status.h"
#include "distflow/framework/call_frame.h"
#include "distflow/framework/rendezvous.h"

namespace distflow {

// Everything one run signature needs, built once and shared by its runs.
// Feed i is argument i of a step's call frame, fetch i its result i.
struct DirectSession::Executable {
  std::unique_ptr<ClientGraph> client_graph;
  std::unique_ptr<ExecutorSet> executors;
};

namespace {

constexpr char kTaskPrefix[] = "/job:localhost/replica:0/task:0";

int ThreadsOrCores(int threads) { return threads > 0 ? threads : NumSchedulableCPUs(); }

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NewDirectSession(const SessionOptions& options) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<DirectSession> session, DirectSession::Make(options));
  return std::unique_ptr<Session>(std::move(session));
}

namespace {
// The empty target: an in-process session (see NewSession).
[[maybe_unused]] const bool kRegistered = (RegisterSessionFactory("", NewDirectSession), true);
}  // namespace

absl::StatusOr<std::unique_ptr<DirectSession>> DirectSession::Make(const SessionOptions& options) {
  if (options.config.inter_op_parallelism_threads() < 0) {
    return errors::InvalidArgument("inter_op_parallelism_threads must be >= 0, got ",
                                   options.config.inter_op_parallelism_threads());
  }
  for (const auto& [type, count] : options.config.device_count()) {
    if (type != kDeviceCpu && count > 0) {
      return errors::InvalidArgument("device_count asks for ", count, " ", type,
                                     " devices; only CPU devices exist here");
    }
  }
  DF_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> devices,
                      CreateCpuDevices(options.config, kTaskPrefix));
  if (devices.empty()) {
    return errors::InvalidArgument(
        "A session needs at least one CPU device; device_count[\"CPU\"] is 0");
  }
  auto mgr = std::make_unique<DeviceMgr>(std::move(devices));
  std::unique_ptr<DirectSession> session(new DirectSession(options, std::move(mgr)));
  for (const Device* d : session->device_mgr_->ListDevices()) {
    DF_RETURN_IF_ERROR(session->device_set_.AddDevice(d->attributes()));
  }
  DF_RETURN_IF_ERROR(session->device_set_.SetClientDevice(session->client_device_->name()));
  return session;
}

DirectSession::DirectSession(const SessionOptions& options, std::unique_ptr<DeviceMgr> device_mgr)
    : options_(options),
      device_mgr_(std::move(device_mgr)),
      client_device_(device_mgr_->HostCPU()),
      inter_op_pool_("inter_op", ThreadsOrCores(options.config.inter_op_parallelism_threads())),
      runner_([this](Executor::Closure c) { inter_op_pool_.Schedule(std::move(c)); }),
      execution_state_(
          GraphExecutionState::Options{&device_set_, options.config.allow_soft_placement(),
                                       options.config.log_device_placement(),
                                       options.config.graph_options().enable_bfloat16_sendrecv(),
                                       "_", options.config.feed_shapes_unchecked()}),
      kernels_(std::make_shared<SessionKernels>()) {}

DirectSession::~DirectSession() {
  Close().IgnoreError();
  absl::MutexLock l(&run_mu_);
  run_mu_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &running_steps_));
}

absl::Status DirectSession::Create(const GraphDef& graph) {
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return SessionClosedError();
  }
  return execution_state_.Create(graph);
}

absl::Status DirectSession::Extend(const GraphDef& graph) {
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return SessionClosedError();
  }
  return execution_state_.Extend(graph);
}

absl::Status DirectSession::ListDevices(std::vector<DeviceAttributes>* response) {
  *response = device_mgr_->ListDeviceAttributes();
  return absl::OkStatus();
}

absl::Status DirectSession::CancelRunningSteps() {
  std::shared_ptr<CancellationManager> running;
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return SessionClosedError();
    running = std::exchange(running_cancellation_, std::make_shared<CancellationManager>());
  }
  running->StartCancel();
  return absl::OkStatus();
}

absl::Status DirectSession::Close() {
  std::shared_ptr<CancellationManager> running;
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    running = running_cancellation_;
  }
  running->StartCancel();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const DirectSession::Executable>>
DirectSession::GetOrBuildExecutable(const RunSignature& signature) {
  auto find = [this, &signature]() -> std::shared_ptr<const Executable> {
    absl::MutexLock l(&executables_mu_);
    auto it = executables_.find(signature.key);
    return it == executables_.end() ? nullptr : it->second;
  };
  if (auto found = find()) return found;
  // A thread that waited for another's build of the same signature finds
  // it here.
  absl::MutexLock build_lock(&build_mu_);
  if (auto found = find()) return found;

  auto exec = std::make_shared<Executable>();
  DF_ASSIGN_OR_RETURN(exec->client_graph,
                      execution_state_.BuildClientGraph(signature, PartitionBy::kDevice,
                                                        subgraph::FeedFetchConvention::kCallFrame));
  DF_ASSIGN_OR_RETURN(
      exec->executors,
      ExecutorSet::Create(std::move(exec->client_graph->partitions), device_mgr_.get(), kernels_));
  exec->client_graph->partitions.clear();
  std::shared_ptr<const Executable> built = std::move(exec);
  absl::MutexLock cache_lock(&executables_mu_);
  executables_.emplace(signature.key, built);
  return built;
}

absl::Status DirectSession::Run(const RunOptions& run_options,
                                const std::vector<std::pair<std::string, Tensor>>& inputs,
                                const std::vector<std::string>& output_tensor_names,
                                const std::vector<std::string>& target_node_names,
                                std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  if (outputs == nullptr && !output_tensor_names.empty()) {
    return errors::InvalidArgument("Run needs an outputs vector to fetch into");
  }
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return SessionClosedError();
    ++running_steps_;
  }
  absl::Cleanup step_done = [this] {
    absl::MutexLock l(&run_mu_);
    --running_steps_;
  };

  std::vector<std::string> feed_names;
  feed_names.reserve(inputs.size());
  for (const auto& [name, value] : inputs) feed_names.push_back(name);
  RunSignature sig;
  RunSignatureIndex index;
  DF_RETURN_IF_ERROR(
      NormalizeRunSignature(feed_names, output_tensor_names, target_node_names, &sig, &index));
  DF_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> executable, GetOrBuildExecutable(sig));

  std::vector<Tensor> fetched;
  DF_RETURN_IF_ERROR(RunStep(run_options, *executable, inputs, index, &fetched, run_metadata));
  if (outputs != nullptr) {
    outputs->clear();
    outputs->reserve(output_tensor_names.size());
    for (int i : index.fetch_index) outputs->push_back(fetched[i]);
  }
  if (run_metadata != nullptr && run_options.output_partition_graphs()) {
    for (const GraphDef& g : executable->executors->partition_graphs()) {
      *run_metadata->add_partition_graphs() = g;
    }
  }
  return absl::OkStatus();
}

absl::Status DirectSession::RunStep(const RunOptions& run_options, const Executable& executable,
                                    const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    const RunSignatureIndex& index, std::vector<Tensor>* fetched,
                                    RunMetadata* run_metadata) {
  const int64_t step_id = next_step_id_.fetch_add(1);
  RefPtr<Rendezvous> rendezvous(new IntraProcessRendezvous(device_mgr_.get()));

  const RunSignature& signature = executable.client_graph->signature;
  std::vector<Tensor> args(signature.feeds.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& [name, value] = inputs[i];
    const int f = index.feed_index[i];
    DF_RETURN_IF_ERROR(executable.client_graph->CheckFeed(f, name, value.dtype(), value.shape()));
    args[f] = value;
  }
  CallFrame call_frame(std::move(args), signature.fetches.size());

  CancellationManager step_cancellation;
  // The step is linked to the running steps' manager, which Close and
  // CancelRunningSteps cancel.
  std::shared_ptr<CancellationManager> running;
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return SessionClosedError();
    running = running_cancellation_;
  }
  const CancellationToken token = running->get_cancellation_token();
  if (!running->RegisterCallback(token, [&step_cancellation, &rendezvous, step_id] {
        step_cancellation.StartCancel();
        rendezvous->StartAbort(errors::Cancelled("Step ", step_id, " was cancelled"));
      })) {
    return errors::Cancelled("Step ", step_id, " was cancelled");
  }
  absl::Cleanup unlink = [&running, token] { running->DeregisterCallback(token); };

  std::unique_ptr<StepStatsCollector> collector;
  if (run_options.trace_level() != RunOptions::NO_TRACE && run_metadata != nullptr) {
    collector = std::make_unique<StepStatsCollector>();
  }

  absl::Status status;
  if (executable.executors->size() > 0) {
    // Shared with the barrier's callback, which may still be unwinding when
    // this function returns.
    struct StepDone {
      absl::Notification notification;
      absl::Status status;
    };
    auto done = std::make_shared<StepDone>();
    Executor::Args args;
    args.step_id = step_id;
    args.rendezvous = rendezvous.get();
    args.call_frame = &call_frame;
    args.cancellation_manager = &step_cancellation;
    args.stats_collector = collector.get();
    args.runner = runner_;
    // This thread only waits for the step: it runs the step's start.
    args.inline_start = true;
    const int64_t timeout_ms = run_options.timeout_in_ms() > 0
                                   ? run_options.timeout_in_ms()
                                   : options_.config.operation_timeout_in_ms();
    if (timeout_ms > 0) args.deadline = absl::Now() + absl::Milliseconds(timeout_ms);
    executable.executors->RunAsync(args, [done](const absl::Status& s) {
      done->status = s;
      done->notification.Notify();
    });
    absl::Status deadline;
    {
      StepWatchdog watchdog(absl::StrCat("step ", step_id), rendezvous.get());
      if (timeout_ms > 0 && !done->notification.WaitForNotificationWithDeadline(args.deadline)) {
        // What the step waits for, taken before the abort releases it.
        deadline =
            errors::DeadlineExceeded("Step ", step_id, " timed out after ", timeout_ms, " ms, ",
                                     DescribePendingReceives(rendezvous->PendingReceives()));
        step_cancellation.StartCancel();
        rendezvous->StartAbort(deadline);
      }
      done->notification.WaitForNotification();
    }
    status = deadline.ok() ? done->status : deadline;
  }
  if (collector != nullptr) {
    collector->Finalize(run_metadata->mutable_step_stats());
  }
  DF_RETURN_IF_ERROR(status);

  // Every executor is done: a result that was not set is a fetch whose
  // value was dead (its _Retval did not run).
  fetched->reserve(call_frame.num_retvals());
  for (size_t i = 0; i < call_frame.num_retvals(); ++i) {
    if (!call_frame.has_retval(i)) return DeadFetchError(signature.fetches[i]);
    fetched->push_back(call_frame.TakeRetval(i));
  }
  return absl::OkStatus();
}

}  // namespace distflow
