#include "distflow/distributed_runtime/cluster_spec.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distflow/core/status.h"
#include "nlohmann/json.hpp"

namespace distflow {

absl::Status SplitHostPort(absl::string_view address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return errors::InvalidArgument("address '", address, "' must be host:port");
  }
  int p;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &p) || p < 0 || p > 65535) {
    return errors::InvalidArgument("address '", address, "' has an invalid port");
  }
  *host = std::string(address.substr(0, colon));
  *port = p;
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromClusterDef(const ClusterDef& def) {
  std::vector<std::string> seen;
  for (const JobDef& job : def.job()) {
    if (job.name().empty()) return errors::InvalidArgument("cluster has a job with no name");
    if (std::find(seen.begin(), seen.end(), job.name()) != seen.end()) {
      return errors::InvalidArgument("cluster lists job '", job.name(), "' twice");
    }
    seen.push_back(job.name());
    for (const auto& [index, address] : job.tasks()) {
      std::string host;
      int port;
      DF_RETURN_IF_ERROR(
          errors::Annotate(SplitHostPort(address, &host, &port),
                           absl::StrCat("job '", job.name(), "' task ", index, ": ")));
      if (index < 0) {
        return errors::InvalidArgument("job '", job.name(), "' has negative task index ", index);
      }
    }
  }
  ClusterSpec spec;
  spec.def_ = def;
  return spec;
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromFlag(absl::string_view flag) {
  ClusterDef def;
  for (absl::string_view part : absl::StrSplit(flag, ';', absl::SkipWhitespace())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || absl::StripAsciiWhitespace(kv[0]).empty()) {
      return errors::InvalidArgument("cluster entry '", part,
                                     "' must be job=host:port[,host:port...]");
    }
    JobDef* job = def.add_job();
    job->set_name(std::string(absl::StripAsciiWhitespace(kv[0])));
    int index = 0;
    for (absl::string_view addr : absl::StrSplit(kv[1], ',', absl::SkipWhitespace())) {
      (*job->mutable_tasks())[index++] = std::string(absl::StripAsciiWhitespace(addr));
    }
    if (index == 0) return errors::InvalidArgument("job '", job->name(), "' lists no tasks");
  }
  if (def.job_size() == 0)
    return errors::InvalidArgument("cluster flag '", flag, "' lists no jobs");
  return FromClusterDef(def);
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> out;
  for (const JobDef& job : def_.job()) out.push_back(job.name());
  return out;
}

std::vector<int> ClusterSpec::TaskIndices(absl::string_view job) const {
  std::vector<int> out;
  for (const JobDef& j : def_.job()) {
    if (j.name() != job) continue;
    for (const auto& [index, address] : j.tasks()) out.push_back(index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int ClusterSpec::NumTasks(absl::string_view job) const {
  return static_cast<int>(TaskIndices(job).size());
}

absl::StatusOr<std::string> ClusterSpec::TaskAddress(absl::string_view job, int task) const {
  for (const JobDef& j : def_.job()) {
    if (j.name() != job) continue;
    auto it = j.tasks().find(task);
    if (it != j.tasks().end()) return it->second;
  }
  return errors::NotFound("cluster has no task /job:", job, "/task:", task);
}

std::vector<std::string> ClusterSpec::TaskNames() const {
  std::vector<std::string> out;
  for (const JobDef& j : def_.job()) {
    for (const auto& [index, address] : j.tasks()) {
      out.push_back(absl::StrCat("/job:", j.name(), "/replica:0/task:", index));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status ClusterSpec::SetTaskAddress(absl::string_view job, int task,
                                         const std::string& address) {
  for (JobDef& j : *def_.mutable_job()) {
    if (j.name() != job) continue;
    auto it = j.mutable_tasks()->find(task);
    if (it == j.mutable_tasks()->end()) break;
    it->second = address;
    return absl::OkStatus();
  }
  return errors::NotFound("cluster has no task /job:", job, "/task:", task);
}

namespace {
absl::Status CheckTask(const ClusterSpec& spec, absl::string_view job, int task) {
  if (spec.NumTasks(job) == 0) {
    return errors::InvalidArgument(
        "job '", job, "' is not in the cluster (jobs: ", absl::StrJoin(spec.jobs(), ", "), ")");
  }
  return spec.TaskAddress(job, task).status().ok()
             ? absl::OkStatus()
             : errors::InvalidArgument("job '", job, "' has no task ", task, " (it has ",
                                       spec.NumTasks(job), " tasks)");
}
}  // namespace

absl::StatusOr<ServerDef> MakeServerDef(absl::string_view cluster_flag, absl::string_view job,
                                        int task) {
  DF_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::FromFlag(cluster_flag));
  DF_RETURN_IF_ERROR(CheckTask(spec, job, task));
  ServerDef def;
  *def.mutable_cluster() = spec.def();
  def.set_job_name(std::string(job));
  def.set_task_index(task);
  def.set_protocol("grpc");
  return def;
}

absl::StatusOr<ServerDef> ServerDefFromTfConfig(absl::string_view json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return errors::InvalidArgument("TF_CONFIG is not a JSON object");
  }
  if (!j.contains("cluster") || !j["cluster"].is_object()) {
    return errors::InvalidArgument("TF_CONFIG has no \"cluster\" object");
  }
  ClusterDef cluster;
  for (auto& [name, tasks] : j["cluster"].items()) {
    if (!tasks.is_array()) {
      return errors::InvalidArgument("TF_CONFIG cluster job '", name,
                                     "' must be a list of host:port");
    }
    JobDef* job = cluster.add_job();
    job->set_name(name);
    int index = 0;
    for (auto& addr : tasks) {
      if (!addr.is_string()) {
        return errors::InvalidArgument("TF_CONFIG cluster job '", name,
                                       "' has a non-string address");
      }
      (*job->mutable_tasks())[index++] = addr.get<std::string>();
    }
  }
  DF_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::FromClusterDef(cluster));
  if (!j.contains("task") || !j["task"].is_object() || !j["task"].contains("type") ||
      !j["task"]["type"].is_string() || !j["task"].contains("index") ||
      !j["task"]["index"].is_number_integer()) {
    return errors::InvalidArgument("TF_CONFIG needs \"task\": {\"type\": JOB, \"index\": N}");
  }
  const std::string job = j["task"]["type"].get<std::string>();
  const int task = j["task"]["index"].get<int>();
  DF_RETURN_IF_ERROR(CheckTask(spec, job, task));
  ServerDef def;
  *def.mutable_cluster() = spec.def();
  def.set_job_name(job);
  def.set_task_index(task);
  def.set_protocol("grpc");
  return def;
}

}  // namespace distflow
