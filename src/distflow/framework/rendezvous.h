// Rendezvous: the meeting point where a producer leaves a tensor under a key
// and a consumer picks it up, in either order. Every cross-partition edge of
// a step (and every fed and fetched tensor) goes through one. A key names one
// <producer, consumer> pair:
//   "src_device;src_incarnation_hex;dst_device;tensor_name;frame_id:iter_id"
// Send never blocks; a receiver either waits through a callback or calls the
// blocking Recv. Sending or receiving the same key twice while the first is
// pending is an error (Aborted). StartAbort fails every pending and later
// call. Implementations: IntraProcessRendezvous (one process) and, later, a
// remote rendezvous that fetches tensors from other workers. All methods of
// every implementation are thread-safe.
#ifndef DISTFLOW_FRAMEWORK_RENDEZVOUS_H_
#define DISTFLOW_FRAMEWORK_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "distflow/core/refcount.h"
#include "distflow/framework/device_name_utils.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class CancellationManager;

class Rendezvous : public RefCounted {
 public:
  // What each side tells the other about its end of the transfer.
  struct Args {
    // The device this side runs on; nullptr for the client.
    DeviceBase* device = nullptr;
    // A pending receive with a manager fails with Cancelled when the manager
    // is cancelled (and its key becomes free again).
    CancellationManager* cancellation_manager = nullptr;
  };

  // A key split into its parts. The string_views point into the key's own
  // copy, so a ParsedKey stays valid as long as it lives; copying is deep.
  class ParsedKey {
   public:
    ParsedKey() = default;
    ParsedKey(const ParsedKey& other) { *this = other; }
    ParsedKey& operator=(const ParsedKey& other);

    absl::string_view src_device;
    ParsedDeviceName src;
    uint64_t src_incarnation = 0;
    absl::string_view dst_device;
    ParsedDeviceName dst;
    absl::string_view edge_name;
    FrameAndIter frame_iter;

    absl::string_view FullKey() const { return buf_; }
    // A hash of FullKey(), computed once by ParseKey; stable in one process.
    uint64_t hash() const { return hash_; }

   private:
    friend class Rendezvous;
    std::string buf_;
    uint64_t hash_ = 0;
  };

  // The key of tensor `name` going from `src_device` (with its incarnation)
  // to `dst_device` in loop frame/iteration `frame_iter`.
  static std::string CreateKey(absl::string_view src_device, uint64_t src_incarnation,
                               absl::string_view dst_device, absl::string_view name,
                               const FrameAndIter& frame_iter);

  // Splits a key made by CreateKey. InvalidArgument naming the key when it
  // does not have five parts, a device name is malformed, the incarnation is
  // not hex, the tensor name is empty or the frame/iteration is not "F:I".
  static absl::Status ParseKey(absl::string_view key, ParsedKey* out);

  // Invoked once when the tensor is available or the receive failed. The
  // sender's args, the receiver's args, the value and its deadness follow
  // the status (the value is empty when the status is not OK).
  using DoneCallback =
      std::function<void(const absl::Status& status, const Args& send_args, const Args& recv_args,
                         const Tensor& value, bool is_dead)>;

  // Leaves `value` (dead iff `is_dead`) under `key`. Never blocks. Aborted
  // when `key` was already sent and not yet received; the abort status after
  // StartAbort.
  virtual absl::Status Send(const ParsedKey& key, const Args& args, const Tensor& value,
                            bool is_dead) = 0;

  // Calls `done` once the value of `key` is available (possibly right away,
  // on this thread) or the receive fails: Aborted for a second pending
  // receive of `key`, the abort status after StartAbort, Cancelled when
  // args.cancellation_manager is cancelled first. `done` never runs under an
  // internal lock, so it may call back into the rendezvous.
  virtual void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) = 0;

  // Blocking wrapper around RecvAsync. With timeout_ms > 0 it gives up after
  // that long with DeadlineExceeded; the abandoned receive still consumes the
  // value if it arrives later.
  absl::Status Recv(const ParsedKey& key, const Args& args, Tensor* value, bool* is_dead,
                    int64_t timeout_ms = 0);

  // The keys of the receives now waiting for a value that was not sent yet
  // — by this process's consumers, not by peers asking for values produced
  // here — in no particular order. For the stuck-step report
  // (DescribePendingReceives).
  virtual std::vector<std::string> PendingReceives() const = 0;

  // Fails every pending and future Send/RecvAsync with `status`; the first
  // status wins and later calls change nothing. Does not wait for callbacks
  // already running. REQUIRES: !status.ok().
  virtual void StartAbort(const absl::Status& status) = 0;

 protected:
  ~Rendezvous() override = default;
};

// What a step whose receives of `keys` (Rendezvous::PendingReceives) have
// not been answered waits for, for a log line or an error message:
// "waiting for tensor 'x' from /job:worker/replica:0/task:1/device:CPU:0
// (to ...), tensor 'y' from ..." — sorted, at most eight named, then how
// many more; "waiting for no tensor (a kernel is still running)" when
// `keys` is empty.
std::string DescribePendingReceives(std::vector<std::string> keys);

// The error for a client's fetch of `name` that arrived dead (the branch of
// a conditional not taken): InvalidArgument naming the tensor.
absl::Status DeadFetchError(absl::string_view name);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_RENDEZVOUS_H_
