// The `distflow` command-line program. Subcommands:
//   distflow run GRAPH [--feed NAME=JSON|NAME=@file.npy]... [--fetch TENSOR]...
//                [--target NODE]... [--devices N] [--output text|json]
//                [--trace FILE]
//   distflow run ... --master grpc://HOST:PORT   (the same, on a cluster)
//   distflow demo [--mode async|sync] [--workers N] [--ps M] [--steps S]
//                 [--checkpoint-dir DIR] [--output text|json]
//   distflow server --cluster "ps=h:p;worker=h:p,h:p" --job J --task T
// Errors print "error: <Code>: <message>" on stderr and exit with status 1.
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "demo/demo.h"
#include "run_command.h"
#include "server_command.h"

namespace {

// TensorFlow's spelling of a status code, e.g. "InvalidArgument".
std::string CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return "OK";
    case absl::StatusCode::kCancelled:
      return "Cancelled";
    case absl::StatusCode::kUnknown:
      return "Unknown";
    case absl::StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case absl::StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case absl::StatusCode::kNotFound:
      return "NotFound";
    case absl::StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case absl::StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case absl::StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case absl::StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case absl::StatusCode::kAborted:
      return "Aborted";
    case absl::StatusCode::kOutOfRange:
      return "OutOfRange";
    case absl::StatusCode::kUnimplemented:
      return "Unimplemented";
    case absl::StatusCode::kInternal:
      return "Internal";
    case absl::StatusCode::kUnavailable:
      return "Unavailable";
    case absl::StatusCode::kDataLoss:
      return "DataLoss";
    case absl::StatusCode::kUnauthenticated:
      return "Unauthenticated";
    default:
      return "Unknown";
  }
}

int Fail(const absl::Status& s) {
  std::cerr << "error: " << CodeName(s.code()) << ": " << s.message()
            << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"distflow: run dataflow graphs"};
  app.require_subcommand(1);

  distflow::RunFlags run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run a GraphDef (.pb or .pbtxt) once");
  run_cmd->add_option("GRAPH", run.graph_path, "GraphDef file")->required();
  run_cmd->add_option("--feed", run.feeds,
                      "NAME=JSON (a number or nested list) or NAME=@file.npy; repeatable");
  run_cmd->add_option("--fetch", run.fetches, "tensor to print, e.g. y or y:0; repeatable");
  run_cmd->add_option("--target", run.targets, "node to run without fetching; repeatable");
  run_cmd->add_option("--devices", run.devices, "number of CPU devices")->capture_default_str();
  run_cmd->add_option("--output", run.output, "text or json")->capture_default_str();
  run_cmd->add_option("--trace", run.trace_path, "write a Chrome trace of the step here");
  run_cmd->add_option("--master", run.master,
                      "run on a cluster: grpc://HOST:PORT of a distflow server");
  run_cmd->add_option("--cluster", run.cluster,
                      "with --master: every task, \"ps=h:p;worker=h:p,h:p\"");

  distflow::ServerFlags server;
  CLI::App* server_cmd = app.add_subcommand(
      "server", "Run one task of a cluster until SIGTERM (or TF_CONFIG)");
  server_cmd->add_option("--cluster", server.cluster,
                         "jobs and tasks: \"ps=h:p;worker=h:p,h:p\" (port 0: any free port)");
  server_cmd->add_option("--job", server.job, "this task's job");
  server_cmd->add_option("--task", server.task, "this task's index")->capture_default_str();
  server_cmd->add_option("--devices", server.devices, "CPU devices in this task")
      ->capture_default_str();

  distflow::DemoFlags demo;
  CLI::App* demo_cmd = app.add_subcommand(
      "demo", "Train y = 2x + 10 on a local parameter-server cluster (the main job)");
  distflow::AddDemoFlags(demo_cmd, &demo);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(absl::InvalidArgumentError(e.what()));
  }
  if (demo_cmd->parsed()) {
    absl::Status s = distflow::RunDemo(demo, std::cout, std::cerr);
    return s.ok() ? 0 : Fail(s);
  }
  if (server_cmd->parsed()) {
    absl::Status s = distflow::RunServerCommand(server, std::cout);
    return s.ok() ? 0 : Fail(s);
  }
  if (run_cmd->parsed()) {
    absl::Status s = distflow::RunGraphCommand(run, std::cout);
    return s.ok() ? 0 : Fail(s);
  }
  return Fail(absl::InvalidArgumentError("unknown subcommand"));
}
