#include "run_command.h"

#include <algorithm>
#include <iostream>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "distflow/common_runtime/session.h"
#include "distflow/common_runtime/timeline.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_io.h"
#include "distflow/graph/tensor_id.h"
#include "json_tensor.h"
#include "npy.h"

namespace distflow {
namespace {

// The value of one --feed flag, typed by the tensor it feeds.
absl::StatusOr<std::pair<std::string, Tensor>> ParseFeed(const std::string& flag,
                                                         const Graph& graph) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0) {
    return errors::InvalidArgument("--feed '", flag, "' is not NAME=VALUE");
  }
  const std::string name = flag.substr(0, eq);
  const std::string value = flag.substr(eq + 1);
  TensorId id;
  DF_RETURN_IF_ERROR(
      errors::Annotate(ParseTensorName(name, &id), absl::StrCat("feed '", name, "': ")));
  const Node* node = nullptr;
  for (const Node* n : graph.op_nodes()) {
    if (n->name() == id.node) node = n;
  }
  if (node == nullptr || id.IsControl() || id.index >= node->num_outputs()) {
    return errors::InvalidArgument("feed '", name, "': no such tensor in the graph");
  }
  const DataType dtype = BaseType(node->output_type(id.index));

  Tensor tensor;
  if (!value.empty() && value[0] == '@') {
    const std::string path = value.substr(1);
    DF_ASSIGN_OR_RETURN(tensor, ReadNpyFile(path));
    if (tensor.dtype() != dtype) {
      return errors::InvalidArgument("feed '", name, "': npy file '", path, "' holds ",
                                     DataTypeString(tensor.dtype()), " but the tensor is ",
                                     DataTypeString(dtype));
    }
  } else {
    DF_RETURN_IF_ERROR(CheckJsonNesting(value, kMaxFeedRank, name));
    nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      return errors::InvalidArgument("feed '", name, "': '", value, "' is not valid JSON");
    }
    DF_ASSIGN_OR_RETURN(tensor, TensorFromJson(parsed, dtype, name));
  }
  return std::make_pair(name, std::move(tensor));
}

// TensorFlow's log_device_placement lines, "node: (Op): device", for the
// nodes of the run's partition graphs, by device then name.
void LogDevicePlacement(const RunMetadata& metadata, std::ostream& log) {
  std::vector<std::tuple<std::string, std::string, std::string>> lines;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) lines.emplace_back(n.device(), n.name(), n.op());
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& [device, name, op] : lines) {
    log << name << ": (" << op << "): " << device << "\n";
  }
}

}  // namespace

absl::Status RunGraphCommand(const RunFlags& flags, std::ostream& out) {
  if (flags.output != "text" && flags.output != "json") {
    return errors::InvalidArgument("--output must be text or json, got '", flags.output, "'");
  }
  if (flags.devices < 1 || flags.devices > kMaxRunDevices) {
    return errors::InvalidArgument("--devices must be between 1 and ", kMaxRunDevices, ", got ",
                                   flags.devices);
  }
  if (!(flags.timeout_seconds >= 0) || flags.timeout_seconds > kMaxTimeoutSeconds) {
    return errors::InvalidArgument("--timeout must be between 0 (none) and ", kMaxTimeoutSeconds,
                                   " seconds, got ", flags.timeout_seconds);
  }
  if (flags.fetches.empty() && flags.targets.empty()) {
    return errors::InvalidArgument("nothing to run: give at least one --fetch or --target");
  }
  GraphDef graph_def;
  DF_RETURN_IF_ERROR(ReadGraphDefFromFile(flags.graph_path, &graph_def));
  // Imported once here to type the feeds; the session imports its own copy.
  Graph graph;
  DF_RETURN_IF_ERROR(errors::Annotate(ConvertGraphDefToGraph({}, graph_def, &graph),
                                      absl::StrCat(flags.graph_path, ": ")));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& flag : flags.feeds) {
    DF_ASSIGN_OR_RETURN(auto feed, ParseFeed(flag, graph));
    feeds.push_back(std::move(feed));
  }

  SessionOptions options;
  options.target = flags.master;
  if (!options.target.empty() && !absl::StartsWith(options.target, "grpc://")) {
    options.target = absl::StrCat("grpc://", options.target);
  }
  (*options.config.mutable_device_count())["CPU"] = flags.devices;
  if (!flags.cluster.empty()) {
    if (flags.master.empty()) return errors::InvalidArgument("--cluster needs --master");
    DF_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::FromFlag(flags.cluster));
    *options.config.mutable_cluster_def() = spec.def();
  }
  options.config.set_allow_soft_placement(true);
  DF_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  DF_RETURN_IF_ERROR(session->Create(graph_def));
  RunOptions run_options;
  if (!flags.trace_path.empty()) run_options.set_trace_level(RunOptions::FULL_TRACE);
  run_options.set_output_partition_graphs(flags.log_device_placement);
  if (flags.timeout_seconds > 0) {
    // At least 1 ms: a positive timeout must not turn into "no timeout".
    run_options.set_timeout_in_ms(
        std::max<int64_t>(1, static_cast<int64_t>(flags.timeout_seconds * 1000.0)));
  }
  RunMetadata metadata;
  std::vector<Tensor> outputs;
  absl::Status run_status =
      session->Run(run_options, feeds, flags.fetches, flags.targets, &outputs, &metadata);
  if (absl::IsDeadlineExceeded(run_status) && flags.timeout_seconds > 0) {
    run_status =
        errors::Annotate(run_status, absl::StrCat("the step did not finish within --timeout ",
                                                  flags.timeout_seconds, " seconds: "));
  }
  DF_RETURN_IF_ERROR(run_status);
  if (!flags.trace_path.empty()) {
    DF_RETURN_IF_ERROR(
        WriteStringToFileAtomic(flags.trace_path, StepStatsToChromeTrace(metadata.step_stats())));
  }
  if (flags.log_device_placement) LogDevicePlacement(metadata, std::cerr);
  DF_RETURN_IF_ERROR(session->Close());
  if (!flags.output_dir.empty()) {
    DF_RETURN_IF_ERROR(WriteNpyFiles(flags.output_dir, flags.fetches, outputs));
  }

  if (flags.output == "json") {
    // ordered_json keeps the keys in the documented order.
    nlohmann::ordered_json fetches = nlohmann::ordered_json::array();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& t = outputs[i];
      fetches.push_back({{"name", JsonSafeString(flags.fetches[i])},
                         {"dtype", DataTypeString(t.dtype())},
                         {"shape", t.shape().dim_sizes()},
                         {"values", TensorValuesToJson(t)}});
    }
    out << nlohmann::ordered_json{{"fetches", fetches}}.dump() << "\n";
    return absl::OkStatus();
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    out << flags.fetches[i] << " " << DataTypeString(t.dtype()) << " " << t.shape().DebugString()
        << " " << TensorToTextSummary(t) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace distflow
