#include "distflow/common_runtime/direct_session.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/intra_process_rendezvous.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/rendezvous.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_partition.h"
#include "distflow/graph/subgraph.h"
#include "distflow/graph/tensor_id.h"

namespace distflow {

// Everything one run signature needs, built once and shared by its runs.
struct DirectSession::Executable {
  struct Feed {
    Rendezvous::ParsedKey key;
    DataType dtype = DT_INVALID;
    // The Placeholder's declared shape; unknown rank when not a Placeholder.
    PartialTensorShape shape;
  };
  // By feed name as given.
  absl::flat_hash_map<std::string, Feed> feeds;
  // Parallel to the signature's fetches.
  std::vector<Rendezvous::ParsedKey> fetch_keys;
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<GraphDef> partition_graphs;
};

namespace {

constexpr char kTaskPrefix[] = "/job:localhost/replica:0/task:0";

int ThreadsOrCores(int threads) {
  return threads > 0 ? threads : NumSchedulableCPUs();
}

bool IsTransferOp(const std::string& op) {
  return op == "_Send" || op == "_Recv" || op == "_HostSend" ||
         op == "_HostRecv";
}

absl::Status ClientKey(const DeviceAttributes& client,
                       const std::string& tensor_name,
                       Rendezvous::ParsedKey* key) {
  return Rendezvous::ParseKey(
      Rendezvous::CreateKey(client.name(), client.incarnation(), client.name(),
                            tensor_name, FrameAndIter()),
      key);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NewDirectSession(
    const SessionOptions& options) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<DirectSession> session,
                      DirectSession::Make(options));
  return std::unique_ptr<Session>(std::move(session));
}

absl::StatusOr<std::unique_ptr<DirectSession>> DirectSession::Make(
    const SessionOptions& options) {
  if (options.config.inter_op_parallelism_threads() < 0) {
    return errors::InvalidArgument(
        "inter_op_parallelism_threads must be >= 0, got ",
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
  std::unique_ptr<DirectSession> session(
      new DirectSession(options, std::move(mgr)));
  for (const Device* d : session->device_mgr_->ListDevices()) {
    DF_RETURN_IF_ERROR(session->device_set_.AddDevice(d->attributes()));
  }
  DF_RETURN_IF_ERROR(
      session->device_set_.SetClientDevice(session->client_device_->name()));
  return session;
}

DirectSession::DirectSession(const SessionOptions& options,
                             std::unique_ptr<DeviceMgr> device_mgr)
    : options_(options),
      device_mgr_(std::move(device_mgr)),
      client_device_(device_mgr_->HostCPU()),
      inter_op_pool_(
          "inter_op",
          ThreadsOrCores(options.config.inter_op_parallelism_threads())),
      runner_([this](Executor::Closure c) {
        inter_op_pool_.Schedule(std::move(c));
      }) {}

DirectSession::~DirectSession() {
  Close().IgnoreError();
  absl::MutexLock l(&run_mu_);
  run_mu_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &running_steps_));
}

absl::Status DirectSession::ResetGraphLocked(GraphDef graph_def) {
  auto graph = std::make_unique<Graph>();
  GraphConstructorOptions opts;
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph(opts, graph_def, graph.get()));
  graph_def_ = std::move(graph_def);
  graph_ = std::move(graph);
  return absl::OkStatus();
}

absl::Status DirectSession::Create(const GraphDef& graph) {
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
  }
  absl::MutexLock l(&graph_mu_);
  if (graph_ != nullptr) {
    return errors::FailedPrecondition(
        "Session already has a graph; use Extend to add nodes");
  }
  return ResetGraphLocked(graph);
}

absl::Status DirectSession::Extend(const GraphDef& graph) {
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
  }
  absl::MutexLock l(&graph_mu_);
  if (graph_ == nullptr) return ResetGraphLocked(graph);
  GraphDef merged = graph_def_;
  for (const NodeDef& n : graph.node()) *merged.add_node() = n;
  if (graph.has_versions()) *merged.mutable_versions() = graph.versions();
  for (const auto& f : graph.library().function()) {
    *merged.mutable_library()->add_function() = f;
  }
  // Cached executables stay valid: existing nodes cannot change.
  return ResetGraphLocked(std::move(merged));
}

absl::Status DirectSession::ListDevices(
    std::vector<DeviceAttributes>* response) {
  *response = device_mgr_->ListDeviceAttributes();
  return absl::OkStatus();
}

