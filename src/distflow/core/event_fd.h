// An eventfd (Linux): Signal() from any thread makes fd() readable for
// whoever polls it, until Drain() takes the signals. Holders share it
// (std::shared_ptr) when one that signals may outlive the one that polls:
// the descriptor closes with the last holder, so a late Signal() never
// writes to a number the process has since given to another file.
// Thread-safe.
#ifndef DISTFLOW_CORE_EVENT_FD_H_
#define DISTFLOW_CORE_EVENT_FD_H_

#include <memory>

namespace distflow {

class EventFd {
 public:
  // Non-blocking and close-on-exec; null (errno set) when the kernel gives
  // none.
  static std::shared_ptr<EventFd> Make();
  ~EventFd();
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  int fd() const { return fd_; }
  void Signal();
  void Drain();

 private:
  explicit EventFd(int fd) : fd_(fd) {}
  const int fd_;
};

}  // namespace distflow

#endif  // DISTFLOW_CORE_EVENT_FD_H_
