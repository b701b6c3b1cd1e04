#include "distflow/framework/tensor.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/status.h"
#include "distflow/framework/resource_handle.h"
#include "distflow/framework/variant.h"

namespace distflow {
namespace {

constexpr size_t kAlignment = 64;
// Bytes of a buffer's block besides its elements: the buffer object and
// the padding up to the elements' alignment (malloc aligns to
// alignof(std::max_align_t)).
constexpr size_t kBlockOverhead = 96;

// Bytes one element occupies in a buffer.
size_t ElementSize(DataType dtype) {
  if (dtype == DT_STRING) return sizeof(std::string);
  if (dtype == DT_RESOURCE) return sizeof(ResourceHandle);
  if (dtype == DT_VARIANT) return sizeof(Variant);
  return DataTypeSize(dtype);
}

// Blocks of tensors of up to kSmallBytes bytes (scalars, short vectors: the
// bulk of a graph's per-node outputs) are kept, when freed, on a free list of
// the freeing thread, up to kMaxCachedBlocks of them, and handed out again
// before malloc is asked. malloc's own per-thread cache holds 7 blocks of a
// size; a step with thousands of small live outputs otherwise pays its
// slower paths (and heap consolidation) for each. The list is freed when
// its thread exits. Off under AddressSanitizer, so it still sees every
// use after free.
constexpr size_t kSmallBytes = 64;
constexpr size_t kSmallBlock = kBlockOverhead + kSmallBytes;
constexpr int kMaxCachedBlocks = 8192;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheBlocks = false;
#else
constexpr bool kCacheBlocks = true;
#endif

class SmallBlockCache {
 public:
  ~SmallBlockCache() {
    while (head_ != nullptr) std::free(Pop());
  }
  void* Pop() {
    void* block = head_;
    if (block != nullptr) {
      std::memcpy(&head_, block, sizeof(void*));
      --count_;
    }
    return block;
  }
  // False when the list is full (the caller frees the block).
  bool Push(void* block) {
    if (count_ >= kMaxCachedBlocks) return false;
    std::memcpy(block, &head_, sizeof(void*));
    head_ = block;
    ++count_;
    return true;
  }

 private:
  void* head_ = nullptr;
  int count_ = 0;
};

thread_local SmallBlockCache small_blocks;

// What malloc reports usable in a block it gave for kSmallBlock bytes: a
// block with that usable size is a small one, whatever asked for it.
size_t SmallUsableSize() {
  static const size_t usable = [] {
    void* probe = std::malloc(kSmallBlock);
    const size_t n = malloc_usable_size(probe);
    std::free(probe);
    return n;
  }();
  return usable;
}

// Blocks of kBigBlock bytes or more are what malloc maps afresh for each
// request and unmaps on free, so every byte of a new one costs a page fault
// and the kernel's zeroing: about as much as the memcpy of a tensor
// received from another task. Up to kMaxBigBlocks freed ones, at most
// kMaxBigBytes in all, are kept process-wide, still mapped, for a request
// of their size or up to a quarter smaller. Not while a memory budget is set
// (the budget counts tensors; memory kept here would go uncounted), and off
// under AddressSanitizer.
constexpr size_t kBigBlock = size_t{32} << 20;
constexpr int kMaxBigBlocks = 4;
constexpr size_t kMaxBigBytes = size_t{512} << 20;

class BigBlockCache {
 public:
  // A kept block of `bytes` to `bytes` * 4/3 usable bytes, or nullptr.
  void* Take(size_t bytes) {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const size_t usable = blocks_[i].second;
      if (usable >= bytes && usable - bytes <= bytes / 3) {
        void* block = blocks_[i].first;
        kept_bytes_ -= usable;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        return block;
      }
    }
    return nullptr;
  }
  // Keeps `block` (the newest first); false when it does not fit.
  bool Keep(void* block, size_t usable) {
    if (usable > kMaxBigBytes) return false;
    std::vector<void*> evicted;
    InsertEvicting(block, usable, &evicted);
    for (void* old : evicted) std::free(old);  // unmapped outside the lock
    return true;
  }

