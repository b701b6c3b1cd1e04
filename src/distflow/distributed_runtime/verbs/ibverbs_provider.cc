#include "distflow/distributed_runtime/verbs/ibverbs_provider.h"

#include "distflow/core/status.h"

#if DISTFLOW_HAVE_IBVERBS
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/random.h"
#endif

namespace distflow {

#if !DISTFLOW_HAVE_IBVERBS

absl::StatusOr<std::unique_ptr<VerbsProvider>> NewIbverbsProvider() {
  return errors::Unimplemented("built without libibverbs");
}

#else

namespace {

constexpr uint8_t kPort = 1;
constexpr int kCqDepth = 4096;
constexpr int kMaxSendWr = 1024;
constexpr int kMaxRecvWr = 1024;
constexpr int kMaxSge = 4;
// How often the completion thread looks up from the completion channel to
// see whether the provider is closing.
constexpr int kPollMs = 100;

class IbvProvider;

class IbvRegion : public MemoryRegion {
 public:
  IbvRegion(IbvProvider* provider, char* data, size_t size, ibv_mr* mr)
      : provider_(provider), data_(data), size_(size), mr_(mr) {}
  ~IbvRegion() override;
  char* data() const override { return data_; }
  size_t size() const override { return size_; }
  RemoteRegionInfo info() const override {
    return RemoteRegionInfo{reinterpret_cast<uint64_t>(data_), mr_->rkey, size_};
  }
  uint32_t lkey() const { return mr_->lkey; }

 private:
  IbvProvider* const provider_;
  char* const data_;
  const size_t size_;
  ibv_mr* const mr_;
};

class IbvRemoteRegion : public RemoteRegion {
 public:
  explicit IbvRemoteRegion(RemoteRegionInfo info) : info_(info) {}
  const RemoteRegionInfo& info() const override { return info_; }

 private:
  const RemoteRegionInfo info_;
};

// "ibverbs;LID;QPN;PSN;GID(hex)".
struct IbvEndpoint {
  uint16_t lid = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
  ibv_gid gid{};
};

std::string FormatEndpoint(const IbvEndpoint& e) {
  return absl::StrCat(
      "ibverbs;", e.lid, ";", e.qpn, ";", e.psn, ";",
      absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(e.gid.raw), 16)));
}

absl::StatusOr<IbvEndpoint> ParseEndpoint(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ';');
  IbvEndpoint e;
  uint32_t lid = 0;
  if (parts.size() != 5 || parts[0] != "ibverbs" || !absl::SimpleAtoi(parts[1], &lid) ||
      lid > 0xffff || !absl::SimpleAtoi(parts[2], &e.qpn) || !absl::SimpleAtoi(parts[3], &e.psn) ||
      parts[4].size() != 32) {
    return errors::InvalidArgument("malformed ibverbs endpoint '", text, "'");
  }
  e.lid = static_cast<uint16_t>(lid);
  const std::string gid = absl::HexStringToBytes(parts[4]);
  std::memcpy(e.gid.raw, gid.data(), 16);
  return e;
}

class IbvConnection : public VerbsConnection {
 public:
  IbvConnection(IbvProvider* provider, ibv_qp* qp, CompletionHandler handler, IbvEndpoint local)
      : provider_(provider), qp_(qp), handler_(std::move(handler)), local_(local) {}
  ~IbvConnection() override;

  std::string endpoint() const override { return FormatEndpoint(local_); }
  absl::Status Connect(const std::string& peer_endpoint, absl::Time deadline) override;
  absl::StatusOr<std::unique_ptr<RemoteRegion>> AttachRemote(
      const RemoteRegionInfo& info) override {
    // The device checks the rkey and the range at each write.
    if (info.size == 0) return errors::InvalidArgument("an empty remote region");
    return std::unique_ptr<RemoteRegion>(new IbvRemoteRegion(info));
  }
  absl::Status PostWriteWithImm(absl::Span<const absl::Span<const char>> src,
                                const RemoteRegion& dst, uint64_t offset, uint32_t imm,
                                uint64_t wr_id) override;
  absl::Status PostRecv(int count) override;
  void Close() override;

  // From the provider's completion thread.
  void OnCompletion(const ibv_wc& wc);

