#include "distflow/coordinator/coordinator_worker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/coordinator/failure.h"
#include "distflow/core/env.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

namespace {

// How long Get waits before the thread looks at its stop flag again.
constexpr absl::Duration kQueuePoll = absl::Milliseconds(50);

int64_t ToMillis(absl::Duration d) { return std::max<int64_t>(1, absl::ToInt64Milliseconds(d)); }

}  // namespace

CoordinatorWorker::CoordinatorWorker(WorkerHost* host, int task, std::string address,
                                     WorkerOrigin origin)
    : host_(host),
      task_(task),
      address_(std::move(address)),
      origin_(origin),
      started_(absl::Now()),
      down_{started_, errors::Unavailable("not reached yet")} {}

CoordinatorWorker::Down CoordinatorWorker::down() const {
  absl::MutexLock l(&mu_);
  return down_;
}

CoordinatorWorker::~CoordinatorWorker() { Stop(); }

void CoordinatorWorker::Start() {
  const int threads = std::max(1, host_->options().max_inflight_closures);
  threads_.reserve(threads);
  threads_.emplace_back([this] { Loop(); });
  for (int i = 1; i < threads; ++i) threads_.emplace_back([this] { RunClosures(); });
}

void CoordinatorWorker::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  for (std::thread& t : threads_) {
    if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  }
}

bool CoordinatorWorker::SleepFor(absl::Duration d) {
  return !stop_.WaitForNotificationWithTimeout(d);
}

void CoordinatorWorker::Loop() {
  const CoordinatorOptions& opts = host_->options();
  absl::Duration backoff = opts.recovery_backoff_min;
  while (!stop_.HasBeenNotified() && !retired_.load(std::memory_order_acquire)) {
    int64_t epoch;
    {
      // A worker seen down here has its loss fully recorded (its session
      // dropped, its resources aborted) before Recover makes them anew.
      absl::MutexLock l(&down_mu_);
      epoch = up_epoch_.load(std::memory_order_acquire);
    }
    if (!IsUp(epoch)) {
      absl::Status s = Recover();
      if (!s.ok()) {
        {
          absl::MutexLock l(&mu_);
          down_.why = s;
        }
        host_->FailIfEveryWorkerLost();
        const bool refused = s.code() == absl::StatusCode::kInvalidArgument ||
                             s.code() == absl::StatusCode::kUnimplemented;
        if (refused && origin_ == WorkerOrigin::kCluster && !function_refused_) {
          // The worker refuses a registered function's graph (an unknown op,
          // a name that clashes): no wait makes it run, here or elsewhere.
          function_refused_ = true;
          host_->queue().Fail(absl::Status(
              s.code(), absl::StrCat("worker task ", task_, " at ", address_,
                                     " refuses a registered function: ", s.message())));
        }
        const bool starting = !ever_up_ && origin_ == WorkerOrigin::kCluster;
        if (starting) WaitingAtStartup(s);
        if (!starting && backoff == opts.recovery_backoff_min) {
          internal::LogLine('W', absl::StrCat("coordinator: worker task ", task_, " at ", address_,
                                              " is not usable yet: ", s.ToString()));
        }
        if (!SleepFor(backoff)) return;
        backoff = std::min(backoff * 2, opts.recovery_backoff_max);
        continue;
      }
      backoff = opts.recovery_backoff_min;
      {
        // Until MarkDown dates the next loss, a reader that sees the worker
        // down already takes it as just lost. Only this thread brings the
        // worker up, so the epoch is still the even one read above.
        absl::MutexLock l(&mu_);
        if (retired_.load(std::memory_order_acquire)) continue;
        down_.since = absl::InfiniteFuture();
        epoch = up_epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
      }
    }
    TakeAndProcess(epoch);
  }
}

void CoordinatorWorker::RunClosures() {
  auto up_or_retired = [this] { return up() || retired_.load(std::memory_order_acquire); };
  while (!stop_.HasBeenNotified() && !retired_.load(std::memory_order_acquire)) {
    const int64_t epoch = up_epoch_.load(std::memory_order_acquire);
    if (!IsUp(epoch)) {
      // The recovery thread brings the worker up under mu_, which wakes this.
      absl::MutexLock l(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&up_or_retired), kQueuePoll);
      continue;
    }
    TakeAndProcess(epoch);
  }
}

