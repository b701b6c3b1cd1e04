#include "distflow/coordinator/cluster_coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/coordinator/coordinator_worker.h"
#include "distflow/coordinator/failure.h"
#include "distflow/core/status.h"

namespace distflow {

namespace {

const JobDef* FindJob(const ClusterDef& cluster, const std::string& name) {
  for (const JobDef& job : cluster.job()) {
    if (job.name() == name) return &job;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterCoordinator>> ClusterCoordinator::Create(
    CoordinatorOptions options) {
  const JobDef* workers = FindJob(options.cluster, options.worker_job);
  if (workers == nullptr || workers->tasks().empty()) {
    return errors::InvalidArgument("the cluster has no '", options.worker_job,
                                   "' job with tasks; the coordinator needs workers");
  }
  if (FindJob(options.cluster, options.ps_job) == nullptr) {
    return errors::InvalidArgument("the cluster has no '", options.ps_job,
                                   "' job; the coordinator needs parameter servers");
  }
  if (options.max_queued_closures == 0 || options.max_attempts < 1 || options.max_workers < 1 ||
      options.call_timeout <= absl::ZeroDuration() || options.worker_wait <= absl::ZeroDuration() ||
      options.startup_deadline <= absl::ZeroDuration() ||
      options.startup_report_every <= absl::ZeroDuration() ||
      options.recovery_backoff_min <= absl::ZeroDuration() ||
      options.recovery_backoff_max < options.recovery_backoff_min) {
    return errors::InvalidArgument(
        "coordinator options: max_queued_closures, max_attempts and max_workers must be positive, "
        "call_timeout, worker_wait, startup_deadline, startup_report_every and "
        "recovery_backoff_min "
        "positive, recovery_backoff_max >= the "
        "minimum");
  }
  if (options.max_inflight_closures < 1 || options.max_inflight_closures > kMaxInflightClosures) {
    return errors::InvalidArgument("coordinator options: max_inflight_closures must be in [1, ",
                                   kMaxInflightClosures, "], got ", options.max_inflight_closures);
  }
  if (options.ps_recovery_timeout < absl::ZeroDuration() ||
      (options.ps_recovery_timeout > absl::ZeroDuration() && !options.probe_ps)) {
    return errors::InvalidArgument(
        "coordinator options: ps_recovery_timeout must be >= 0, and a positive one needs "
        "probe_ps");
  }
  std::unique_ptr<ClusterCoordinator> coord(new ClusterCoordinator(std::move(options)));
  absl::MutexLock l(&coord->mu_);
  for (const auto& [task, address] : workers->tasks()) {
    auto w = std::make_shared<CoordinatorWorker>(static_cast<WorkerHost*>(coord.get()), task,
                                                 address, WorkerOrigin::kCluster);
    w->Start();
    coord->workers_.push_back(std::move(w));
  }
  return coord;
}

ClusterCoordinator::ClusterCoordinator(CoordinatorOptions options)
    : options_(std::move(options)),
      ps_failure_threshold_(options_.transient_ps_failures >= 0 ? options_.transient_ps_failures
                                                                : TransientPsFailureThreshold()),
      queue_(options_.max_queued_closures) {
  const JobDef* ps = FindJob(options_.cluster, options_.ps_job);
  int max_task = -1;
  if (ps != nullptr) {
    for (const auto& [task, address] : ps->tasks()) max_task = std::max(max_task, task);
  }
  ps_failures_.assign(max_task + 1, 0);
  if (options_.ps_recovery_timeout > absl::ZeroDuration()) {
    PsRecovery::Options ro;
    ro.timeout = options_.ps_recovery_timeout;
    ro.backoff_min = options_.recovery_backoff_min;
    ro.backoff_max = options_.recovery_backoff_max;
    ps_recovery_ = std::make_unique<PsRecovery>(options_.probe_ps, ro);
  }
}

ClusterCoordinator::~ClusterCoordinator() {
  queue_.Stop();
  if (ps_recovery_ != nullptr) ps_recovery_->Stop();
  std::vector<std::shared_ptr<CoordinatorWorker>> workers;
  {
    absl::MutexLock l(&mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w->Stop();
  // Closures nobody will run: their values must not stay pending.
  while (std::shared_ptr<Closure> c = queue_.TakeAfterStop()) c->MarkCancelled();
}

absl::StatusOr<ClusterCoordinator::FunctionId> ClusterCoordinator::RegisterFunction(
    WorkerFunction fn) {
  absl::MutexLock l(&mu_);
  auto f = std::make_shared<RegisteredFunction>();
  f->id = static_cast<FunctionId>(functions_.size());
  f->spec = std::move(fn);
  functions_.push_back(std::move(f));
  return functions_.back()->id;
}

std::shared_ptr<const RegisteredFunction> ClusterCoordinator::function(int id) const {
  absl::MutexLock l(&mu_);
  if (id < 0 || static_cast<size_t>(id) >= functions_.size()) return nullptr;
  return functions_[id];
}

std::vector<std::shared_ptr<const RegisteredFunction>> ClusterCoordinator::functions() const {
  absl::MutexLock l(&mu_);
  return functions_;
}

std::vector<std::shared_ptr<PerWorkerResource>> ClusterCoordinator::resources() const {
  absl::MutexLock l(&mu_);
  return resources_;
}

std::shared_ptr<CoordinatorWorker> ClusterCoordinator::FindWorker(int task) const {
  absl::MutexLock l(&mu_);
  for (const auto& w : workers_) {
    if (w->task() == task) return w;
  }
  return nullptr;
}

absl::StatusOr<std::vector<Tensor>> ClusterCoordinator::RunOnWorker(
    FunctionId fn, int worker_index, const std::vector<Tensor>& args) {
  std::shared_ptr<CoordinatorWorker> w = FindWorker(worker_index);
  if (w == nullptr) return errors::Unavailable("the coordinator has no worker task ", worker_index);
  absl::StatusOr<std::vector<Tensor>> result = w->Run(fn, args);
  // A worker that restarted since its last closure is found out here: its
  // thread recovers it, and the caller may try again.
  if (ClassifyFailure(result.status(), options_.ps_job).kind == FailureKind::kWorker) {
    w->MarkDown(result.status());
  }
  return result;
}

absl::StatusOr<std::vector<Tensor>> ClusterCoordinator::RunClosureOn(
    FunctionId fn, int worker_index, const std::vector<Tensor>& args) {
  std::shared_ptr<CoordinatorWorker> w = FindWorker(worker_index);
  // Unavailable, not NotFound: a closure whose worker was just removed runs
  // again on another one. A failure is handled by the worker's thread.
  if (w == nullptr) return errors::Unavailable("the coordinator has no worker task ", worker_index);
  return w->Run(fn, args);
}

absl::StatusOr<RemoteValue> ClusterCoordinator::Schedule(FunctionId fn,
                                                         std::vector<ClosureArg> args) {
  std::shared_ptr<const RegisteredFunction> f = function(fn);
  if (f == nullptr) return errors::NotFound("no registered function ", fn);
  if (args.size() != f->spec.args.size()) {
    return errors::InvalidArgument("function ", fn, " takes ", f->spec.args.size(),
                                   " arguments, got ", args.size());
  }
  auto closure = std::make_shared<Closure>(
      [this, fn,
       args = std::move(args)](const ClosureContext& ctx) -> absl::StatusOr<std::vector<Tensor>> {
        std::vector<Tensor> resolved;
        resolved.reserve(args.size());
        for (const ClosureArg& arg : args) {
          if (const Tensor* t = std::get_if<Tensor>(&arg)) {
            resolved.push_back(*t);
            continue;
          }
          const PerWorkerValues& pwv = std::get<PerWorkerValues>(arg);
          absl::StatusOr<RemoteValue> value = pwv.Find(ctx.worker_index);
          if (!value.ok()) return value.status();
          absl::StatusOr<std::vector<Tensor>> tensors = value->Fetch(options_.call_timeout);
          if (!tensors.ok()) return tensors.status();
          if (tensors->size() != 1) {
            return errors::InvalidArgument("a per-worker argument must hold one tensor, it holds ",
                                           tensors->size());
          }
          resolved.push_back((*tensors)[0]);
        }
        return RunClosureOn(fn, ctx.worker_index, resolved);
      });
  RemoteValue value = closure->output();
  DF_RETURN_IF_ERROR(queue_.Put(std::move(closure), options_.schedule_timeout));
  CoordinatorTally::Add(tally_.scheduled);
  return value;
}

absl::Status ClusterCoordinator::Join(absl::Duration timeout) { return queue_.Wait(timeout); }

absl::StatusOr<bool> ClusterCoordinator::Done() { return queue_.Done(); }

absl::StatusOr<PerWorkerValues> ClusterCoordinator::CreatePerWorkerResource(FunctionId fn) {
  std::shared_ptr<const RegisteredFunction> f = function(fn);
  if (f == nullptr) return errors::NotFound("no registered function ", fn);
  if (!f->spec.args.empty()) {
    return errors::InvalidArgument("a per-worker resource function takes no arguments; function ",
                                   fn, " takes ", f->spec.args.size());
  }
  auto resource = std::make_shared<PerWorkerResource>();
  resource->fn = fn;
  std::vector<std::shared_ptr<CoordinatorWorker>> workers;
  {
    absl::MutexLock l(&mu_);
    resources_.push_back(resource);
    workers = workers_;
  }
  // Workers that are up build it now; a worker that is down builds it when
  // it recovers.
  for (const auto& w : workers) {
    RemoteValue value = resource->values.Get(w->task());
    if (!w->up()) continue;
    absl::StatusOr<std::vector<Tensor>> built = w->Run(fn, {});
    if (built.ok()) {
      value.SetReady(*std::move(built));
    } else if (ClassifyFailure(built.status(), options_.ps_job).kind == FailureKind::kFunction) {
      return built.status();
    }
  }
  return resource->values;
}

absl::Status ClusterCoordinator::AddWorker(int task_index, const std::string& address) {
  return AddWorker(task_index, address, WorkerOrigin::kCluster);
}

absl::Status ClusterCoordinator::AddWorker(int task_index, const std::string& address,
                                           WorkerOrigin origin) {
  auto w = std::make_shared<CoordinatorWorker>(static_cast<WorkerHost*>(this), task_index, address,
                                               origin);
  {
    absl::MutexLock l(&mu_);
    for (const auto& existing : workers_) {
      if (existing->task() == task_index) {
        return errors::AlreadyExists("the coordinator already has worker task ", task_index, " at ",
                                     existing->address());
      }
    }
    if (static_cast<int>(workers_.size()) >= options_.max_workers) {
      return errors::ResourceExhausted("the coordinator has ", workers_.size(),
                                       " workers, the most it takes; worker task ", task_index,
                                       " at ", address, " is refused");
    }
    workers_.push_back(w);
  }
  w->Start();
  return absl::OkStatus();
}

absl::StatusOr<int> ClusterCoordinator::RegisterJoiningWorker(const std::string& job,
                                                              int task_index,
                                                              const std::string& address) {
  if (job != options_.worker_job) {
    return errors::InvalidArgument("only tasks of the '", options_.worker_job,
                                   "' job can join the coordinator, not /job:", job,
                                   "/task:", task_index);
  }
  DF_RETURN_IF_ERROR(AddWorker(task_index, address, WorkerOrigin::kJoined));
  return num_workers();
}

absl::Status ClusterCoordinator::RemoveWorker(int task_index) {
  std::shared_ptr<CoordinatorWorker> removed;
  {
    absl::MutexLock l(&mu_);
    for (auto it = workers_.begin(); it != workers_.end(); ++it) {
      if ((*it)->task() == task_index) {
        removed = std::move(*it);
        workers_.erase(it);
        break;
      }
    }
  }
  if (removed == nullptr) {
    return errors::NotFound("the coordinator has no worker task ", task_index);
  }
  removed->Stop();
  return absl::OkStatus();
}

bool ClusterCoordinator::ReportPsFailure(int ps_task) {
  absl::MutexLock l(&mu_);
  if (ps_task < 0) return false;
  if (static_cast<size_t>(ps_task) >= ps_failures_.size()) ps_failures_.resize(ps_task + 1, 0);
  return ++ps_failures_[ps_task] > ps_failure_threshold_;
}

int64_t ClusterCoordinator::ps_generation() const {
  return ps_recovery_ == nullptr ? 0 : ps_recovery_->generation();
}

absl::StatusOr<PsProbe> ClusterCoordinator::RecoverPs(int ps_task, int64_t seen_generation,
                                                      const absl::Status& why) {
  if (ps_recovery_ == nullptr) {
    return errors::FailedPrecondition("parameter-server recovery is off (no ps recovery timeout)");
  }
  std::string name = absl::StrCat("/job:", options_.ps_job, "/replica:0/task:", ps_task);
  if (const JobDef* ps = FindJob(options_.cluster, options_.ps_job); ps != nullptr) {
    if (auto it = ps->tasks().find(ps_task); it != ps->tasks().end()) {
      absl::StrAppend(&name, " at ", it->second);
    }
  }
  absl::StatusOr<PsProbe> probed = ps_recovery_->Recover(ps_task, name, seen_generation, why);
  if (!probed.ok()) {
    queue_.Fail(probed.status());
    return probed.status();
  }
  if (*probed == PsProbe::kRestored) {
    // The workers' sessions registered graphs with the ps task that died,
    // and their per-worker resources may read it: every worker starts again.
    std::vector<std::shared_ptr<CoordinatorWorker>> workers;
    {
      absl::MutexLock l(&mu_);
      workers = workers_;
    }
    for (const auto& w : workers) w->Rebuild();
  }
  return *probed;
}

std::vector<CoordinatorPsState> ClusterCoordinator::ps_states() const {
  std::vector<CoordinatorPsState> states;
  const JobDef* ps = FindJob(options_.cluster, options_.ps_job);
  if (ps == nullptr) return states;
  absl::MutexLock l(&mu_);
  for (const auto& [task, address] : ps->tasks()) {
    CoordinatorPsState s;
    s.task = task;
    s.address = address;
    if (task >= 0 && static_cast<size_t>(task) < ps_failures_.size()) {
      s.failures = ps_failures_[task];
    }
    s.lost = s.failures > ps_failure_threshold_;
    states.push_back(std::move(s));
  }
  std::sort(
      states.begin(), states.end(),
      [](const CoordinatorPsState& a, const CoordinatorPsState& b) { return a.task < b.task; });
  return states;
}

void ClusterCoordinator::FailIfEveryWorkerLost() {
  std::vector<std::shared_ptr<CoordinatorWorker>> workers;
  {
    absl::MutexLock l(&mu_);
    workers = workers_;
  }
  absl::Time last_lost = absl::InfinitePast();
  std::vector<std::string> lost;
  for (const auto& w : workers) {
    if (w->up()) return;
    const CoordinatorWorker::Down down = w->down();
    last_lost = std::max(last_lost, down.since);
    lost.push_back(absl::StrCat("/job:", options_.worker_job, "/replica:0/task:", w->task(), " at ",
                                w->address(), " (", down.why.message().substr(0, 200), ")"));
  }
  if (lost.empty() || absl::Now() - last_lost < options_.worker_wait) return;
  queue_.Fail(errors::Unavailable("no worker has been usable for the worker wait of ",
                                  absl::FormatDuration(options_.worker_wait), ": ",
                                  absl::StrJoin(lost, "; ")));
}

ClusterDef ClusterCoordinator::ClusterFor(int task_index, const std::string& address) const {
  ClusterDef cluster;
  for (const JobDef& job : options_.cluster.job()) {
    if (job.name() != options_.worker_job) *cluster.add_job() = job;
  }
  JobDef* workers = cluster.add_job();
  workers->set_name(options_.worker_job);
  (*workers->mutable_tasks())[task_index] = address;
  return cluster;
}

CoordinatorCounters ClusterCoordinator::counters() const {
  CoordinatorCounters c;
  c.scheduled = tally_.scheduled.load(std::memory_order_relaxed);
  c.queued = static_cast<int64_t>(queue_.queued());
  c.in_flight = queue_.in_flight();
  c.done = tally_.done.load(std::memory_order_relaxed);
  c.retried = tally_.retried.load(std::memory_order_relaxed);
  c.failed = tally_.failed.load(std::memory_order_relaxed);
  c.worker_failures = tally_.worker_failures.load(std::memory_order_relaxed);
  c.recoveries = tally_.recoveries.load(std::memory_order_relaxed);
  if (ps_recovery_ != nullptr) {
    c.ps_failures = ps_recovery_->failures();
    c.ps_recoveries = ps_recovery_->restores();
  }
  absl::MutexLock l(&mu_);
  for (const auto& w : workers_) c.workers_up += w->up() ? 1 : 0;
  return c;
}

std::vector<CoordinatorWorkerState> ClusterCoordinator::worker_states() const {
  std::vector<CoordinatorWorkerState> states;
  {
    absl::MutexLock l(&mu_);
    for (const auto& w : workers_) states.push_back(w->state());
  }
  std::sort(states.begin(), states.end(),
            [](const CoordinatorWorkerState& a, const CoordinatorWorkerState& b) {
              return a.task < b.task;
            });
  return states;
}

int ClusterCoordinator::num_workers() const {
  absl::MutexLock l(&mu_);
  return static_cast<int>(workers_.size());
}

}  // namespace distflow
