#include "train/train_status.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/monitoring/prometheus_text.h"
#include "status_page_parts.h"
#include "train/train_status_page.h"

namespace distflow {
namespace {

// Points of the loss chart and lines of the event log kept; older ones go.
constexpr size_t kMaxHistory = 2000;
constexpr size_t kMaxLog = 200;

// Upper bounds of distflow_step_seconds, from 100 us to 10 s.
std::vector<double> StepSecondsBounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

}  // namespace

TrainStatus::TrainStatus(std::string model, int64_t epochs, int64_t total_steps, int ps,
                         int workers)
    : model_(std::move(model)),
      epochs_(epochs),
      total_steps_(total_steps),
      ps_(ps),
      workers_(workers),
      step_seconds_(StepSecondsBounds()) {}

absl::Status TrainStatus::Serve(const StatusServerOptions& options) {
  std::map<std::string, StatusPage> pages;
  pages["/"] = {"text/html; charset=utf-8", [] { return StatusPageHtml(kTrainStatusPage); }};
  pages["/api/status"] = {"application/json", [this] { return Json().dump(); }};
  pages["/metrics"] = {kPrometheusContentType, [this] { return Metrics(); }};
  absl::StatusOr<std::unique_ptr<StatusServer>> server =
      StatusServer::Start(options, std::move(pages));
  if (!server.ok()) return server.status();
  server_ = *std::move(server);
  return absl::OkStatus();
}

double TrainStatus::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void TrainStatus::LogLocked(std::string text) {
  log_.push_back({Elapsed(), std::move(text)});
  while (log_.size() > kMaxLog) log_.pop_front();
}

void TrainStatus::WatchCountersLocked(const CoordinatorCounters& c) {
  if (c.worker_failures > last_counters_.worker_failures) {
    LogLocked(absl::StrCat("worker lost (", c.worker_failures,
                           " so far); its closures go to the "
                           "other workers"));
  }
  if (c.recoveries > last_counters_.recoveries) {
    LogLocked(absl::StrCat("worker recovered (", c.recoveries, " so far)"));
  }
  if (c.retried > last_counters_.retried) {
    LogLocked(
        absl::StrCat(c.retried - last_counters_.retried, " closure(s) put back to run again"));
  }
  last_counters_ = c;
}

std::unique_ptr<PsLoadPoller> TrainStatus::StopPollingLocked() {
  if (ps_poller_ != nullptr) last_loads_ = ps_poller_->loads();
  return std::move(ps_poller_);
}

std::vector<PsLoad> TrainStatus::LoadsLocked() const {
  return ps_poller_ != nullptr ? ps_poller_->loads() : last_loads_;
}

void TrainStatus::SetCoordinator(ClusterCoordinator* coordinator) {
  // Destroyed once mu_ is released: it may wait out a call in flight.
  std::unique_ptr<PsLoadPoller> stopped;
  absl::MutexLock l(&mu_);
  // The last counters and ps states of a coordinator going away stay on
  // the page.
  if (coordinator_ != nullptr) {
    WatchCountersLocked(coordinator_->counters());
    last_ps_ = coordinator_->ps_states();
  }
  coordinator_ = coordinator;
  // The ps tasks stop with the job; the page keeps their last answers.
  if (coordinator == nullptr) stopped = StopPollingLocked();
  if (coordinator != nullptr && ps_poller_ == nullptr && server_ != nullptr) {
    std::vector<PsLoadPoller::Task> tasks;
    for (const CoordinatorPsState& p : coordinator->ps_states()) {
      tasks.push_back({p.task, p.address});
    }
    if (!tasks.empty()) {
      ps_poller_ =
          std::make_unique<PsLoadPoller>(coordinator->ps_job(), std::move(tasks), absl::Seconds(1));
    }
  }
  LogLocked(coordinator != nullptr ? "coordinator started" : "coordinator stopped");
}

void TrainStatus::ReportProgress(const fashion_mnist::TrainProgress& p, int batch_size) {
  if (p.examples_per_second > 0) step_seconds_.Observe(batch_size / p.examples_per_second);
  absl::MutexLock l(&mu_);
  if (p.epoch != epoch_) LogLocked(absl::StrCat("epoch ", p.epoch, " started"));
  epoch_ = p.epoch;
  step_ = p.step;
  loss_ = p.loss;
  accuracy_ = p.accuracy;
  examples_per_second_ = p.examples_per_second;
  history_.push_back({p.step, p.loss, p.accuracy});
  while (history_.size() > kMaxHistory) history_.pop_front();
  if (coordinator_ != nullptr) WatchCountersLocked(coordinator_->counters());
}

void TrainStatus::ReportEvaluation(int64_t epoch, int64_t step, double test_accuracy) {
  absl::MutexLock l(&mu_);
  test_accuracy_ = test_accuracy;
  LogLocked(absl::StrCat("epoch ", epoch, " evaluated at step ", step, ": test accuracy ",
                         test_accuracy));
}

void TrainStatus::ReportCheckpoint(const std::string& prefix, int64_t step) {
  absl::MutexLock l(&mu_);
  checkpoint_prefix_ = prefix;
  checkpoint_step_ = step;
  checkpoint_at_ = Elapsed();
  ++checkpoints_;
  LogLocked(absl::StrCat("checkpoint written at step ", step, ": ", prefix));
}

void TrainStatus::ReportDone(const std::string& summary) {
  std::unique_ptr<PsLoadPoller> stopped;
  absl::MutexLock l(&mu_);
  stopped = StopPollingLocked();
  done_ = true;
  LogLocked(summary);
}

std::pair<CoordinatorCounters, int> TrainStatus::CountersLocked() const {
  if (coordinator_ == nullptr) return {last_counters_, workers_};
  return {coordinator_->counters(), coordinator_->num_workers()};
}

nlohmann::ordered_json TrainStatus::Json() const {
  absl::MutexLock l(&mu_);
  const auto [c, total_workers] = CountersLocked();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  if (coordinator_ != nullptr) {
    const int64_t now = NowMicros();
    const double seconds = Elapsed();
    for (const CoordinatorWorkerState& w : coordinator_->worker_states()) {
      RateSample& rate = worker_rates_[w.task];
      if (seconds - rate.seconds >= 1) {
        if (rate.seconds > 0 && w.closures_done >= rate.done) {
          rate.per_second = (w.closures_done - rate.done) / (seconds - rate.seconds);
        }
        rate.seconds = seconds;
        rate.done = w.closures_done;
      }
      list.push_back({{"task", w.task},
                      {"address", w.address},
                      {"state", w.up ? "up" : "down"},
                      {"closures_done", w.closures_done},
                      {"closures_per_second", rate.per_second},
                      {"failures", w.failures},
                      {"last_error", w.last_error},
                      {"last_error_seconds_ago",
                       w.last_error_micros > 0 ? (now - w.last_error_micros) / 1e6 : -1.0}});
    }
  }
  nlohmann::ordered_json ps_list = nlohmann::ordered_json::array();
  {
    std::map<int, PsLoad> loads;
    for (PsLoad& load : LoadsLocked()) loads[load.task] = std::move(load);
    for (const CoordinatorPsState& p :
         coordinator_ != nullptr ? coordinator_->ps_states() : last_ps_) {
      const auto load = loads.find(p.task);
      const bool polled = load != loads.end() && load->second.polled;
      const bool has_load = polled && load->second.ever_answered;
      const bool unavailable = polled && !load->second.answered;
      const char* state = p.lost ? "lost" : (unavailable ? "unavailable" : "up");
      ps_list.push_back({{"task", p.task},
                         {"address", p.address},
                         {"state", state},
                         {"failures", p.failures},
                         // -1 until the task first answers its status call;
                         // then its last answer's.
                         {"variables", has_load ? load->second.variables : -1},
                         {"variable_bytes", has_load ? load->second.variable_bytes : -1},
                         {"tensor_bytes_sent", has_load ? load->second.bytes_sent : -1},
                         {"tensor_bytes_received", has_load ? load->second.bytes_received : -1},
                         {"bytes_per_second", has_load ? load->second.bytes_per_second : -1.0},
                         {"error", polled ? load->second.error : ""}});
    }
  }
  const double elapsed = Elapsed();
  double eta = -1;  // unknown until the first progress report
  if (done_) {
    eta = 0;
  } else if (step_ > 0 && examples_per_second_ > 0) {
    eta = elapsed / static_cast<double>(step_) *
          static_cast<double>(std::max<int64_t>(0, total_steps_ - step_));
  }
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const Point& p : history_) {
    history.push_back({{"step", p.step}, {"loss", p.loss}, {"accuracy", p.accuracy}});
  }
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const LogLine& e : log_) events.push_back({{"seconds", e.seconds}, {"text", e.text}});
  return {{"job",
           {{"model", model_},
            {"epochs", epochs_},
            {"epoch", epoch_},
            {"step", step_},
            {"total_steps", total_steps_},
            {"examples_per_second", examples_per_second_},
            {"loss", loss_},
            {"accuracy", accuracy_},
            {"test_accuracy", test_accuracy_},
            {"elapsed_seconds", elapsed},
            {"eta_seconds", eta},
            {"done", done_}}},
          {"ps_tasks", ps_},
          {"ps", std::move(ps_list)},
          {"workers",
           {{"total", total_workers},
            {"up", c.workers_up},
            {"failures", c.worker_failures},
            {"recoveries", c.recoveries},
            {"list", std::move(list)}}},
          {"closures",
           {{"scheduled", c.scheduled},
            {"queued", c.queued},
            {"in_flight", c.in_flight},
            {"done", c.done},
            {"retried", c.retried},
            {"failed", c.failed}}},
          {"checkpoint",
           {{"count", checkpoints_},
            {"step", checkpoint_step_},
            {"prefix", checkpoint_prefix_},
            {"seconds_ago", checkpoint_at_ < 0 ? -1.0 : elapsed - checkpoint_at_}}},
          {"history", std::move(history)},
          {"events", std::move(events)}};
}

