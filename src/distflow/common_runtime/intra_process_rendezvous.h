// IntraProcessRendezvous: the Rendezvous of one step when producer and
// consumer live in this process. Each step makes its own (so keys of
// concurrent steps never meet) and drops it when the step is over. Tensors
// are buffered in a LocalRendezvous; both ends of a key must name devices of
// the DeviceMgr. CPU devices share memory, so a value is handed over without
// a copy. All methods are thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_INTRA_PROCESS_RENDEZVOUS_H_
#define DISTFLOW_COMMON_RUNTIME_INTRA_PROCESS_RENDEZVOUS_H_

#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/local_rendezvous.h"
#include "distflow/framework/rendezvous.h"

namespace distflow {

class IntraProcessRendezvous : public Rendezvous {
 public:
  // `device_mgr` must outlive this rendezvous.
  explicit IntraProcessRendezvous(const DeviceMgr* device_mgr);

  // Send and RecvAsync fail with InvalidArgument when the key's source
  // (Send) or destination (RecvAsync) device is not in the DeviceMgr.
  absl::Status Send(const ParsedKey& key, const Args& args, const Tensor& value,
                    bool is_dead) override;
  void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;
  std::vector<std::string> PendingReceives() const override;

 private:
  ~IntraProcessRendezvous() override;
  absl::Status CheckDevice(absl::string_view device, const ParsedKey& key) const;

  const DeviceMgr* const device_mgr_;
  LocalRendezvous local_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_INTRA_PROCESS_RENDEZVOUS_H_
