#include "distflow/distributed_runtime/rpc/grpc_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/core/status.h"
#include "distflow/core/threadpool.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/local_worker.h"
#include "distflow/distributed_runtime/master.h"
#include "distflow/distributed_runtime/rendezvous_mgr.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"
#include "distflow/distributed_runtime/rpc/grpc_master_service.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/rpc/grpc_verbs_service.h"
#include "distflow/distributed_runtime/rpc/grpc_worker_client.h"
#include "distflow/distributed_runtime/rpc/grpc_worker_service.h"
#include "distflow/distributed_runtime/rpc/side_channel_client.h"
#include "distflow/distributed_runtime/rpc/side_channel_pusher.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/transfer_stats.h"
#include "distflow/distributed_runtime/verbs/rdma_mgr.h"
#include "distflow/distributed_runtime/verbs/verbs_worker.h"
#include "distflow/distributed_runtime/worker.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/distributed_runtime/worker_env.h"
#include "grpcpp/grpcpp.h"

namespace distflow {
namespace {

// Threads for the calls that may wait (sessions, graph registration).
constexpr int kControlThreads = 4;
// How long a stopped server waits for its cancelled steps to end.
constexpr absl::Duration kStepDrainTimeout = absl::Seconds(10);

// True iff `port` is held by another socket on every address `host`
// resolves to. gRPC reports that failure only as a kilobyte of its own error
// text, so the server asks first and says it in one line. False when the
// probe cannot tell (an unknown host, another bind error): gRPC's bind then
// decides, with the server's general message.
bool PortHeldByAnother(std::string host, int port) {
  if (port == 0) return false;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints,
                  &res) != 0) {
    return false;
  }
  bool all_held = res != nullptr;
  for (addrinfo* a = res; a != nullptr && all_held; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      all_held = false;
      break;
    }
    // As gRPC's listeners do, so that a port a closed socket left in
    // TIME_WAIT reads as free.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    all_held = bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE;
    close(fd);
  }
  freeaddrinfo(res);
  return all_held;
}

}  // namespace