void CoordinatorWorker::TakeAndProcess(int64_t epoch) {
  std::shared_ptr<Closure> closure = host_->queue().Get(kQueuePoll);
  if (closure == nullptr) return;
  if (up_epoch_.load(std::memory_order_acquire) != epoch) {
    // The worker was lost (or is being rebuilt) since this thread looked:
    // the closure has not run, and waits for a worker that is up.
    host_->queue().PutBack(std::move(closure));
    return;
  }
  Process(std::move(closure), epoch);
}

void CoordinatorWorker::WaitingAtStartup(const absl::Status& why) {
  const CoordinatorOptions& opts = host_->options();
  const absl::Time now = absl::Now();
  const absl::Duration waited = now - started_;
  const std::string task = absl::StrCat("/job:", opts.worker_job, "/replica:0/task:", task_);
  if (waited >= opts.startup_deadline) {
    if (startup_failed_) return;
    startup_failed_ = true;
    host_->queue().Fail(errors::Unavailable(
        "worker ", task, " at ", address_, " never answered within the startup deadline of ",
        absl::FormatDuration(opts.startup_deadline), ": ", UnreachableReason(why),
        "; check its address in the cluster (last error: ", why.message().substr(0, 300), ")"));
    return;
  }
  if (now < next_startup_report_) return;
  next_startup_report_ = now + opts.startup_report_every;
  internal::LogLine(
      'W',
      absl::StrCat("coordinator: waiting for worker ", task, " at ", address_,
                   ", which has not answered yet: ", UnreachableReason(why), "; ",
                   absl::FormatDuration(absl::Trunc(waited, absl::Seconds(1))),
                   " of the startup deadline of ", absl::FormatDuration(opts.startup_deadline)));
}

bool CoordinatorWorker::CountPsFailure(int ps_task, int64_t run) {
  absl::MutexLock l(&ps_failure_mu_);
  int64_t& counted_at = ps_failure_counted_at_[ps_task];
  if (run < counted_at) return false;
  counted_at = runs_started_.load(std::memory_order_relaxed);
  return true;
}

void CoordinatorWorker::Process(std::shared_ptr<Closure> closure, int64_t epoch) {
  WorkerHost& host = *host_;
  const int64_t run = runs_started_.fetch_add(1, std::memory_order_relaxed);
  const int64_t ps_generation = host.ps_generation();
  absl::StatusOr<std::vector<Tensor>> result = closure->Execute(task_);
  Failure failure = ClassifyFailure(result.status(), host.options().ps_job);
  if (failure.kind == FailureKind::kFunction && host.ps_recovery_on()) {
    // A ps task that restarted answers without its variables: recover it.
    const int lost = LostPsStateTask(result.status(), host.options().ps_job);
    if (lost >= 0) failure = Failure{FailureKind::kPs, lost};
  }
  if (failure.kind == FailureKind::kFunction && origin_ == WorkerOrigin::kJoined) {
    CoordinatorTally::Add(host.tally().retried);
    host.queue().PutBack(std::move(closure));
    Retire(result.status());
    return;
  }
  switch (failure.kind) {
    case FailureKind::kNone:
      // Counted before the closure is marked done: whoever Joins and then
      // reads the counters must find it there.
      CoordinatorTally::Add(host.tally().done);
      closures_done_.fetch_add(1, std::memory_order_relaxed);
      closure->output().SetReady(*std::move(result), ps_generation);
      host.queue().MarkFinished(*closure);
      return;
    case FailureKind::kFunction:
      CoordinatorTally::Add(host.tally().failed);
      closure->output().SetError(result.status());
      host.queue().MarkFailed(*closure, result.status());
      return;
    case FailureKind::kPs:
    case FailureKind::kWorker:
      break;
  }
  if (failure.kind == FailureKind::kPs && host.ps_recovery_on()) {
    // The closure waits in the queue while this thread waits for the ps;
    // a recovery that fails ends the job.
    CoordinatorTally::Add(host.tally().retried);
    host.queue().PutBack(std::move(closure));
    absl::StatusOr<PsProbe> found = host.RecoverPs(failure.ps_task, ps_generation, result.status());
    // The chief reaches the ps with its state, this worker did not: the
    // worker is cut off from it, and is the one that failed.
    if (found.ok() && *found == PsProbe::kIntact) MarkDownFrom(epoch, result.status());
    return;
  }
  const bool ps_gone = failure.kind == FailureKind::kPs && CountPsFailure(failure.ps_task, run) &&
                       host.ReportPsFailure(failure.ps_task);
  if (ps_gone || closure->attempts() >= host.options().max_attempts) {
    absl::Status fatal =
        ps_gone ? errors::Unavailable("parameter server /job:", host.options().ps_job,
                                      "/replica:0/task:", failure.ps_task,
                                      " failed more often than the transient threshold (",
                                      host.ps_failure_threshold(),
                                      "); last error: ", result.status().ToString())
                : errors::Unavailable("a closure failed on its worker ", closure->attempts(),
                                      " times; last error on worker task ", task_, ": ",
                                      result.status().ToString());
    closure->output().SetError(fatal);
    host.queue().MarkFailed(*closure, fatal);
    CoordinatorTally::Add(host.tally().failed);
    return;
  }
  CoordinatorTally::Add(host.tally().retried);
  // Down before the closure is back in the queue: a thread of this worker
  // that finds the worker still up takes a closure for it, and would wait a
  // call deadline on a worker that just failed.
  if (failure.kind == FailureKind::kWorker) MarkDownFrom(epoch, result.status());
  host.queue().PutBack(std::move(closure));
}

