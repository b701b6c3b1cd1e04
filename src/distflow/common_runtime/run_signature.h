// RunSignature: one run's feeds, fetches and targets in the one normal form
// every session uses to cache what it builds for a run. Tensor names are
// canonical ("x" is "x:0"), each list is sorted and free of duplicates, and
// `key` identifies the signature. NormalizeRunSignature is the only place
// that turns names as a caller gave them into this form.
#ifndef DISTFLOW_COMMON_RUNTIME_RUN_SIGNATURE_H_
#define DISTFLOW_COMMON_RUNTIME_RUN_SIGNATURE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace distflow {

struct RunSignature {
  std::vector<std::string> feeds;    // canonical tensor names, sorted, unique
  std::vector<std::string> fetches;  // canonical tensor names, sorted, unique
  std::vector<std::string> targets;  // node names, sorted, unique
  std::string key;                   // equal for equal signatures only
};

// Where each name as given went in the signature: feed_index[i] is the
// position of feeds[i] in signature.feeds, fetch_index[i] that of
// fetches[i] in signature.fetches (a tensor fetched twice maps twice).
struct RunSignatureIndex {
  std::vector<int> feed_index;
  std::vector<int> fetch_index;
};

// The canonical name of a tensor name ("x" -> "x:0"). InvalidArgument naming
// it as `what` ("feed", "fetch") when it is malformed or names a control
// input.
absl::Status CanonicalTensorName(const std::string& name, const char* what, std::string* canonical);

// Normalises a run's names. InvalidArgument naming the tensor when a name is
// malformed or a control input, or when a tensor is fed twice ("x" and "x:0"
// are one tensor). Fetching a tensor twice is allowed; targets may repeat.
absl::Status NormalizeRunSignature(absl::Span<const std::string> feeds,
                                   absl::Span<const std::string> fetches,
                                   absl::Span<const std::string> targets, RunSignature* signature,
                                   RunSignatureIndex* index = nullptr);

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_RUN_SIGNATURE_H_
