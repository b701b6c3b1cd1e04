// The producer's end of the tensor side channel (wire format in
// side_channel_wire.h): a TCP listener on an ephemeral port of the host the
// gRPC server binds, serving the tensors its ticket table holds. The gRPC
// RecvTensor handler calls Offer() for a large tensor and sends the ticket
// instead of the bytes; whoever presents the ticket here gets the bytes,
// sent straight from the tensor's buffer.
//
// Guarantees: a connection that sends no well-formed request within
// `first_request_timeout` (or within `idle_timeout` between fetches) is
// closed; a bad magic closes it with nothing sent; an unknown, used or
// lapsed ticket gets a NotFound reply and the connection is closed; a
// receiver that takes nothing for `stall_timeout` is dropped. At most
// `max_connections` connections are served at once. A connection counts as
// authenticated once it has presented a valid ticket; when the slots are
// full, a new connection takes the slot of the oldest one that has not (so
// strangers that connect and say nothing cannot keep a receiver out), and
// is closed on accept only when every slot is authenticated. Nothing a peer
// sends can crash the process or hold a thread without a bound.
//
// Keyed receives (side_channel_wire.h) are answered by the keyed source
// set with SetKeyedSource. The reply goes from the thread the source answers
// on, as much as the socket takes at once (side_channel_keyed_answer.h);
// the connection's thread waits for the answer, and finishes a reply the
// socket did not take, until the request's timeout passes, the receiver
// hangs up or the server stops (the source's CancellationManager is then
// cancelled). Only a connection whose hello carried the server's token may
// ask; it then counts as authenticated.
//
// Pushes (side_channel_wire.h) go to the push sink set with SetPushSink,
// on the connection's thread; only a connection whose hello carried the
// token may push. A hello that names the sender's own side channel port
// teaches the route listener (SetRouteListener) where the task that a keyed
// receive on that connection is for listens: its host as the connection
// comes from, and that port.
//
// The side channel is plaintext: a server speaking TLS must not start one
// (GrpcServer does not), or tensors would leave the process unencrypted.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_SERVER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_SERVER_H_

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/core/event_fd.h"
#include "distflow/distributed_runtime/rpc/side_channel_keyed_answer.h"
#include "distflow/distributed_runtime/rpc/side_channel_tickets.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor.h"
#include "grpcpp/support/byte_buffer.h"

namespace distflow {

class SideChannelServer {
 public:
  struct Options {
    // The host to listen on, as the gRPC server's ("0.0.0.0", "::" or
    // empty: every interface).
    std::string host;
    // Smaller tensors are not offered: gRPC carries them as fast.
    uint64_t min_bytes = 512 << 10;
    SideChannelTickets::Limits tickets;
    int max_connections = 64;
    // A receiver sends its request as soon as it connects; on a lossy
    // network its first segment may need a few retransmissions (200 ms,
    // then 400, 800, ...). A silent stranger holding a slot meanwhile
    // gives way to a receiver when the slots are full.
    absl::Duration first_request_timeout = absl::Seconds(5);
    absl::Duration idle_timeout = absl::Seconds(30);
    absl::Duration stall_timeout = absl::Seconds(30);
    // The token a hello must carry (empty: the cluster has none).
    std::string token;
  };

  // Answers a keyed receive: `done` runs exactly once, on any thread, with
  // the RecvTensorResponse bytes to send, and the tensor whose bytes follow
  // them when that response says so (side_channel_wire.h); or an error.
  // `cm` stays valid until then.
  using KeyedDone =
      std::function<void(const absl::Status&, grpc::ByteBuffer reply, Tensor follows)>;
  using KeyedSource = std::function<void(int64_t step_id, const std::string& key,
                                         CancellationManager* cm, KeyedDone done)>;

  // Takes a pushed tensor: the RecvTensorResponse bytes a producer sent,
  // unread, for the rendezvous key of step `step_id`. Runs on the
  // connection's thread and may run the receiving step's kernels there.
  using PushSink =
      std::function<void(int64_t step_id, const std::string& key, absl::string_view payload)>;
  // Hears that the task a rendezvous key's receiving device is on listens
  // at host:port with its own side channel.
  using RouteListener =
      std::function<void(const std::string& key, const std::string& host, int port)>;