 private:
  void InsertEvicting(void* block, size_t usable, std::vector<void*>* evicted) {
    absl::MutexLock lock(&mu_);
    while (!blocks_.empty() && (static_cast<int>(blocks_.size()) >= kMaxBigBlocks ||
                                kept_bytes_ + usable > kMaxBigBytes)) {
      evicted->push_back(blocks_.back().first);
      kept_bytes_ -= blocks_.back().second;
      blocks_.pop_back();
    }
    blocks_.insert(blocks_.begin(), {block, usable});
    kept_bytes_ += usable;
  }

  absl::Mutex mu_;
  std::vector<std::pair<void*, size_t>> blocks_ ABSL_GUARDED_BY(mu_);
  size_t kept_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

BigBlockCache& BigBlocks() {
  static BigBlockCache* cache = new BigBlockCache;
  return *cache;
}

void* AllocateBlock(size_t bytes) {
  if (kCacheBlocks && bytes <= kSmallBlock) {
    if (void* block = small_blocks.Pop()) return block;
    return std::malloc(kSmallBlock);
  }
  if (kCacheBlocks && bytes >= kBigBlock) {
    if (void* block = BigBlocks().Take(bytes)) return block;
  }
  return std::malloc(bytes);
}

void FreeBlock(void* block) {
  if (kCacheBlocks && block != nullptr) {
    const size_t usable = malloc_usable_size(block);
    if (usable == SmallUsableSize() && small_blocks.Push(block)) return;
    if (usable >= kBigBlock && memory_budget::Limit() <= 0 && BigBlocks().Keep(block, usable)) {
      return;
    }
  }
  std::free(block);
}

// True for the types whose elements are C++ objects built in place.
bool HoldsObjects(DataType dtype) {
  return dtype == DT_STRING || dtype == DT_RESOURCE || dtype == DT_VARIANT;
}

// True for the types a Tensor can hold.
bool CanAllocate(DataType dtype) {
  return DataTypeIsSupported(dtype) || dtype == DT_RESOURCE || dtype == DT_VARIANT;
}

// Owns an aligned allocation; constructs and destroys strings, resource
// handles and variants in place. The object and its elements share one
// malloc'ed block (the object first, the elements at the next kAlignment
// boundary after it), so a tensor costs one malloc and one free, and small
// blocks come from malloc's fast per-size lists rather than memalign's
// split chunks.
class AlignedBuffer final : public TensorBuffer {
 public:
  // nullptr when the byte size overflows, the bytes do not fit in the
  // process's memory budget (*over_budget set) or the allocator has no
  // memory.
  static AlignedBuffer* TryNew(DataType dtype, int64_t n, bool* over_budget) {
    *over_budget = false;
    const int64_t bytes = TensorBufferBytes(dtype, n);
    if (bytes < 0 || bytes > INT64_MAX - static_cast<int64_t>(kBlockOverhead)) return nullptr;
    const bool counted = memory_budget::TryReserve(bytes, over_budget);
    if (*over_budget) return nullptr;
    void* block = AllocateBlock(kBlockOverhead + static_cast<size_t>(bytes));
    if (block == nullptr) {
      if (counted) memory_budget::Release(bytes);
      return nullptr;
    }
    void* data = nullptr;
    if (bytes > 0) {
      const uintptr_t after = reinterpret_cast<uintptr_t>(block) + sizeof(AlignedBuffer);
      data = reinterpret_cast<void*>((after + kAlignment - 1) / kAlignment * kAlignment);
      if (HoldsObjects(dtype)) ConstructObjects(dtype, data, n);
    }
    return new (block) AlignedBuffer(data, static_cast<size_t>(bytes), dtype, n, counted);
  }
  // Frees the block TryNew made (the object is at its start).
  static void operator delete(void* block) { FreeBlock(block); }
  static AlignedBuffer* New(DataType dtype, int64_t n) {
    bool over_budget;
    AlignedBuffer* buf = TryNew(dtype, n, &over_budget);
    if (buf == nullptr) throw std::bad_alloc();
    return buf;
  }