 private:
  IbvProvider* const provider_;
  ibv_qp* const qp_;
  const CompletionHandler handler_;
  const IbvEndpoint local_;
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_post_ ABSL_GUARDED_BY(mu_) = 1;
  // Writes in flight: the caller's wr_id and the memory registered for it.
  struct Posted {
    uint64_t wr_id;
    std::vector<ibv_mr*> temporary;
  };
  absl::flat_hash_map<uint64_t, Posted> posted_ ABSL_GUARDED_BY(mu_);
};

class IbvProvider : public VerbsProvider {
 public:
  static absl::StatusOr<std::unique_ptr<VerbsProvider>> Create() {
    int n = 0;
    ibv_device** devices = ibv_get_device_list(&n);
    if (devices == nullptr || n == 0) {
      if (devices != nullptr) ibv_free_device_list(devices);
      return errors::NotFound("no RDMA device on this machine");
    }
    std::unique_ptr<IbvProvider> p(new IbvProvider);
    p->context_ = ibv_open_device(devices[0]);
    ibv_free_device_list(devices);
    if (p->context_ == nullptr) return errors::Unavailable("cannot open the RDMA device");
    p->pd_ = ibv_alloc_pd(p->context_);
    p->channel_ = ibv_create_comp_channel(p->context_);
    if (p->pd_ == nullptr || p->channel_ == nullptr) {
      return errors::Unavailable("cannot set up the RDMA device");
    }
    p->cq_ = ibv_create_cq(p->context_, kCqDepth, nullptr, p->channel_, 0);
    if (p->cq_ == nullptr || ibv_req_notify_cq(p->cq_, 0) != 0 ||
        ibv_query_port(p->context_, kPort, &p->port_) != 0 ||
        ibv_query_gid(p->context_, kPort, 0, &p->gid_) != 0) {
      return errors::Unavailable("cannot set up the RDMA device's completion queue or port");
    }
    fcntl(p->channel_->fd, F_SETFL, fcntl(p->channel_->fd, F_GETFL) | O_NONBLOCK);
    IbvProvider* raw = p.get();
    p->poller_ = std::thread([raw] { raw->PollLoop(); });
    return std::unique_ptr<VerbsProvider>(std::move(p));
  }

  ~IbvProvider() override {
    stop_.store(true);
    if (poller_.joinable()) poller_.join();
    if (cq_ != nullptr) ibv_destroy_cq(cq_);
    if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
    if (pd_ != nullptr) ibv_dealloc_pd(pd_);
    if (context_ != nullptr) ibv_close_device(context_);
  }

  const char* name() const override { return "ibverbs"; }

  absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(size_t bytes) override {
    if (bytes == 0 || bytes > (size_t{1} << 48)) {
      return errors::InvalidArgument("cannot register a region of ", bytes, " bytes");
    }
    const size_t size = (bytes + 4095) / 4096 * 4096;
    char* data = static_cast<char*>(std::aligned_alloc(4096, size));
    if (data == nullptr) return errors::ResourceExhausted("cannot allocate ", size, " bytes");
    ibv_mr* mr = ibv_reg_mr(pd_, data, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (mr == nullptr) {
      std::free(data);
      return errors::ResourceExhausted("cannot register ", size, " bytes with the RDMA device");
    }
    auto region = std::make_unique<IbvRegion>(this, data, size, mr);
    absl::MutexLock lock(&regions_mu_);
    regions_[reinterpret_cast<uintptr_t>(data)] = region.get();
    return std::unique_ptr<MemoryRegion>(std::move(region));
  }

  absl::StatusOr<std::unique_ptr<VerbsConnection>> CreateConnection(
      CompletionHandler handler) override {
    ibv_qp_init_attr attr{};
    attr.send_cq = cq_;
    attr.recv_cq = cq_;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = kMaxSendWr;
    attr.cap.max_recv_wr = kMaxRecvWr;
    attr.cap.max_send_sge = kMaxSge;
    attr.cap.max_recv_sge = 1;
    ibv_qp* qp = ibv_create_qp(pd_, &attr);
    if (qp == nullptr) return errors::Unavailable("cannot create an RDMA queue pair");
    ibv_qp_attr init{};
    init.qp_state = IBV_QPS_INIT;
    init.pkey_index = 0;
    init.port_num = kPort;
    init.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (ibv_modify_qp(qp, &init,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
      ibv_destroy_qp(qp);
      return errors::Unavailable("cannot initialise an RDMA queue pair");
    }
    IbvEndpoint local;
    local.lid = port_.lid;
    local.qpn = qp->qp_num;
    local.psn = static_cast<uint32_t>(random::New64() & 0xffffff);
    local.gid = gid_;
    auto conn = std::make_unique<IbvConnection>(this, qp, std::move(handler), local);
    absl::MutexLock lock(&mu_);
    connections_[qp->qp_num] = conn.get();
    return std::unique_ptr<VerbsConnection>(std::move(conn));
  }

  // The lkey of registered memory holding [data, data + size), or 0.
  uint32_t FindLkey(const char* data, size_t size) {
    absl::MutexLock lock(&regions_mu_);
    auto it = regions_.upper_bound(reinterpret_cast<uintptr_t>(data));
    if (it == regions_.begin()) return 0;
    --it;
    const IbvRegion* r = it->second;
    if (data + size > r->data() + r->size()) return 0;
    return r->lkey();
  }
  ibv_mr* RegisterTemporarily(const char* data, size_t size) {
    return ibv_reg_mr(pd_, const_cast<char*>(data), size, IBV_ACCESS_LOCAL_WRITE);
  }
  void Forget(uint32_t qpn) {
    absl::MutexLock lock(&mu_);
    connections_.erase(qpn);
  }
  void ForgetRegion(const char* data) {
    absl::MutexLock lock(&regions_mu_);
    regions_.erase(reinterpret_cast<uintptr_t>(data));
  }
  const ibv_port_attr& port() const { return port_; }

 private:
  IbvProvider() = default;

  // Waits on the completion channel and hands each completion to its
  // connection.
  void PollLoop() {
    ibv_wc wcs[64];
    while (!stop_.load()) {
      pollfd pfd{channel_->fd, POLLIN, 0};
      if (poll(&pfd, 1, kPollMs) <= 0) continue;
      ibv_cq* cq;
      void* ctx;
      if (ibv_get_cq_event(channel_, &cq, &ctx) != 0) continue;
      ibv_ack_cq_events(cq, 1);
      ibv_req_notify_cq(cq, 0);
      int n;
      while ((n = ibv_poll_cq(cq, 64, wcs)) > 0) {
        for (int i = 0; i < n; ++i) {
          absl::ReaderMutexLock lock(&mu_);
          auto it = connections_.find(wcs[i].qp_num);
          if (it != connections_.end()) it->second->OnCompletion(wcs[i]);
        }
      }
    }
  }

  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_port_attr port_{};
  ibv_gid gid_{};
  std::atomic<bool> stop_{false};
  std::thread poller_;
  // Held shared while a completion is dispatched, so a connection that
  // Forget()s itself gets no completion after.
  absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, IbvConnection*> connections_ ABSL_GUARDED_BY(mu_);
  absl::Mutex regions_mu_;
  std::map<uintptr_t, IbvRegion*> regions_ ABSL_GUARDED_BY(regions_mu_);
};

IbvRegion::~IbvRegion() {
  provider_->ForgetRegion(data_);
  ibv_dereg_mr(mr_);
  std::free(data_);
}

IbvConnection::~IbvConnection() {
  Close();
  // Waits for a completion being dispatched to us.
  provider_->Forget(qp_->qp_num);
  ibv_destroy_qp(qp_);
  for (auto& [id, p] : posted_) {
    for (ibv_mr* m : p.temporary) ibv_dereg_mr(m);
  }
}

absl::Status IbvConnection::Connect(const std::string& peer_endpoint, absl::Time) {
  DF_ASSIGN_OR_RETURN(IbvEndpoint peer, ParseEndpoint(peer_endpoint));
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = provider_->port().active_mtu;
  rtr.dest_qp_num = peer.qpn;
  rtr.rq_psn = peer.psn;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 12;
  rtr.ah_attr.dlid = peer.lid;
  rtr.ah_attr.port_num = kPort;
  ibv_gid zero{};
  if (std::memcmp(peer.gid.raw, zero.raw, 16) != 0) {
    // RoCE, or InfiniBand across subnets: route by GID.
    rtr.ah_attr.is_global = 1;
    rtr.ah_attr.grh.dgid = peer.gid;
    rtr.ah_attr.grh.hop_limit = 1;
    rtr.ah_attr.grh.sgid_index = 0;
  }
  if (ibv_modify_qp(qp_, &rtr,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0) {
    return errors::Unavailable("cannot connect the RDMA queue pair to QP ", peer.qpn);
  }
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = 14;
  rts.retry_cnt = 7;
  rts.rnr_retry = 7;
  rts.sq_psn = local_.psn;
  rts.max_rd_atomic = 1;
  if (ibv_modify_qp(qp_, &rts,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
    return errors::Unavailable("cannot make the RDMA queue pair ready to send");
  }
  return absl::OkStatus();
}

absl::Status IbvConnection::PostWriteWithImm(absl::Span<const absl::Span<const char>> src,
                                             const RemoteRegion& dst, uint64_t offset, uint32_t imm,
                                             uint64_t wr_id) {
  if (src.size() > static_cast<size_t>(kMaxSge)) {
    return errors::InvalidArgument("a write of ", src.size(), " pieces; at most ", kMaxSge);
  }
  uint64_t total = 0;
  for (const auto& s : src) total += s.size();
  if (offset > dst.info().size || total > dst.info().size - offset) {
    return errors::InvalidArgument("a write of ", total, " bytes at offset ", offset,
                                   " does not fit a remote region of ", dst.info().size, " bytes");
  }
  Posted posted{wr_id, {}};
  ibv_sge sge[kMaxSge];
  int n = 0;
  for (const auto& s : src) {
    if (s.empty()) continue;
    uint32_t lkey = provider_->FindLkey(s.data(), s.size());
    if (lkey == 0) {
      ibv_mr* mr = provider_->RegisterTemporarily(s.data(), s.size());
      if (mr == nullptr) {
        for (ibv_mr* m : posted.temporary) ibv_dereg_mr(m);
        return errors::ResourceExhausted("cannot register ", s.size(), " bytes for a write");
      }
      posted.temporary.push_back(mr);
      lkey = mr->lkey;
    }
    sge[n].addr = reinterpret_cast<uint64_t>(s.data());
    sge[n].length = static_cast<uint32_t>(s.size());
    sge[n].lkey = lkey;
    ++n;
  }
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(imm);
  wr.sg_list = n > 0 ? sge : nullptr;
  wr.num_sge = n;
  wr.wr.rdma.remote_addr = dst.info().addr + offset;
  wr.wr.rdma.rkey = static_cast<uint32_t>(dst.info().rkey);
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      for (ibv_mr* m : posted.temporary) ibv_dereg_mr(m);
      return errors::Unavailable("the RDMA connection is closed");
    }
    wr.wr_id = next_post_++;
    posted_[wr.wr_id] = std::move(posted);
  }
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(qp_, &wr, &bad) != 0) {
    absl::MutexLock lock(&mu_);
    for (ibv_mr* m : posted_[wr.wr_id].temporary) ibv_dereg_mr(m);
    posted_.erase(wr.wr_id);
    return errors::Unavailable("cannot post an RDMA write");
  }
  return absl::OkStatus();
}

absl::Status IbvConnection::PostRecv(int count) {
  for (int i = 0; i < count; ++i) {
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(qp_, &wr, &bad) != 0) return errors::Unavailable("cannot post a receive");
  }
  return absl::OkStatus();
}