struct GrpcServer::Impl {
  WorkerEnv env;
  // Null when the side channel is off.
  std::shared_ptr<SideChannelClient> side_channel_client;
  // Declared before the worker service, which offers tickets from it.
  std::unique_ptr<SideChannelServer> side_channel;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Master> master;
  std::unique_ptr<GrpcWorkerService> worker_service;
  std::unique_ptr<GrpcMasterService> master_service;
  std::unique_ptr<GrpcVerbsService> verbs_service;
  // Runs the calls that may wait; declared before the queue, which uses it
  // until their Shutdown.
  std::unique_ptr<ThreadPool> control_pool;
  // Declared before the server, which must go first. Clients of other tasks
  // share them, and fail their calls once they are shut down.
  std::shared_ptr<ServerCallQueue> queue;
  std::unique_ptr<grpc::Server> server;
  absl::Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
};

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const ServerDef& server_def,
                                                               GrpcServerOptions options) {
  DF_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromClusterDef(server_def.cluster()));
  DF_RETURN_IF_ERROR(cluster.TaskAddress(server_def.job_name(), server_def.task_index()).status());
  // The server's TLS settings are also what this process's channels use,
  // so its master and workers reach the other tasks of the cluster.
  if (options.tls.enabled()) {
    if (options.tls.cert_pem.empty() || options.tls.key_pem.empty() || options.tls.ca_pem.empty()) {
      return errors::InvalidArgument("a TLS server needs a certificate, a private key and a CA");
    }
    SetProcessTls(options.tls);
  } else {
    DF_ASSIGN_OR_RETURN(options.tls, ProcessTls());
  }
  const bool verbs = server_def.protocol() == "grpc+verbs";
  if (!verbs && !server_def.protocol().empty() && server_def.protocol() != "grpc") {
    return errors::InvalidArgument("unknown protocol '", server_def.protocol(),
                                   "' (expected grpc or grpc+verbs)");
  }
  std::unique_ptr<GrpcServer> s(new GrpcServer);
  s->server_def_ = server_def;
  s->options_ = std::move(options);
  s->task_name_ =
      absl::StrCat("/job:", server_def.job_name(), "/replica:0/task:", server_def.task_index());
  const ConfigProto& config = server_def.default_session_config();
  DF_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> devices,
                      CreateCpuDevices(config, s->task_name_));
  s->device_mgr_ = std::make_unique<DeviceMgr>(std::move(devices));
  int inter = config.inter_op_parallelism_threads();
  if (inter <= 0) inter = std::max(4, NumSchedulableCPUs());
  s->compute_pool_ = std::make_unique<ThreadPool>("compute", inter);
  // The task of this process is reached in-process, every other over gRPC
  // (with grpc+verbs, its tensors over a verbs channel).
  GrpcServer* server = s.get();
  if (verbs) {
    RdmaMgr::Options verbs_options;
    verbs_options.local_task = s->task_name_;
    if (options.verbs_max_buffer_bytes > 0) {
      verbs_options.max_tensor_buffer_bytes = options.verbs_max_buffer_bytes;
    }
    // A peer's TENSOR_REQUEST is served as its RecvTensor would be.
    verbs_options.source = [server](int64_t step_id, const std::string& key, TensorDone done) {
      RecvTensorRequest req;
      req.set_step_id(step_id);
      req.set_rendezvous_key(key);
      server->impl_->worker->RecvTensorAsync(
          /*call_cm=*/nullptr, req,
          [done = std::move(done)](const absl::Status& st, const Tensor& t, bool is_dead) {
            done(st, t, is_dead);
          });
    };
    // A received tensor's consumers run on the compute pool, as TensorFlow's
    // verbs transport schedules them: never on the channel's thread, which
    // then keeps serving the channel while kernels run.
    verbs_options.schedule = [server](std::function<void()> fn) {
      server->compute_pool_->Schedule(std::move(fn));
    };
    DF_ASSIGN_OR_RETURN(s->rdma_mgr_, RdmaMgr::Create(std::move(verbs_options)));
  }
  WorkerCacheFactory cache_factory = [server](ClusterSpec cluster) {
    return std::make_shared<WorkerCache>(
        std::move(cluster),
        [server](const std::string& task,
                 const std::string& address) -> absl::StatusOr<std::unique_ptr<WorkerInterface>> {
          if (task == server->task_name_) {
            return std::make_unique<LocalWorker>(task, server->impl_->worker.get());
          }
          DF_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, NewGrpcChannel(address));
          std::string host;
          int port = 0;
          DF_RETURN_IF_ERROR(SplitHostPort(address, &host, &port));
          if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
            host = host.substr(1, host.size() - 2);
          }
          // Calls complete on the server's queue once it runs.
          auto client =
              std::make_unique<GrpcWorkerClient>(task, channel, server->impl_->side_channel_client,
                                                 std::move(host), server->call_queue());
          if (server->rdma_mgr_ == nullptr) return client;
          return std::make_unique<VerbsWorker>(std::move(client), server->rdma_mgr_.get(),
                                               GrpcRemoteAddressExchange(std::move(channel)));
        });
  };
  s->worker_cache_ = cache_factory(std::move(cluster));
  s->rendezvous_mgr_ = std::make_unique<RendezvousMgr>(s->task_name_);
  s->impl_ = std::make_unique<Impl>();
  if (s->options_.tensor_side_channel && !s->options_.tls.enabled()) {
    s->impl_->side_channel_client = std::make_shared<SideChannelClient>();
  }
  WorkerEnv& env = s->impl_->env;
  env.task_name = s->task_name_;
  env.device_mgr = s->device_mgr_.get();
  env.worker_cache = s->worker_cache_;
  env.worker_cache_factory = cache_factory;
  env.rendezvous_mgr = s->rendezvous_mgr_.get();
  env.compute_pool = s->compute_pool_.get();
  s->impl_->worker = std::make_unique<Worker>(&env);
  s->impl_->master =
      std::make_unique<Master>(s->task_name_, s->worker_cache_, cache_factory, config);
  // The server's token is also what this process's channels carry, so
  // its master and workers reach the other tasks of the cluster.
  if (s->options_.token.empty()) {
    s->options_.token = ProcessToken();
  } else {
    SetProcessToken(s->options_.token);
  }
  s->impl_->master_service =
      std::make_unique<GrpcMasterService>(s->impl_->master.get(), s->options_.token);
  if (verbs) {
    s->impl_->verbs_service =
        std::make_unique<GrpcVerbsService>(s->rdma_mgr_.get(), s->options_.token);
  }
  return s;
}

