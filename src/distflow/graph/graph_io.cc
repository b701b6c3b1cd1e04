#include "distflow/graph/graph_io.h"

#include "absl/strings/match.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"

namespace distflow {
namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty())
      first_ = absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

bool IsTextName(const std::string& path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".txt") ||
         absl::EndsWith(path, ".pbtext");
}

}  // namespace

absl::Status ParseGraphDefText(const std::string& text, GraphDef* graph_def) {
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors_out;
  parser.RecordErrorsTo(&errors_out);
  if (!parser.ParseFromString(text, graph_def)) {
    return errors::InvalidArgument("cannot parse GraphDef text: ", errors_out.first());
  }
  return absl::OkStatus();
}

absl::Status ReadGraphDefFromFile(const std::string& path, GraphDef* graph_def) {
  DF_ASSIGN_OR_RETURN(std::string data, ReadFileToString(path));
  if (IsTextName(path)) {
    return errors::Annotate(ParseGraphDefText(data, graph_def), absl::StrCat(path, ": "));
  }
  if (graph_def->ParseFromString(data)) return absl::OkStatus();
  absl::Status text = ParseGraphDefText(data, graph_def);
  if (text.ok()) return text;
  return errors::InvalidArgument(path, ": not a binary GraphDef, and as text: ", text.message());
}

std::string SerializeGraphDefDeterministic(const GraphDef& graph_def) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    graph_def.SerializeToCodedStream(&coded);
  }
  return out;
}

absl::Status WriteGraphDefToFile(const std::string& path, const GraphDef& graph_def, bool text) {
  std::string data;
  if (text) {
    if (!google::protobuf::TextFormat::PrintToString(graph_def, &data)) {
      return errors::Internal("cannot print GraphDef as text");
    }
  } else {
    data = SerializeGraphDefDeterministic(graph_def);
  }
  return WriteStringToFileAtomic(path, data);
}

}  // namespace distflow