void CoordinatorWorker::Retire(const absl::Status& why) {
  absl::MutexLock down(&down_mu_);
  // Closures in flight on other threads may fail the same way: once.
  if (retired_.exchange(true, std::memory_order_acq_rel)) return;
  TakeDown();
  internal::LogLine('W', absl::StrCat("coordinator: worker task ", task_, " at ", address_,
                                      ", which joined, failed where its function should not: ",
                                      why.ToString(), "; it takes no more closures"));
  {
    absl::MutexLock l(&mu_);
    down_ = Down{absl::Now(), why};
  }
  ResetSession();
}

void CoordinatorWorker::ResetSession() {
  absl::MutexLock l(&session_mu_);
  session_.reset();
  functions_in_session_ = 0;
}

bool CoordinatorWorker::TakeDown() {
  int64_t epoch = up_epoch_.load(std::memory_order_acquire);
  while (IsUp(epoch)) {
    if (up_epoch_.compare_exchange_weak(epoch, epoch + 1, std::memory_order_acq_rel)) return true;
  }
  return false;
}

void CoordinatorWorker::MarkDownFrom(int64_t epoch, const absl::Status& why) {
  absl::MutexLock l(&down_mu_);
  if (!up_epoch_.compare_exchange_strong(epoch, epoch + 1, std::memory_order_acq_rel)) return;
  Lost(why);
}

void CoordinatorWorker::MarkDown(const absl::Status& why) {
  // Once per failure, whichever of the worker's threads and a chief's call
  // saw it.
  absl::MutexLock l(&down_mu_);
  if (TakeDown()) Lost(why);
}

void CoordinatorWorker::Lost(const absl::Status& why) {
  internal::LogLine('W', absl::StrCat("coordinator: worker task ", task_, " at ", address_,
                                      " failed: ", why.ToString(), "; recovering it"));
  CoordinatorTally::Add(host_->tally().worker_failures);
  failures_.fetch_add(1, std::memory_order_relaxed);
  for (const auto& resource : host_->resources()) resource->values.Get(task_).SetAborted();
  {
    absl::MutexLock l(&mu_);
    down_ = Down{absl::Now(), why};
    last_error_ = why.ToString();
    last_error_micros_ = NowMicros();
  }
  ResetSession();
}

void CoordinatorWorker::Rebuild() {
  absl::MutexLock l(&down_mu_);
  rebuilding_.store(true, std::memory_order_release);
  if (!TakeDown()) return;
  for (const auto& resource : host_->resources()) resource->values.Get(task_).SetAborted();
  {
    absl::MutexLock l(&mu_);
    down_ = Down{absl::Now(), errors::Unavailable("rebuilding after a parameter server restore")};
  }
  ResetSession();
}

