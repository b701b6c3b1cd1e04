// The versions of a model as TensorFlow Serving lays them out: a base
// directory whose subdirectories named by a number (00000123, 7) each hold
// one SavedModel. LoadSavedModel given such a base loads the highest
// version; a server lists them all. Stateless; thread-safe.
#ifndef DISTFLOW_SAVED_MODEL_VERSION_DIRS_H_
#define DISTFLOW_SAVED_MODEL_VERSION_DIRS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace distflow {

// True iff `dir` holds a saved_model.pb or saved_model.pbtxt.
bool HasSavedModelProto(const std::string& dir);

// True iff `dir` holds a saved_model.pb or saved_model.pbtxt, or is a
// session bundle (export.meta; session_bundle.h), which loads as one.
bool IsSavedModelDir(const std::string& dir);

struct SavedModelVersion {
  int64_t version = 0;
  std::string dir;  // base/name
};

// The numbered subdirectories of `base` that hold a SavedModel, lowest
// version first. Names that are not a non-negative decimal number fitting
// int64 are ignored; two names for one number ("7", "007") keep the first in
// name order. NotFound when `base` is not a readable directory.
absl::StatusOr<std::vector<SavedModelVersion>> ListSavedModelVersions(const std::string& base);

// `path` itself when it holds a SavedModel, else its highest version.
// NotFound naming `path` when it is neither.
absl::StatusOr<std::string> ResolveSavedModelDir(const std::string& path);

}  // namespace distflow

#endif  // DISTFLOW_SAVED_MODEL_VERSION_DIRS_H_