GrpcServer::~GrpcServer() {
  Stop();
  // The master's sessions talk to workers: close them before the workers go.
  if (impl_ != nullptr) {
    // A step whose call the stop cut may still be ending on another thread:
    // it ends (answering its call) before anything it runs on goes.
    if (impl_->worker != nullptr) {
      impl_->worker->CancelStepsAndWait(absl::Now() + kStepDrainTimeout);
    }
    impl_->master.reset();
    // Channels serve peers from the worker: close them before it goes.
    if (rdma_mgr_ != nullptr) rdma_mgr_->Shutdown();
    // Its keyed receives ask the worker: join them before it goes.
    impl_->side_channel.reset();
    impl_->worker.reset();
  }
  if (rendezvous_mgr_ != nullptr) rendezvous_mgr_->CleanupAll();
  // Nothing of this server calls other tasks any more; a client that lives
  // on in a shared worker cache gets Unavailable.
  if (std::shared_ptr<ServerCallQueue> queue = call_queue()) queue->Shutdown();
}

std::shared_ptr<ServerCallQueue> GrpcServer::call_queue() const {
  if (impl_ == nullptr) return nullptr;
  absl::MutexLock lock(&impl_->mu);
  return impl_->queue;
}

void GrpcServer::StartPushes() {
  SideChannelServer* side = impl_->side_channel.get();
  SideChannelPusher::Options push_options;
  push_options.token = options_.token;
  auto pusher = std::make_shared<SideChannelPusher>(std::move(push_options));
  PushSetup setup;
  setup.pusher = pusher;
  setup.accept = true;
  rendezvous_mgr_->SetPush(std::move(setup));
  // Producers learn where this task's side channel listens from the hellos
  // of its keyed receives, and this task learns where its receivers do.
  impl_->side_channel_client->SetOwnPort(side->port());
  side->SetRouteListener([pusher](const std::string& key, const std::string& host, int port) {
    Rendezvous::ParsedKey parsed;
    if (Rendezvous::ParseKey(key, &parsed).ok()) {
      pusher->Learn(TaskOfDevice(parsed.dst_device), host, port);
    }
  });
  side->SetPushSink([mgr = rendezvous_mgr_.get()](int64_t step_id, const std::string& key,
                                                  absl::string_view payload) {
    grpc::Slice slice(payload.data(), payload.size());
    grpc::ByteBuffer bytes(&slice, 1);
    Tensor value;
    bool is_dead = false;
    int64_t send_start = 0;
    // A push that does not decode is dropped: its receive asks.
    if (DecodeRecvTensorResponse(bytes, &value, &is_dead, &send_start).ok()) {
      mgr->DeliverPushed(step_id, key, value, is_dead);
    }
  });
}

