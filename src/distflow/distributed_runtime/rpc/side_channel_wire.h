// The tensor side channel's wire format and the socket I/O both of its ends
// share. The side channel moves a large RecvTensor payload over a plain TCP
// stream beside gRPC: the producer's RecvTensor reply carries a ticket
// (side_channel_server.h), the receiver (side_channel_client.h) presents it
// on a connection to the producer and reads the tensor's bytes. One fetch is
// one request and one reply; a connection carries fetches one after another.
//
//   request = "dfscREQ1" | ticket (16 bytes)                       24 bytes
//   reply   = "dfscREP1" | ticket echo (16) | code (u32) |
//             message length (u32, <= kSideChannelMaxMessage) |
//             payload length (u64)                                 40 bytes
//             then the message, then the payload (code 0 only)
//
// A receiver that knows the producer's side channel port (a RecvTensor
// reply names it) may also ask for a tensor by its rendezvous key, with no
// gRPC call at all: a keyed receive. Once per connection it first proves
// membership of the cluster with the token its gRPC calls carry
// (grpc_auth.h; empty when the cluster has none):
//
//   hello   = "dfscHEL1" | token length (u32, <= kSideChannelMaxToken) |
//             the sender's own side channel port (u32, 0: none) |
//             8 zero bytes                                         24 bytes
//             then the token
//   keyed   = "dfscRCV1" | step id (i64) | key length (u32, 1 to
//             kSideChannelMaxKey) | timeout in ms (u32, 0: none)   24 bytes
//             then the rendezvous key
//
// The producer answers a keyed request once the tensor is there, with a
// reply whose ticket echo is all zero and whose payload is the
// RecvTensorResponse gRPC would have carried. For a tensor of fixed-size
// elements and at least kSideChannelFollowBytes, that response carries only
// dtype and shape and says the bytes follow (no ticket): they come right
// after it, read straight into the tensor. A keyed request without a good
// hello before it is answered Unauthenticated.
//
// A producer that knows where a receiver's side channel listens (the port
// its hello named) may push it a small tensor before anyone asks, on a
// connection of its own that has said hello:
//
//   push    = "dfscPSH1" | step id (i64) | key length (u32, 1 to
//             kSideChannelMaxKey) | payload length (u32, <=
//             kSideChannelMaxPush)                                 24 bytes
//             then the rendezvous key, then the payload: the
//             RecvTensorResponse a keyed reply would carry
//
// A push gets no reply. It is an offer the receiver may drop: whoever
// needs the tensor and has not got it asks for it as above.
//
// Integers are little-endian; `code` is an absl::StatusCode. After a reply
// with a nonzero code the producer closes the connection.
//
// The I/O functions work on non-blocking sockets and never wait past their
// deadline, nor longer than their stall time without moving a byte; a
// shutdown() of the socket from another thread wakes them. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_WIRE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_WIRE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace distflow {

// 128 bits from the kernel's CSPRNG: whoever holds one may fetch one tensor.
using SideChannelTicket = std::array<uint8_t, 16>;

inline constexpr size_t kSideChannelRequestBytes = 24;
// The longest token a hello may carry, and rendezvous key a keyed request.
inline constexpr uint32_t kSideChannelMaxToken = 4096;
inline constexpr uint32_t kSideChannelMaxKey = 64 << 10;
// The longest payload a push may carry (its tensor is a little shorter).
inline constexpr uint32_t kSideChannelMaxPush = 80 << 10;
// The smallest tensor a keyed reply sends after its response.
inline constexpr uint64_t kSideChannelFollowBytes = 64 << 10;
inline constexpr size_t kSideChannelReplyHeaderBytes = 40;
// The longest error message a reply may carry.
inline constexpr uint32_t kSideChannelMaxMessage = 1024;

// A fresh ticket; Internal when the kernel gives no random bytes.
absl::StatusOr<SideChannelTicket> NewSideChannelTicket();
// The ticket as it travels in RecvTensorSideChannel.ticket, and back;
// false when `bytes` is not 16 bytes long.
std::string TicketBytes(const SideChannelTicket& ticket);
bool TicketFromBytes(const std::string& bytes, SideChannelTicket* ticket);

struct SideChannelReplyHeader {
  SideChannelTicket ticket{};
  absl::StatusCode code = absl::StatusCode::kOk;
  uint32_t message_bytes = 0;
  uint64_t payload_bytes = 0;
};

void EncodeSideChannelRequest(const SideChannelTicket& ticket,
                              std::array<char, kSideChannelRequestBytes>* out);
