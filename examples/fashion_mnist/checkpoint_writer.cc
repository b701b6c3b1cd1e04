#include "fashion_mnist/checkpoint_writer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "distflow/core/logging.h"

namespace distflow {
namespace fashion_mnist {

CheckpointWriter::CheckpointWriter(ChiefSession* chief, const TrainingState* state, std::string dir,
                                   absl::Duration write_bound)
    : chief_(chief), state_(state), dir_(std::move(dir)), write_bound_(write_bound) {}

CheckpointWriter::~CheckpointWriter() {
  Finish();
  if (thread_.joinable()) thread_.join();
  for (std::thread& t : given_up_) t.join();
}

void CheckpointWriter::Write(int64_t step) {
  const int64_t write = ++writes_;
  bool previous_ended;
  {
    absl::MutexLock l(&mu_);
    in_flight_ = write;
    previous_ended = ended_ == write - 1;
  }
  if (thread_.joinable()) {
    // Finish returned: the previous write ended (its thread is returning)
    // or was given up (its thread ends within its calls' deadlines).
    if (previous_ended) {
      thread_.join();
    } else {
      given_up_.push_back(std::move(thread_));
    }
  }
  thread_ = std::thread([this, write, step] { WriteAndCommit(write, step); });
}

void CheckpointWriter::WriteAndCommit(int64_t write, int64_t step) {
  std::string prefix;
  absl::Status s = chief_->Call([&](const ClientSession& session) -> absl::Status {
    absl::StatusOr<std::string> written = state_->saver()->WriteSnapshot(session, dir_, step);
    if (written.ok()) prefix = *written;
    return written.status();
  });
  absl::MutexLock l(&mu_);
  ended_ = std::max(ended_, write);
  if (in_flight_ != write) {
    internal::LogLine(
        'W', absl::StrCat("the checkpoint of step ", step, " was given up while being written (",
                          s.ok() ? "written, not listed" : s.ToString(), ")"));
    return;
  }
  in_flight_ = 0;
  if (s.ok()) s = state_->saver()->Commit(dir_, prefix);
  if (!s.ok()) {
    internal::LogLine('W',
                      absl::StrCat("the checkpoint of step ", step,
                                   " was not written; the latest stays as it was: ", s.ToString()));
    return;
  }
  committed_.emplace_back(prefix, step);
}

bool CheckpointWriter::Finish() {
  absl::MutexLock l(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
  if (mu_.AwaitWithTimeout(absl::Condition(&idle), write_bound_)) return true;
  internal::LogLine(
      'W', absl::StrCat("a checkpoint write ran longer than ", absl::FormatDuration(write_bound_),
                        "; it is given up and will not be listed"));
  in_flight_ = 0;
  return false;
}

std::vector<std::pair<std::string, int64_t>> CheckpointWriter::TakeCommitted() {
  absl::MutexLock l(&mu_);
  return std::exchange(committed_, {});
}

}  // namespace fashion_mnist
}  // namespace distflow
