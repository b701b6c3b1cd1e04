// The models a server serves and the life of their versions, as TensorFlow
// Serving's server core keeps them. Each model is a base path of numbered
// version directories; a poll lists them, asks the model's version policy
// which to serve, and:
//  - loads each wanted version it does not have (state LOADING) beside the
//    ones serving; once loaded it is AVAILABLE and takes the requests that
//    name no version (the newest AVAILABLE one serves those);
//  - then takes out of service (state END) the versions no longer wanted,
//    but only while a wanted version is AVAILABLE, so a model never goes
//    without a version because a new one failed. A version out of service
//    is destroyed when its last request finishes (requests hold it);
//  - a version that fails to load is END with the loader's error in its
//    status; it is tried again at later polls up to max_load_retries times.
// Start polls once before it returns (the newest versions are loaded when
// the server starts listening), then every poll_wait_seconds on a thread of
// its own.
//
// Thread-safe. Destruction stops the poller and drops every version.
#ifndef DISTFLOW_SERVING_MODEL_MANAGER_H_
#define DISTFLOW_SERVING_MODEL_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distflow/model_server_config.pb.h"
#include "distflow/serving/loaded_model.h"
#include "distflow/serving/serving_metrics.h"

namespace distflow {

// TensorFlow Serving's version states, as its REST API spells them.
enum class ModelVersionState { kLoading, kAvailable, kEnd };
const char* ModelVersionStateName(ModelVersionState state);

struct ModelVersionStatus {
  int64_t version = 0;
  ModelVersionState state = ModelVersionState::kLoading;
  // Why a version that failed to load is END; OK otherwise.
  absl::Status status;
};

struct ModelManagerOptions {
  LoadedModelOptions load;
  // Seconds between polls of the base paths; 0: only the poll at start.
  double poll_wait_seconds = 1;
  // How many more times a version that failed to load is tried.
  int max_load_retries = 5;
  // Where loads and version states are counted; may be null.
  ServingMetrics* metrics = nullptr;
  // Told of every version that becomes available, fails to load or goes out
  // of service, and of a base path that cannot be listed, one line each;
  // may be empty.
  std::function<void(const std::string& line)> log;
};

class ModelManager {
 public:
  // InvalidArgument for a config without models, a model without a name or
  // base path, two models of one name, a platform other than "tensorflow";
  // NotFound naming a base path that is not a directory.
  static absl::StatusOr<std::unique_ptr<ModelManager>> Start(const ModelServerConfig& config,
                                                             const ModelManagerOptions& options);
  ~ModelManager();
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  // The version that serves a request for model `name`: `version` when
  // given, else the one `label` names when non-empty, else the newest
  // AVAILABLE one. NotFound naming the model (and the version or label) when
  // there is no such model or that version is not AVAILABLE.
  absl::StatusOr<std::shared_ptr<LoadedModel>> Find(const std::string& name,
                                                    std::optional<int64_t> version,
                                                    const std::string& label) const;

  // The versions of `name` (only `version` when given, or the one `label`
  // names when non-empty), newest first.
  // NotFound for an unknown model or version, and for a model none of whose
  // versions has been seen yet (as TF Serving answers, so that a health
  // check fails until there is something to serve).
  absl::StatusOr<std::vector<ModelVersionStatus>> VersionStatuses(const std::string& name,
                                                                  std::optional<int64_t> version,
                                                                  const std::string& label) const;

  // Lists the base paths and loads and unloads as the rules above say
  // (what the poller does every poll_wait_seconds).
  void PollOnce();

 private:
  struct VersionEntry {
    ModelVersionStatus status;
    std::shared_ptr<LoadedModel> model;  // set iff AVAILABLE
    int failed_loads = 0;
  };
  struct ModelEntry {
    ModelConfig config;
    std::map<int64_t, VersionEntry> versions;
  };

  explicit ModelManager(const ModelManagerOptions& options) : options_(options) {}
  void PollModel(const ModelConfig& config);
  // NotFound naming the model and the label when the config has no such
  // label.
  static absl::StatusOr<int64_t> VersionForLabel(const ModelEntry& model, const std::string& label);
  void ReportStates(const std::string& model) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  const ModelManagerOptions options_;
  absl::Mutex poll_mu_;  // one poll at a time
  mutable absl::Mutex mu_;
  std::map<std::string, ModelEntry> models_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread poller_;
};

}  // namespace distflow

#endif  // DISTFLOW_SERVING_MODEL_MANAGER_H_
