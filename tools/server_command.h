// `distflow server`: runs one task of a cluster (master + worker services on
// one port) until SIGTERM or SIGINT. The task comes from --cluster/--job/
// --task, or from the TF_CONFIG environment variable when --cluster is not
// given. A task address with port 0 binds a free port. The first line
// printed is "listening on HOST:PORT".
#ifndef DISTFLOW_TOOLS_SERVER_COMMAND_H_
#define DISTFLOW_TOOLS_SERVER_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace distflow {

struct ServerFlags {
  // "ps=h:p;worker=h:p,h:p"; empty means read TF_CONFIG.
  std::string cluster;
  std::string job;
  int task = 0;
  // CPU devices in this task.
  int devices = 1;
};

// The most CPU devices one task may have.
inline constexpr int kMaxServerDevices = 4096;

// Blocks until the process is asked to stop; OK after a clean shutdown, with
// the signal that asked in *stop_signal when given.
absl::Status RunServerCommand(const ServerFlags& flags, std::ostream& out,
                              int* stop_signal = nullptr);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_SERVER_COMMAND_H_
