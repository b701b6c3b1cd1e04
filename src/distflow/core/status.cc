#include "distflow/core/status.h"

namespace distflow {
namespace errors {

absl::Status Annotate(const absl::Status& s, absl::string_view context) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(context, s.message()));
}

}  // namespace errors
}  // namespace distflow