CoordinatorWorkerState CoordinatorWorker::state() const {
  CoordinatorWorkerState s;
  s.task = task_;
  s.address = address_;
  s.up = up();
  s.closures_done = closures_done_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  absl::MutexLock l(&mu_);
  s.last_error = last_error_;
  s.last_error_micros = last_error_micros_;
  return s;
}

absl::StatusOr<std::shared_ptr<Session>> CoordinatorWorker::SessionWithFunctions() {
  const CoordinatorOptions& opts = host_->options();
  std::vector<std::shared_ptr<const RegisteredFunction>> fns = host_->functions();
  absl::MutexLock l(&session_mu_);
  if (session_ == nullptr) {
    SessionOptions so;
    so.target = absl::StrCat("grpc://", address_);
    *so.config.mutable_cluster_def() = host_->ClusterFor(task_, address_);
    so.config.set_operation_timeout_in_ms(ToMillis(opts.call_timeout));
    absl::StatusOr<std::unique_ptr<Session>> made = NewSession(so);
    if (!made.ok()) return made.status();
    std::shared_ptr<Session> session = *std::move(made);
    DF_RETURN_IF_ERROR(session->Create(GraphDef()));
    session_ = std::move(session);
    functions_in_session_ = 0;
  }
  for (; functions_in_session_ < fns.size(); ++functions_in_session_) {
    DF_RETURN_IF_ERROR(session_->Extend(fns[functions_in_session_]->spec.graph));
  }
  return session_;
}

absl::StatusOr<std::vector<Tensor>> CoordinatorWorker::Run(int fn,
                                                           const std::vector<Tensor>& args) {
  std::shared_ptr<const RegisteredFunction> f = host_->function(fn);
  if (f == nullptr) return errors::NotFound("no registered function ", fn);
  if (args.size() != f->spec.args.size()) {
    return errors::InvalidArgument("function ", fn, " takes ", f->spec.args.size(),
                                   " arguments, got ", args.size());
  }
  absl::StatusOr<std::shared_ptr<Session>> session = SessionWithFunctions();
  if (!session.ok()) {
    return errors::Unavailable("worker task ", task_, " at ", address_,
                               " is not reachable: ", session.status().ToString());
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) feeds.emplace_back(f->spec.args[i], args[i]);
  const CoordinatorOptions& opts = host_->options();
  RunOptions ro = opts.run_options;
  ro.set_timeout_in_ms(ToMillis(opts.call_timeout));
  std::vector<Tensor> out;
  RunMetadata metadata;
  const bool traced = static_cast<bool>(opts.on_run_metadata);
  DF_RETURN_IF_ERROR((*session)->Run(ro, feeds, f->spec.results, f->spec.targets, &out,
                                     traced ? &metadata : nullptr));
  if (traced) opts.on_run_metadata(task_, metadata);
  return out;
}

absl::Status CoordinatorWorker::Recover() {
  // Creating the session reaches the worker and the ps tasks (the master
  // lists their devices), which is the health check.
  absl::StatusOr<std::shared_ptr<Session>> session = SessionWithFunctions();
  if (!session.ok()) return session.status();
  for (const auto& resource : host_->resources()) {
    RemoteValue value = resource->values.Get(task_);
    absl::StatusOr<std::vector<Tensor>> built = Run(resource->fn, {});
    if (!built.ok()) {
      if (ClassifyFailure(built.status(), host_->options().ps_job).kind == FailureKind::kFunction) {
        if (origin_ == WorkerOrigin::kJoined) {
          Retire(built.status());
          return built.status();
        }
        value.SetError(built.status());
        continue;
      }
      ResetSession();
      return built.status();
    }
    value.SetReady(*std::move(built));
  }
  if (ever_up_ && !rebuilding_.exchange(false, std::memory_order_acq_rel)) {
    CoordinatorTally::Add(host_->tally().recoveries);
  }
  ever_up_ = true;
  return absl::OkStatus();
}

}  // namespace distflow
