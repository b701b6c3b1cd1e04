#include "distflow/serving/model_config.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// Keeps the parser's first error, with its position.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (message_.empty())
      message_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

absl::Status ParseText(const std::string& text, const std::string& what,
                       google::protobuf::Message* out) {
  FirstError error;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&error);
  if (!parser.ParseFromString(text, out)) {
    return errors::InvalidArgument(what, " is not a valid ", out->GetTypeName(),
                                   " in text format: ", error.message());
  }
  return absl::OkStatus();
}

}  // namespace

ModelServerConfig SingleModelConfig(const std::string& name, const std::string& base_path) {
  ModelServerConfig config;
  ModelConfig* model = config.mutable_model_config_list()->add_config();
  model->set_name(name);
  model->set_base_path(base_path);
  model->set_model_platform("tensorflow");
  return config;
}

absl::StatusOr<ModelServerConfig> ParseModelServerConfig(const std::string& text,
                                                         const std::string& what) {
  ModelServerConfig config;
  DF_RETURN_IF_ERROR(ParseText(text, what, &config));
  return config;
}

absl::StatusOr<BatchingOptions> ParseBatchingParameters(const std::string& text,
                                                        const std::string& what) {
  BatchingParameters params;
  DF_RETURN_IF_ERROR(ParseText(text, what, &params));
  BatchingOptions options;
  if (params.has_max_batch_size()) options.max_batch_size = params.max_batch_size().value();
  if (params.has_batch_timeout_micros()) {
    options.batch_timeout_micros = params.batch_timeout_micros().value();
  }
  if (params.has_max_enqueued_batches()) {
    options.max_enqueued_batches = params.max_enqueued_batches().value();
  }
  if (params.has_num_batch_threads()) {
    options.num_batch_threads = params.num_batch_threads().value();
  }
  absl::Status valid = ValidateBatchingOptions(options);
  if (!valid.ok()) return errors::InvalidArgument(what, ": ", valid.message());
  return options;
}

absl::StatusOr<ModelServerConfig> ReadModelServerConfig(const std::string& path) {
  DF_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  return ParseModelServerConfig(text, path);
}

absl::StatusOr<BatchingOptions> ReadBatchingParameters(const std::string& path) {
  DF_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  return ParseBatchingParameters(text, path);
}

}  // namespace distflow
