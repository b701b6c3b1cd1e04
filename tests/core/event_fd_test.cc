// EventFd: a signal makes it readable until drained, signals add up to one
// wake-up, and a holder may signal after the one that polled has let go.
#include "distflow/core/event_fd.h"

#include <poll.h>

#include <memory>

#include "gtest/gtest.h"

namespace distflow {
namespace {

bool Readable(const EventFd& e) {
  pollfd pfd{e.fd(), POLLIN, 0};
  return poll(&pfd, 1, 0) == 1;
}

TEST(EventFdTest, SignalWakesUntilDrained) {
  std::shared_ptr<EventFd> e = EventFd::Make();
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(Readable(*e));
  e->Signal();
  e->Signal();
  EXPECT_TRUE(Readable(*e));
  e->Drain();
  EXPECT_FALSE(Readable(*e));
  e->Drain();  // nothing to take: no wait, no error
  EXPECT_FALSE(Readable(*e));
}

TEST(EventFdTest, ALateSignallerKeepsTheDescriptorOpen) {
  std::shared_ptr<EventFd> poller = EventFd::Make();
  ASSERT_NE(poller, nullptr);
  std::shared_ptr<EventFd> signaller = poller;
  const int fd = poller->fd();
  poller.reset();
  signaller->Signal();
  EXPECT_EQ(signaller->fd(), fd);
  EXPECT_TRUE(Readable(*signaller));
}

}  // namespace
}  // namespace distflow
