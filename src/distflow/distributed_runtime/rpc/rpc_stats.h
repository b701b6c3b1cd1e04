// What a server's unary RPC methods have answered: per method, the calls,
// those that failed, those that came on a call stream (grpc_call_stream.h,
// counted in the method's row as well), and a latency histogram (from the
// request's arrival to the handler's answer), for the server's status page
// and /metrics.
// Methods are added before calls come (ServerCallQueue::Add); then any
// thread records and any thread reads. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_RPC_STATS_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_RPC_STATS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "distflow/monitoring/histogram.h"
#include "distflow/monitoring/prometheus_text.h"

namespace distflow {

class RpcStats {
 public:
  class Method {
   public:
    explicit Method(std::string name);
    const std::string& name() const { return name_; }
    // `streamed`: the call came on a call stream.
    void Record(absl::Duration latency, bool ok, bool streamed = false);
    int64_t calls() const { return latency_.count(); }
    int64_t errors() const { return errors_.load(std::memory_order_relaxed); }
    int64_t streamed() const { return streamed_.load(std::memory_order_relaxed); }
    double seconds() const { return latency_.sum(); }

   private:
    friend class RpcStats;
    const std::string name_;
    Histogram latency_;
    std::atomic<int64_t> errors_{0};
    std::atomic<int64_t> streamed_{0};
  };

  // A method's entry, added when new; the pointer stays valid as long as
  // the RpcStats. Not thread-safe against itself: call before serving.
  Method* Add(const std::string& name);

  struct Row {
    std::string method;
    int64_t calls;
    int64_t errors;
    double seconds;
    int64_t streamed;
  };
  std::vector<Row> Rows() const;

  // distflow_rpc_server_latency_seconds{method} (a histogram),
  // distflow_rpc_server_errors_total{method} and
  // distflow_rpc_server_streamed_calls_total{method}, families and samples.
  void WritePrometheus(PrometheusText* out) const;

 private:
  std::deque<Method> methods_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_RPC_STATS_H_
