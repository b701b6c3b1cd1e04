// Intrusive reference counting. An object starts with one reference owned by
// its creator; Unref() deletes it when the count reaches zero. Ref/Unref are
// thread-safe.
#ifndef DISTFLOW_CORE_REFCOUNT_H_
#define DISTFLOW_CORE_REFCOUNT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace distflow {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;

  void Ref() const { ref_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true iff this call deleted the object.
  bool Unref() const {
    if (ref_.load(std::memory_order_acquire) == 1 ||
        ref_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
      return true;
    }
    return false;
  }
  // True iff exactly one reference is held (the holder may mutate in place).
  bool RefCountIsOne() const { return ref_.load(std::memory_order_acquire) == 1; }

 protected:
  virtual ~RefCounted() = default;

 private:
  mutable std::atomic<int64_t> ref_{1};
};

// Owns one reference to a RefCounted object.
template <typename T>
class RefPtr {
 public:
  RefPtr() = default;
  // Adopts the reference the caller holds on `p`.
  explicit RefPtr(T* p) : p_(p) {}
  RefPtr(const RefPtr& o) : p_(o.p_) {
    if (p_) p_->Ref();
  }
  RefPtr(RefPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  RefPtr& operator=(const RefPtr& o) {
    if (o.p_) o.p_->Ref();
    reset(o.p_);
    return *this;
  }
  RefPtr& operator=(RefPtr&& o) noexcept {
    if (this != &o) reset(std::exchange(o.p_, nullptr));
    return *this;
  }
  ~RefPtr() {
    if (p_) p_->Unref();
  }
  void reset(T* p = nullptr) {
    T* old = std::exchange(p_, p);
    if (old) old->Unref();
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(std::nullptr_t) const { return p_ == nullptr; }
  bool operator!=(std::nullptr_t) const { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

}  // namespace distflow

#endif  // DISTFLOW_CORE_REFCOUNT_H_
