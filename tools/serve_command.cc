#include "serve_command.h"

#include <pthread.h>

#include <csignal>
#include <iostream>
#include <memory>

#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/serving/model_config.h"
#include "distflow/serving/model_manager.h"
#include "distflow/serving/rest_api.h"
#include "distflow/serving/rest_server.h"
#include "distflow/serving/serving_metrics.h"

namespace distflow {

void AddServeFlags(CLI::App* cmd, ServeFlags* flags) {
  cmd->add_option("--model_name", flags->model_name, "the model's name in the URLs")
      ->capture_default_str();
  cmd->add_option("--model_base_path", flags->model_base_path,
                  "a directory of numbered versions, each a SavedModel");
  cmd->add_option("--model_config_file", flags->model_config_file,
                  "several models: a ModelServerConfig in text format (TF Serving's)");
  cmd->add_option("--rest_api_port", flags->rest_api_port, "the REST API's port (0: a free one)")
      ->capture_default_str();
  cmd->add_option("--rest_api_bind_address", flags->rest_api_bind_address,
                  "the address the REST API listens on (0.0.0.0: all)")
      ->capture_default_str();
  cmd->add_option("--rest_api_num_threads", flags->rest_api_num_threads,
                  "threads answering requests (each holds one connection at a time)")
      ->capture_default_str();
  cmd->add_option("--rest_api_timeout_in_ms", flags->rest_api_timeout_in_ms,
                  "the deadline of every request, batching and session call included")
      ->capture_default_str();
  cmd->add_option("--rest_api_max_body_mb", flags->rest_api_max_body_mb,
                  "refuse request bodies larger than this many MiB (413)")
      ->capture_default_str();
  cmd->add_option("--file_system_poll_wait_seconds", flags->file_system_poll_wait_seconds,
                  "seconds between looks for new versions (0: only at start)")
      ->capture_default_str();
  cmd->add_option("--max_num_load_retries", flags->max_num_load_retries,
                  "how many more polls try a version that failed to load")
      ->capture_default_str();
  cmd->add_flag("--enable_batching", flags->enable_batching,
                "join concurrent requests of one signature into one session call");
  cmd->add_option("--batching_parameters_file", flags->batching_parameters_file,
                  "BatchingParameters in text format (max_batch_size, batch_timeout_micros, "
                  "num_batch_threads, max_enqueued_batches)");
}

absl::Status RunServeCommand(const ServeFlags& flags, std::ostream& out, int* stop_signal) {
  if (flags.model_base_path.empty() == flags.model_config_file.empty()) {
    return errors::InvalidArgument(
        "give either --model_base_path (with --model_name) or --model_config_file");
  }
  if (flags.rest_api_timeout_in_ms <= 0) {
    return errors::InvalidArgument("--rest_api_timeout_in_ms must be positive");
  }
  if (flags.rest_api_max_body_mb < 1 || flags.rest_api_max_body_mb > 2047) {
    return errors::InvalidArgument("--rest_api_max_body_mb must be between 1 and 2047");
  }
  if (flags.rest_api_num_threads < 1 || flags.rest_api_num_threads > 4096) {
    return errors::InvalidArgument("--rest_api_num_threads must be between 1 and 4096");
  }
  if (!(flags.file_system_poll_wait_seconds >= 0) ||
      flags.file_system_poll_wait_seconds > 365.0 * 24 * 3600) {
    return errors::InvalidArgument("--file_system_poll_wait_seconds must be between 0 and a year");
  }
  if (flags.max_num_load_retries < 0) {
    return errors::InvalidArgument("--max_num_load_retries must not be negative");
  }
  if (!flags.batching_parameters_file.empty() && !flags.enable_batching) {
    return errors::InvalidArgument("--batching_parameters_file needs --enable_batching");
  }
  ModelServerConfig config;
  if (!flags.model_config_file.empty()) {
    DF_ASSIGN_OR_RETURN(config, ReadModelServerConfig(flags.model_config_file));
  } else {
    config = SingleModelConfig(flags.model_name, flags.model_base_path);
  }
  ServingMetrics metrics;
  ModelManagerOptions options;
  options.poll_wait_seconds = flags.file_system_poll_wait_seconds;
  options.max_load_retries = flags.max_num_load_retries;
  options.metrics = &metrics;
  options.log = [](const std::string& line) { std::cerr << "serving: " << line << std::endl; };
  if (flags.enable_batching) {
    BatchingOptions batching;
    if (!flags.batching_parameters_file.empty()) {
      DF_ASSIGN_OR_RETURN(batching, ReadBatchingParameters(flags.batching_parameters_file));
    }
    options.load.batching = batching;
    options.load.batch_observer = [&metrics](const std::string& model, const std::string& signature,
                                             int64_t rows) {
      metrics.RecordBatch(model, signature, rows);
    };
  }

  // Block the stop signals in every thread started from here on, then wait
  // for them on this one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  DF_ASSIGN_OR_RETURN(std::unique_ptr<ModelManager> models, ModelManager::Start(config, options));
  RestApi api(models.get(), &metrics, absl::Milliseconds(flags.rest_api_timeout_in_ms));
  RestServerOptions server_options;
  server_options.bind = flags.rest_api_bind_address;
  server_options.port = flags.rest_api_port;
  server_options.num_threads = flags.rest_api_num_threads;
  server_options.token = ProcessToken();
  server_options.max_body_bytes = flags.rest_api_max_body_mb << 20;
  DF_ASSIGN_OR_RETURN(
      std::unique_ptr<RestServer> server,
      RestServer::Start(server_options,
                        [&api](absl::string_view method, absl::string_view path,
                               absl::string_view body) { return api.Handle(method, path, body); }));
  out << "listening on " << flags.rest_api_bind_address << ":" << server->port() << std::endl;

  int sig = 0;
  sigwait(&stop, &sig);
  server.reset();  // no request runs after this
  models.reset();
  if (stop_signal != nullptr) *stop_signal = sig;
  return absl::OkStatus();
}

}  // namespace distflow