 private:
  AlignedBuffer(void* data, size_t bytes, DataType dtype, int64_t n, bool counted)
      : TensorBuffer(data, bytes), n_(n), dtype_(dtype), counted_(counted) {}
  ~AlignedBuffer() override {
    if (data() != nullptr && HoldsObjects(dtype_)) DestroyObjects(dtype_, data(), n_);
    if (counted_) memory_budget::Release(static_cast<int64_t>(size()));
  }
  static void ConstructObjects(DataType dtype, void* data, int64_t n) {
    if (dtype == DT_STRING) ConstructAll<std::string>(data, n);
    if (dtype == DT_RESOURCE) ConstructAll<ResourceHandle>(data, n);
    if (dtype == DT_VARIANT) ConstructAll<Variant>(data, n);
  }
  static void DestroyObjects(DataType dtype, void* data, int64_t n) {
    if (dtype == DT_STRING) DestroyAll<std::string>(data, n);
    if (dtype == DT_RESOURCE) DestroyAll<ResourceHandle>(data, n);
    if (dtype == DT_VARIANT) DestroyAll<Variant>(data, n);
  }
  template <typename T>
  static void ConstructAll(void* data, int64_t n) {
    auto* p = static_cast<T*>(data);
    for (int64_t i = 0; i < n; ++i) new (p + i) T();
  }
  template <typename T>
  static void DestroyAll(void* data, int64_t n) {
    auto* p = static_cast<T*>(data);
    for (int64_t i = 0; i < n; ++i) p[i].~T();
  }
  const int64_t n_;
  const DataType dtype_;
  // Whether the bytes are reserved in the memory budget.
  const bool counted_;
};
static_assert(sizeof(AlignedBuffer) + kAlignment - alignof(std::max_align_t) <= kBlockOverhead,
              "a block holds the buffer object and the padding before the elements");

class ExternalBuffer final : public TensorBuffer {
 public:
  ExternalBuffer(void* data, size_t size, std::function<void()> release)
      : TensorBuffer(data, size), release_(std::move(release)) {}

