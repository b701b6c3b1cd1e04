// Kernels for the TensorList ops (ops/list_ops.cc) on TensorList values
// (tensor_list.h). Every op that changes a list outputs a new one.
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/element_copy.h"
#include "distflow/kernels/tensor_list.h"

namespace distflow {
namespace {

// Zeros of `dtype` and `shape` (an element never set); the shape must be
// fully defined.
absl::StatusOr<Tensor> Zeros(DataType dtype, const PartialTensorShape& shape) {
  TensorShape exact;
  if (!shape.AsTensorShape(&exact)) {
    return errors::InvalidArgument(
        "an element that was never set has no known shape (the element shape is ",
        shape.DebugString(), ")");
  }
  Tensor t;
  DF_RETURN_IF_ERROR(Tensor::Allocate(dtype, exact, &t));
  if (dtype != DT_STRING && t.NumElements() > 0) std::memset(t.raw_data(), 0, t.TotalBytes());
  return t;
}

// The element shape of the list merged with the op's element_shape input.
absl::StatusOr<PartialTensorShape> MergedElementShape(const TensorList& list, const Tensor& input) {
  DF_ASSIGN_OR_RETURN(PartialTensorShape given, ElementShapeFromTensor(input));
  PartialTensorShape merged;
  if (!list.element_shape.MergeWith(given, &merged).ok()) {
    return errors::InvalidArgument("the element shape ", given.DebugString(),
                                   " does not fit the list's ", list.element_shape.DebugString());
  }
  return merged;
}

absl::Status CheckItem(const TensorList& list, const Tensor& item) {
  if (!list.element_shape.IsCompatibleWith(item.shape())) {
    return errors::InvalidArgument("an item of shape ", item.shape().DebugString(),
                                   " does not fit the list's element shape ",
                                   list.element_shape.DebugString());
  }
  return absl::OkStatus();
}

// The list's index input as an element index; InvalidArgument when it is
// outside [0, size).
absl::StatusOr<size_t> Index(const Tensor& index, size_t size) {
  if (index.dims() != 0) {
    return errors::InvalidArgument("index must be a scalar, got shape ",
                                   index.shape().DebugString());
  }
  const int32_t i = index.scalar<int32_t>();
  if (i < 0 || static_cast<size_t>(i) >= size) {
    return errors::InvalidArgument("index ", i, " is out of range for a list of ", size,
                                   " elements");
  }
  return static_cast<size_t>(i);
}

// A new list of `n` unset elements; ResourceExhausted when `n` slots alone
// would exceed the largest tensor allowed.
absl::StatusOr<std::shared_ptr<TensorList>> NewList(DataType dtype, PartialTensorShape shape,
                                                    int64_t n) {
  if (n < 0) return errors::InvalidArgument("a list cannot have ", n, " elements");
  const int64_t limit = MaxTensorBytes();
  if (limit > 0 && n > limit / static_cast<int64_t>(sizeof(Tensor))) {
    return errors::ResourceExhausted("a list of ", n, " elements is larger than the ", limit,
                                     " bytes one tensor may hold");
  }
  auto list = std::make_shared<TensorList>();
  list->element_dtype = dtype;
  list->element_shape = std::move(shape);
  list->elements.resize(n);
  return list;
}

class ListOpKernel : public OpKernel {
 public:
  explicit ListOpKernel(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (!ctx->HasAttr("element_dtype")) return;
    ctx->SetStatus(ctx->GetAttr("element_dtype", &dtype_));
    if (!DataTypeIsSupported(dtype_)) {
      ctx->SetStatus(errors::InvalidArgument("lists of ", DataTypeString(dtype_),
                                             " elements are not supported"));
    }
  }

  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, Run(ctx)); }

 protected:
  virtual absl::Status Run(OpKernelContext* ctx) = 0;
  DataType dtype_ = DT_INVALID;
};

