// The in-process task the RPC fuzz targets call: one worker and one master
// of a one-task cluster ("/job:localhost/replica:0/task:0"), wired as
// GrpcServer wires them but with no gRPC server — the master reaches the
// worker through a LocalWorker — so the handlers see the decoded request
// messages exactly as the services hand them over. Also the fuzz input's
// record format and the bounded wait for an asynchronous handler.
// Thread-safe after Get() returns.
#ifndef DISTFLOW_FUZZ_RPC_ENV_H_
#define DISTFLOW_FUZZ_RPC_ENV_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "distflow/core/memory_budget.h"
#include "distflow/distributed_runtime/master.h"
#include "distflow/distributed_runtime/worker.h"

namespace distflow {
namespace fuzz {

class InProcessTask {
 public:
  // The process's task, made on first use (with the fuzz caps set).
  static InProcessTask& Get();

  Worker& worker() { return *worker_; }
  Master& master() { return *master_; }
  const std::string& task_name() const { return env_.task_name; }

 private:
  InProcessTask();

  std::unique_ptr<DeviceMgr> device_mgr_;
  std::unique_ptr<RendezvousMgr> rendezvous_mgr_;
  std::unique_ptr<ThreadPool> compute_pool_;
  WorkerEnv env_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Master> master_;
};

// One request of a fuzz input: a kind byte choosing the message type and
// the message's serialized bytes. An input is a sequence of records, each
// [kind: u8][length: u16 little-endian][length bytes]; a truncated last
// record takes what is left. At most `max_records` are returned.
struct Record {
  uint8_t kind;
  absl::string_view bytes;
};
std::vector<Record> SplitRecords(const uint8_t* data, size_t size, size_t max_records);

// Decodes a record's message as the server's call queue does: the decoded
// message's bytes are held in the memory budget (in *charge, until the
// handler has answered), and a message that does not fit beside what is
// live is dropped. False for bytes that are not the message, too.
template <typename Message>
bool ParseCharged(absl::string_view bytes, Message* m, memory_budget::Reservation* charge) {
  if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  auto decoded = memory_budget::Reservation::Make(static_cast<int64_t>(m->ByteSizeLong()),
                                                  "decoding a " + m->GetTypeName());
  if (!decoded.ok()) return false;
  *charge = *std::move(decoded);
  return true;
}

// Starts an asynchronous handler with `start(done)` and waits for its done
// callback. After `cancel_after_ms` it calls `cancel` (what a caller that
// gives up does); a handler that still has not answered kHangSeconds later
// is a hang: the process aborts, naming `what`, so the fuzzer reports it.
inline constexpr int kHangSeconds = 20;
absl::Status CallAndWait(const char* what, int64_t cancel_after_ms,
                         const std::function<void(std::function<void(const absl::Status&)>)>& start,
                         const std::function<void()>& cancel);

}  // namespace fuzz
}  // namespace distflow

#endif  // DISTFLOW_FUZZ_RPC_ENV_H_
