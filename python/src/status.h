// How the extension reports a failed absl::Status to Python: as the
// exception class of distflow.errors that has the status's code
// (InvalidArgumentError, NotFoundError, ...), with the status's message.
// REQUIRES: the GIL is held.
#ifndef DISTFLOW_PYTHON_STATUS_H_
#define DISTFLOW_PYTHON_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace distflow {
namespace python {

// Returns iff `status` is OK; otherwise raises its distflow.errors class
// (throws pybind11::error_already_set).
void ThrowIfError(const absl::Status& status);

template <typename T>
T ValueOrThrow(absl::StatusOr<T> result) {
  ThrowIfError(result.status());
  return *std::move(result);
}

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_STATUS_H_
