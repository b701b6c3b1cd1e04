#include "distflow/core/event_fd.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace distflow {

std::shared_ptr<EventFd> EventFd::Make() {
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return nullptr;
  return std::shared_ptr<EventFd>(new EventFd(fd));
}

EventFd::~EventFd() { close(fd_); }

void EventFd::Signal() {
  const uint64_t one = 1;
  // Fails only when the counter is at its maximum: it is readable then.
  (void)!write(fd_, &one, sizeof(one));
}

void EventFd::Drain() {
  uint64_t count = 0;
  (void)!read(fd_, &count, sizeof(count));
}

}  // namespace distflow
