#include "distflow/common_runtime/run_signature.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/graph/tensor_id.h"

namespace distflow {

absl::Status CanonicalTensorName(const std::string& name, const char* what,
                                 std::string* canonical) {
  TensorId id;
  DF_RETURN_IF_ERROR(ParseFeedOrFetchName(name, what, &id));
  *canonical = absl::StrCat(id.node, ":", id.index);
  return absl::OkStatus();
}

namespace {

// Canonicalises `names` into the sorted unique `out`, and records where
// each name went. With `unique_required`, a repeated tensor is an error.
absl::Status SortedUnique(absl::Span<const std::string> names, const char* what,
                          bool unique_required, std::vector<std::string>* out,
                          std::vector<int>* where) {
  std::vector<std::string> canonical(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    DF_RETURN_IF_ERROR(CanonicalTensorName(names[i], what, &canonical[i]));
  }
  *out = canonical;
  std::sort(out->begin(), out->end());
  auto last = std::unique(out->begin(), out->end());
  if (unique_required && last != out->end()) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (std::count(canonical.begin(), canonical.end(), canonical[i]) > 1) {
        return errors::InvalidArgument(what, " '", names[i], "' (tensor '", canonical[i],
                                       "') is listed more than once");
      }
    }
  }
  out->erase(last, out->end());
  if (where != nullptr) {
    where->resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      (*where)[i] =
          static_cast<int>(std::lower_bound(out->begin(), out->end(), canonical[i]) - out->begin());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NormalizeRunSignature(absl::Span<const std::string> feeds,
                                   absl::Span<const std::string> fetches,
                                   absl::Span<const std::string> targets, RunSignature* signature,
                                   RunSignatureIndex* index) {
  RunSignature sig;
  DF_RETURN_IF_ERROR(SortedUnique(feeds, "feed", /*unique_required=*/true, &sig.feeds,
                                  index ? &index->feed_index : nullptr));
  DF_RETURN_IF_ERROR(SortedUnique(fetches, "fetch", /*unique_required=*/false, &sig.fetches,
                                  index ? &index->fetch_index : nullptr));
  sig.targets.assign(targets.begin(), targets.end());
  std::sort(sig.targets.begin(), sig.targets.end());
  sig.targets.erase(std::unique(sig.targets.begin(), sig.targets.end()), sig.targets.end());
  // '\x01' and '\x02' cannot occur in tensor or node names.
  sig.key =
      absl::StrCat(absl::StrJoin(sig.feeds, "\x01"), "\x02", absl::StrJoin(sig.fetches, "\x01"),
                   "\x02", absl::StrJoin(sig.targets, "\x01"));
  *signature = std::move(sig);
  return absl::OkStatus();
}

}  // namespace distflow