  // Listens on an ephemeral port of options.host. Unavailable naming the
  // host when it cannot.
  static absl::StatusOr<std::unique_ptr<SideChannelServer>> Start(Options options);
  // Stops and joins every thread.
  ~SideChannelServer();
  SideChannelServer(const SideChannelServer&) = delete;
  SideChannelServer& operator=(const SideChannelServer&) = delete;

  // Closes the listener and every connection (transfers in flight fail on
  // their receivers' side). Later Offers decline. Idempotent.
  void Stop();

  int port() const { return port_; }

  // Keyed receives are refused (Unimplemented) until this is set.
  void SetKeyedSource(KeyedSource source) ABSL_LOCKS_EXCLUDED(mu_);
  // Pushes are read and dropped until this is set.
  void SetPushSink(PushSink sink) ABSL_LOCKS_EXCLUDED(mu_);
  void SetRouteListener(RouteListener listener) ABSL_LOCKS_EXCLUDED(mu_);

  // A ticket under which `tensor`'s bytes wait to be fetched; nothing (send
  // the bytes over gRPC then) when the tensor is smaller than min_bytes or
  // its elements have no fixed size (strings), the ticket table is full or
  // the server is stopped.
  std::optional<SideChannelTicket> Offer(const Tensor& tensor);

  SideChannelTickets& tickets() { return tickets_; }
  // Payloads sent by ticket since Start (counted as the reply starts).
  int64_t fetches_served() const { return fetches_served_.load(); }
  // Keyed receives answered with a tensor since Start (counted as the
  // reply starts).
  int64_t keyed_served() const { return keyed_served_.load(); }
  // Pushes read in full since Start (whether the sink kept them or not).
  int64_t pushes_received() const { return pushes_received_.load(); }

 private:
  struct Connection {
    int fd = -1;                    // closed by its thread, under mu_
    std::shared_ptr<EventFd> wake;  // keyed answers signal it; shared with them
    std::thread thread;
    bool done = false;
    bool authenticated = false;  // a valid ticket came on it
    bool evicted = false;        // shut down to free its slot
    int sender_port = 0;         // its hello's; touched by its thread only
    bool route_told = false;     // the route listener heard of it
  };

  explicit SideChannelServer(Options options)
      : options_(std::move(options)), tickets_(options_.tickets) {}
  void AcceptLoop();
  void Serve(Connection* c);
  // One request of each kind; false when the connection must close.
  bool ServeTicket(Connection* c, const SideChannelTicket& ticket);
  bool ServeHello(Connection* c, uint32_t token_bytes, bool* greeted);
  bool ServeKeyed(Connection* c, const SideChannelRequestHead& head, bool greeted);
  // Waits until a keyed receive's answer has gone or the connection must
  // close (false), cancelling the source past the request's timeout.
  bool AwaitKeyedAnswer(Connection* c, KeyedAnswer* answer, const SideChannelRequestHead& head,
                        const std::string& key);
  bool ServePush(Connection* c, const SideChannelRequestHead& head, bool greeted);
  // Tells the route listener once per connection where the task `key` is
  // received on listens.
  void TellRoute(Connection* c, const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);
  void MarkAuthenticated(Connection* c) ABSL_LOCKS_EXCLUDED(mu_);
  // Joins the connection threads that have finished.
  void Reap() ABSL_LOCKS_EXCLUDED(mu_);
  // Shuts down the oldest connection that is not authenticated (its thread
  // then ends and frees its slot); false when every one is.
  bool EvictOldestUnauthenticatedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  SideChannelTickets tickets_;
  int listen_fd_ = -1;
  std::shared_ptr<EventFd> wake_;  // ends AcceptLoop
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> fetches_served_{0};
  std::atomic<int64_t> keyed_served_{0};
  std::atomic<int64_t> pushes_received_{0};
  absl::Mutex mu_;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
  // Connections whose threads run; those evicted and not yet ended are not
  // counted against max_connections.
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  int evicted_ ABSL_GUARDED_BY(mu_) = 0;
  KeyedSource keyed_source_ ABSL_GUARDED_BY(mu_);
  PushSink push_sink_ ABSL_GUARDED_BY(mu_);
  RouteListener route_listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_SERVER_H_
