#include "distflow/framework/array_shapes.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

std::string ListString(absl::Span<const int64_t> values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

// The input's dims as a mutable vector. REQUIRES: known rank.
DimVector Dims(const PartialTensorShape& s) {
  return DimVector(s.dim_sizes().begin(), s.dim_sizes().end());
}

}  // namespace

absl::Status CanonicalAxis(int64_t axis, int rank, absl::string_view what, int* out) {
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(what, " ", axis, " is out of range for a rank-", rank,
                                   " tensor, expected [", -rank, ", ", rank, ")");
  }
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return absl::OkStatus();
}

absl::Status ReshapeOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> sizes,
                                PartialTensorShape* out) {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer >= 0) {
        return errors::InvalidArgument("only one dimension of the new shape may be -1, but ",
                                       ListString(sizes), " has -1 at both ", infer, " and ", i);
      }
      infer = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return errors::InvalidArgument("new shape ", ListString(sizes), " has a negative size ",
                                     sizes[i], " at dimension ", i);
    } else if (sizes[i] != 0 && known > std::numeric_limits<int64_t>::max() / sizes[i]) {
      return errors::InvalidArgument("new shape ", ListString(sizes), " has too many elements");
    } else {
      known *= sizes[i];
    }
  }
  DimVector dims(sizes.begin(), sizes.end());
  const int64_t n = input.num_elements();
  if (n >= 0) {
    if (infer < 0 && n != known) {
      return errors::InvalidArgument("Cannot reshape a tensor with ", n, " elements to shape ",
                                     ListString(sizes), " (", known, " elements)");
    }
    if (infer >= 0) {
      if (known == 0) {
        return errors::InvalidArgument(
            "Cannot reshape a tensor with ", n, " elements to shape ", ListString(sizes),
            ": the -1 dimension cannot be inferred when another size is 0");
      }
      if (n % known != 0) {
        return errors::InvalidArgument("Cannot reshape a tensor with ", n, " elements to shape ",
                                       ListString(sizes), ": ", n, " is not a multiple of ", known);
      }
      dims[infer] = n / known;
    }
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status TransposeOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> perm,
                                  PartialTensorShape* out) {
  const int rank = static_cast<int>(perm.size());
  if (!input.unknown_rank() && input.dims() != rank) {
    return errors::InvalidArgument("perm ", ListString(perm), " has ", rank,
                                   " entries but the input has rank ", input.dims(), " (shape ",
                                   input.DebugString(), ")");
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) {
      return errors::InvalidArgument("perm ", ListString(perm), " is not a permutation of [0, ",
                                     rank, "): ", p, " is out of range");
    }
    if (seen[p]) {
      return errors::InvalidArgument("perm ", ListString(perm), " is not a permutation of [0, ",
                                     rank, "): ", p, " appears twice");
    }
    seen[p] = true;
  }
  if (input.unknown_rank()) {
    *out = PartialTensorShape::UnknownDims(rank);
    return absl::OkStatus();
  }
  DimVector dims(rank);
  for (int i = 0; i < rank; ++i) dims[i] = input.dim_size(perm[i]);
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status ExpandDimsOutputShape(const PartialTensorShape& input, int64_t dim,
                                   PartialTensorShape* out) {
  if (input.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int rank = input.dims();
  if (dim < -rank - 1 || dim > rank) {
    return errors::InvalidArgument("dim ", dim, " is out of range for a rank-", rank,
                                   " tensor, expected [", -rank - 1, ", ", rank, "]");
  }
  if (dim < 0) dim += rank + 1;
  DimVector dims = Dims(input);
  dims.insert(dims.begin() + dim, 1);
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status SqueezeOutputShape(const PartialTensorShape& input,
                                absl::Span<const int64_t> squeeze_dims, PartialTensorShape* out) {
  if (input.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int rank = input.dims();
  std::vector<bool> drop(rank, false);
  for (int64_t d : squeeze_dims) {
    int axis = 0;
    DF_RETURN_IF_ERROR(CanonicalAxis(d, rank, "squeeze_dims entry", &axis));
    const int64_t size = input.dim_size(axis);
    if (size != 1 && size != -1) {
      return errors::InvalidArgument("Can not squeeze dim[", axis,
                                     "], expected a dimension of 1, got ", size, " (shape ",
                                     input.DebugString(), ")");
    }
    drop[axis] = true;
  }
  DimVector dims;
  for (int i = 0; i < rank; ++i) {
    const int64_t size = input.dim_size(i);
    if (squeeze_dims.empty()) {
      // Without a list, an unknown dim may or may not be squeezed away.
      if (size == -1) {
        *out = PartialTensorShape::Unknown();
        return absl::OkStatus();
      }
      if (size == 1) continue;
    } else if (drop[i]) {
      continue;
    }
    dims.push_back(size);
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status ConcatOutputShape(absl::Span<const PartialTensorShape> inputs, int64_t axis,
                               PartialTensorShape* out) {
  int ref = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].unknown_rank()) {
      ref = static_cast<int>(i);
      break;
    }
  }
  if (ref < 0) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int rank = inputs[ref].dims();
  if (rank == 0) {
    return errors::InvalidArgument("cannot concatenate scalars (input ", ref,
                                   " is a scalar); use Pack to stack them into a vector");
  }
  int a = 0;
  DF_RETURN_IF_ERROR(CanonicalAxis(axis, rank, "concat axis", &a));
  DimVector dims = Dims(inputs[ref]);
  dims[a] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PartialTensorShape& s = inputs[i];
    if (s.unknown_rank()) {
      dims[a] = -1;
      continue;
    }
    if (s.dims() != rank) {
      return errors::InvalidArgument("ConcatV2 inputs must have the same rank, but input ", ref,
                                     " has shape ", inputs[ref].DebugString(), " and input ", i,
                                     " has shape ", s.DebugString());
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t size = s.dim_size(d);
      if (d == a) {
        dims[a] = (dims[a] < 0 || size < 0) ? -1 : dims[a] + size;
      } else if (dims[d] < 0) {
        dims[d] = size;
      } else if (size >= 0 && size != dims[d]) {
        return errors::InvalidArgument(
            "ConcatV2 inputs must match in every dimension except the concat "
            "axis ",
            a, ", but input ", ref, " has shape ", inputs[ref].DebugString(), " and input ", i,
            " has shape ", s.DebugString());
      }
    }
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status PackOutputShape(absl::Span<const PartialTensorShape> inputs, int64_t axis,
                             PartialTensorShape* out) {
  PartialTensorShape merged;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!merged.IsCompatibleWith(inputs[i])) {
      return errors::InvalidArgument(
          "Pack inputs must all have the same shape, but input 0 has shape ",
          inputs[0].DebugString(), " and input ", i, " has shape ", inputs[i].DebugString());
    }
    DF_RETURN_IF_ERROR(merged.MergeWith(inputs[i], &merged));
  }
  if (merged.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int rank = merged.dims();
  if (axis < -rank - 1 || axis > rank) {
    return errors::InvalidArgument("Pack axis ", axis, " is out of range for rank-", rank,
                                   " inputs, expected [", -rank - 1, ", ", rank, "]");
  }
  if (axis < 0) axis += rank + 1;
  DimVector dims = Dims(merged);
  dims.insert(dims.begin() + axis, static_cast<int64_t>(inputs.size()));
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status UnpackOutputShape(const PartialTensorShape& input, int64_t axis, int64_t num,
                               PartialTensorShape* out) {
  if (input.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  int a = 0;
  DF_RETURN_IF_ERROR(CanonicalAxis(axis, input.dims(), "Unpack axis", &a));
  const int64_t size = input.dim_size(a);
  if (size >= 0 && size != num) {
    return errors::InvalidArgument("Unpack with num ", num, " needs dimension ", a, " of size ",
                                   num, ", but the input has shape ", input.DebugString());
  }
  DimVector dims = Dims(input);
  dims.erase(dims.begin() + a);
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status SplitOutputShape(const PartialTensorShape& input, int64_t split_dim, int64_t num_split,
                              PartialTensorShape* out) {
  if (input.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  int a = 0;
  DF_RETURN_IF_ERROR(CanonicalAxis(split_dim, input.dims(), "split_dim", &a));
  DimVector dims = Dims(input);
  if (dims[a] >= 0) {
    if (dims[a] % num_split != 0) {
      return errors::InvalidArgument(
          "Number of ways to split should evenly divide the split dimension, "
          "but got split_dim ",
          a, " (size = ", dims[a], ") and num_split ", num_split);
    }
    dims[a] /= num_split;
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status SliceOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> begin,
                              absl::Span<const int64_t> size, PartialTensorShape* out) {
  if (begin.size() != size.size()) {
    return errors::InvalidArgument("Slice begin ", ListString(begin), " and size ",
                                   ListString(size), " must have the same length");
  }
  const int rank = static_cast<int>(begin.size());
  if (!input.unknown_rank() && input.dims() != rank) {
    return errors::InvalidArgument(
        "Slice begin and size need one entry per input dimension, but the "
        "input has shape ",
        input.DebugString(), " and begin has ", rank, " entries");
  }
  DimVector dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t b = begin[i], s = size[i];
    const int64_t d = input.unknown_rank() ? -1 : input.dim_size(i);
    if (b < 0 || (d >= 0 && b > d)) {
      return errors::InvalidArgument("Expected begin[", i, "] in [0, ",
                                     d >= 0 ? absl::StrCat(d) : "?", "], but got ", b,
                                     " (input shape ", input.DebugString(), ")");
    }
    if (s < -1 || (d >= 0 && s > d - b)) {
      return errors::InvalidArgument(
          "Expected size[", i, "] in [0, ", d >= 0 ? absl::StrCat(d - b) : "?", "] or -1, but got ",
          s, " (begin[", i, "] = ", b, ", input shape ", input.DebugString(), ")");
    }
    dims[i] = s >= 0 ? s : (d >= 0 ? d - b : -1);
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status TileOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> multiples,
                             PartialTensorShape* out) {
  const int rank = static_cast<int>(multiples.size());
  if (!input.unknown_rank() && input.dims() != rank) {
    return errors::InvalidArgument("Tile multiples ", ListString(multiples),
                                   " need one entry per input dimension, but the input has shape ",
                                   input.DebugString());
  }
  DimVector dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t m = multiples[i];
    if (m < 0) {
      return errors::InvalidArgument("Tile multiples[", i, "] = ", m, " must be non-negative");
    }
    const int64_t d = input.unknown_rank() ? -1 : input.dim_size(i);
    if (m == 0) {
      dims[i] = 0;
    } else if (d < 0) {
      dims[i] = -1;
    } else if (d > std::numeric_limits<int64_t>::max() / m) {
      return errors::InvalidArgument("Tile of shape ", input.DebugString(), " by ",
                                     ListString(multiples), " overflows dimension ", i);
    } else {
      dims[i] = d * m;
    }
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status GatherOutputShape(const PartialTensorShape& params, const PartialTensorShape& indices,
                               int64_t axis, int64_t batch_dims, PartialTensorShape* out,
                               int* axis_out, int* batch_dims_out) {
  if (indices.unknown_rank() && batch_dims < 0) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  if (!indices.unknown_rank()) {
    const int irank = indices.dims();
    if (batch_dims < -irank || batch_dims > irank) {
      return errors::InvalidArgument("batch_dims ", batch_dims, " must be in [", -irank, ", ",
                                     irank, "] for indices of shape ", indices.DebugString());
    }
    if (batch_dims < 0) batch_dims += irank;
  }
  if (params.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int prank = params.dims();
  if (prank == 0) {
    return errors::InvalidArgument("GatherV2 params must be at least rank 1, got a scalar");
  }
  int a = 0;
  DF_RETURN_IF_ERROR(CanonicalAxis(axis, prank, "GatherV2 axis", &a));
  if (batch_dims > a) {
    return errors::InvalidArgument("batch_dims ", batch_dims,
                                   " must be less than or equal to axis ", a);
  }
  const int b = static_cast<int>(batch_dims);
  if (axis_out != nullptr) *axis_out = a;
  if (batch_dims_out != nullptr) *batch_dims_out = b;
  if (indices.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  DimVector dims;
  for (int i = 0; i < a; ++i) {
    int64_t d = params.dim_size(i);
    if (i < b) {
      const int64_t di = indices.dim_size(i);
      if (d >= 0 && di >= 0 && d != di) {
        return errors::InvalidArgument("params and indices must agree on the ", b,
                                       " batch dims, but params has shape ", params.DebugString(),
                                       " and indices has shape ", indices.DebugString());
      }
      if (d < 0) d = di;
    }
    dims.push_back(d);
  }
  for (int i = b; i < indices.dims(); ++i) dims.push_back(indices.dim_size(i));
  for (int i = a + 1; i < prank; ++i) dims.push_back(params.dim_size(i));
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status OneHotOutputShape(const PartialTensorShape& indices, int64_t depth, int64_t axis,
                               PartialTensorShape* out) {
  if (indices.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int rank = indices.dims();
  if (axis < -1 || axis > rank) {
    return errors::InvalidArgument("OneHot axis ", axis, " must be -1 or in [0, ", rank,
                                   "] for indices of shape ", indices.DebugString());
  }
  if (axis == -1) axis = rank;
  DimVector dims = Dims(indices);
  dims.insert(dims.begin() + axis, depth);
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

namespace {

// Range's element count for `T`, an integer or floating type; floating
// counts are computed in T itself, as the kernel steps in T.
template <typename T>
absl::StatusOr<int64_t> RangeCount(T start, T limit, T delta) {
  if (delta == 0) {
    return errors::InvalidArgument("Range requires delta != 0");
  }
  if (delta > 0 && start > limit) {
    return errors::InvalidArgument("Range requires start <= limit when delta > 0, got start ",
                                   +start, " and limit ", +limit);
  }
  if (delta < 0 && start < limit) {
    return errors::InvalidArgument("Range requires start >= limit when delta < 0, got start ",
                                   +start, " and limit ", +limit);
  }
  if constexpr (std::is_integral_v<T>) {
    const int64_t s = start, l = limit, d = delta;
    const uint64_t span = s < l ? static_cast<uint64_t>(l) - static_cast<uint64_t>(s)
                                : static_cast<uint64_t>(s) - static_cast<uint64_t>(l);
    const uint64_t step = d > 0 ? static_cast<uint64_t>(d) : 0 - static_cast<uint64_t>(d);
    const uint64_t count = span / step + (span % step != 0 ? 1 : 0);
    if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return errors::InvalidArgument("Range from ", +start, " to ", +limit, " by ", +delta,
                                     " has too many elements (", count, ")");
    }
    return static_cast<int64_t>(count);
  } else {
    const double n = std::ceil(std::fabs(static_cast<double>((limit - start) / delta)));
    if (!(n < 9.2e18)) {
      return errors::InvalidArgument("Range from ", start, " to ", limit, " by ", delta,
                                     " has too many elements");
    }
    return static_cast<int64_t>(n);
  }
}

absl::Status CheckRangeScalar(const Tensor& t, absl::string_view name, DataType dtype) {
  if (t.dtype() != dtype) {
    return errors::InvalidArgument("Range ", name, " is ", DataTypeString(t.dtype()),
                                   " but start is ", DataTypeString(dtype));
  }
  if (t.dims() != 0) {
    return errors::InvalidArgument("Range ", name, " must be a scalar, got shape ",
                                   t.shape().DebugString());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> RangeSize(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  const DataType dtype = start.dtype();
  DF_RETURN_IF_ERROR(CheckRangeScalar(start, "start", dtype));
  DF_RETURN_IF_ERROR(CheckRangeScalar(limit, "limit", dtype));
  DF_RETURN_IF_ERROR(CheckRangeScalar(delta, "delta", dtype));
  absl::StatusOr<int64_t> result =
      errors::InvalidArgument("Range does not support type ", DataTypeString(dtype));
  VisitDataType(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, bfloat16>) {
      result =
          RangeCount(static_cast<float>(start.scalar<T>()), static_cast<float>(limit.scalar<T>()),
                     static_cast<float>(delta.scalar<T>()));
    } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      result = RangeCount(start.scalar<T>(), limit.scalar<T>(), delta.scalar<T>());
    }
  });
  return result;
}

absl::StatusOr<PartialTensorShape> ElementShapeFromTensor(const Tensor& t) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return errors::InvalidArgument("an element shape must be int32 or int64, got ",
                                   DataTypeString(t.dtype()));
  }
  auto at = [&t](int64_t i) {
    return t.dtype() == DT_INT32 ? int64_t{t.flat<int32_t>()[i]} : t.flat<int64_t>()[i];
  };
  if (t.dims() == 0) {
    if (at(0) != -1) {
      return errors::InvalidArgument("a scalar element shape must be -1 (unknown rank), got ",
                                     at(0));
    }
    return PartialTensorShape();
  }
  if (t.dims() != 1) {
    return errors::InvalidArgument("an element shape must be a vector or -1, got shape ",
                                   t.shape().DebugString());
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    dims[i] = at(i);
    if (dims[i] < -1) {
      return errors::InvalidArgument("an element shape has the invalid dimension ", dims[i]);
    }
  }
  return PartialTensorShape(absl::Span<const int64_t>(dims));
}

}  // namespace distflow