absl::Status GrpcServer::Start() {
  DF_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromClusterDef(server_def_.cluster()));
  DF_ASSIGN_OR_RETURN(std::string address,
                      cluster.TaskAddress(server_def_.job_name(), server_def_.task_index()));
  std::string host;
  int port = 0;
  DF_RETURN_IF_ERROR(SplitHostPort(address, &host, &port));
  if (server_def_.port() != 0) port = server_def_.port();
  if (!options_.bind_host.empty()) host = options_.bind_host;
  const std::string listen =
      absl::StrCat(absl::StrContains(host, ':') ? absl::StrCat("[", host, "]") : host, ":", port);
  if (PortHeldByAnother(host, port)) {
    return errors::Unavailable("cannot listen on ", listen, " for ", task_name_,
                               ": the address is already in use");
  }
  if (impl_->side_channel_client != nullptr) {
    SideChannelServer::Options side_options;
    side_options.host = host;
    side_options.token = options_.token;
    DF_ASSIGN_OR_RETURN(impl_->side_channel, SideChannelServer::Start(std::move(side_options)));
    // Keyed receives are answered as RecvTensor calls are.
    impl_->side_channel->SetKeyedSource(
        [worker = impl_->worker.get(), side = impl_->side_channel.get()](
            int64_t step_id, const std::string& key, CancellationManager* cm,
            SideChannelServer::KeyedDone done) {
          auto request = std::make_shared<RecvTensorRequest>();
          request->set_step_id(step_id);
          request->set_rendezvous_key(key);
          request->set_side_channel_ok(true);
          AnswerRecvTensor(worker, side, cm, std::move(request), /*keyed=*/true, std::move(done));
        });
    if (options_.tensor_push) StartPushes();
  }
  impl_->worker_service = std::make_unique<GrpcWorkerService>(impl_->worker.get(), options_.token,
                                                              impl_->side_channel.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, ServerCredentials(options_.tls), &bound_port_);
  // gRPC sets SO_REUSEPORT by default, so a second server on a taken port
  // would start and silently share its connections with the first. A port
  // belongs to one task: binding a taken one is an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  ConfigureServerBuilder(&builder);
  builder.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  builder.RegisterService(impl_->worker_service.get());
  builder.RegisterService(impl_->master_service.get());
  if (impl_->verbs_service != nullptr) builder.RegisterService(impl_->verbs_service.get());
  // The per-step calls are polled by threads of their own.
  // One polling thread for every call (grpc_call_queue.h).
  auto queue = std::make_shared<ServerCallQueue>(&builder);
  impl_->control_pool = std::make_unique<ThreadPool>("rpc_control", kControlThreads);
  impl_->worker_service->ServeOn(queue.get(), impl_->control_pool.get());
  impl_->master_service->ServeOn(queue.get(), impl_->control_pool.get());
  impl_->server = builder.BuildAndStart();
  if (impl_->server == nullptr || bound_port_ == 0) {
    if (impl_->server != nullptr) impl_->server->Shutdown();
    impl_->server.reset();
    queue->Shutdown();
    return errors::Unavailable(
        "cannot listen on ", listen, " for ", task_name_,
        " (is the port taken by another process, or is ", host,
        " not an address of this machine? --bind overrides it",
        options_.tls.enabled() ? "; do the TLS certificate and key load and match?" : "", ")");
  }
  queue->Start();
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->queue = std::move(queue);
  }
  if (port == 0) {
    // Peers in this process (the master) must reach the port really bound.
    const bool any = host == "0.0.0.0" || host == "::" || host.empty();
    DF_RETURN_IF_ERROR(worker_cache_->SetTaskAddress(
        server_def_.job_name(), server_def_.task_index(),
        absl::StrCat(any ? "127.0.0.1" : listen.substr(0, listen.rfind(':')), ":", bound_port_)));
  }
  return absl::OkStatus();
}

void GrpcServer::Stop(absl::Duration grace) {
  if (impl_ == nullptr || impl_->server == nullptr) return;
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  // Fail every waiting step first so in-flight calls can finish.
  rendezvous_mgr_->CleanupAll();
  const absl::Time deadline = absl::Now() + grace;
  // gRPC's Shutdown sends every client a GOAWAY and returns only once each
  // connection has closed, or at the deadline. An idle client may read the
  // GOAWAY only seconds later (it polls an idle channel every few seconds),
  // so once the last call in flight has been answered the connections left
  // are closed here instead of waited for. Calls of the verbs service (one
  // address exchange per channel, answered as it arrives) are not counted.
  std::thread shutdown(
      [server = impl_->server.get(), deadline] { server->Shutdown(absl::ToChronoTime(deadline)); });
  std::shared_ptr<ServerCallQueue> queue = call_queue();
  if (queue != nullptr && queue->WaitUntilNoCalls(deadline)) {
    grpc_server_cancel_all_calls(impl_->server->c_server());
  }
  shutdown.join();
  if (impl_->side_channel != nullptr) impl_->side_channel->Stop();
  // Fetches still running read from peers that may never answer.
  if (impl_->side_channel_client != nullptr) impl_->side_channel_client->Shutdown();
}

void GrpcServer::Join() {
  if (impl_ != nullptr && impl_->server != nullptr) impl_->server->Wait();
}

const SideChannelServer* GrpcServer::side_channel() const {
  return impl_ == nullptr ? nullptr : impl_->side_channel.get();
}

std::string GrpcServer::target() const { return absl::StrCat("grpc://localhost:", bound_port_); }

GrpcServer::Stats GrpcServer::stats() const {
  Stats s;
  if (impl_ == nullptr) return s;
  if (impl_->master != nullptr) s.master_sessions = impl_->master->num_sessions();
  if (impl_->worker != nullptr) {
    s.registered_graphs = impl_->worker->num_graphs();
    s.running_steps = impl_->worker->RunningSteps();
  }
  if (rendezvous_mgr_ != nullptr) s.steps = static_cast<int64_t>(rendezvous_mgr_->NumSteps());
  if (impl_->side_channel != nullptr)
    s.side_channel_fetches = impl_->side_channel->fetches_served();
  return s;
}

}  // namespace distflow
