#include "distflow/serving/model_manager.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/serving/aspired_versions.h"

namespace distflow {

const char* ModelVersionStateName(ModelVersionState state) {
  switch (state) {
    case ModelVersionState::kLoading:
      return "LOADING";
    case ModelVersionState::kAvailable:
      return "AVAILABLE";
    case ModelVersionState::kEnd:
      return "END";
  }
  return "UNKNOWN";
}

absl::StatusOr<std::unique_ptr<ModelManager>> ModelManager::Start(
    const ModelServerConfig& config, const ModelManagerOptions& options) {
  if (config.model_config_list().config_size() == 0) {
    return errors::InvalidArgument("the model config lists no model");
  }
  std::unique_ptr<ModelManager> manager(new ModelManager(options));
  for (const ModelConfig& model : config.model_config_list().config()) {
    if (model.name().empty()) return errors::InvalidArgument("a model in the config has no name");
    if (model.base_path().empty()) {
      return errors::InvalidArgument("model '", model.name(), "' has no base_path");
    }
    if (!model.model_platform().empty() && model.model_platform() != "tensorflow") {
      return errors::InvalidArgument("model '", model.name(), "': model_platform '",
                                     model.model_platform(),
                                     "' is not served (only \"tensorflow\")");
    }
    DF_RETURN_IF_ERROR(ListVersionDirs(model.base_path()).status());
    absl::MutexLock lock(&manager->mu_);
    if (!manager->models_.emplace(model.name(), ModelEntry{model, {}}).second) {
      return errors::InvalidArgument("the model config names model '", model.name(), "' twice");
    }
  }
  manager->PollOnce();
  if (options.poll_wait_seconds > 0) {
    ModelManager* self = manager.get();
    manager->poller_ = std::thread([self] {
      const absl::Duration wait = absl::Seconds(self->options_.poll_wait_seconds);
      while (!self->stop_.WaitForNotificationWithTimeout(wait)) self->PollOnce();
    });
  }
  return manager;
}

ModelManager::~ModelManager() {
  stop_.Notify();
  if (poller_.joinable()) poller_.join();
  std::map<std::string, ModelEntry> models;
  {
    absl::MutexLock lock(&mu_);
    models.swap(models_);
  }
}

void ModelManager::PollOnce() {
  absl::MutexLock poll_lock(&poll_mu_);
  std::vector<ModelConfig> configs;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, entry] : models_) configs.push_back(entry.config);
  }
  for (const ModelConfig& config : configs) PollModel(config);
}

void ModelManager::PollModel(const ModelConfig& config) {
  const std::string& name = config.name();
  absl::StatusOr<std::map<int64_t, std::string>> dirs = ListVersionDirs(config.base_path());
  if (!dirs.ok()) {
    // Keep what serves; the path may come back.
    Log(absl::StrCat("model '", name, "': ", dirs.status().message()));
    return;
  }
  const std::set<int64_t> aspired = AspiredVersions(config.model_version_policy(), *dirs);

  // Load what is wanted and not there, newest first.
  for (auto it = aspired.rbegin(); it != aspired.rend(); ++it) {
    const int64_t version = *it;
    {
      absl::MutexLock lock(&mu_);
      VersionEntry& v = models_[name].versions[version];
      const bool failed_for_good = v.status.state == ModelVersionState::kEnd &&
                                   !v.status.status.ok() &&
                                   v.failed_loads > options_.max_load_retries;
      if (v.model != nullptr || failed_for_good) continue;
      v.status = {version, ModelVersionState::kLoading, absl::OkStatus()};
      ReportStates(name);
    }
    absl::StatusOr<std::shared_ptr<LoadedModel>> loaded =
        LoadedModel::Load(name, version, dirs->at(version), options_.load);
    if (options_.metrics != nullptr) options_.metrics->RecordLoad(name, loaded.ok());
    absl::MutexLock lock(&mu_);
    VersionEntry& v = models_[name].versions[version];
    if (loaded.ok()) {
      v.model = *std::move(loaded);
      v.status = {version, ModelVersionState::kAvailable, absl::OkStatus()};
      Log(absl::StrCat("model '", name, "' version ", version, " is available"));
    } else {
      ++v.failed_loads;
      v.status = {version, ModelVersionState::kEnd, loaded.status()};
      Log(absl::StrCat("model '", name, "' version ", version,
                       " failed to load: ", loaded.status().ToString()));
    }
    ReportStates(name);
  }

  // Unload what is no longer wanted, while a wanted version serves.
  std::vector<std::shared_ptr<LoadedModel>> retired;  // dropped outside the lock
  {
    absl::MutexLock lock(&mu_);
    ModelEntry& model = models_[name];
    const bool wanted_available = std::any_of(aspired.begin(), aspired.end(), [&](int64_t v) {
      auto it = model.versions.find(v);
      return it != model.versions.end() && it->second.model != nullptr;
    });
    if (!wanted_available) return;
    for (auto& [version, v] : model.versions) {
      if (v.model == nullptr || aspired.contains(version)) continue;
      retired.push_back(std::move(v.model));
      v.model = nullptr;
      v.status = {version, ModelVersionState::kEnd, absl::OkStatus()};
      Log(absl::StrCat("model '", name, "' version ", version, " is out of service"));
      if (options_.metrics != nullptr) options_.metrics->RecordUnload(name);
    }
    ReportStates(name);
  }
}

