#include "distflow/core/readable_watcher.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "distflow/core/event_fd.h"

namespace distflow {

namespace {

// The epoll key of the wake-up descriptor; watches count from 1.
constexpr uint64_t kWakeKey = 0;

// epoll_wait's timeout for `until`: -1 for never, else whole milliseconds
// rounded up, so the loop never wakes just before a deadline.
int TimeoutMs(absl::Time until) {
  if (until == absl::InfiniteFuture()) return -1;
  const absl::Duration left = until - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  const int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
  return static_cast<int>(std::min<int64_t>(ms, INT_MAX));
}

}  // namespace

struct ReadableWatcher::State {
  State() : epoll_fd(epoll_create1(EPOLL_CLOEXEC)), wake(EventFd::Make()) {
    if (epoll_fd >= 0 && wake != nullptr) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kWakeKey;
      usable = epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake->fd(), &ev) == 0;
    }
  }
  ~State() {
    if (epoll_fd >= 0) close(epoll_fd);
  }

  struct Entry {
    int fd;
    absl::Time deadline;
    Callback ready;
  };
  // Forgets `id`'s watch (under mu) and gives its callback.
  Callback Take(std::map<uint64_t, Entry>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->second.fd, nullptr);
    if (it->second.deadline != absl::InfiniteFuture()) {
      by_deadline.erase({it->second.deadline, it->first});
    }
    Callback ready = std::move(it->second.ready);
    entries.erase(it);
    return ready;
  }

  const int epoll_fd;
  const std::shared_ptr<EventFd> wake;
  bool usable = false;
  absl::Mutex mu;
  std::map<uint64_t, Entry> entries ABSL_GUARDED_BY(mu);
  std::set<std::pair<absl::Time, uint64_t>> by_deadline ABSL_GUARDED_BY(mu);
  uint64_t next_id ABSL_GUARDED_BY(mu) = kWakeKey + 1;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  // The deadline the loop sleeps until; InfinitePast while it is not in
  // epoll_wait. A watch with an earlier deadline wakes it.
  absl::Time sleeping_until ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  std::thread thread ABSL_GUARDED_BY(mu);
};

ReadableWatcher::ReadableWatcher() : state_(std::make_shared<State>()) {}

ReadableWatcher::~ReadableWatcher() { Stop(); }

bool ReadableWatcher::Watch(int fd, absl::Time deadline, Callback ready) {
  if (fd < 0 || !state_->usable) return false;
  State& s = *state_;
  bool wake = false;
  {
    absl::MutexLock lock(&s.mu);
    if (s.stopping) return false;
    const uint64_t id = s.next_id++;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    ev.data.u64 = id;
    s.entries.emplace(id, State::Entry{fd, deadline, std::move(ready)});
    if (deadline != absl::InfiniteFuture()) s.by_deadline.insert({deadline, id});
    if (epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      s.by_deadline.erase({deadline, id});
      s.entries.erase(id);
      return false;
    }
    if (!s.thread.joinable()) {
      s.thread = std::thread([state = state_] { Loop(state); });
    }
    wake = deadline < s.sleeping_until;
  }
  if (wake) s.wake->Signal();
  return true;
}

void ReadableWatcher::Loop(const std::shared_ptr<State>& state) {
  State& s = *state;
  std::array<epoll_event, 64> events;
  std::vector<std::pair<Callback, Event>> due;
  for (;;) {
    absl::Time until;
    {
      absl::MutexLock lock(&s.mu);
      if (s.stopping) return;
      until = s.by_deadline.empty() ? absl::InfiniteFuture() : s.by_deadline.begin()->first;
      s.sleeping_until = until;
    }
    const int n =
        epoll_wait(s.epoll_fd, events.data(), static_cast<int>(events.size()), TimeoutMs(until));
    {
      absl::MutexLock lock(&s.mu);
      s.sleeping_until = absl::InfinitePast();
      if (s.stopping) return;
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == kWakeKey) {
          s.wake->Drain();
          continue;
        }
        auto it = s.entries.find(id);
        if (it == s.entries.end()) continue;
        due.emplace_back(s.Take(it), Event::kReadable);
      }
      const absl::Time now = absl::Now();
      while (!s.by_deadline.empty() && s.by_deadline.begin()->first <= now) {
        due.emplace_back(s.Take(s.entries.find(s.by_deadline.begin()->second)), Event::kDeadline);
      }
    }
    // Taken out of `entries`, so a Stop meanwhile leaves them to this loop.
    for (auto& [ready, event] : due) ready(event);
    due.clear();
  }
}

void ReadableWatcher::Stop() {
  State& s = *state_;
  std::vector<Callback> stopped;
  std::thread thread;
  {
    absl::MutexLock lock(&s.mu);
    if (s.stopping) return;
    s.stopping = true;
    while (!s.entries.empty()) stopped.push_back(s.Take(s.entries.begin()));
    thread = std::move(s.thread);
  }
  if (s.usable) s.wake->Signal();
  if (thread.joinable()) {
    // A callback that stops the watcher ends its own thread: that thread
    // touches only the shared state from here on.
    if (thread.get_id() == std::this_thread::get_id()) {
      thread.detach();
    } else {
      thread.join();
    }
  }
  for (Callback& ready : stopped) ready(Event::kStopped);
}

int ReadableWatcher::Watching() {
  absl::MutexLock lock(&state_->mu);
  return static_cast<int>(state_->entries.size());
}

}  // namespace distflow
