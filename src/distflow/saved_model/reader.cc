#include "distflow/saved_model/reader.h"

#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/saved_model/session_bundle.h"
#include "google/protobuf/text_format.h"

namespace distflow {

absl::StatusOr<SavedModel> ParseSavedModel(absl::string_view bytes, const std::string& file) {
  SavedModel model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return errors::InvalidArgument(file, " is not a SavedModel (it does not parse)");
  }
  if (model.meta_graphs_size() == 0) {
    return errors::InvalidArgument(file, " is not a SavedModel (it holds no MetaGraphDef)");
  }
  return model;
}

absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir) {
  const std::string pb = absl::StrCat(export_dir, "/saved_model.pb");
  absl::StatusOr<std::string> bytes = ReadFileToString(pb);
  if (bytes.ok()) {
    if (bytes->size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return errors::InvalidArgument(pb, " is larger than a protocol buffer may be (2 GiB)");
    }
    return ParseSavedModel(*bytes, pb);
  }
  if (!absl::IsNotFound(bytes.status())) return bytes.status();
  const std::string pbtxt = absl::StrCat(export_dir, "/saved_model.pbtxt");
  absl::StatusOr<std::string> text = ReadFileToString(pbtxt);
  if (absl::IsNotFound(text.status())) {
    if (IsSessionBundleDir(export_dir)) return ReadSessionBundle(export_dir);
    return errors::NotFound("no SavedModel in '", export_dir,
                            "': it has neither saved_model.pb nor saved_model.pbtxt");
  }
  if (!text.ok()) return text.status();
  SavedModel model;
  if (!google::protobuf::TextFormat::ParseFromString(*text, &model) ||
      model.meta_graphs_size() == 0) {
    return errors::InvalidArgument(pbtxt, " is not a SavedModel in text format");
  }
  return model;
}

std::string TagSetString(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  return absl::StrCat("{", absl::StrJoin(std::set<std::string>(tags.begin(), tags.end()), ", "),
                      "}");
}

absl::StatusOr<const MetaGraphDef*> FindMetaGraph(const SavedModel& model,
                                                  const std::set<std::string>& tags,
                                                  const std::string& export_dir) {
  std::vector<std::string> available;
  for (const MetaGraphDef& m : model.meta_graphs()) {
    const auto& t = m.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == tags) return &m;
    available.push_back(TagSetString(t));
  }
  return errors::NotFound(
      "SavedModel '", export_dir, "' has no graph with tags {", absl::StrJoin(tags, ", "),
      "}; its tag sets: ", available.empty() ? "none" : absl::StrJoin(available, " "));
}

}  // namespace distflow
