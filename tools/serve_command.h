// `distflow serve`: SavedModels behind TensorFlow Serving's REST API, with
// TF Serving's flag names:
//   distflow serve --model_name NAME --model_base_path DIR [--rest_api_port P]
//   distflow serve --model_config_file FILE [--enable_batching
//                  --batching_parameters_file FILE]
// DIR holds numbered versions; the newest loads before the server listens
// and the base paths are polled every --file_system_poll_wait_seconds. The
// first line printed is "listening on HOST:PORT". Runs until SIGTERM or
// SIGINT. With DISTFLOW_TOKEN_FILE set, requests must carry the token
// ("Authorization: Bearer TOKEN").
#ifndef DISTFLOW_TOOLS_SERVE_COMMAND_H_
#define DISTFLOW_TOOLS_SERVE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace distflow {

struct ServeFlags {
  std::string model_name = "default";
  std::string model_base_path;
  std::string model_config_file;
  int rest_api_port = 8501;
  std::string rest_api_bind_address = "127.0.0.1";
  int rest_api_num_threads = 16;
  int64_t rest_api_timeout_in_ms = 30000;
  int64_t rest_api_max_body_mb = 16;
  double file_system_poll_wait_seconds = 1;
  int max_num_load_retries = 5;
  bool enable_batching = false;
  std::string batching_parameters_file;
};

void AddServeFlags(CLI::App* cmd, ServeFlags* flags);

// Blocks until SIGTERM or SIGINT; OK after a clean shutdown, with the signal
// in *stop_signal when given. Bad flags or files, a model that cannot be
// found, a port that cannot be bound: the error, before anything listens.
absl::Status RunServeCommand(const ServeFlags& flags, std::ostream& out, int* stop_signal);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_SERVE_COMMAND_H_
