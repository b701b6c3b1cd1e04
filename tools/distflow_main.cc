// The `distflow` command-line program. Subcommands:
//   distflow run GRAPH [--feed NAME=JSON|NAME=@file.npy]... [--fetch TENSOR]...
//                [--target NODE]... [--devices N] [--output text|json]
//                [--trace FILE] [--timeout SECONDS] [--output-dir DIR]
//   distflow run ... --master grpc://HOST:PORT   (the same, on a cluster)
//   distflow demo [--mode async|sync] [--workers N] [--ps M] [--steps S]
//                 [--checkpoint-dir DIR] [--output text|json]
//   distflow train [--model mlp|cnn] [--epochs N] [--data-dir DIR]
//                  [--checkpoint-dir DIR] [--output text|json]
//                  [--ps N --workers M | --cluster SPEC] [--kill-worker-every S]
//                  [--steps-per-execution K]
//   distflow server --cluster "ps=h:p;worker=h:p,h:p" --job J --task T
//   distflow serve --model_name NAME --model_base_path DIR [--rest_api_port P]
//   distflow checkpoint list PREFIX
//   distflow checkpoint dump PREFIX NAME OUT.npy
//   distflow saved-model show|run DIR ...   (saved_model_command.h)
//   distflow graph show FILE                (graph_command.h)
//   distflow --version | version | help
// Errors print "error: <Code>: <message>" on stderr and exit with status 1;
// a run stopped by Ctrl-C (SIGINT) exits with 130, by SIGTERM with 143.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checkpoint_command.h"
#include "demo/demo.h"
#include "distflow/core/env.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "graph_command.h"
#include "run_command.h"
#include "saved_model_command.h"
#include "serve_command.h"
#include "server_command.h"
#include "train/train_command.h"

// The build passes CMake's PROJECT_VERSION; this is the fallback.
#ifndef DISTFLOW_VERSION
#define DISTFLOW_VERSION "0.1.0"
#endif

namespace {

constexpr const char* kSubcommands[] = {"run",   "server",     "serve",       "demo",
                                        "train", "checkpoint", "saved-model", "graph"};

// Edit distance, for suggesting the subcommand a typo meant.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// For a flag the subcommand does not know ("--epoch"): "; did you mean
// '--epochs'?" naming the nearest of its flags, or "" when none is near.
std::string FlagSuggestion(const std::vector<CLI::App*>& subcommands, int argc, char** argv) {
  if (subcommands.empty()) return "";
  const CLI::App* sub = subcommands.back();
  while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().back();
  std::vector<std::string> known;
  for (const CLI::Option* opt : sub->get_options()) {
    for (const std::string& name : opt->get_lnames()) known.push_back("--" + name);
  }
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), arg) != known.end()) continue;
    std::string best;
    size_t best_distance = 3;  // suggest only near misses
    for (const std::string& name : known) {
      const size_t d = EditDistance(arg, name);
      if (d < best_distance) best_distance = d, best = name;
    }
    if (!best.empty()) return absl::StrCat("; did you mean '", best, "'?");
  }
  return "";
}

// A plain exit with the shell's code for the signal (128 + signo), so that
// scripts see 130 for Ctrl-C whether or not a handler ran.
void ExitOnSignal(int sig) { _exit(128 + sig); }

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
  std::cerr << "error: " << CodeName(s.code()) << ": " << s.message() << std::endl;
  return 1;
}

// Runs `body`, turning any exception that escapes it into an error: no input
// may end the process with std::terminate.
template <typename F>
absl::Status NoThrow(F body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("unexpected exception: ", e.what()));
  }
}

