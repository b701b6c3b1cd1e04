// CheckpointWriter: the cluster trainer's checkpoints written off the
// training path. The trainer takes a snapshot of the variables on its own
// thread (Saver::Snapshot: the only pause training sees), then Write hands
// the rest to one background thread: SaveV2 from the snapshots on every ps
// task, the merge, and the index update (Saver::WriteSnapshot, Commit).
//
// At most one write is in flight: the caller calls Finish before the next
// snapshot, before a synchronous save and before a ps restore. Finish waits
// at most `write_bound`; a write still running then is given up: it is
// never committed, so the index keeps naming the previous checkpoint. A
// write that fails (a ps task died or restarted, taking its snapshot) is
// logged and dropped the same way; the index is never left pointing at a
// partial checkpoint. A write given up still holds the chief's session
// (ChiefSession::Call is serialized) until its calls end, so the next
// snapshot never overlaps it, as Saver's thread rules require.
//
// Thread rules: Write, TakeCommitted and the destructor from one thread (the
// trainer's); Finish from any thread (the coordinator's ps recovery calls
// it before a restore).
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_CHECKPOINT_WRITER_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fashion_mnist/chief_session.h"
#include "fashion_mnist/training_state.h"

namespace distflow {
namespace fashion_mnist {

class CheckpointWriter {
 public:
  // REQUIRES: `chief` and `state` outlive this. `write_bound` exceeds what a
  // write can take: its calls are each bounded by the session's operation
  // timeout.
  CheckpointWriter(ChiefSession* chief, const TrainingState* state, std::string dir,
                   absl::Duration write_bound);
  // Finishes (or gives up) the write in flight and joins its thread.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Starts writing the snapshot just taken, as the checkpoint of `step`.
  // REQUIRES: Finish returned since the previous Write; Saver::Snapshot ran
  // since.
  void Write(int64_t step);

  // Returns once no write is in flight: true when the last write ended
  // (committed or failed) within `write_bound`, false when it was given up.
  bool Finish();

  // The checkpoints committed since the last call, oldest first: (prefix,
  // step).
  std::vector<std::pair<std::string, int64_t>> TakeCommitted();

 private:
  // The background thread's body, for write number `write`.
  void WriteAndCommit(int64_t write, int64_t step);

  ChiefSession* const chief_;
  const TrainingState* const state_;
  const std::string dir_;
  const absl::Duration write_bound_;
  // Trainer's thread only: the latest write's thread, and those of writes
  // given up while running (joined at the end: their calls are bounded).
  std::thread thread_;
  std::vector<std::thread> given_up_;
  int64_t writes_ = 0;  // writes started
  absl::Mutex mu_;
  // The number of the write in flight (its thread commits only while it is
  // still this); 0: none.
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t ended_ ABSL_GUARDED_BY(mu_) = 0;  // the latest write whose thread ended
  std::vector<std::pair<std::string, int64_t>> committed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_CHECKPOINT_WRITER_H_
