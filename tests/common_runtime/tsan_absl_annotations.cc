// TSan builds only: makes Abseil's synchronization visible to ThreadSanitizer.
//
// The system Abseil is not built with -fsanitize=thread, so TSan cannot see
// the happens-before edges that absl::Mutex, CondVar, Notification and
// BlockingCounter create (nor the reference count of a shared absl::Status),
// and reports every access guarded by them as a race. This file interposes
// those entry points (the test binary's definitions win over the shared
// library's, including for calls from inside the library), calls the real
// function found with dlsym(RTLD_NEXT, ...) and tells TSan about the
// acquire/release it implies. It changes no behaviour. The default
// suppressions silence what Abseil's uninstrumented internals (the mutex
// deadlock detector's graph) do under its own spin lock. Linked into test
// binaries only when DISTFLOW_SANITIZE=thread.
#if defined(DISTFLOW_TSAN)

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

void* RealFunction(const char* mangled_name) {
  void* f = dlsym(RTLD_NEXT, mangled_name);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_absl_annotations: %s not found\n", mangled_name);
    std::abort();
  }
  return f;
}

// The real member function, called with `this` as the first argument.
#define DF_REAL(type, name) static const auto real = reinterpret_cast<type>(RealFunction(name))

void Acquire(const void* p) { __tsan_acquire(const_cast<void*>(p)); }
void Release(const void* p) { __tsan_release(const_cast<void*>(p)); }

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

using Cond = const Condition&;

void Mutex::Lock() {
  DF_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  real(this);
  Acquire(this);
}
void Mutex::Unlock() {
  DF_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  Release(this);
  real(this);
}
void Mutex::ReaderLock() {
  DF_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  real(this);
  Acquire(this);
}
void Mutex::ReaderUnlock() {
  DF_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  Release(this);
  real(this);
}
bool Mutex::TryLock() {
  DF_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) Acquire(this);
  return locked;
}
bool Mutex::ReaderTryLock() {
  DF_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) Acquire(this);
  return locked;
}
void Mutex::LockWhen(Cond cond) {
  DF_REAL(void (*)(Mutex*, Cond), "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  real(this, cond);
  Acquire(this);
}
void Mutex::ReaderLockWhen(Cond cond) {
  DF_REAL(void (*)(Mutex*, Cond), "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE");
  real(this, cond);
  Acquire(this);
}
bool Mutex::LockWhenWithTimeout(Cond cond, Duration timeout) {
  DF_REAL(bool (*)(Mutex*, Cond, Duration),
          "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_"
          "8DurationE");
  const bool met = real(this, cond, timeout);
  Acquire(this);
  return met;
}
bool Mutex::LockWhenWithDeadline(Cond cond, Time deadline) {
  DF_REAL(bool (*)(Mutex*, Cond, Time),
          "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_"
          "4TimeE");
  const bool met = real(this, cond, deadline);
  Acquire(this);
  return met;
}
bool Mutex::ReaderLockWhenWithTimeout(Cond cond, Duration timeout) {
  DF_REAL(bool (*)(Mutex*, Cond, Duration),
          "_ZN4absl7debian35Mutex25ReaderLockWhenWithTimeoutERKNS0_"
          "9ConditionENS0_8DurationE");
  const bool met = real(this, cond, timeout);
  Acquire(this);
  return met;
}
bool Mutex::ReaderLockWhenWithDeadline(Cond cond, Time deadline) {
  DF_REAL(bool (*)(Mutex*, Cond, Time),
          "_ZN4absl7debian35Mutex26ReaderLockWhenWithDeadlineERKNS0_"
          "9ConditionENS0_4TimeE");
  const bool met = real(this, cond, deadline);
  Acquire(this);
  return met;
}
void Mutex::Await(Cond cond) {
  DF_REAL(void (*)(Mutex*, Cond), "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  Release(this);
  real(this, cond);
  Acquire(this);
}
bool Mutex::AwaitWithTimeout(Cond cond, Duration timeout) {
  DF_REAL(bool (*)(Mutex*, Cond, Duration),
          "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_"
          "8DurationE");
  Release(this);
  const bool met = real(this, cond, timeout);
  Acquire(this);
  return met;
}
bool Mutex::AwaitWithDeadline(Cond cond, Time deadline) {
  DF_REAL(bool (*)(Mutex*, Cond, Time),
          "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  Release(this);
  const bool met = real(this, cond, deadline);
  Acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  DF_REAL(void (*)(CondVar*, Mutex*), "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  Release(mu);
  real(this, mu);
  Acquire(mu);
}
bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  DF_REAL(bool (*)(CondVar*, Mutex*, Duration),
          "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  Release(mu);
  const bool timed_out = real(this, mu, timeout);
  Acquire(mu);
  return timed_out;
}
bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  DF_REAL(bool (*)(CondVar*, Mutex*, Time),
          "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  Release(mu);
  const bool timed_out = real(this, mu, deadline);
  Acquire(mu);
  return timed_out;
}

void Notification::Notify() {
  DF_REAL(void (*)(Notification*), "_ZN4absl7debian312Notification6NotifyEv");
  Release(this);
  real(this);
}
void Notification::WaitForNotification() const {
  DF_REAL(void (*)(const Notification*), "_ZNK4absl7debian312Notification19WaitForNotificationEv");
  real(this);
  Acquire(this);
}
bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  DF_REAL(bool (*)(const Notification*, Duration),
          "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_"
          "8DurationE");
  const bool notified = real(this, timeout);
  if (notified) Acquire(this);
  return notified;
}
bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  DF_REAL(bool (*)(const Notification*, Time),
          "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0"
          "_4TimeE");
  const bool notified = real(this, deadline);
  if (notified) Acquire(this);
  return notified;
}

bool BlockingCounter::DecrementCount() {
  DF_REAL(bool (*)(BlockingCounter*), "_ZN4absl7debian315BlockingCounter14DecrementCountEv");
  Release(this);
  return real(this);
}
void BlockingCounter::Wait() {
  DF_REAL(void (*)(BlockingCounter*), "_ZN4absl7debian315BlockingCounter4WaitEv");
  real(this);
  Acquire(this);
}

// Every unref publishes this thread's writes; the one that frees the rep has
// seen all of them.
void Status::UnrefNonInlined(uintptr_t rep) {
  DF_REAL(void (*)(uintptr_t), "_ZN4absl7debian36Status15UnrefNonInlinedEm");
  Release(reinterpret_cast<const void*>(rep));
  Acquire(reinterpret_cast<const void*>(rep));
  real(rep);
}

ABSL_NAMESPACE_END
}  // namespace absl

extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libabsl_graphcycles_internal.so\n";
}

#endif  // defined(DISTFLOW_TSAN)
