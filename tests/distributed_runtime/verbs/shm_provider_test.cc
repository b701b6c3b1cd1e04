// The shared-memory provider on its own: a write-with-immediate lands in
// the peer's region, a region that is not the one advertised is refused,
// writes that do not fit are refused, and a peer that goes away is an
// error completion naming its pid, and local dialers that never say which
// connection they are for do not hold up the one that does.
#include "distflow/distributed_runtime/verbs/shm_provider.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

struct Pair {
  std::unique_ptr<ShmProvider> pa, pb;
  std::unique_ptr<VerbsConnection> a, b;
  absl::Notification recv, error;
  uint32_t imm = 0;
  absl::Status status;

  bool Connect(const std::function<void()>& before_dial = nullptr) {
    pa = *ShmProvider::Create();
    pb = *ShmProvider::Create();
    a = *pa->CreateConnection([](const Completion&) {});
    b = *pb->CreateConnection([this](const Completion& c) {
      if (c.kind == Completion::Kind::kRecvImm) {
        imm = c.imm;
        recv.Notify();
      } else if (c.kind == Completion::Kind::kError) {
        status = c.status;
        error.Notify();
      }
    });
    if (before_dial) before_dial();
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    // b asks, a answers by dialling b; b then waits for that dial.
    return a->Connect(b->endpoint(), deadline).ok() && b->Connect(a->endpoint(), deadline).ok();
  }
};

TEST(ShmProviderTest, WriteWithImmediateLands) {
  Pair p;
  ASSERT_TRUE(p.Connect());
  EXPECT_TRUE(ShmProvider::IsOnThisHost(p.a->endpoint()));
  auto region = *p.pb->RegisterMemory(100);
  EXPECT_GE(region->size(), 100u);
  ASSERT_TRUE(p.b->PostRecv(1).ok());
  auto remote = *p.a->AttachRemote(region->info());
  const std::string head = "head:", body = "body";
  const absl::Span<const char> src[] = {{head.data(), head.size()}, {body.data(), body.size()}};
  ASSERT_TRUE(p.a->PostWriteWithImm(src, *remote, 10, 5, 1).ok());
  ASSERT_TRUE(p.recv.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(p.imm, 5u);
  EXPECT_EQ(std::string(region->data() + 10, 9), "head:body");
}

TEST(ShmProviderTest, BadRegionsAndOversizedWritesAreRefused) {
  Pair p;
  ASSERT_TRUE(p.Connect());
  auto region = *p.pb->RegisterMemory(4096);
  RemoteRegionInfo forged = region->info();
  forged.rkey += uint64_t{1} << 32;  // another generation: a recycled fd
  auto bad = p.a->AttachRemote(forged);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  auto remote = *p.a->AttachRemote(region->info());
  std::string big(5000, 'x');
  const absl::Span<const char> src[] = {{big.data(), big.size()}};
  absl::Status s = p.a->PostWriteWithImm(src, *remote, 0, 1, 1);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = p.a->PostWriteWithImm(src, *remote, UINT64_MAX - 10, 1, 1);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

TEST(ShmProviderTest, PeerGoneIsAnErrorCompletion) {
  Pair p;
  ASSERT_TRUE(p.Connect());
  p.a.reset();
  ASSERT_TRUE(p.error.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsUnavailable(p.status)) << p.status;
  EXPECT_THAT(p.status.message(), HasSubstr(absl::StrCat("pid ", getpid())));
}

TEST(ShmProviderTest, WriteWithNoReceivePostedIsAnError) {
  Pair p;
  ASSERT_TRUE(p.Connect());
  auto region = *p.pb->RegisterMemory(64);
  auto remote = *p.a->AttachRemote(region->info());
  const absl::Span<const char> src[] = {{"x", 1}};
  ASSERT_TRUE(p.a->PostWriteWithImm(src, *remote, 0, 1, 1).ok());
  ASSERT_TRUE(p.error.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsDataLoss(p.status)) << p.status;
}

// Twenty local processes' worth of dials to b's socket that never send a
// hello (each used to hold the single accept thread for 5 s) do not keep
// a's dial from being accepted within the 10 s connect deadline.
TEST(ShmProviderTest, SilentDialersDoNotHoldUpTheAcceptor) {
  Pair p;
  std::vector<int> silent;
  ASSERT_TRUE(p.Connect([&] {
    const std::vector<std::string> parts = absl::StrSplit(p.b->endpoint(), ';');
    ASSERT_EQ(parts.size(), 5u);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, parts[3].data(), parts[3].size());
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + parts[3].size());
    for (int i = 0; i < 20; ++i) {
      const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      ASSERT_GE(fd, 0);
      silent.push_back(fd);
      ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << i;
    }
  }));
  auto region = *p.pb->RegisterMemory(64);
  ASSERT_TRUE(p.b->PostRecv(1).ok());
  auto remote = *p.a->AttachRemote(region->info());
  const absl::Span<const char> src[] = {{"x", 1}};
  ASSERT_TRUE(p.a->PostWriteWithImm(src, *remote, 0, 9, 1).ok());
  ASSERT_TRUE(p.recv.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(p.imm, 9u);
  for (int fd : silent) close(fd);
}

}  // namespace
}  // namespace distflow