void IbvConnection::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
  }
  // Flushes what is posted; those completions are dropped (closed_).
  ibv_qp_attr err{};
  err.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(qp_, &err, IBV_QP_STATE);
}

void IbvConnection::OnCompletion(const ibv_wc& wc) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
  }
  Completion c;
  if (wc.status != IBV_WC_SUCCESS) {
    c.kind = Completion::Kind::kError;
    c.status = errors::Unavailable("RDMA completion failed: ", ibv_wc_status_str(wc.status));
  } else if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    c.kind = Completion::Kind::kRecvImm;
    c.imm = ntohl(wc.imm_data);
  } else if (wc.opcode == IBV_WC_RDMA_WRITE) {
    absl::MutexLock lock(&mu_);
    auto it = posted_.find(wc.wr_id);
    if (it == posted_.end()) return;
    for (ibv_mr* m : it->second.temporary) ibv_dereg_mr(m);
    c.kind = Completion::Kind::kWriteDone;
    c.wr_id = it->second.wr_id;
    posted_.erase(it);
  } else {
    return;
  }
  handler_(c);
}

}  // namespace

absl::StatusOr<std::unique_ptr<VerbsProvider>> NewIbverbsProvider() {
  return IbvProvider::Create();
}

#endif  // DISTFLOW_HAVE_IBVERBS

}  // namespace distflow
