// `distflow serve`'s configuration files, in TensorFlow Serving's formats
// (protobuf text format, proto/distflow/model_server_config.proto):
// --model_config_file holds a ModelServerConfig
//   model_config_list { config { name: "a" base_path: "/models/a" } ... }
// and --batching_parameters_file a BatchingParameters
//   max_batch_size { value: 32 } batch_timeout_micros { value: 1000 } ...
// Pure functions; thread-safe.
#ifndef DISTFLOW_SERVING_MODEL_CONFIG_H_
#define DISTFLOW_SERVING_MODEL_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "distflow/model_server_config.pb.h"
#include "distflow/serving/batch_scheduler.h"

namespace distflow {

// The config for one model served from `base_path` (--model_name and
// --model_base_path), its newest version only.
ModelServerConfig SingleModelConfig(const std::string& name, const std::string& base_path);

// The files' contents. InvalidArgument naming the file, line and column of a
// syntax error or an unknown field; the read error for a missing file.
absl::StatusOr<ModelServerConfig> ReadModelServerConfig(const std::string& path);
absl::StatusOr<BatchingOptions> ReadBatchingParameters(const std::string& path);

// Text-format contents, `what` naming their source in errors.
absl::StatusOr<ModelServerConfig> ParseModelServerConfig(const std::string& text,
                                                         const std::string& what);
// Fields left out keep BatchingOptions' defaults; the result is validated
// (ValidateBatchingOptions).
absl::StatusOr<BatchingOptions> ParseBatchingParameters(const std::string& text,
                                                        const std::string& what);

}  // namespace distflow

#endif  // DISTFLOW_SERVING_MODEL_CONFIG_H_
