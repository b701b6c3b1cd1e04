#include "server/server_status.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <utility>

#include "distflow/core/memory_budget.h"
#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"
#include "distflow/distributed_runtime/transfer_stats.h"
#include "distflow/monitoring/prometheus_text.h"
#include "server/server_status_page.h"
#include "status_page_parts.h"

namespace distflow {
namespace {

// The process's resident set in bytes (/proc/self/statm), or -1.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0;
  int64_t pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return -1;
  return pages_resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

ServerStatus::ServerStatus(const GrpcServer* server) : server_(server) {}

absl::Status ServerStatus::Serve(const StatusServerOptions& options) {
  std::map<std::string, StatusPage> pages;
  pages["/"] = {"text/html; charset=utf-8", [] { return StatusPageHtml(kServerStatusPage); }};
  pages["/api/status"] = {"application/json", [this] { return Json().dump(); }};
  pages["/metrics"] = {kPrometheusContentType, [this] { return Metrics(); }};
  absl::StatusOr<std::unique_ptr<StatusServer>> http =
      StatusServer::Start(options, std::move(pages));
  if (!http.ok()) return http.status();
  http_ = *std::move(http);
  return absl::OkStatus();
}

double ServerStatus::Uptime() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

nlohmann::ordered_json ServerStatus::Json() const {
  const GrpcServer::Stats stats = server_->stats();
  nlohmann::ordered_json j;
  j["task"] = server_->task_name();
  j["port"] = server_->bound_port();
  j["uptime_seconds"] = Uptime();
  j["master_sessions"] = stats.master_sessions;
  j["registered_graphs"] = stats.registered_graphs;
  j["steps"] = stats.steps;
  nlohmann::ordered_json running = nlohmann::ordered_json::array();
  for (const Worker::RunningStep& r : stats.running_steps) {
    running.push_back({{"step_id", r.step_id},
                       {"graph", r.graph_handle},
                       {"age_seconds", r.age_seconds},
                       {"waiting_for", r.waiting_for}});
  }
  j["running_steps"] = std::move(running);
  j["side_channel"] = stats.side_channel_fetches >= 0;
  j["side_channel_fetches"] = std::max<int64_t>(stats.side_channel_fetches, 0);
  j["memory"] = {{"budget_bytes", memory_budget::Limit()},
                 {"in_use_bytes", memory_budget::InUse()},
                 {"resident_bytes", ResidentBytes()}};
  nlohmann::ordered_json rpcs = nlohmann::ordered_json::array();
  if (std::shared_ptr<ServerCallQueue> queue = server_->call_queue()) {
    for (const RpcStats::Row& r : queue->stats().Rows()) {
      rpcs.push_back({{"method", r.method},
                      {"calls", r.calls},
                      {"errors", r.errors},
                      {"mean_ms", r.calls > 0 ? 1000.0 * r.seconds / r.calls : 0.0}});
    }
  }
  j["rpcs"] = std::move(rpcs);
  nlohmann::ordered_json transfers = nlohmann::ordered_json::array();
  for (const TensorTransferRow& r : TensorTransfers()) {
    transfers.push_back({{"peer", r.peer},
                         {"transport", r.transport},
                         {"direction", r.sent ? "sent" : "received"},
                         {"tensors", r.tensors},
                         {"bytes", r.bytes}});
  }
  j["transfers"] = std::move(transfers);
  return j;
}

std::string ServerStatus::Metrics() const {
  const GrpcServer::Stats stats = server_->stats();
  const PrometheusLabels task = {{"task", server_->task_name()}};
  PrometheusText t;
  t.Family("distflow_server_master_sessions", "gauge", "Sessions open on this server's master.");
  t.Sample("distflow_server_master_sessions", task, static_cast<double>(stats.master_sessions));
  t.Family("distflow_server_registered_graphs", "gauge",
           "Graph partitions registered on this server's worker.");
  t.Sample("distflow_server_registered_graphs", task, static_cast<double>(stats.registered_graphs));
  t.Family("distflow_server_steps", "gauge",
           "Steps whose rendezvous this server's worker holds (running, or awaited by a "
           "receive).");
  t.Sample("distflow_server_steps", task, static_cast<double>(stats.steps));
  t.Family("distflow_server_running_steps", "gauge", "RunGraph steps running on the worker.");
  t.Sample("distflow_server_running_steps", task, static_cast<double>(stats.running_steps.size()));
  t.Family("distflow_server_oldest_step_age_seconds", "gauge",
           "Age of the oldest RunGraph step running (0: none).");
  t.Sample("distflow_server_oldest_step_age_seconds", task,
           stats.running_steps.empty() ? 0.0 : stats.running_steps.front().age_seconds);
  t.Family("distflow_side_channel_fetches_total", "counter",
           "Tensors sent in full over the TCP side channel.");
  t.Sample("distflow_side_channel_fetches_total", task,
           static_cast<double>(std::max<int64_t>(stats.side_channel_fetches, 0)));
  t.Family("distflow_memory_budget_bytes", "gauge",
           "The process's memory budget (0: none; --memory-budget-mb).");
  t.Sample("distflow_memory_budget_bytes", task, static_cast<double>(memory_budget::Limit()));
  t.Family("distflow_memory_in_use_bytes", "gauge",
           "Bytes held in the memory budget: tensors, decoded requests, encoded responses.");
  t.Sample("distflow_memory_in_use_bytes", task, static_cast<double>(memory_budget::InUse()));
  t.Family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  t.Sample("process_resident_memory_bytes", {}, static_cast<double>(ResidentBytes()));
  t.Family("distflow_server_uptime_seconds", "gauge", "Seconds since the status page started.");
  t.Sample("distflow_server_uptime_seconds", task, Uptime());
  if (std::shared_ptr<ServerCallQueue> queue = server_->call_queue()) {
    queue->stats().WritePrometheus(&t);
  }
  const std::vector<TensorTransferRow> transfers = TensorTransfers();
  t.Family("distflow_tensor_bytes_total", "counter",
           "Tensor bytes sent to or received from each peer task, per transport.");
  for (const TensorTransferRow& r : transfers) {
    t.Sample(
        "distflow_tensor_bytes_total",
        {{"peer", r.peer}, {"transport", r.transport}, {"direction", r.sent ? "sent" : "received"}},
        static_cast<double>(r.bytes));
  }
  t.Family("distflow_tensors_total", "counter",
           "Tensors sent to or received from each peer task, per transport.");
  for (const TensorTransferRow& r : transfers) {
    t.Sample(
        "distflow_tensors_total",
        {{"peer", r.peer}, {"transport", r.transport}, {"direction", r.sent ? "sent" : "received"}},
        static_cast<double>(r.tensors));
  }
  return t.text();
}

}  // namespace distflow
