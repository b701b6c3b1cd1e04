// PerWorkerValues: one RemoteValue per worker task (as
// tf.distribute's PerWorkerValues), e.g. one iterator per worker over a per-worker dataset.
// A closure given a PerWorkerValues argument gets the value of the worker
// that runs it. A copy shares the values. Thread-safe.
#ifndef DISTFLOW_COORDINATOR_PER_WORKER_VALUES_H_
#define DISTFLOW_COORDINATOR_PER_WORKER_VALUES_H_

#include <map>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/coordinator/remote_value.h"
#include "distflow/core/status.h"

namespace distflow {

class PerWorkerValues {
 public:
  PerWorkerValues() : shared_(std::make_shared<Shared>()) {}

  // The value of worker task `task`, made (pending) on first use.
  RemoteValue Get(int task) const {
    absl::MutexLock l(&shared_->mu);
    return shared_->values[task];
  }
  // The value of `task` if it has one; NotFound otherwise.
  absl::StatusOr<RemoteValue> Find(int task) const {
    absl::MutexLock l(&shared_->mu);
    auto it = shared_->values.find(task);
    if (it == shared_->values.end()) {
      return errors::NotFound("no per-worker value for worker task ", task);
    }
    return it->second;
  }

 private:
  struct Shared {
    absl::Mutex mu;
    std::map<int, RemoteValue> values ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<Shared> shared_;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_PER_WORKER_VALUES_H_