 private:
  ~ExternalBuffer() override {
    if (release_) release_();
  }
  std::function<void()> release_;
};

int64_t DefaultMaxTensorBytes() {
  if (const char* env = std::getenv("DISTFLOW_MAX_TENSOR_BYTES")) {
    int64_t v;
    if (absl::SimpleAtoi(env, &v) && v >= 0) return v;
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  int64_t total;
  if (pages > 0 && page_size > 0 && MultiplyWithoutOverflow<int64_t>(pages, page_size, &total)) {
    return total;
  }
  return 0;
}

std::atomic<int64_t>& MaxTensorBytesCell() {
  static std::atomic<int64_t> cell(DefaultMaxTensorBytes());
  return cell;
}

}  // namespace

int64_t MaxTensorBytes() { return MaxTensorBytesCell().load(std::memory_order_relaxed); }

void SetMaxTensorBytes(int64_t bytes) {
  MaxTensorBytesCell().store(bytes < 0 ? 0 : bytes, std::memory_order_relaxed);
}

int64_t TensorBufferBytes(DataType dtype, int64_t num_elements) {
  int64_t bytes;
  if (num_elements < 0 || !MultiplyWithoutOverflow<int64_t>(
                              static_cast<int64_t>(ElementSize(dtype)), num_elements, &bytes)) {
    return -1;
  }
  return bytes;
}

absl::Status Tensor::Allocate(DataType dtype, const TensorShape& shape, Tensor* out,
                              absl::string_view node) {
  if (!CanAllocate(dtype)) {
    return errors::InvalidArgument("cannot allocate a tensor of type ", DataTypeString(dtype));
  }
  auto oom = [&](auto... why) {
    return errors::ResourceExhausted("OOM when allocating tensor of shape ", shape.DebugString(),
                                     " and type ", DataTypeString(dtype),
                                     node.empty() ? "" : absl::StrCat(" for node '", node, "'"),
                                     ": ", why...);
  };
  const int64_t n = shape.num_elements();
  if (n < 0) return oom("its element count overflows int64");
  const int64_t bytes = TensorBufferBytes(dtype, n);
  if (bytes < 0) return oom("its size in bytes overflows int64");
  const int64_t cap = MaxTensorBytes();
  if (cap > 0 && bytes > cap) {
    return oom(bytes, " bytes exceed the limit of ", cap,
               " bytes for one tensor (DISTFLOW_MAX_TENSOR_BYTES)");
  }
  bool over_budget;
  AlignedBuffer* buf = AlignedBuffer::TryNew(dtype, n, &over_budget);
  if (over_budget) {
    return oom(bytes, " more bytes do not fit in the process's memory budget of ",
               memory_budget::Limit(), " bytes (", memory_budget::InUse(),
               " in use; distflow server --memory-budget-mb, DISTFLOW_MEMORY_BUDGET_MB)");
  }
  if (buf == nullptr) return oom("the allocator could not provide ", bytes, " bytes");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buf_.reset(buf);
  t.data_ = buf->data();
  *out = std::move(t);
  return absl::OkStatus();
}

RefPtr<TensorBuffer> MakeExternalBuffer(void* data, size_t size, std::function<void()> release) {
  return RefPtr<TensorBuffer>(new ExternalBuffer(data, size, std::move(release)));
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) : dtype_(dtype), shape_(shape) {
  DF_CHECK_MSG(CanAllocate(dtype), DataTypeString(dtype));
  buf_.reset(AlignedBuffer::New(dtype, shape.num_elements()));
  data_ = buf_->data();
}

Tensor::Tensor(DataType dtype, const TensorShape& shape, RefPtr<TensorBuffer> buf)
    : dtype_(dtype), shape_(shape), buf_(std::move(buf)) {
  DF_CHECK(buf_ == nullptr ||
           (TensorBufferBytes(dtype, shape.num_elements()) >= 0 &&
            buf_->size() >= static_cast<size_t>(TensorBufferBytes(dtype, shape.num_elements()))));
  data_ = buf_ ? buf_->data() : nullptr;
}

bool Tensor::IsInitialized() const {
  return dtype_ != DT_INVALID && (buf_ != nullptr || NumElements() == 0);
}

size_t Tensor::TotalBytes() const {
  if (dtype_ == DT_STRING) {
    size_t n = 0;
    for (const std::string& s : flat<std::string>()) n += s.size();
    return n;
  }
  return DataTypeSize(dtype_) * static_cast<size_t>(NumElements());
}

bool Tensor::CopyFrom(const Tensor& other, const TensorShape& shape) {
  if (other.NumElements() != shape.num_elements()) return false;
  dtype_ = other.dtype_;
  shape_ = shape;
  buf_ = other.buf_;
  data_ = other.data_;
  return true;
}

namespace {
// A sub-range of another buffer; keeps the owner alive.
class SubBuffer final : public TensorBuffer {
 public:
  SubBuffer(RefPtr<TensorBuffer> parent, void* data, size_t size)
      : TensorBuffer(data, size), parent_(std::move(parent)) {}
  const TensorBuffer* root() const override { return parent_->root(); }