int Main(int argc, char** argv) {
  // A server's connections (and a flood of them) count against it; a
  // failure leaves the limit as it was, which is no reason not to run.
  distflow::RaiseOpenFileLimit().IgnoreError();
  CLI::App app{"distflow " DISTFLOW_VERSION ": run dataflow graphs"};
  app.require_subcommand(1);
  bool version = false;  // answered before parsing; listed for --help
  app.add_flag("--version", version, "print the version and exit");
  app.footer(
      "Output: NaN, +Inf and -Inf print as \"NaN\", \"Infinity\" and \"-Infinity\" in JSON\n"
      "and as nan, inf and -inf in text; bytes of a string that are not UTF-8\n"
      "print as \\xNN. Exit status: 0 on success, 1 on an error (printed as\n"
      "\"error: <Code>: <message>\"), 130 on Ctrl-C. One tensor may hold at most\n"
      "DISTFLOW_MAX_TENSOR_BYTES bytes (default: physical memory; 0: no cap);\n"
      "beyond that, or when memory runs out, a step fails with ResourceExhausted.");

  distflow::RunFlags run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a GraphDef (.pb or .pbtxt) once");
  run_cmd->add_option("GRAPH", run.graph_path, "GraphDef file")->required();
  run_cmd->add_option("--feed", run.feeds,
                      "NAME=JSON (a number or nested list) or NAME=@file.npy; repeatable");
  run_cmd->add_option("--fetch", run.fetches, "tensor to print, e.g. y or y:0; repeatable");
  run_cmd->add_option("--target", run.targets, "node to run without fetching; repeatable");
  run_cmd->add_option("--devices", run.devices, "number of CPU devices")->capture_default_str();
  run_cmd->add_option("--output", run.output, "text or json")->capture_default_str();
  run_cmd->add_option("--trace", run.trace_path, "write a Chrome trace of the step here");
  run_cmd
      ->add_option("--timeout", run.timeout_seconds,
                   "fail with DeadlineExceeded when the step takes longer "
                   "than SECONDS (0: no limit)")
      ->capture_default_str();
  run_cmd->add_option("--master", run.master,
                      "run on a cluster: grpc://HOST:PORT of a distflow server");
  std::string run_token_file;
  run_cmd->add_option("--token-file", run_token_file,
                      "with --master: the cluster's token file (as the servers' --token-file; "
                      "else DISTFLOW_TOKEN_FILE)");
  run_cmd->add_option("--cluster", run.cluster,
                      "with --master: every task, \"ps=h:p;worker=h:p,h:p\"");
  run_cmd->add_flag("--log-device-placement", run.log_device_placement,
                    "print \"node: (Op): device\" to stderr for every node the step ran");
  run_cmd->add_option("--output-dir", run.output_dir, "also write each fetch here as NAME.npy");

  distflow::ServerFlags server;
  CLI::App* server_cmd =
      app.add_subcommand("server", "Run one task of a cluster until SIGTERM (or TF_CONFIG)");
  server_cmd->add_option("--cluster", server.cluster,
                         "jobs and tasks: \"ps=h:p;worker=h:p,h:p\" (port 0: any free port)");
  server_cmd->add_option("--job", server.job, "this task's job");
  server_cmd
      ->add_option("--protocol", server.protocol,
                   "grpc, or grpc+verbs: tensors of remote receives over verbs channels "
                   "(shared memory on one host)")
      ->capture_default_str();
  server_cmd
      ->add_option("--verbs-max-buffer-mb", server.verbs_max_buffer_mb,
                   "grpc+verbs: refuse a peer's tensor buffer larger than this many MiB")
      ->capture_default_str();
  server_cmd
      ->add_option("--tensor-side-channel", server.tensor_side_channel,
                   "on: large tensors between tasks over a TCP stream beside gRPC (never with "
                   "TLS); off: all over gRPC")
      ->capture_default_str();
  server_cmd
      ->add_option("--tensor-push", server.tensor_push,
                   "on: with the side channel, small tensors go to the task that receives them "
                   "before it asks; off: every receive asks")
      ->capture_default_str();
  server_cmd->add_option("--task", server.task, "this task's index")->capture_default_str();
  server_cmd->add_option("--bind", server.bind,
                         "host to listen on instead of the task's cluster entry (0.0.0.0: all)");
  server_cmd->add_option("--devices", server.devices, "CPU devices in this task")
      ->capture_default_str();
  server_cmd
      ->add_option("--step-timeout-ms", server.step_timeout_ms,
                   "deadline of a step whose RunOptions set none (0: none)")
      ->capture_default_str();
  server_cmd->add_option("--token-file", server.token_file,
                         "serve only calls carrying the token in this file "
                         "(clients: DISTFLOW_TOKEN_FILE)");
  server_cmd->add_option("--file-root", server.file_roots,
                         "a directory SaveV2/RestoreV2 may use (repeatable); others are refused");
  server_cmd
      ->add_option("--max-graph-nodes", server.max_graph_nodes,
                   "refuse graphs of more nodes (ResourceExhausted)")
      ->capture_default_str();
  server_cmd->add_option("--join", server.join,
                         "join the coordinator at grpc://HOST:PORT as a worker once listening "
                         "(e.g. distflow train --accept-workers HOST:PORT)");
  server_cmd
      ->add_option("--max-request-mb", server.max_request_mb,
                   "refuse request messages larger than this many MiB (1 to 2047)")
      ->capture_default_str();
  server_cmd
      ->add_option("--grace-seconds", server.grace_seconds,
                   "on SIGTERM, how long running calls may take to finish")
      ->capture_default_str();
  server_cmd->add_option("--tls-cert", server.tls.cert,
                         "serve over mutual TLS: this task's PEM certificate "
                         "(with --tls-key and --tls-ca; clients: DISTFLOW_TLS_CERT/KEY/CA)");
  server_cmd->add_option("--tls-key", server.tls.key, "the PEM private key of --tls-cert");
  server_cmd->add_option("--tls-ca", server.tls.ca,
                         "PEM CA certificate: callers and peers must present a certificate it "
                         "signed");
  server_cmd
      ->add_option("--stuck-step-warn-seconds", server.stuck_step_warn_seconds,
                   "log the Recv keys a step waits for once it has run this long, and again "
                   "each time as long again has passed (0: never)")
      ->capture_default_str();
  server_cmd
      ->add_option("--memory-budget-mb", server.memory_budget_mb,
                   "refuse tensor allocations beyond this many MiB in all, with "
                   "ResourceExhausted (0: no budget; also DISTFLOW_MEMORY_BUDGET_MB)")
      ->capture_default_str();
  server_cmd->add_option("--status-port", server.status_port,
                         "serve a live status page (/), its JSON (/api/status) and Prometheus "
                         "metrics (/metrics) on this port (0: a free one, printed)");
  server_cmd
      ->add_option("--status-bind", server.status_bind,
                   "address the status page listens on (loopback unless you say otherwise)")
      ->capture_default_str();

  distflow::ServeFlags serve;
  CLI::App* serve_cmd = app.add_subcommand(
      "serve", "Serve SavedModels over TensorFlow Serving's REST API until SIGTERM");
  distflow::AddServeFlags(serve_cmd, &serve);

  distflow::DemoFlags demo;
  CLI::App* demo_cmd = app.add_subcommand(
      "demo",
      "Train y = 2x + 10 on a local parameter-server cluster (a small demo; the main job is "
      "`distflow train`)");
  distflow::AddDemoFlags(demo_cmd, &demo);

  distflow::TrainFlags train;
  CLI::App* train_cmd = app.add_subcommand(
      "train",
      "Train a Fashion-MNIST classifier through a tf.data pipeline, in this process or on a "
      "parameter-server cluster through the coordinator (--ps/--workers, --cluster, TF_CONFIG)");
  distflow::AddTrainFlags(train_cmd, &train);

  CLI::App* ckpt_cmd = app.add_subcommand(
      "checkpoint", "Inspect a checkpoint in TensorFlow's format (PREFIX.index + data files)");
  ckpt_cmd->require_subcommand(1);
  std::string ckpt_prefix, ckpt_name, ckpt_out;
  CLI::App* ckpt_list = ckpt_cmd->add_subcommand("list", "Print each tensor's name, dtype, shape");
  ckpt_list->add_option("PREFIX", ckpt_prefix, "checkpoint prefix (the path before .index)")
      ->required();
  CLI::App* ckpt_dump = ckpt_cmd->add_subcommand("dump", "Write one tensor to an .npy file");
  ckpt_dump->add_option("PREFIX", ckpt_prefix, "checkpoint prefix (the path before .index)")
      ->required();
  ckpt_dump->add_option("NAME", ckpt_name, "the tensor's name, as list prints it")->required();
  ckpt_dump->add_option("OUT", ckpt_out, "the .npy file to write")->required();

  distflow::SavedModelCommand saved_model;
  distflow::AddSavedModelCommand(&app, &saved_model);

  CLI::App* graph_cmd = app.add_subcommand("graph", "Inspect a GraphDef (.pb or .pbtxt)");
  graph_cmd->require_subcommand(1);
  std::string graph_path;
  CLI::App* graph_show = graph_cmd->add_subcommand(
      "show", "Its ops, devices, placeholders (feeds) and sinks (fetches)");
  graph_show->add_option("FILE", graph_path, "GraphDef file")->required();

  // What CLI11 would answer with "A subcommand is required": the version,
  // the help, or the subcommand a typo meant.
  if (argc >= 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "version")) {
    std::cout << "distflow " DISTFLOW_VERSION << std::endl;
    return 0;
  }
  if (argc >= 2 && std::string(argv[1]) == "help") {
    std::cout << app.help() << std::endl;
    return 0;
  }
  if (argc < 2) {
    std::cerr << app.help() << std::endl;
    return Fail(absl::InvalidArgumentError(
        "a subcommand is required: run, server, serve, demo, train, checkpoint, saved-model "
        "or graph"));
  }
  const std::string first = argv[1];
  if (!first.empty() && first[0] != '-' &&
      std::find(std::begin(kSubcommands), std::end(kSubcommands), first) ==
          std::end(kSubcommands)) {
    std::string best;
    size_t best_distance = 3;  // suggest only near misses
    for (const char* name : kSubcommands) {
      const size_t d = EditDistance(first, name);
      if (d < best_distance) best_distance = d, best = name;
    }
    std::string message = absl::StrCat("unknown subcommand '", first, "'");
    if (!best.empty()) absl::StrAppend(&message, "; did you mean '", best, "'?");
    absl::StrAppend(&message, " (subcommands: ", absl::StrJoin(kSubcommands, ", "),
                    "; see distflow --help)");
    return Fail(absl::InvalidArgumentError(message));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty()) std::cerr << app.help() << std::endl;
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(e.what(), FlagSuggestion(app.get_subcommands(), argc, argv))));
  }
  if (demo_cmd->parsed()) {
    // The demo handles SIGINT itself: it stops after a final checkpoint.
    absl::Status s = NoThrow([&] { return distflow::RunDemo(demo, std::cout, std::cerr); });
    if (!s.ok()) return Fail(s);
    const int sig = distflow::DemoStopSignal();
    return sig != 0 ? 128 + sig : 0;
  }
  if (server_cmd->parsed()) {
    int sig = 0;
    absl::Status s = NoThrow([&] { return distflow::RunServerCommand(server, std::cout, &sig); });
    if (!s.ok()) return Fail(s);
    return sig == SIGINT ? 128 + sig : 0;
  }
  if (serve_cmd->parsed()) {
    int sig = 0;
    absl::Status s = NoThrow([&] { return distflow::RunServeCommand(serve, std::cout, &sig); });
    if (!s.ok()) return Fail(s);
    return sig == SIGINT ? 128 + sig : 0;
  }
  if (train_cmd->parsed()) {
    signal(SIGINT, ExitOnSignal);
    signal(SIGTERM, ExitOnSignal);
    absl::Status s =
        NoThrow([&] { return distflow::RunTrainCommand(train, std::cout, std::cerr); });
    return s.ok() ? 0 : Fail(s);
  }
  if (ckpt_cmd->parsed()) {
    absl::Status s = NoThrow([&] {
      return ckpt_list->parsed() ? distflow::ListCheckpoint(ckpt_prefix, std::cout)
                                 : distflow::DumpCheckpointTensor(ckpt_prefix, ckpt_name, ckpt_out);
    });
    return s.ok() ? 0 : Fail(s);
  }
  if (saved_model.command->parsed()) {
    absl::Status s =
        NoThrow([&] { return distflow::RunSavedModelCommand(saved_model, std::cout); });
    return s.ok() ? 0 : Fail(s);
  }
  if (graph_cmd->parsed()) {
    absl::Status s = NoThrow([&] { return distflow::ShowGraph(graph_path, std::cout); });
    return s.ok() ? 0 : Fail(s);
  }
  if (run_cmd->parsed()) {
    if (!run_token_file.empty()) {
      absl::StatusOr<std::string> token = distflow::ReadTokenFile(run_token_file);
      if (!token.ok()) return Fail(token.status());
      distflow::SetProcessToken(*std::move(token));
    }
    signal(SIGINT, ExitOnSignal);
    signal(SIGTERM, ExitOnSignal);
    absl::Status s = NoThrow([&] { return distflow::RunGraphCommand(run, std::cout); });
    return s.ok() ? 0 : Fail(s);
  }
  return Fail(absl::InvalidArgumentError("unknown subcommand"));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    return Fail(absl::InternalError(absl::StrCat("unexpected exception: ", e.what())));
  }
}
