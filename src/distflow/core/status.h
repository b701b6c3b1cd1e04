// Status helpers: early-return macros and constructors that build a message
// from pieces. Every error crossing a module boundary is an absl::Status whose
// message names what was wrong (the node, tensor, attr or device).
#ifndef DISTFLOW_CORE_STATUS_H_
#define DISTFLOW_CORE_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define DF_CONCAT_INNER_(a, b) a##b
#define DF_CONCAT_(a, b) DF_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` is not OK.
#define DF_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status df_status_ = (expr);      \
    if (!df_status_.ok()) return df_status_; \
  } while (0)

// `lhs = value of statusor_expr`, or returns its error.
#define DF_ASSIGN_OR_RETURN(lhs, expr) \
  DF_ASSIGN_OR_RETURN_IMPL_(DF_CONCAT_(df_statusor_, __LINE__), lhs, expr)
#define DF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

namespace distflow {
namespace errors {

template <typename... Args>
absl::Status InvalidArgument(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status NotFound(const Args&... args) {
  return absl::NotFoundError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status AlreadyExists(const Args&... args) {
  return absl::AlreadyExistsError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status FailedPrecondition(const Args&... args) {
  return absl::FailedPreconditionError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Unimplemented(const Args&... args) {
  return absl::UnimplementedError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Internal(const Args&... args) {
  return absl::InternalError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Aborted(const Args&... args) {
  return absl::AbortedError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Cancelled(const Args&... args) {
  return absl::CancelledError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Unavailable(const Args&... args) {
  return absl::UnavailableError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status DeadlineExceeded(const Args&... args) {
  return absl::DeadlineExceededError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status OutOfRange(const Args&... args) {
  return absl::OutOfRangeError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status ResourceExhausted(const Args&... args) {
  return absl::ResourceExhaustedError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status DataLoss(const Args&... args) {
  return absl::DataLossError(absl::StrCat(args...));
}

// Returns `s` with `context` prepended to its message; OK stays OK. Payloads
// (such as the derived mark below) are kept.
absl::Status Annotate(const absl::Status& s, absl::string_view context);

// A derived error is the echo of a failure elsewhere: a receive released by a
// rendezvous that another executor or task aborted. Code and message stay those
// of the cause; the mark lets whoever gathers errors from several places (the
// master, a barrier) report the cause rather than one of its echoes.
absl::Status MakeDerived(const absl::Status& s);
bool IsDerived(const absl::Status& s);
// `s` without the derived mark, for handing to a user.
absl::Status StripDerived(const absl::Status& s);
// Whether the error `candidate` should replace `current` as the one reported
// when several places failed: any error beats OK, an error of its own beats a
// derived one, and a derived one beats a bare cancellation.
bool IsBetterCause(const absl::Status& candidate, const absl::Status& current);

}  // namespace errors
}  // namespace distflow

#endif  // DISTFLOW_CORE_STATUS_H_
