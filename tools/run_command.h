// `distflow run`: loads a GraphDef (.pb or .pbtxt), feeds values given as
// JSON or .npy files, runs it in a DirectSession and prints the fetched
// tensors as text (one line per fetch, a summary for large tensors) or as
// one JSON object:
//   {"fetches":[{"name":..,"dtype":"float32","shape":[..],"values":[..]}]}
// and with an output directory also writes each fetch as NAME.npy (":" and
// other characters a file name should not hold become "_").
// Thread-compatible: one call at a time per RunFlags.
#ifndef DISTFLOW_TOOLS_RUN_COMMAND_H_
#define DISTFLOW_TOOLS_RUN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace distflow {

struct RunFlags {
  std::string graph_path;
  // "NAME=JSON" or "NAME=@file.npy".
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  int devices = 1;
  // Seconds the step may take (RunOptions.timeout_in_ms); 0 for no limit.
  double timeout_seconds = 0;
  // "text" or "json".
  std::string output = "text";
  // Where to write a Chrome trace of the step; empty for none.
  std::string trace_path;
  // "grpc://host:port" of a cluster's master; empty runs in this process.
  std::string master;
  // With --master: the whole cluster ("ps=h:p;worker=h:p,h:p"), for servers
  // that were started knowing only their own address (e.g. port 0).
  std::string cluster;
  // Print "node: (Op): device" to stderr for every node the step ran, from
  // the partition graphs of the run (local or through a master).
  bool log_device_placement = false;
  // Write each fetched tensor here as an .npy file; empty for none.
  std::string output_dir;
};

// Bounds on flags, checked before any session starts.
inline constexpr int kMaxRunDevices = 4096;
inline constexpr double kMaxTimeoutSeconds = 1e6;

// Runs the graph and writes the fetched values to `out`. Errors name the
// feed, file, tensor or node at fault; nothing is written to `out` then.
absl::Status RunGraphCommand(const RunFlags& flags, std::ostream& out);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_RUN_COMMAND_H_