absl::Status DirectSession::Close() {
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
  }
  session_cancellation_.StartCancel();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<OpKernel>> DirectSession::GetOrCreateKernel(
    Device* device, const NodeDef& def) {
  auto create = [device, &def]() -> absl::StatusOr<std::shared_ptr<OpKernel>> {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                        KernelRegistry::Global()->CreateKernel(device, def));
    return std::shared_ptr<OpKernel>(std::move(k));
  };
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(def.op());
  if (reg == nullptr || !reg->op_def.is_stateful() || IsTransferOp(def.op())) {
    return create();
  }
  // A stateful node keeps one kernel (and its state) for the whole session,
  // whichever signature's executor runs it.
  const std::string key = absl::StrCat(device->name(), "|", def.name());
  absl::MutexLock l(&kernels_mu_);
  auto it = stateful_kernels_.find(key);
  if (it != stateful_kernels_.end()) return it->second;
  DF_ASSIGN_OR_RETURN(std::shared_ptr<OpKernel> kernel, create());
  stateful_kernels_.emplace(key, kernel);
  return kernel;
}

absl::StatusOr<std::shared_ptr<const DirectSession::Executable>>
DirectSession::GetOrBuildExecutable(const Signature& signature) {
  auto find = [this, &signature]() -> std::shared_ptr<const Executable> {
    absl::MutexLock l(&executables_mu_);
    auto it = executables_.find(signature.key);
    return it == executables_.end() ? nullptr : it->second;
  };
  if (auto found = find()) return found;
  // Builds are serialised by graph_mu_; a thread that waited for another's
  // build of the same signature finds it here.
  absl::MutexLock l(&graph_mu_);
  if (auto found = find()) return found;
  DF_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> built,
                      BuildExecutableLocked(signature));
  absl::MutexLock cache_lock(&executables_mu_);
  executables_.emplace(signature.key, built);
  return built;
}

absl::StatusOr<std::shared_ptr<const DirectSession::Executable>>
DirectSession::BuildExecutableLocked(const Signature& signature) {
  auto exec = std::make_shared<Executable>();
  const DeviceAttributes& client = client_device_->attributes();
  if (graph_ == nullptr) {
    return errors::FailedPrecondition(
        "Session was not created with a graph before Run()");
  }
  auto graph = std::make_unique<Graph>();
  graph->Copy(*graph_);

  subgraph::RewriteGraphMetadata metadata;
  DF_RETURN_IF_ERROR(subgraph::RewriteGraphForExecution(
      graph.get(), signature.feeds, signature.fetches, signature.targets,
      client, /*use_function_convention=*/false, &metadata));

  // Feed dtypes come from the rewrite; declared shapes from the original
  // Placeholders (still in graph_, which the rewrite did not touch).
  absl::flat_hash_map<absl::string_view, const Node*> by_name;
  for (const Node* n : graph_->op_nodes()) by_name[n->name()] = n;
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    const std::string& name = signature.feeds[i];
    Executable::Feed feed;
    feed.dtype = metadata.feed_types[i];
    TensorId id;
    DF_RETURN_IF_ERROR(ParseTensorName(name, &id));
    auto it = by_name.find(id.node);
    if (it != by_name.end() && it->second->attrs().Find("shape") != nullptr &&
        (it->second->type_string() == "Placeholder" ||
         it->second->type_string() == "PlaceholderV2")) {
      DF_RETURN_IF_ERROR(
          GetNodeAttr(it->second->attrs(), "shape", &feed.shape));
    }
    DF_RETURN_IF_ERROR(ClientKey(client, name, &feed.key));
    exec->feeds.emplace(name, std::move(feed));
  }
  for (size_t i = 0; i < signature.fetches.size(); ++i) {
    Rendezvous::ParsedKey key;
    DF_RETURN_IF_ERROR(ClientKey(client, signature.fetches[i], &key));
    exec->fetch_keys.push_back(std::move(key));
  }

  Placer placer(graph.get(), &device_set_, /*default_device=*/"",
                options_.config.allow_soft_placement(),
                options_.config.log_device_placement(), &stateful_placements_);
  DF_RETURN_IF_ERROR(placer.Run());

  PartitionOptions popts;
  popts.node_to_loc = SplitByDevice;
  popts.new_name = [this](absl::string_view prefix) {
    return absl::StrCat(prefix, "/_", edge_name_counter_.fetch_add(1));
  };
  popts.get_incarnation = [this](const std::string& name) -> uint64_t {
    absl::StatusOr<Device*> d = device_mgr_->LookupDevice(name);
    return d.ok() ? (*d)->incarnation() : 0;
  };
  popts.enable_bfloat16_sendrecv =
      options_.config.graph_options().enable_bfloat16_sendrecv();
  std::unordered_map<std::string, GraphDef> partitions;
  DF_RETURN_IF_ERROR(Partition(popts, graph.get(), &partitions));
  std::vector<std::string> device_names;
  for (const Device* d : device_mgr_->ListDevices()) {
    device_names.push_back(d->name());
  }
  DF_RETURN_IF_ERROR(ValidatePartitions(partitions, device_names));

  // Devices in a stable order, so partition_graphs are too.
  std::map<std::string, GraphDef> ordered(partitions.begin(), partitions.end());
  for (auto& [location, graph_def] : ordered) {
    DF_ASSIGN_OR_RETURN(Device * device, device_mgr_->LookupDevice(location));
    auto partition = std::make_unique<Graph>();
    GraphConstructorOptions opts;
    opts.allow_internal_ops = true;
    DF_RETURN_IF_ERROR(
        ConvertGraphDefToGraph(opts, graph_def, partition.get()));
    Executor::Params params;
    params.device = device;
    params.create_kernel = [this, device](const NodeDef& def) {
      return GetOrCreateKernel(device, def);
    };
    DF_ASSIGN_OR_RETURN(
        std::unique_ptr<Executor> executor,
        Executor::Create(std::move(params), std::move(partition)));
    exec->executors.push_back(std::move(executor));
    exec->partition_graphs.push_back(std::move(graph_def));
  }
  return std::shared_ptr<const Executable>(std::move(exec));
}

