// Master request messages, decoded from the bytes a client would send and
// handed to the master's handlers in-process (rpc_env.h): a sequence of
// records (kind byte, then the message), so one input can create a session,
// extend it, run steps and callables and close it. An empty session handle
// means the last session the input created. Every session an input created
// is closed after it.
#include <cstdint>
#include <string>
#include <vector>

#include "distflow/core/memory_budget.h"
#include "distflow/master.pb.h"
#include "fuzz_limits.h"
#include "rpc_env.h"

namespace distflow {
namespace {

constexpr size_t kMaxRecords = 6;

enum Kind : uint8_t {
  kCreateSession,
  kExtendSession,
  kRunStep,
  kPartialRunSetup,
  kMakeCallable,
  kRunCallable,
  kReleaseCallable,
  kListDevices,
  kCloseSession,
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

template <typename Request>
void DefaultSession(const std::vector<std::string>& sessions, Request* req) {
  if (req->session_handle().empty() && !sessions.empty()) {
    req->set_session_handle(sessions.back());
  }
}

// Calls a handler of the form (req, resp, done); it is never cancelled.
template <typename Request, typename Response, typename Method>
absl::Status Call(const char* what, Master& master, Method method, const Request& req,
                  Response* resp) {
  return fuzz::CallAndWait(
      what, fuzz::kStepTimeoutMs, [&](auto done) { (master.*method)(&req, resp, std::move(done)); },
      [] {});
}

// Calls a handler of the form (req, resp, call_cm, done), cancelling it
// after the step timeout.
template <typename Request, typename Response, typename Method>
absl::Status CallCancellable(const char* what, Master& master, Method method, const Request& req,
                             Response* resp) {
  CancellationManager cm;
  return fuzz::CallAndWait(
      what, fuzz::kStepTimeoutMs,
      [&](auto done) { (master.*method)(&req, resp, &cm, std::move(done)); },
      [&] { cm.StartCancel(); });
}

void Handle(const fuzz::Record& record, Master& master, std::vector<std::string>* sessions) {
  // The decoded request's bytes, held until the handler has answered.
  memory_budget::Reservation charge;
  switch (record.kind % kNumKinds) {
    case kCreateSession: {
      CreateSessionRequest req;
      CreateSessionResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      if (CallCancellable("CreateSession", master, &Master::CreateSession, req, &resp).ok()) {
        sessions->push_back(resp.session_handle());
      }
      return;
    }
    case kExtendSession: {
      ExtendSessionRequest req;
      ExtendSessionResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      Call("ExtendSession", master, &Master::ExtendSession, req, &resp).IgnoreError();
      return;
    }
    case kRunStep: {
      RunStepRequest req;
      RunStepResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      CallCancellable("RunStep", master, &Master::RunStep, req, &resp).IgnoreError();
      return;
    }
    case kPartialRunSetup: {
      PartialRunSetupRequest req;
      PartialRunSetupResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      Call("PartialRunSetup", master, &Master::PartialRunSetup, req, &resp).IgnoreError();
      return;
    }
    case kMakeCallable: {
      MakeCallableRequest req;
      MakeCallableResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      Call("MakeCallable", master, &Master::MakeCallable, req, &resp).IgnoreError();
      return;
    }
    case kRunCallable: {
      RunCallableRequest req;
      RunCallableResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      CallCancellable("RunCallable", master, &Master::RunCallable, req, &resp).IgnoreError();
      return;
    }
    case kReleaseCallable: {
      ReleaseCallableRequest req;
      ReleaseCallableResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      Call("ReleaseCallable", master, &Master::ReleaseCallable, req, &resp).IgnoreError();
      return;
    }
    case kListDevices: {
      ListDevicesRequest req;
      ListDevicesResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      Call("ListDevices", master, &Master::ListDevices, req, &resp).IgnoreError();
      return;
    }
    case kCloseSession: {
      CloseSessionRequest req;
      CloseSessionResponse resp;
      if (!Parse(record.bytes, &req, &charge)) return;
      DefaultSession(*sessions, &req);
      Call("CloseSession", master, &Master::CloseSession, req, &resp).IgnoreError();
      return;
    }
  }
}

}  // namespace
}  // namespace distflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  Master& master = fuzz::InProcessTask::Get().master();
  std::vector<std::string> sessions;
  for (const fuzz::Record& record : fuzz::SplitRecords(data, size, kMaxRecords)) {
    Handle(record, master, &sessions);
  }
  for (const std::string& handle : sessions) {
    CloseSessionRequest req;
    CloseSessionResponse resp;
    req.set_session_handle(handle);
    fuzz::CallAndWait(
        "CloseSession", fuzz::kStepTimeoutMs,
        [&](auto done) { master.CloseSession(&req, &resp, std::move(done)); }, [] {})
        .IgnoreError();
  }
  return 0;
}
