// The values a client program passes around while building a graph:
//  - Operation: a node of the graph being built;
//  - Output: one output tensor of an Operation ("node:index");
//  - Input: what an op wrapper accepts for an input: an Output, or a constant
//    (a Tensor, a scalar, a string, or nested initializer lists of them) that
//    becomes a Const node when the op is built;
//  - InputList: the same for list inputs (AddN, Concat, Pack, IdentityN).
// A constant that cannot become a tensor (a ragged or mixed-type nested list)
// carries an error instead; the op it feeds records that error in its Scope.
// All are cheap values referring to nodes owned by the Graph, which must
// outlive them. Not thread-safe.
#ifndef DISTFLOW_CC_OPS_H_
#define DISTFLOW_CC_OPS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph/graph.h"

namespace distflow {

class Output;

// A null Operation (node() == nullptr) is what a failed construction leaves;
// every accessor but node() and operator== REQUIRES a non-null node.
class Operation {
 public:
  Operation() = default;
  explicit Operation(Node* n) : node_(n) {}

  int num_inputs() const { return node_->num_inputs(); }
  DataType input_type(int i) const { return node_->input_type(i); }
  // The tensor feeding data input `i`; a null Output when it has no edge.
  Output input(int i) const;
  int num_outputs() const { return node_->num_outputs(); }
  DataType output_type(int o) const { return node_->output_type(o); }
  Output output(int o) const;
  Node* node() const { return node_; }

  bool operator==(const Operation& other) const { return node_ == other.node_; }

 private:
  Node* node_ = nullptr;
};

class Output {
 public:
  Output() = default;
  explicit Output(Node* n, int index = 0) : op_(n), index_(index) {}
  Output(const Operation& op, int index) : op_(op), index_(index) {}

  Operation op() const { return op_; }
  Node* node() const { return op_.node(); }
  int index() const { return index_; }
  // REQUIRES: node() != nullptr.
  DataType type() const { return op_.output_type(index_); }
  // "node:index"; REQUIRES: node() != nullptr.
  std::string name() const;

  bool operator==(const Output& other) const { return op_ == other.op_ && index_ == other.index_; }

 private:
  Operation op_;
  int index_ = 0;
};

// Hashes an Output by node and index, for maps keyed by tensors.
struct OutputHash {
  size_t operator()(const Output& o) const;
};

using OutputList = std::vector<Output>;

namespace internal {

// The signed fixed-width integer type of `Size` bytes.
template <size_t Size>
using SignedIntOfSize = std::conditional_t<
    Size == 1, int8_t,
    std::conditional_t<Size == 2, int16_t, std::conditional_t<Size == 4, int32_t, int64_t>>>;

// The C++ type a constant written as a T is stored as: std::string for
// string-like T, bool, float, double (for other floating types), or the
// fixed-width integer of T's size and signedness (int -> int32_t).
template <typename T, typename Enable = void>
struct ConstElementType {
  using type = std::string;
};
template <>
struct ConstElementType<bool> {
  using type = bool;
};
template <typename T>
struct ConstElementType<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  using type = std::conditional_t<std::is_same_v<T, float>, float, double>;
};
template <typename T>
struct ConstElementType<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using type = std::conditional_t<std::is_signed_v<T>, SignedIntOfSize<sizeof(T)>,
                                  std::make_unsigned_t<SignedIntOfSize<sizeof(T)>>>;
};

// True for the element types a constant can be written with.
template <typename T>
inline constexpr bool kIsConstElement =
    std::is_arithmetic_v<T> || std::is_convertible_v<T, std::string>;

}  // namespace internal

class Input {
 public:
  // A constant value: a tensor, or the error that kept it from being one.
  struct Initializer {
    // A scalar: int -> int32, int64_t -> int64, float, double, bool, string.
    template <typename T,
              typename = std::enable_if_t<internal::kIsConstElement<T>>>
    Initializer(const T& v)  // NOLINT: implicit
        : tensor(Tensor::Scalar<typename internal::ConstElementType<T>::type>(
              static_cast<typename internal::ConstElementType<T>::type>(v))) {}
    Initializer(const Tensor& t) : tensor(t) {}  // NOLINT: implicit
    // A vector of the values.
    template <typename T,
              typename = std::enable_if_t<internal::kIsConstElement<T>>>
    Initializer(std::initializer_list<T> v)  // NOLINT: implicit
        : Initializer(v, TensorShape({static_cast<int64_t>(v.size())})) {}
    // The values laid out row-major in `shape`; an error when the counts
    // differ.
    template <typename T, typename = std::enable_if_t<internal::kIsConstElement<T>>>
    Initializer(std::initializer_list<T> v, const TensorShape& shape) {
      using E = typename internal::ConstElementType<T>::type;
      if (static_cast<int64_t>(v.size()) != shape.num_elements()) {
        status = CountMismatch(v.size(), shape);
        return;
      }
      tensor = Tensor(DataTypeToEnum<E>::value, shape);
      E* out = tensor.base<E>();
      for (const T& x : v) *out++ = static_cast<E>(x);
    }
    // Stacks same-shaped, same-typed values along a new first dimension:
    // {{1, 2}, {3, 4}} is a 2x2 int32 tensor. Ragged or mixed-type lists
    // give an error naming the first element that differs.
    Initializer(std::initializer_list<Initializer> v);  // NOLINT: implicit

    absl::Status status;
    Tensor tensor;

   private:
    static absl::Status CountMismatch(size_t count, const TensorShape& shape);
  };

  template <typename T, typename = std::enable_if_t<internal::kIsConstElement<T>>>
  Input(const T& v) : Input(Initializer(v)) {}  // NOLINT: implicit
  Input(const Initializer& init)                // NOLINT: implicit
      : status_(init.status), tensor_(init.tensor) {}
  Input(const Tensor& t) : tensor_(t) {}          // NOLINT: implicit
  Input(std::initializer_list<Initializer> init)  // NOLINT: implicit
      : Input(Initializer(init)) {}
  Input(const Output& o) : output_(o) {}  // NOLINT: implicit

  // Set when this input is an Output; null for a constant.
  Node* node() const { return output_.node(); }
  int index() const { return output_.index(); }
  const Output& output() const { return output_; }
  // The constant's value when this input is a constant.
  const Tensor& tensor() const { return tensor_; }
  // Not OK when the constant could not be built.
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
  Output output_;
  Tensor tensor_;
};

class InputList {
 public:
  InputList(const OutputList& outputs)  // NOLINT: implicit
      : inputs_(outputs.begin(), outputs.end()) {}
  InputList(std::initializer_list<Input> inputs)  // NOLINT: implicit
      : inputs_(inputs) {}
  InputList(absl::Span<const Input> inputs)  // NOLINT: implicit
      : inputs_(inputs.begin(), inputs.end()) {}

  const std::vector<Input>& inputs() const { return inputs_; }
  size_t size() const { return inputs_.size(); }
  std::vector<Input>::const_iterator begin() const { return inputs_.begin(); }
  std::vector<Input>::const_iterator end() const { return inputs_.end(); }

 private:
  std::vector<Input> inputs_;
};

}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_H_