std::string TrainStatus::Metrics() const {
  PrometheusText t;
  CoordinatorCounters c;
  int total_workers = 0;
  int64_t step = 0, checkpoints = 0, checkpoint_step = -1;
  double loss = 0, eps = 0;
  std::vector<PsLoad> loads;
  {
    absl::MutexLock l(&mu_);
    std::tie(c, total_workers) = CountersLocked();
    step = step_;
    checkpoints = checkpoints_;
    checkpoint_step = checkpoint_step_;
    loss = loss_;
    eps = examples_per_second_;
    loads = LoadsLocked();
  }
  t.Family("distflow_closures_total", "counter",
           "Closures the coordinator was given (scheduled) and what became of them.");
  for (const auto& [state, v] : {std::pair{"scheduled", c.scheduled},
                                 {"done", c.done},
                                 {"retried", c.retried},
                                 {"failed", c.failed}}) {
    t.Sample("distflow_closures_total", {{"state", state}}, static_cast<double>(v));
  }
  t.Family("distflow_closures", "gauge", "Closures waiting in the queue or running on a worker.");
  t.Sample("distflow_closures", {{"state", "queued"}}, static_cast<double>(c.queued));
  t.Sample("distflow_closures", {{"state", "in_flight"}}, static_cast<double>(c.in_flight));
  t.Family("distflow_workers", "gauge", "Worker tasks by state.");
  t.Sample("distflow_workers", {{"state", "up"}}, c.workers_up);
  t.Sample("distflow_workers", {{"state", "down"}}, std::max(0, total_workers - c.workers_up));
  t.Family("distflow_worker_failures_total", "counter", "Workers found lost.");
  t.Sample("distflow_worker_failures_total", {}, static_cast<double>(c.worker_failures));
  t.Family("distflow_worker_recoveries_total", "counter", "Lost workers back at work.");
  t.Sample("distflow_worker_recoveries_total", {}, static_cast<double>(c.recoveries));
  // Each ps task's last answer to the status poll; none before its first.
  t.Family("distflow_ps_up", "gauge", "1 when the ps task answered its last status call.");
  for (const PsLoad& p : loads) {
    if (p.polled) t.Sample("distflow_ps_up", {{"task", absl::StrCat(p.task)}}, p.answered);
  }
  t.Family("distflow_ps_variables", "gauge", "Resource variables a ps task holds.");
  t.Family("distflow_ps_variable_bytes", "gauge", "Bytes of the variables a ps task holds.");
  t.Family("distflow_ps_tensor_bytes_total", "counter",
           "Tensor bytes a ps task sent and received since it started.");
  for (const PsLoad& p : loads) {
    if (!p.ever_answered) continue;
    const std::string task = absl::StrCat(p.task);
    t.Sample("distflow_ps_variables", {{"task", task}}, static_cast<double>(p.variables));
    t.Sample("distflow_ps_variable_bytes", {{"task", task}}, static_cast<double>(p.variable_bytes));
    t.Sample("distflow_ps_tensor_bytes_total", {{"task", task}, {"direction", "sent"}},
             static_cast<double>(p.bytes_sent));
    t.Sample("distflow_ps_tensor_bytes_total", {{"task", task}, {"direction", "received"}},
             static_cast<double>(p.bytes_received));
  }
  t.Family("distflow_checkpoints_total", "counter", "Checkpoints written by this run.");
  t.Sample("distflow_checkpoints_total", {}, static_cast<double>(checkpoints));
  t.Family("distflow_checkpoint_step", "gauge",
           "Global step of the last checkpoint written (NaN: none yet).");
  t.Sample("distflow_checkpoint_step", {},
           checkpoint_step < 0 ? std::nan("") : static_cast<double>(checkpoint_step));
  t.Family("distflow_train_steps_total", "counter", "Training steps done (the global step).");
  t.Sample("distflow_train_steps_total", {}, static_cast<double>(step));
  // The gauges of the last progress window: NaN before the first.
  t.Family("distflow_train_loss", "gauge", "Mean training loss over the last progress window.");
  t.Sample("distflow_train_loss", {}, loss < 0 ? std::nan("") : loss);
  t.Family("distflow_train_examples_per_second", "gauge",
           "Training throughput over the last progress window.");
  t.Sample("distflow_train_examples_per_second", {}, eps < 0 ? std::nan("") : eps);
  t.Family("distflow_step_seconds", "histogram",
           "Mean seconds per training step, one observation per progress window.");
  step_seconds_.WriteSamples("distflow_step_seconds", {}, &t);
  return t.text();
}

}  // namespace distflow
