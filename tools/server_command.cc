#include "server_command.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/file_roots.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_coordinator_service.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "server/server_status.h"

namespace distflow {

namespace {
// How long --join keeps trying to reach its coordinator.
constexpr absl::Duration kJoinTimeout = absl::Seconds(60);
}  // namespace

absl::Status RunServerCommand(const ServerFlags& flags, std::ostream& out, int* stop_signal) {
  ServerDef def;
  if (!flags.cluster.empty()) {
    if (flags.job.empty()) return errors::InvalidArgument("--job is required with --cluster");
    DF_ASSIGN_OR_RETURN(def, MakeServerDef(flags.cluster, flags.job, flags.task));
  } else {
    const char* tf_config = std::getenv("TF_CONFIG");
    if (tf_config == nullptr || *tf_config == '\0') {
      return errors::InvalidArgument("give --cluster/--job/--task or set TF_CONFIG");
    }
    DF_ASSIGN_OR_RETURN(def, ServerDefFromTfConfig(tf_config));
  }
  if (flags.devices < 1 || flags.devices > kMaxServerDevices) {
    return errors::InvalidArgument("--devices must be between 1 and ", kMaxServerDevices, ", got ",
                                   flags.devices);
  }
  (*def.mutable_default_session_config()->mutable_device_count())["CPU"] = flags.devices;
  if (flags.protocol != "grpc" && flags.protocol != "grpc+verbs") {
    return errors::InvalidArgument("--protocol must be grpc or grpc+verbs, got '", flags.protocol,
                                   "'");
  }
  def.set_protocol(flags.protocol);
  int64_t verbs_max_buffer_bytes = 0;
  if (flags.verbs_max_buffer_mb < 1 ||
      !MultiplyWithoutOverflow<int64_t>(flags.verbs_max_buffer_mb, int64_t{1} << 20,
                                        &verbs_max_buffer_bytes)) {
    return errors::InvalidArgument("--verbs-max-buffer-mb must be between 1 and ", INT64_MAX >> 20,
                                   ", got ", flags.verbs_max_buffer_mb);
  }
  if (flags.tensor_side_channel != "on" && flags.tensor_side_channel != "off") {
    return errors::InvalidArgument("--tensor-side-channel must be on or off, got '",
                                   flags.tensor_side_channel, "'");
  }
  if (flags.tensor_push != "on" && flags.tensor_push != "off") {
    return errors::InvalidArgument("--tensor-push must be on or off, got '", flags.tensor_push,
                                   "'");
  }
  if (flags.step_timeout_ms < 0) return errors::InvalidArgument("--step-timeout-ms must be >= 0");
  if (flags.grace_seconds < 0) return errors::InvalidArgument("--grace-seconds must be >= 0");
  if (!(flags.stuck_step_warn_seconds >= 0) || flags.stuck_step_warn_seconds > kMaxWarnSeconds) {
    return errors::InvalidArgument("--stuck-step-warn-seconds must be between 0 (never) and ",
                                   kMaxWarnSeconds, ", got ", flags.stuck_step_warn_seconds);
  }
  int64_t budget_bytes = 0;
  if (flags.memory_budget_mb < 0 ||
      !MultiplyWithoutOverflow<int64_t>(flags.memory_budget_mb, int64_t{1} << 20, &budget_bytes)) {
    return errors::InvalidArgument("--memory-budget-mb must be between 0 (none) and ",
                                   INT64_MAX >> 20, ", got ", flags.memory_budget_mb);
  }
  if (flags.max_graph_nodes < 1) {
    return errors::InvalidArgument("--max-graph-nodes must be >= 1, got ", flags.max_graph_nodes);
  }
  if (flags.max_request_mb < 1 || flags.max_request_mb > kMaxRequestMbLimit) {
    return errors::InvalidArgument("--max-request-mb must be between 1 and ", kMaxRequestMbLimit,
                                   ", got ", flags.max_request_mb);
  }
  SetMaxGraphNodes(flags.max_graph_nodes);
  if (flags.step_timeout_ms > 0) {
    def.mutable_default_session_config()->set_operation_timeout_in_ms(flags.step_timeout_ms);
  }

  // Block the stop signals in every thread the server starts, then wait for
  // them here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  DF_RETURN_IF_ERROR(SetAllowedFileRoots(flags.file_roots));
  SetStuckStepWarnSeconds(flags.stuck_step_warn_seconds);
  if (budget_bytes > 0) memory_budget::SetLimit(budget_bytes);
  GrpcServerOptions options;
  options.bind_host = flags.bind;
  options.max_receive_message_bytes = flags.max_request_mb << 20;
  options.verbs_max_buffer_bytes = static_cast<uint64_t>(verbs_max_buffer_bytes);
  options.tensor_side_channel = flags.tensor_side_channel == "on";
  options.tensor_push = flags.tensor_push == "on";
  if (!flags.token_file.empty()) {
    DF_ASSIGN_OR_RETURN(options.token, ReadTokenFile(flags.token_file));
  }
  DF_ASSIGN_OR_RETURN(options.tls, ReadTlsFiles(flags.tls));
  DF_ASSIGN_OR_RETURN(std::unique_ptr<GrpcServer> server, GrpcServer::Create(def, options));
  DF_RETURN_IF_ERROR(server->Start());
  DF_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromClusterDef(def.cluster()));
  DF_ASSIGN_OR_RETURN(std::string address, cluster.TaskAddress(def.job_name(), def.task_index()));
  std::string host;
  int port;
  DF_RETURN_IF_ERROR(SplitHostPort(address, &host, &port));
  if (!flags.bind.empty()) host = flags.bind;
  out << "listening on " << host << ":" << server->bound_port() << std::endl;
  std::unique_ptr<ServerStatus> status_page;
  if (flags.status_port >= 0) {
    status_page = std::make_unique<ServerStatus>(server.get());
    StatusServerOptions so;
    so.bind = flags.status_bind;
    so.port = flags.status_port;
    so.token = options.token.empty() ? ProcessToken() : options.token;
    absl::Status serving = status_page->Serve(so);
    if (!serving.ok()) {
      server->Stop(absl::ZeroDuration());
      return serving;
    }
    std::cerr << "distflow server: status page on http://" << flags.status_bind << ":"
              << status_page->port() << "/" << std::endl;
  }
  if (!flags.join.empty()) {
    absl::Status joined =
        JoinCoordinator(flags.join, def.job_name(), def.task_index(),
                        absl::StrCat(host, ":", server->bound_port()), kJoinTimeout);
    if (!joined.ok()) {
      server->Stop(absl::ZeroDuration());
      return joined;
    }
    std::cerr << "distflow server: joined the coordinator at " << flags.join << std::endl;
  }

  int sig = 0;
  sigwait(&stop, &sig);
  std::cerr << "distflow server: stopping on " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
            << "; calls in flight have " << flags.grace_seconds << " s to finish" << std::endl;
  // Drain within the grace period; a call that still holds the server
  // after it does not keep the process alive.
  std::thread([grace = flags.grace_seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(grace) + std::chrono::seconds(2));
    std::cerr << "distflow server: shutdown took longer than the grace period; exiting"
              << std::endl;
    std::_Exit(1);
  }).detach();
  status_page.reset();  // it reads the server
  server->Stop(absl::Seconds(flags.grace_seconds));
  if (stop_signal != nullptr) *stop_signal = sig;
  return absl::OkStatus();
}

}  // namespace distflow
