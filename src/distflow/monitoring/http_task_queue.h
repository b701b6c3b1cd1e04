// The connection queue of an HTTP server built on cpp-httplib: a fixed set
// of threads and at most `max_waiting` accepted connections waiting for one.
// cpp-httplib's own ThreadPool queues every connection it accepts, so a
// flood of idle connections holds one file (and a queue entry) each until
// the process runs out of files. Here, when the queue is full, Enqueue —
// called on the server's accept loop — waits for a thread to take one:
// further connections stay in the kernel's listen backlog, holding nothing
// of this process. The wait is bounded by the server's read and write
// timeouts, which bound each connection a thread works on.
//
// Include only from .cc files that already use httplib.h. Thread-safe.
#ifndef DISTFLOW_MONITORING_HTTP_TASK_QUEUE_H_
#define DISTFLOW_MONITORING_HTTP_TASK_QUEUE_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "httplib.h"

namespace distflow {

class BoundedHttpTaskQueue final : public httplib::TaskQueue {
 public:
  BoundedHttpTaskQueue(size_t threads, size_t max_waiting);
  ~BoundedHttpTaskQueue() override;

  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins the threads. Idempotent.
  void shutdown() override;

  // Connections accepted and not yet finished (waiting or being served).
  size_t in_flight() const;

 private:
  void Work();

  const size_t max_waiting_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> waiting_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace distflow

#endif  // DISTFLOW_MONITORING_HTTP_TASK_QUEUE_H_
