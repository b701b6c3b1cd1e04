#include "distflow/distributed_runtime/verbs/rdma_mgr.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/verbs/ibverbs_provider.h"
#include "distflow/distributed_runtime/verbs/shm_provider.h"

namespace distflow {

absl::StatusOr<std::unique_ptr<RdmaMgr>> RdmaMgr::Create(Options options) {
  std::unique_ptr<RdmaMgr> mgr(new RdmaMgr(std::move(options)));
  DF_ASSIGN_OR_RETURN(mgr->shm_, ShmProvider::Create());
  // No device (or no libibverbs) is the common case: tasks elsewhere are
  // then reached over gRPC.
  absl::StatusOr<std::unique_ptr<VerbsProvider>> ib = NewIbverbsProvider();
  if (ib.ok()) mgr->ibverbs_ = std::move(*ib);
  return mgr;
}

RdmaMgr::~RdmaMgr() {
  // Channels first: their connections belong to the providers.
  absl::MutexLock lock(&mu_);
  outgoing_.clear();
  incoming_.clear();
  retired_.clear();
}

void RdmaMgr::Shutdown() {
  std::vector<std::shared_ptr<RdmaChannel>> all;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    for (auto& [task, ch] : outgoing_) all.push_back(ch);
    for (auto& [task, ch] : incoming_) all.push_back(ch);
    all.insert(all.end(), retired_.begin(), retired_.end());
  }
  for (auto& ch : all) ch->Close(ShutDownError());
}

absl::Status RdmaMgr::ShutDownError() const {
  return errors::Unavailable(options_.local_task, " is shutting down");
}

RdmaChannel::Options RdmaMgr::ChannelOptions(const std::string& remote_task) const {
  RdmaChannel::Options o;
  o.local_task = options_.local_task;
  o.remote_task = remote_task;
  o.max_tensor_buffer_bytes = options_.max_tensor_buffer_bytes;
  o.source = options_.source;
  o.schedule = options_.schedule;
  return o;
}

void RdmaMgr::Retire(std::shared_ptr<RdmaChannel> channel) {
  if (channel != nullptr) retired_.push_back(std::move(channel));
}

absl::StatusOr<std::shared_ptr<RdmaChannel>> RdmaMgr::GetChannel(
    const std::string& remote_task, const RemoteAddressExchange& exchange) {
  auto existing = [&]() -> std::shared_ptr<RdmaChannel> {
    absl::MutexLock lock(&mu_);
    auto it = outgoing_.find(remote_task);
    if (it != outgoing_.end() && it->second->status().ok()) return it->second;
    return nullptr;
  };
  if (auto ch = existing()) return ch;
  std::shared_ptr<absl::Mutex> task_mu;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return ShutDownError();
    std::shared_ptr<absl::Mutex>& slot = connecting_[remote_task];
    if (slot == nullptr) slot = std::make_shared<absl::Mutex>();
    task_mu = slot;
  }
  absl::MutexLock connecting(task_mu.get());
  if (auto ch = existing()) return ch;
  for (VerbsProvider* provider : {shm_.get(), ibverbs_.get()}) {
    if (provider == nullptr) continue;
    DF_ASSIGN_OR_RETURN(std::shared_ptr<RdmaChannel> ch,
                        RdmaChannel::Create(provider, ChannelOptions(remote_task)));
    GetRemoteAddressRequest req;
    GetRemoteAddressResponse resp;
    ch->FillLocalAddress(&req);
    const absl::Time deadline = absl::Now() + options_.connect_timeout;
    absl::Status s = exchange(req, &resp, deadline);
    if (absl::IsFailedPrecondition(s)) continue;  // the peer cannot use this provider
    if (absl::IsUnimplemented(s)) {
      return errors::FailedPrecondition(remote_task, " does not serve grpc+verbs");
    }
    if (!s.ok()) {
      return errors::Unavailable("verbs start-up from ", options_.local_task, " to ", remote_task,
                                 " failed: ", s.message());
    }
    DF_RETURN_IF_ERROR(
        ch->Connect(resp.endpoint(), resp.message_buffer(), resp.ack_buffer(), deadline));
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      Retire(ch);
      ch->Close(ShutDownError());
      return ShutDownError();
    }
    auto& slot = outgoing_[remote_task];
    Retire(std::move(slot));
    slot = ch;
    return ch;
  }
  return errors::FailedPrecondition("no verbs provider reaches ", remote_task, " from ",
                                    options_.local_task,
                                    " (another host, and no RDMA device here)");
}

absl::Status RdmaMgr::HandleGetRemoteAddress(const GetRemoteAddressRequest& req,
                                             GetRemoteAddressResponse* resp) {
  VerbsProvider* provider = nullptr;
  if (req.provider() == "shm") {
    if (!ShmProvider::IsOnThisHost(req.endpoint())) {
      return errors::FailedPrecondition(req.source_task(), " is not on the host of ",
                                        options_.local_task);
    }
    provider = shm_.get();
  } else if (req.provider() == "ibverbs") {
    provider = ibverbs_.get();
  }
  if (provider == nullptr) {
    return errors::FailedPrecondition(options_.local_task, " has no '", req.provider(),
                                      "' verbs provider");
  }
  if (req.source_task().empty() || req.source_task() == options_.local_task) {
    return errors::InvalidArgument("GetRemoteAddress from '", req.source_task(), "'");
  }
  DF_ASSIGN_OR_RETURN(std::shared_ptr<RdmaChannel> ch,
                      RdmaChannel::Create(provider, ChannelOptions(req.source_task())));
  DF_RETURN_IF_ERROR(ch->Connect(req.endpoint(), req.message_buffer(), req.ack_buffer(),
                                 absl::Now() + options_.connect_timeout));
  ch->FillLocalAddress(resp);
  absl::MutexLock lock(&mu_);
  if (shut_down_) {
    Retire(ch);
    ch->Close(ShutDownError());
    return ShutDownError();
  }
  auto& slot = incoming_[req.source_task()];
  Retire(std::move(slot));
  slot = std::move(ch);
  return absl::OkStatus();
}

}  // namespace distflow
