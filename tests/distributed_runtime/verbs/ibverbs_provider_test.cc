// The libibverbs provider where it can run: with an RDMA device, two
// queue pairs of this process connected back to back move a
// write-with-immediate; without one (these machines), the provider reports
// NotFound and the test says so. There is no fake device to run it
// against: the protocol above it is exercised over the shared-memory
// provider (rdma_channel_test.cc).
#include "distflow/distributed_runtime/verbs/ibverbs_provider.h"

#include <cstring>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

TEST(IbverbsProviderTest, LoopbackWriteWithImmediate) {
  absl::StatusOr<std::unique_ptr<VerbsProvider>> provider = NewIbverbsProvider();
  if (absl::IsUnimplemented(provider.status()) || absl::IsNotFound(provider.status())) {
    GTEST_SKIP() << provider.status();
  }
  ASSERT_TRUE(provider.ok()) << provider.status();
  absl::Notification got;
  uint32_t imm = 0;
  auto a = (*provider)->CreateConnection([](const Completion&) {});
  auto b = (*provider)->CreateConnection([&](const Completion& c) {
    if (c.kind == Completion::Kind::kRecvImm) {
      imm = c.imm;
      got.Notify();
    }
  });
  ASSERT_TRUE(a.ok() && b.ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  ASSERT_TRUE((*a)->Connect((*b)->endpoint(), deadline).ok());
  ASSERT_TRUE((*b)->Connect((*a)->endpoint(), deadline).ok());
  auto target = (*provider)->RegisterMemory(4096);
  ASSERT_TRUE(target.ok());
  ASSERT_TRUE((*b)->PostRecv(1).ok());
  auto remote = (*a)->AttachRemote((*target)->info());
  ASSERT_TRUE(remote.ok());
  const char text[] = "over rdma";
  const absl::Span<const char> src[] = {{text, sizeof(text)}};
  ASSERT_TRUE((*a)->PostWriteWithImm(src, **remote, 64, 77, 1).ok());
  ASSERT_TRUE(got.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(imm, 77u);
  EXPECT_STREQ((*target)->data() + 64, text);
}

}  // namespace
}  // namespace distflow