absl::Status DirectSession::Run(
    const RunOptions& run_options,
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::string>& output_tensor_names,
    const std::vector<std::string>& target_node_names,
    std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  if (outputs == nullptr && !output_tensor_names.empty()) {
    return errors::InvalidArgument("Run needs an outputs vector to fetch into");
  }
  {
    absl::MutexLock l(&run_mu_);
    if (closed_) return errors::Cancelled("Session has been closed");
    ++running_steps_;
  }
  absl::Cleanup step_done = [this] {
    absl::MutexLock l(&run_mu_);
    --running_steps_;
  };

  Signature sig;
  for (const auto& [name, value] : inputs) sig.feeds.push_back(name);
  std::sort(sig.feeds.begin(), sig.feeds.end());
  // Fetches are deduplicated by the tensor they name ("x" is "x:0").
  std::vector<std::string> fetch_canonical;
  std::map<std::string, std::string> unique_fetches;  // canonical -> given
  for (const std::string& name : output_tensor_names) {
    TensorId id;
    absl::Status s = ParseTensorName(name, &id);
    if (!s.ok()) {
      return errors::InvalidArgument("fetch '", name, "': ", s.message());
    }
    if (id.IsControl()) {
      return errors::InvalidArgument("fetch '", name,
                                     "' names a control input, not a tensor");
    }
    fetch_canonical.push_back(absl::StrCat(id.node, ":", id.index));
    unique_fetches.emplace(fetch_canonical.back(), name);
  }
  for (const auto& [canonical, given] : unique_fetches) {
    sig.fetch_canonical.push_back(canonical);
    sig.fetches.push_back(given);
  }
  sig.targets = target_node_names;
  std::sort(sig.targets.begin(), sig.targets.end());
  sig.targets.erase(std::unique(sig.targets.begin(), sig.targets.end()),
                    sig.targets.end());
  // '\x01' and '\x02' cannot occur in tensor or node names.
  sig.key = absl::StrCat(absl::StrJoin(sig.feeds, "\x01"), "\x02",
                         absl::StrJoin(sig.fetch_canonical, "\x01"), "\x02",
                         absl::StrJoin(sig.targets, "\x01"));

  DF_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> executable,
                      GetOrBuildExecutable(sig));

  std::vector<Tensor> fetched;
  DF_RETURN_IF_ERROR(
      RunStep(run_options, *executable, inputs, &fetched, run_metadata));
  if (outputs != nullptr) {
    outputs->clear();
    outputs->reserve(output_tensor_names.size());
    for (const std::string& canonical : fetch_canonical) {
      const size_t index =
          std::distance(sig.fetch_canonical.begin(),
                        std::lower_bound(sig.fetch_canonical.begin(),
                                         sig.fetch_canonical.end(), canonical));
      outputs->push_back(fetched[index]);
    }
  }
  if (run_metadata != nullptr && run_options.output_partition_graphs()) {
    for (const GraphDef& g : executable->partition_graphs) {
      *run_metadata->add_partition_graphs() = g;
    }
  }
  return absl::OkStatus();
}