 private:
  RefPtr<TensorBuffer> parent_;
};
}  // namespace

Tensor Tensor::Slice(int64_t start, int64_t limit) const {
  DF_CHECK(dims() >= 1 && 0 <= start && start <= limit && limit <= dim_size(0));
  TensorShape shape = shape_;
  shape.set_dim(0, limit - start);
  if (start == 0 && limit == dim_size(0)) {
    Tensor t = *this;
    return t;
  }
  const int64_t row = dim_size(0) == 0 ? 0 : NumElements() / dim_size(0);
  const size_t elem = ElementSize(dtype_);
  char* begin = static_cast<char*>(data_) + start * row * elem;
  RefPtr<TensorBuffer> sub(new SubBuffer(buf_, begin, (limit - start) * row * elem));
  return Tensor(dtype_, shape, std::move(sub));
}

Tensor Tensor::DeepCopy() const {
  if (!IsInitialized()) return *this;
  Tensor out(dtype_, shape_);
  if (dtype_ == DT_STRING) {
    auto src = flat<std::string>();
    auto dst = out.flat<std::string>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_RESOURCE) {
    auto src = flat<ResourceHandle>();
    auto dst = out.flat<ResourceHandle>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_VARIANT) {
    auto src = flat<Variant>();
    auto dst = out.flat<Variant>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (NumElements() > 0) {
    std::memcpy(out.data_, data_, TotalBytes());
  }
  return out;
}

bool Tensor::SharesBufferWith(const Tensor& other) const {
  return buf_ != nullptr && other.buf_ != nullptr && buf_->root() == other.buf_->root();
}

bool Tensor::RefCountIsOne() const {
  return buf_ != nullptr && buf_->root() == buf_.get() && buf_->RefCountIsOne();
}

namespace {

template <typename T>
void AppendValue(std::string* out, const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    absl::StrAppend(out, "\"", v, "\"");
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    absl::StrAppend(out, static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    out->append(v ? "true" : "false");
  } else if constexpr (sizeof(T) == 1) {
    absl::StrAppend(out, static_cast<int>(v));
  } else {
    absl::StrAppend(out, v);
  }
}

}  // namespace

std::string Tensor::SummarizeValue(int64_t max_entries) const {
  if (!IsInitialized()) return "<uninitialized>";
  std::string out;
  const int64_t n = std::min<int64_t>(NumElements(), max_entries);
  const int rank = dims();
  if (dtype_ == DT_RESOURCE) {
    auto handles = flat<ResourceHandle>();
    for (int64_t i = 0; i < n; ++i) {
      absl::StrAppend(&out, i > 0 ? " " : "", handles[i].DebugString());
    }
    if (n < NumElements()) out.append("...");
    return out;
  }
  if (dtype_ == DT_VARIANT) {
    auto values = flat<Variant>();
    for (int64_t i = 0; i < n; ++i) {
      absl::StrAppend(&out, i > 0 ? " " : "", values[i].DebugString());
    }
    if (n < NumElements()) out.append("...");
    return out;
  }
  VisitDataType(dtype_, [&](auto zero) {
    using T = decltype(zero);
    const T* p = base<T>();
    if (rank == 0) {
      AppendValue(&out, p[0]);
      return;
    }
    // Open a bracket at each dim boundary, like NumPy's nested printing.
    for (int64_t i = 0; i < n; ++i) {
      int64_t stride = 1;
      for (int d = rank - 1; d >= 0; --d) {
        stride *= dim_size(d);
        if (i % stride == 0) out.append("[");
      }
      if (i % dim_size(rank - 1) != 0) out.append(" ");
      AppendValue(&out, p[i]);
      stride = 1;
      for (int d = rank - 1; d >= 0; --d) {
        stride *= dim_size(d);
        if ((i + 1) % stride == 0) out.append("]");
      }
    }
    if (n < NumElements()) out.append("...");
  });
  return out;
}

std::string Tensor::DebugString(int max_entries) const {
  return absl::StrCat("Tensor<type: ", DataTypeString(dtype_), " shape: ", shape_.DebugString(),
                      " values: ", SummarizeValue(max_entries), ">");
}

}  // namespace distflow
