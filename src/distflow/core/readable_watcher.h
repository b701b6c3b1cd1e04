// ReadableWatcher: waits, on one thread of its own, for many descriptors at
// once to become readable, each until its own deadline, and runs one
// callback per watch. For replies that a caller sent a request for and need
// not hold a thread while waiting: one epoll_wait serves them all, and the
// thread wakes only when a reply lands or a deadline passes.
//
// Guarantees: each accepted Watch's callback runs exactly once, with
//   kReadable  on the watcher's thread, once the descriptor has bytes, an end
//              of file or an error to read (so a read will not block for the
//              first byte);
//   kDeadline  on the watcher's thread, once `deadline` passed first;
//   kStopped   on the thread that calls Stop, when the watcher stops first.
// The descriptor is no longer watched when the callback runs, so the
// callback may watch it again. Callbacks run one at a time and should be
// short: a long one delays the others' (a reply's bytes can be read there
// when they are all in; anything that may block goes to another thread).
// The thread starts with the first Watch. Thread-safe; Stop (or the
// destructor) may run in a callback.
#ifndef DISTFLOW_CORE_READABLE_WATCHER_H_
#define DISTFLOW_CORE_READABLE_WATCHER_H_

#include <functional>
#include <memory>

#include "absl/time/time.h"

namespace distflow {

class ReadableWatcher {
 public:
  enum class Event { kReadable, kDeadline, kStopped };
  using Callback = std::function<void(Event)>;

  ReadableWatcher();
  // Stop.
  ~ReadableWatcher();
  ReadableWatcher(const ReadableWatcher&) = delete;
  ReadableWatcher& operator=(const ReadableWatcher&) = delete;

  // Watches `fd` until it is readable or `deadline` passes, then runs
  // `ready` once (see above). False, with `ready` dropped and nothing
  // watched, when the watcher has stopped or the kernel refuses the
  // descriptor. The caller keeps `fd` open until `ready` runs and watches
  // it at most once at a time.
  bool Watch(int fd, absl::Time deadline, Callback ready);

  // Runs every pending callback with kStopped, ends the thread (joined,
  // unless Stop runs on it) and refuses later watches. Idempotent.
  void Stop();

  // Descriptors watched now, for tests.
  int Watching();

 private:
  struct State;
  static void Loop(const std::shared_ptr<State>& state);

  const std::shared_ptr<State> state_;
};

}  // namespace distflow

#endif  // DISTFLOW_CORE_READABLE_WATCHER_H_