absl::Status DirectSession::RunStep(
    const RunOptions& run_options, const Executable& executable,
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    std::vector<Tensor>* fetched, RunMetadata* run_metadata) {
  const int64_t step_id = next_step_id_.fetch_add(1);
  RefPtr<Rendezvous> rendezvous(new IntraProcessRendezvous(device_mgr_.get()));

  Rendezvous::Args client_args;
  client_args.device = client_device_;
  for (const auto& [name, value] : inputs) {
    const Executable::Feed& feed = executable.feeds.at(name);
    if (value.dtype() != feed.dtype) {
      return errors::InvalidArgument("feed '", name,
                                     "': expected a value of type ",
                                     DataTypeString(feed.dtype), " but got ",
                                     DataTypeString(value.dtype()));
    }
    if (!feed.shape.IsCompatibleWith(value.shape())) {
      return errors::InvalidArgument(
          "feed '", name, "': a value of shape ", value.shape().DebugString(),
          " does not fit the placeholder's shape ", feed.shape.DebugString());
    }
    DF_RETURN_IF_ERROR(rendezvous->Send(feed.key, client_args, value, false));
  }

  CancellationManager step_cancellation;
  const CancellationToken token =
      session_cancellation_.get_cancellation_token();
  if (!session_cancellation_.RegisterCallback(
          token, [&step_cancellation] { step_cancellation.StartCancel(); })) {
    return errors::Cancelled("Session has been closed");
  }
  absl::Cleanup unlink = [this, token] {
    session_cancellation_.DeregisterCallback(token);
  };

  std::unique_ptr<StepStatsCollector> collector;
  if (run_options.trace_level() != RunOptions::NO_TRACE &&
      run_metadata != nullptr) {
    collector = std::make_unique<StepStatsCollector>();
  }

  absl::Status status;
  if (!executable.executors.empty()) {
    // Shared with the barrier's callback, which may still be unwinding when
    // this function returns.
    struct StepDone {
      absl::Notification notification;
      absl::Status status;
    };
    auto done = std::make_shared<StepDone>();
    auto* barrier =
        new ExecutorBarrier(static_cast<int>(executable.executors.size()),
                            [done](const absl::Status& s) {
                              done->status = s;
                              done->notification.Notify();
                            });
    Executor::Args args;
    args.step_id = step_id;
    args.rendezvous = rendezvous.get();
    args.cancellation_manager = &step_cancellation;
    args.stats_collector = collector.get();
    args.runner = runner_;
    for (const auto& executor : executable.executors) {
      executor->RunAsync(args, barrier->Get());
    }
    const int64_t timeout_ms = run_options.timeout_in_ms() > 0
                                   ? run_options.timeout_in_ms()
                                   : options_.config.operation_timeout_in_ms();
    bool timed_out = false;
    if (timeout_ms > 0) {
      if (!done->notification.WaitForNotificationWithTimeout(
              absl::Milliseconds(timeout_ms))) {
        timed_out = true;
        const absl::Status deadline = errors::DeadlineExceeded(
            "Step ", step_id, " timed out after ", timeout_ms, " ms");
        step_cancellation.StartCancel();
        rendezvous->StartAbort(deadline);
      }
    }
    done->notification.WaitForNotification();
    status = done->status;
    if (timed_out) {
      status = errors::DeadlineExceeded("Step ", step_id, " timed out after ",
                                        timeout_ms, " ms");
    }
  }
  if (collector != nullptr) {
    collector->Finalize(run_metadata->mutable_step_stats());
  }
  DF_RETURN_IF_ERROR(status);

  // Every executor is done, so every fetched value is already there.
  fetched->reserve(executable.fetch_keys.size());
  for (const Rendezvous::ParsedKey& key : executable.fetch_keys) {
    Tensor value;
    bool is_dead = false;
    absl::Status s =
        rendezvous->Recv(key, client_args, &value, &is_dead, /*timeout_ms=*/1);
    if (absl::IsDeadlineExceeded(s)) {
      return errors::Internal("fetch '", key.edge_name,
                              "' was not produced by the step");
    }
    DF_RETURN_IF_ERROR(s);
    if (is_dead) {
      return DeadFetchError(key.edge_name);
    }
    fetched->push_back(std::move(value));
  }
  return absl::OkStatus();
}

}  // namespace distflow
