// Variant: the element type of DT_VARIANT tensors, a shared handle to an
// immutable value of any type derived from VariantValue (a dataset, a
// resource deleter). Copying a Variant shares the value, so a DT_VARIANT
// tensor's DeepCopy is cheap and both copies see the same object. Variants
// live only in memory: a TensorProto or a wire message cannot carry one.
// A Variant is a value: concurrent const use is safe; the values themselves
// are immutable (or do their own locking).
#ifndef DISTFLOW_FRAMEWORK_VARIANT_H_
#define DISTFLOW_FRAMEWORK_VARIANT_H_

#include <memory>
#include <string>
#include <utility>

#include "distflow/framework/types.h"

namespace distflow {

// Base class of everything a Variant holds.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // What the value is, e.g. "Dataset"; for error messages.
  virtual std::string TypeName() const = 0;
  // A one-line description for debugging.
  virtual std::string DebugString() const = 0;
};

class Variant {
 public:
  // Empty.
  Variant() = default;
  explicit Variant(std::shared_ptr<const VariantValue> value) : value_(std::move(value)) {}

  bool empty() const { return value_ == nullptr; }
  // The value as a T, sharing ownership; null when empty or not a T.
  template <typename T>
  std::shared_ptr<const T> get() const {
    return std::dynamic_pointer_cast<const T>(value_);
  }
  // "<empty>" or the value's TypeName().
  std::string TypeName() const;
  std::string DebugString() const;

 private:
  std::shared_ptr<const VariantValue> value_;
};

// DT_VARIANT tensors hold Variants (Tensor(DT_VARIANT, shape) builds empty
// ones), as DT_RESOURCE tensors hold ResourceHandles. Not in VisitDataType.
template <>
struct DataTypeToEnum<Variant> {
  static constexpr DataType value = DT_VARIANT;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_VARIANT_H_