// False when the bytes do not start with the request magic.
bool DecodeSideChannelRequest(const std::array<char, kSideChannelRequestBytes>& in,
                              SideChannelTicket* ticket);
// A request's 24-byte head, any kind.
struct SideChannelRequestHead {
  enum class Kind { kTicket, kHello, kKeyed, kPush };
  Kind kind = Kind::kTicket;
  SideChannelTicket ticket{};  // kTicket
  int64_t step_id = 0;         // kKeyed, kPush
  uint32_t timeout_ms = 0;     // kKeyed
  int sender_port = 0;         // kHello
  uint32_t payload_bytes = 0;  // kPush: they follow the key
  // kHello: the token's length; kKeyed, kPush: the key's. That many bytes
  // follow.
  uint32_t length = 0;
};
void EncodeSideChannelHello(uint32_t token_bytes, int sender_port,
                            std::array<char, kSideChannelRequestBytes>* out);
void EncodeSideChannelPush(int64_t step_id, uint32_t key_bytes, uint32_t payload_bytes,
                           std::array<char, kSideChannelRequestBytes>* out);
void EncodeSideChannelKeyed(int64_t step_id, uint32_t key_bytes, uint32_t timeout_ms,
                            std::array<char, kSideChannelRequestBytes>* out);
// False when the magic is none of the four, a length is over its bound or a
// port is not one.
bool DecodeSideChannelRequestHead(const std::array<char, kSideChannelRequestBytes>& in,
                                  SideChannelRequestHead* head);

void EncodeSideChannelReplyHeader(const SideChannelReplyHeader& header,
                                  std::array<char, kSideChannelReplyHeaderBytes>* out);
// False when the magic is wrong, the code is not a status code or the
// message is longer than kSideChannelMaxMessage.
bool DecodeSideChannelReplyHeader(const std::array<char, kSideChannelReplyHeaderBytes>& in,
                                  SideChannelReplyHeader* header);

// How a socket read or write ended.
enum class IoOutcome {
  kDone,      // every byte moved
  kClosed,    // the peer closed or reset the connection, or it was shut down
  kDeadline,  // `deadline` passed
  kStalled,   // `stall` passed without a byte moving
  kError,     // another socket error (errno in *error)
};

// Move exactly `n` bytes; *moved says how many did. `error` gets errno for
// kError (and for kClosed when the connection was reset).
IoOutcome ReadFully(int fd, void* buf, size_t n, absl::Time deadline, absl::Duration stall,
                    size_t* moved, int* error);
IoOutcome WriteFully(int fd, const void* buf, size_t n, absl::Time deadline, absl::Duration stall,
                     size_t* moved, int* error);
// Sets the socket's receive low-water mark (SO_RCVLOWAT): poll and epoll
// call it readable once `bytes` are in (or the receive window is nearly
// full, or it closed). False (errno set) on failure.
bool SetReadLowWater(int fd, int bytes);
// ReadFully for a large read: while it waits, the socket's low-water mark
// (SO_RCVLOWAT) is what is still to come, up to `max_low_water`, so the
// kernel wakes it once that much is in (or the receive window is nearly
// full) rather than once per segment. The mark is back at 1 on return.
IoOutcome ReadFullyWokenLate(int fd, void* buf, size_t n, absl::Time deadline, absl::Duration stall,
                             int max_low_water, size_t* moved, int* error);

// Bytes that go in order, each from where it lies (one gathered write).
using WirePieces = absl::InlinedVector<absl::Span<const char>, 4>;
// Sends `pieces` from their byte `from` on, as much as the socket takes
// without waiting; *moved says how many went. kDone when every byte went,
// kDeadline when the rest must wait for room; otherwise as WriteFully.
IoOutcome WriteGatheredNow(int fd, const WirePieces& pieces, size_t from, size_t* moved,
                           int* error);
// WriteFully for `pieces` from their byte `from` on.
IoOutcome WriteGatheredFully(int fd, const WirePieces& pieces, size_t from, absl::Time deadline,
                             absl::Duration stall, size_t* moved, int* error);

// TCP_NODELAY and non-blocking mode; false (errno set) on failure.
bool PrepareSideChannelSocket(int fd);

// A connected socket to host:port, prepared as above, or -1 with *why set
// when no address of `host` accepts a connection by `give_up`.
int ConnectTcp(const std::string& host, int port, absl::Time give_up, std::string* why);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_WIRE_H_
