// Reading a SavedModel's protocol buffer without loading it: the
// saved_model.pb (binary) or saved_model.pbtxt (text) of an export directory
// parsed into a SavedModel, and the MetaGraphDef of a tag set picked from
// it. LoadSavedModel builds on these; `distflow saved-model show` uses them
// alone, so a model whose ops distflow lacks can still be inspected.
// Stateless; thread-safe.
#ifndef DISTFLOW_SAVED_MODEL_READER_H_
#define DISTFLOW_SAVED_MODEL_READER_H_

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/saved_model.pb.h"

namespace distflow {

// The SavedModel in `bytes`, read from `file` (named in errors):
// InvalidArgument "FILE is not a SavedModel" when it does not parse or holds
// no MetaGraphDef.
absl::StatusOr<SavedModel> ParseSavedModel(absl::string_view bytes, const std::string& file);

// The SavedModel of `export_dir` (saved_model.pb, else saved_model.pbtxt,
// else a session bundle's export.meta read as one: session_bundle.h).
// NotFound when it has none of them.
absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir);

// The MetaGraphDef whose tag set is exactly `tags`. NotFound naming
// `export_dir`, the tags asked for and the tag sets there are.
absl::StatusOr<const MetaGraphDef*> FindMetaGraph(const SavedModel& model,
                                                  const std::set<std::string>& tags,
                                                  const std::string& export_dir);

// "{a, b}" for a tag set, sorted.
std::string TagSetString(const google::protobuf::RepeatedPtrField<std::string>& tags);

}  // namespace distflow

#endif  // DISTFLOW_SAVED_MODEL_READER_H_
