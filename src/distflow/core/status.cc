#include "distflow/core/status.h"

namespace distflow {
namespace errors {

namespace {
constexpr char kDerivedUrl[] = "type.distflow/derived";
}  // namespace

absl::Status Annotate(const absl::Status& s, absl::string_view context) {
  if (s.ok()) return s;
  absl::Status out(s.code(), absl::StrCat(context, s.message()));
  s.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

absl::Status MakeDerived(const absl::Status& s) {
  if (s.ok()) return s;
  absl::Status out = s;
  out.SetPayload(kDerivedUrl, absl::Cord("1"));
  return out;
}

bool IsDerived(const absl::Status& s) { return s.GetPayload(kDerivedUrl).has_value(); }

absl::Status StripDerived(const absl::Status& s) {
  absl::Status out = s;
  out.ErasePayload(kDerivedUrl);
  return out;
}

namespace {
int CauseRank(const absl::Status& s) {
  if (s.ok()) return 0;
  if (absl::IsCancelled(s)) return 1;
  return IsDerived(s) ? 2 : 3;
}
}  // namespace

bool IsBetterCause(const absl::Status& candidate, const absl::Status& current) {
  return CauseRank(candidate) > CauseRank(current);
}

}  // namespace errors
}  // namespace distflow
