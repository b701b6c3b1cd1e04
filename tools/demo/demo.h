// `distflow demo`: starts a local cluster of ps and worker server processes
// on loopback, trains the linear regression of trainer.h on it, shows progress (a progress bar on a
// terminal, plain lines otherwise), checkpoints, resumes from the latest
// checkpoint when run again, and ends with a summary — with --output json
// the last line is {"mode","steps","loss","weight","bias","seconds"}.
// Ctrl-C stops training after a final checkpoint; a task that dies or is
// frozen (SIGSTOP) ends the demo with Unavailable naming it; the server
// processes are stopped on every exit path, frozen ones included.
#ifndef DISTFLOW_TOOLS_DEMO_DEMO_H_
#define DISTFLOW_TOOLS_DEMO_DEMO_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "demo/trainer.h"

namespace CLI {
class App;
}  // namespace CLI

namespace distflow {

struct DemoFlags {
  TrainerOptions trainer;
  std::string output = "text";  // "text" or "json"
};

// Registers --mode, --workers, --ps, --steps, --checkpoint-dir, --output,
// --allow-nonfinite and the training knobs on `app`, writing into `flags`.
void AddDemoFlags(CLI::App* app, DemoFlags* flags);

// Starts the cluster's tasks as `distflow server` processes of this
// program's own binary (launcher/local_servers.h): call it from the
// `distflow` program.
absl::Status RunDemo(const DemoFlags& flags, std::ostream& out, std::ostream& err);

// The signal (SIGINT, SIGTERM) that stopped the last RunDemo early, or 0.
int DemoStopSignal();

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_DEMO_DEMO_H_
