// A keyed receive's answer on the producer's side (side_channel_keyed_answer.h),
// on a real loopback TCP connection: a reply the socket takes goes whole from
// the answering thread; one it cannot take is handed back to the
// connection's thread and finished there; an error is handed back with
// nothing written; nothing is written once the connection has given up.
#include "distflow/distributed_runtime/rpc/side_channel_keyed_answer.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "gtest/gtest.h"
#include "loopback_socket.h"

namespace distflow {
namespace {

// Caps `fd`'s send buffer at 64 KiB, so that a write of a few megabytes
// cannot go at once whatever the machine's TCP settings.
void SmallSendBuffer(int fd) {
  const int bytes = 64 << 10;
  EXPECT_EQ(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)), 0);
}

// A connection whose writing end is the producer's: non-blocking, with an
// eventfd beside it for hand-backs.
struct ProducerEnd {
  ProducerEnd() : wake(EventFd::Make()) {
    EXPECT_TRUE(PrepareSideChannelSocket(pair.writer));
    SmallSendBuffer(pair.writer);
  }
  bool Woken() const {
    pollfd pfd{wake->fd(), POLLIN, 0};
    return poll(&pfd, 1, 0) == 1;
  }
  bool ReaderHasBytes() const {
    pollfd pfd{pair.reader, POLLIN, 0};
    return poll(&pfd, 1, 50) == 1;
  }
  // Reads a reply's header and its `n` bytes that follow.
  bool ReadReply(SideChannelReplyHeader* header, std::string* bytes, size_t n) {
    std::array<char, kSideChannelReplyHeaderBytes> head;
    size_t moved = 0;
    int error = 0;
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    if (ReadFully(pair.reader, head.data(), head.size(), deadline, absl::Seconds(20), &moved,
                  &error) != IoOutcome::kDone ||
        !DecodeSideChannelReplyHeader(head, header)) {
      return false;
    }
    bytes->assign(n, '\0');
    return ReadFully(pair.reader, bytes->data(), n, deadline, absl::Seconds(20), &moved, &error) ==
           IoOutcome::kDone;
  }

  test::TcpPair pair;
  const std::shared_ptr<EventFd> wake;
  std::atomic<int64_t> served{0};
};

grpc::ByteBuffer BufferOf(const std::string& bytes) {
  grpc::Slice s(bytes);
  return grpc::ByteBuffer(&s, 1);
}

TEST(KeyedAnswerTest, ReplyTheSocketTakesGoesWholeFromTheAnsweringThread) {
  ProducerEnd end;
  KeyedAnswer answer(end.pair.writer, end.wake, &end.served);
  EXPECT_EQ(answer.state(), KeyedAnswer::State::kWaiting);
  std::thread source([&] { answer.Done(absl::OkStatus(), BufferOf("response"), Tensor()); });
  source.join();
  EXPECT_EQ(answer.state(), KeyedAnswer::State::kSent);
  EXPECT_EQ(end.served.load(), 1);
  EXPECT_FALSE(end.Woken());  // the connection's thread has nothing to do
  SideChannelReplyHeader header;
  std::string bytes;
  ASSERT_TRUE(end.ReadReply(&header, &bytes, 8));
  EXPECT_EQ(header.code, absl::StatusCode::kOk);
  EXPECT_EQ(header.payload_bytes, 8u);
  EXPECT_EQ(bytes, "response");
}