class TensorListReserveOp : public ListOpKernel {
 public:
  using ListOpKernel::ListOpKernel;

 private:
  absl::Status Run(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(PartialTensorShape shape, ElementShapeFromTensor(ctx->input(0)));
    if (ctx->input(1).dims() != 0) {
      return errors::InvalidArgument("num_elements must be a scalar");
    }
    DF_ASSIGN_OR_RETURN(auto list, NewList(dtype_, shape, ctx->input(1).scalar<int32_t>()));
    ctx->set_output(0, TensorList::ToHandle(std::move(list)));
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorListReserve").Device(kDeviceCpu), TensorListReserveOp);

class TensorListFromTensorOp : public ListOpKernel {
 public:
  using ListOpKernel::ListOpKernel;

 private:
  absl::Status Run(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (t.dims() < 1) {
      return errors::InvalidArgument("TensorListFromTensor needs a tensor of rank >= 1, got ",
                                     t.shape().DebugString());
    }
    DF_ASSIGN_OR_RETURN(PartialTensorShape shape, ElementShapeFromTensor(ctx->input(1)));
    TensorShape element = t.shape();
    element.RemoveDim(0);
    if (!shape.IsCompatibleWith(element)) {
      return errors::InvalidArgument("the tensor's elements have shape ", element.DebugString(),
                                     ", not the element shape ", shape.DebugString());
    }
    DF_ASSIGN_OR_RETURN(auto list, NewList(dtype_, shape, t.dim_size(0)));
    const int64_t n = element.num_elements();
    for (int64_t i = 0; i < t.dim_size(0); ++i) {
      Tensor& e = list->elements[i];
      DF_RETURN_IF_ERROR(Tensor::Allocate(dtype_, element, &e));
      CopyElements(dtype_, ElementAt(t, i * n), n, e.raw_data());
    }
    ctx->set_output(0, TensorList::ToHandle(std::move(list)));
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorListFromTensor").Device(kDeviceCpu), TensorListFromTensorOp);

class TensorListGetItemOp : public ListOpKernel {
 public:
  using ListOpKernel::ListOpKernel;

 private:
  absl::Status Run(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(auto list, TensorList::FromHandle(ctx->input(0), dtype_));
    DF_ASSIGN_OR_RETURN(size_t i, Index(ctx->input(1), list->elements.size()));
    if (list->elements[i].dtype() != DT_INVALID) {
      ctx->set_output(0, list->elements[i]);
      return absl::OkStatus();
    }
    DF_ASSIGN_OR_RETURN(PartialTensorShape shape, MergedElementShape(*list, ctx->input(2)));
    DF_ASSIGN_OR_RETURN(Tensor zeros, Zeros(dtype_, shape));
    ctx->set_output(0, std::move(zeros));
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorListGetItem").Device(kDeviceCpu), TensorListGetItemOp);

class TensorListSetItemOp : public ListOpKernel {
 public:
  explicit TensorListSetItemOp(OpKernelConstruction* ctx) : ListOpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("resize_if_index_out_of_bounds", &resize_));
  }

 private:
  absl::Status Run(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(auto list, TensorList::FromHandle(ctx->input(0), dtype_));
    const Tensor& item = ctx->input(2);
    DF_RETURN_IF_ERROR(CheckItem(*list, item));
    auto out = std::make_shared<TensorList>(*list);
    const Tensor& index = ctx->input(1);
    if (resize_ && index.dims() == 0 && index.scalar<int32_t>() >= 0 &&
        static_cast<size_t>(index.scalar<int32_t>()) >= out->elements.size()) {
      DF_ASSIGN_OR_RETURN(
          auto grown, NewList(dtype_, list->element_shape, int64_t{index.scalar<int32_t>()} + 1));
      std::copy(out->elements.begin(), out->elements.end(), grown->elements.begin());
      out = std::move(grown);
    }
    DF_ASSIGN_OR_RETURN(size_t i, Index(index, out->elements.size()));
    out->elements[i] = item;
    ctx->set_output(0, TensorList::ToHandle(std::move(out)));
    return absl::OkStatus();
  }

  bool resize_ = false;
};

REGISTER_KERNEL_BUILDER(Name("TensorListSetItem").Device(kDeviceCpu), TensorListSetItemOp);

class TensorListPushBackOp : public ListOpKernel {
 public:
  using ListOpKernel::ListOpKernel;

 private:
  absl::Status Run(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(auto list, TensorList::FromHandle(ctx->input(0), dtype_));
    DF_RETURN_IF_ERROR(CheckItem(*list, ctx->input(1)));
    auto out = std::make_shared<TensorList>(*list);
    out->elements.push_back(ctx->input(1));
    ctx->set_output(0, TensorList::ToHandle(std::move(out)));
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorListPushBack").Device(kDeviceCpu), TensorListPushBackOp);

class TensorListStackOp : public ListOpKernel {
 public:
  explicit TensorListStackOp(OpKernelConstruction* ctx) : ListOpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("num_elements", &num_elements_));
  }

 private:
  absl::Status Run(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(auto list, TensorList::FromHandle(ctx->input(0), dtype_));
    const int64_t n = static_cast<int64_t>(list->elements.size());
    if (num_elements_ >= 0 && num_elements_ != n) {
      return errors::InvalidArgument("the list has ", n, " elements but num_elements is ",
                                     num_elements_);
    }
    DF_ASSIGN_OR_RETURN(PartialTensorShape shape, MergedElementShape(*list, ctx->input(1)));
    // Set elements fix the shape where the element shape leaves it open.
    for (const Tensor& e : list->elements) {
      if (e.dtype() == DT_INVALID) continue;
      if (!shape.IsCompatibleWith(e.shape())) {
        return errors::InvalidArgument("the list's elements differ in shape: ",
                                       e.shape().DebugString(), " and ", shape.DebugString());
      }
      shape = e.shape();
    }
    TensorShape element;
    if (!shape.AsTensorShape(&element)) {
      return errors::InvalidArgument("cannot stack a list whose element shape ",
                                     shape.DebugString(), " is not known");
    }
    TensorShape out_shape = element;
    out_shape.InsertDim(0, n);
    Tensor out;
    DF_RETURN_IF_ERROR(Tensor::Allocate(dtype_, out_shape, &out, name()));
    const int64_t size = element.num_elements();
    Tensor zeros;  // for the elements never set
    for (int64_t i = 0; i < n; ++i) {
      if (list->elements[i].dtype() != DT_INVALID) {
        CopyElements(dtype_, list->elements[i].raw_data(), size, ElementAt(out, i * size));
        continue;
      }
      if (zeros.dtype() == DT_INVALID) {
        DF_ASSIGN_OR_RETURN(zeros, Zeros(dtype_, element));
      }
      CopyElements(dtype_, zeros.raw_data(), size, ElementAt(out, i * size));
    }
    ctx->set_output(0, std::move(out));
    return absl::OkStatus();
  }

  int64_t num_elements_ = -1;
};

REGISTER_KERNEL_BUILDER(Name("TensorListStack").Device(kDeviceCpu), TensorListStackOp);

class TensorListLengthOp : public OpKernel {
 public:
  explicit TensorListLengthOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& handle = ctx->input(0);
    OP_REQUIRES(ctx, handle.dtype() == DT_VARIANT && handle.dims() == 0,
                errors::InvalidArgument("a TensorList handle must be a scalar variant"));
    auto list = handle.scalar<Variant>().get<TensorList>();
    OP_REQUIRES(ctx, list != nullptr,
                errors::InvalidArgument("the variant holds ", handle.scalar<Variant>().TypeName(),
                                        ", not a TensorList"));
    ctx->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(list->elements.size())));
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorListLength").Device(kDeviceCpu), TensorListLengthOp);

}  // namespace
}  // namespace distflow
