#include "distflow/coordinator/failure.h"

#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace distflow {

namespace {

bool IsRetryableCode(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kAborted ||
         code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kCancelled;
}

// The task index after "/job:<job>/replica:<r>/task:" or "/job:<job>/task:"
// in `message`; -1 when the message names no task of that job.
int NamedTask(absl::string_view message, absl::string_view job) {
  const std::string prefix = absl::StrCat("/job:", job, "/");
  size_t at = message.find(prefix);
  while (at != absl::string_view::npos) {
    absl::string_view rest = message.substr(at + prefix.size());
    if (rest.substr(0, 8) == "replica:") {
      const size_t slash = rest.find('/');
      rest = slash == absl::string_view::npos ? absl::string_view() : rest.substr(slash + 1);
    }
    if (rest.substr(0, 5) == "task:") {
      rest.remove_prefix(5);
      size_t digits = 0;
      while (digits < rest.size() && digits < 9 && rest[digits] >= '0' && rest[digits] <= '9') {
        ++digits;
      }
      int task = -1;
      if (digits > 0 && absl::SimpleAtoi(rest.substr(0, digits), &task)) return task;
    }
    at = message.find(prefix, at + 1);
  }
  return -1;
}

}  // namespace

Failure ClassifyFailure(const absl::Status& status, absl::string_view ps_job) {
  Failure f;
  if (status.ok()) return f;
  if (!IsRetryableCode(status.code())) {
    f.kind = FailureKind::kFunction;
    return f;
  }
  const int ps = NamedTask(status.message(), ps_job);
  if (ps >= 0) {
    f.kind = FailureKind::kPs;
    f.ps_task = ps;
    return f;
  }
  f.kind = FailureKind::kWorker;
  return f;
}

bool IsRetryableFailure(const absl::Status& status) { return IsRetryableCode(status.code()); }

int LostPsStateTask(const absl::Status& status, absl::string_view ps_job) {
  if (status.code() != absl::StatusCode::kFailedPrecondition &&
      status.code() != absl::StatusCode::kNotFound) {
    return -1;
  }
  const absl::string_view m = status.message();
  if (m.find("uninitialized") == absl::string_view::npos &&
      m.find("does not exist") == absl::string_view::npos) {
    return -1;
  }
  return NamedTask(m, ps_job);
}

std::string UnreachableReason(const absl::Status& status) {
  const absl::string_view m = status.message();
  auto has = [m](absl::string_view what) { return m.find(what) != absl::string_view::npos; };
  if (has("Connection refused")) {
    return "connection refused (nothing listens there: a wrong port, or the task has not started)";
  }
  if (has("No route to host") || has("Network is unreachable")) return "no route to the host";
  if (has("handshake") || has("SSL") || has("certificate")) return "TLS handshake failed";
  if (status.code() == absl::StatusCode::kDeadlineExceeded || has("Deadline Exceeded") ||
      has("timed out") || has("Timeout")) {
    return "no answer (a wrong host, a firewall dropping packets, or a TLS mismatch)";
  }
  return std::string(m.substr(0, 300));
}

int TransientPsFailureThreshold() {
  constexpr int kDefault = 3;
  const char* env = std::getenv("TF_COORDINATOR_IGNORE_TRANSIENT_PS_FAILURES");
  int value = 0;
  if (env == nullptr || !absl::SimpleAtoi(env, &value) || value < 0) return kDefault;
  return value;
}

}  // namespace distflow