TEST(KeyedAnswerTest, ReplyTheSocketCannotTakeIsHandedBackAndFinished) {
  ProducerEnd end;
  KeyedAnswer answer(end.pair.writer, end.wake, &end.served);
  // 32 MiB: far more than a loopback socket's buffers hold.
  Tensor follows(DT_FLOAT, TensorShape({8 << 20}));
  for (int64_t i = 0; i < follows.NumElements(); ++i) {
    follows.flat<float>()[i] = static_cast<float>(i % 1000);
  }
  std::thread source([&] { answer.Done(absl::OkStatus(), BufferOf("head"), follows); });
  source.join();
  ASSERT_EQ(answer.state(), KeyedAnswer::State::kHandedBack);
  EXPECT_TRUE(end.Woken());
  EXPECT_TRUE(answer.status().ok());
  EXPECT_EQ(end.served.load(), 1);
  SideChannelReplyHeader header;
  std::string bytes;
  bool read = false;
  std::thread receiver([&] { read = end.ReadReply(&header, &bytes, 4 + follows.TotalBytes()); });
  EXPECT_TRUE(answer.SendRest(absl::Seconds(20)));
  receiver.join();
  ASSERT_TRUE(read);
  EXPECT_EQ(header.payload_bytes, 4u);
  EXPECT_EQ(bytes.substr(0, 4), "head");
  EXPECT_EQ(std::memcmp(bytes.data() + 4, follows.raw_data(), follows.TotalBytes()), 0);
}

TEST(KeyedAnswerTest, ErrorIsHandedBackWithNothingWritten) {
  ProducerEnd end;
  KeyedAnswer answer(end.pair.writer, end.wake, &end.served);
  answer.Done(absl::NotFoundError("no such tensor"), grpc::ByteBuffer(), Tensor());
  EXPECT_EQ(answer.state(), KeyedAnswer::State::kHandedBack);
  EXPECT_TRUE(end.Woken());
  EXPECT_EQ(answer.status(), absl::NotFoundError("no such tensor"));
  EXPECT_EQ(end.served.load(), 0);
  EXPECT_FALSE(end.ReaderHasBytes());
}

TEST(KeyedAnswerTest, NothingIsWrittenOnceAbandoned) {
  ProducerEnd end;
  KeyedAnswer answer(end.pair.writer, end.wake, &end.served);
  bool cancelled = false;
  ASSERT_TRUE(answer.cm()->RegisterCallback(answer.cm()->get_cancellation_token(),
                                            [&] { cancelled = true; }));
  answer.Abandon();
  EXPECT_TRUE(cancelled);
  answer.Done(absl::OkStatus(), BufferOf("late"), Tensor());
  EXPECT_EQ(answer.state(), KeyedAnswer::State::kWaiting);
  EXPECT_EQ(end.served.load(), 0);
  EXPECT_FALSE(end.Woken());
  EXPECT_FALSE(end.ReaderHasBytes());
}

TEST(SideChannelWireTest, GatheredWriteSendsEveryPieceInOrderFromAnOffset) {
  test::TcpPair pair;
  ASSERT_TRUE(PrepareSideChannelSocket(pair.writer));
  SmallSendBuffer(pair.writer);
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + 1);
  const std::string a = "abc", empty, b = "defgh";
  WirePieces pieces = {absl::MakeConstSpan(a), absl::MakeConstSpan(empty), absl::MakeConstSpan(b),
                       absl::MakeConstSpan(big)};
  // The socket takes part now and the rest must wait.
  size_t moved = 0;
  int error = 0;
  ASSERT_EQ(WriteGatheredNow(pair.writer, pieces, 2, &moved, &error), IoOutcome::kDeadline);
  ASSERT_GT(moved, 0u);
  ASSERT_LT(moved, 1 + b.size() + big.size());
  std::string got;
  std::thread receiver([&] {
    got.assign(1 + b.size() + big.size(), '\0');
    size_t n = 0;
    int e = 0;
    ReadFully(pair.reader, got.data(), got.size(), absl::Now() + absl::Seconds(20),
              absl::Seconds(20), &n, &e);
  });
  size_t rest = 0;
  EXPECT_EQ(WriteGatheredFully(pair.writer, pieces, 2 + moved, absl::Now() + absl::Seconds(20),
                               absl::Seconds(20), &rest, &error),
            IoOutcome::kDone);
  receiver.join();
  EXPECT_EQ(moved + rest, 1 + b.size() + big.size());
  EXPECT_TRUE(got == "c" + b + big);
}

}  // namespace
}  // namespace distflow