void ModelManager::ReportStates(const std::string& model) {
  if (options_.metrics == nullptr) return;
  std::map<std::string, int64_t> states = {{"LOADING", 0}, {"AVAILABLE", 0}, {"END", 0}};
  for (const auto& [version, v] : models_[model].versions) {
    ++states[ModelVersionStateName(v.status.state)];
  }
  options_.metrics->SetVersionStates(model, states);
}

absl::StatusOr<int64_t> ModelManager::VersionForLabel(const ModelEntry& model,
                                                      const std::string& label) {
  auto l = model.config.version_labels().find(label);
  if (l == model.config.version_labels().end()) {
    return errors::NotFound("model '", model.config.name(), "' has no version label '", label, "'");
  }
  return l->second;
}

absl::StatusOr<std::shared_ptr<LoadedModel>> ModelManager::Find(const std::string& name,
                                                                std::optional<int64_t> version,
                                                                const std::string& label) const {
  absl::MutexLock lock(&mu_);
  auto m = models_.find(name);
  if (m == models_.end()) {
    return errors::NotFound("model '", name, "' is not served here");
  }
  const ModelEntry& model = m->second;
  if (!version.has_value() && !label.empty()) {
    DF_ASSIGN_OR_RETURN(version, VersionForLabel(model, label));
  }
  if (version.has_value()) {
    auto v = model.versions.find(*version);
    if (v == model.versions.end() || v->second.model == nullptr) {
      return errors::NotFound(
          "model '", name, "' version ", *version, " is not available",
          v == model.versions.end()
              ? std::string(" (no such version)")
              : absl::StrCat(" (", ModelVersionStateName(v->second.status.state),
                             v->second.status.status.ok()
                                 ? ""
                                 : absl::StrCat(": ", v->second.status.status.message()),
                             ")"));
    }
    return v->second.model;
  }
  for (auto v = model.versions.rbegin(); v != model.versions.rend(); ++v) {
    if (v->second.model != nullptr) return v->second.model;
  }
  return errors::NotFound("model '", name, "' has no version available");
}

absl::StatusOr<std::vector<ModelVersionStatus>> ModelManager::VersionStatuses(
    const std::string& name, std::optional<int64_t> version, const std::string& label) const {
  absl::MutexLock lock(&mu_);
  auto m = models_.find(name);
  if (m == models_.end()) {
    return errors::NotFound("model '", name, "' is not served here");
  }
  if (!version.has_value() && !label.empty()) {
    DF_ASSIGN_OR_RETURN(version, VersionForLabel(m->second, label));
  }
  std::vector<ModelVersionStatus> out;
  for (auto v = m->second.versions.rbegin(); v != m->second.versions.rend(); ++v) {
    if (!version.has_value() || v->first == *version) out.push_back(v->second.status);
  }
  if (version.has_value() && out.empty()) {
    return errors::NotFound("model '", name, "' has no version ", *version);
  }
  if (out.empty()) {
    return errors::NotFound("model '", name, "' has no versions yet (none under ",
                            m->second.config.base_path(), ")");
  }
  return out;
}

}  // namespace distflow
