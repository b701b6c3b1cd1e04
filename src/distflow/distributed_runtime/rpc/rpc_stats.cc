#include "distflow/distributed_runtime/rpc/rpc_stats.h"

namespace distflow {
namespace {

// 50 µs to 30 s: a loopback RunStep is about 200 µs, a long step seconds.
std::vector<double> LatencyBounds() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
}

}  // namespace

RpcStats::Method::Method(std::string name) : name_(std::move(name)), latency_(LatencyBounds()) {}

void RpcStats::Method::Record(absl::Duration latency, bool ok, bool streamed) {
  latency_.Observe(absl::ToDoubleSeconds(latency));
  if (!ok) errors_.fetch_add(1, std::memory_order_relaxed);
  if (streamed) streamed_.fetch_add(1, std::memory_order_relaxed);
}

RpcStats::Method* RpcStats::Add(const std::string& name) {
  for (Method& m : methods_) {
    if (m.name() == name) return &m;
  }
  return &methods_.emplace_back(name);
}

std::vector<RpcStats::Row> RpcStats::Rows() const {
  std::vector<Row> rows;
  rows.reserve(methods_.size());
  for (const Method& m : methods_) {
    rows.push_back({m.name(), m.calls(), m.errors(), m.seconds(), m.streamed()});
  }
  return rows;
}

void RpcStats::WritePrometheus(PrometheusText* out) const {
  out->Family("distflow_rpc_server_latency_seconds", "histogram",
              "Time from a call's arrival to its answer, per RPC method this server serves.");
  for (const Method& m : methods_) {
    m.latency_.WriteSamples("distflow_rpc_server_latency_seconds", {{"method", m.name()}}, out);
  }
  out->Family("distflow_rpc_server_errors_total", "counter",
              "Calls answered with an error, per RPC method.");
  for (const Method& m : methods_) {
    out->Sample("distflow_rpc_server_errors_total", {{"method", m.name()}},
                static_cast<double>(m.errors()));
  }
  out->Family("distflow_rpc_server_streamed_calls_total", "counter",
              "Calls of each method that came on a call stream, counted in its latency too.");
  for (const Method& m : methods_) {
    out->Sample("distflow_rpc_server_streamed_calls_total", {{"method", m.name()}},
                static_cast<double>(m.streamed()));
  }
}

}  // namespace distflow
