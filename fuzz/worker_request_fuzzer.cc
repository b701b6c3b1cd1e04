// Worker request messages, decoded from the bytes a client would send and
// handed to the worker's handlers in-process (rpc_env.h): a sequence of
// records (kind byte, then the message) so that one input can create a
// session, register a graph, run it and fetch from it. An empty graph
// handle in RunGraph or DeregisterGraph means the last one registered, so
// inputs reach the step without guessing handles. Every graph registered
// and every step run by an input is dropped after it.
#include <cstdint>
#include <string>
#include <vector>

#include "distflow/core/memory_budget.h"
#include "distflow/framework/rendezvous.h"
#include "distflow/worker.pb.h"
#include "fuzz_limits.h"
#include "rpc_env.h"

namespace distflow {
namespace {

constexpr size_t kMaxRecords = 8;

enum Kind : uint8_t {
  kCreateWorkerSession,
  kRegisterGraph,
  kRunGraph,
  kRecvTensor,
  kCleanupGraph,
  kDeregisterGraph,
  kDeleteWorkerSession,
  kGetStatus,
  kNumKinds,
};

// Decodes a request as the server's call queue does: a request that does
// not fit in the memory budget beside what is live is dropped.
template <typename Message>
bool Parse(absl::string_view bytes, Message* m, memory_budget::Reservation* charge) {
  if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  auto decoded = memory_budget::Reservation::Make(static_cast<int64_t>(m->ByteSizeLong()),
                                                  "decoding a " + m->GetTypeName());
  if (!decoded.ok()) return false;
  *charge = *std::move(decoded);
  return true;
}

struct InputState {
  std::vector<std::string> graphs;
  std::vector<int64_t> steps;
  std::vector<std::string> sessions;
};

void Handle(const fuzz::Record& record, Worker& worker, InputState* state) {
  // The decoded request's bytes, held until the handler has answered.
  memory_budget::Reservation charge;
  switch (record.kind % kNumKinds) {
    case kCreateWorkerSession: {
      CreateWorkerSessionRequest req;
      if (!Parse(record.bytes, &req, &charge)) return;
      if (worker.CreateWorkerSession(req).ok()) state->sessions.push_back(req.session_handle());
      return;
    }
    case kRegisterGraph: {
      RegisterGraphRequest req;
      RegisterGraphResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      if (worker.RegisterGraph(req, &resp).ok()) state->graphs.push_back(resp.graph_handle());
      return;
    }
    case kRunGraph: {
      RunGraphRequest req;
      RunGraphResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      if (req.graph_handle().empty() && !state->graphs.empty()) {
        req.set_graph_handle(state->graphs.back());
      }
      state->steps.push_back(req.step_id());
      CancellationManager cm;
      fuzz::CallAndWait(
          "RunGraph", fuzz::kStepTimeoutMs,
          [&](auto done) { worker.RunGraphAsync(&cm, &req, &resp, std::move(done)); },
          [&] { cm.StartCancel(); })
          .IgnoreError();
      return;
    }
    case kRecvTensor: {
      RecvTensorRequest req;
      if (!Parse(record.bytes, &req, &charge)) return;
      state->steps.push_back(req.step_id());
      fuzz::CallAndWait(
          "RecvTensor", fuzz::kStepTimeoutMs,
          [&](auto done) {
            worker.RecvTensorAsync(
                /*call_cm=*/nullptr, req,
                [done = std::move(done)](const absl::Status& s, const Tensor&, bool) { done(s); });
          },
          [&] {
            CleanupGraphRequest cleanup;
            cleanup.set_step_id(req.step_id());
            worker.CleanupGraph(cleanup).IgnoreError();
          })
          .IgnoreError();
      return;
    }
    case kCleanupGraph: {
      CleanupGraphRequest req;
      if (Parse(record.bytes, &req, &charge)) worker.CleanupGraph(req).IgnoreError();
      return;
    }
    case kDeregisterGraph: {
      DeregisterGraphRequest req;
      if (!Parse(record.bytes, &req, &charge)) return;
      if (req.graph_handle().empty() && !state->graphs.empty()) {
        req.set_graph_handle(state->graphs.back());
      }
      worker.DeregisterGraph(req).IgnoreError();
      return;
    }
    case kDeleteWorkerSession: {
      DeleteWorkerSessionRequest req;
      if (Parse(record.bytes, &req, &charge)) worker.DeleteWorkerSession(req).IgnoreError();
      return;
    }
    case kGetStatus: {
      GetStatusRequest req;
      GetStatusResponse resp;
      if (Parse(record.bytes, &req, &charge)) worker.GetStatus(req, &resp);
      return;
    }
  }
}

}  // namespace
}  // namespace distflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::InProcessTask& task = fuzz::InProcessTask::Get();
  Worker& worker = task.worker();
  InputState state;
  for (const fuzz::Record& record : fuzz::SplitRecords(data, size, kMaxRecords)) {
    Handle(record, worker, &state);
  }
  for (int64_t step : state.steps) {
    CleanupGraphRequest req;
    req.set_step_id(step);
    worker.CleanupGraph(req).IgnoreError();
  }
  for (const std::string& handle : state.graphs) {
    DeregisterGraphRequest req;
    req.set_graph_handle(handle);
    worker.DeregisterGraph(req).IgnoreError();
  }
  for (const std::string& session : state.sessions) {
    DeleteWorkerSessionRequest req;
    req.set_session_handle(session);
    worker.DeleteWorkerSession(req).IgnoreError();
  }
  return 0;
}
