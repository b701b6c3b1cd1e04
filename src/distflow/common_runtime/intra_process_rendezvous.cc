#include "distflow/common_runtime/intra_process_rendezvous.h"

#include <utility>

#include "distflow/core/status.h"

namespace distflow {

IntraProcessRendezvous::IntraProcessRendezvous(const DeviceMgr* device_mgr)
    : device_mgr_(device_mgr) {}

IntraProcessRendezvous::~IntraProcessRendezvous() = default;

absl::Status IntraProcessRendezvous::CheckDevice(absl::string_view device,
                                                 const ParsedKey& key) const {
  absl::StatusOr<Device*> d = device_mgr_->LookupDevice(device);
  if (d.ok()) return absl::OkStatus();
  return errors::InvalidArgument("Rendezvous key '", key.FullKey(),
                                 "' names a device not in this process: ", d.status().message());
}

absl::Status IntraProcessRendezvous::Send(const ParsedKey& key, const Args& args,
                                          const Tensor& value, bool is_dead) {
  DF_RETURN_IF_ERROR(CheckDevice(key.src_device, key));
  return local_.Send(key, args, value, is_dead);
}

void IntraProcessRendezvous::RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) {
  absl::Status s = CheckDevice(key.dst_device, key);
  if (!s.ok()) {
    done(s, Args(), args, Tensor(), false);
    return;
  }
  local_.RecvAsync(key, args, std::move(done));
}

void IntraProcessRendezvous::StartAbort(const absl::Status& status) { local_.StartAbort(status); }

std::vector<std::string> IntraProcessRendezvous::PendingReceives() const {
  return local_.PendingReceives();
}

}  // namespace distflow
