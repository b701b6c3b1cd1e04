#include "distflow/kernels/example_parser.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"
#include "distflow/example.pb.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

// The dtype of the list `f` holds; DT_INVALID when it holds none.
DataType ListDtype(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      return DT_FLOAT;
    case Feature::kInt64List:
      return DT_INT64;
    case Feature::kBytesList:
      return DT_STRING;
    default:
      return DT_INVALID;
  }
}

int64_t ListSize(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      return f.float_list().value_size();
    case Feature::kInt64List:
      return f.int64_list().value_size();
    case Feature::kBytesList:
      return f.bytes_list().value_size();
    default:
      return 0;
  }
}

// Copies f's values to element `offset` onward of `out`, whose dtype is f's.
void CopyList(const Feature& f, Tensor* out, int64_t offset) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      std::copy(f.float_list().value().begin(), f.float_list().value().end(),
                out->base<float>() + offset);
      break;
    case Feature::kInt64List:
      std::copy(f.int64_list().value().begin(), f.int64_list().value().end(),
                out->base<int64_t>() + offset);
      break;
    case Feature::kBytesList:
      std::copy(f.bytes_list().value().begin(), f.bytes_list().value().end(),
                out->base<std::string>() + offset);
      break;
    default:
      break;
  }
}

absl::Status CheckListDtype(DataType dtype, absl::string_view what, const std::string& key) {
  if (dtype == DT_FLOAT || dtype == DT_INT64 || dtype == DT_STRING) return absl::OkStatus();
  return errors::InvalidArgument(what, " feature '", key, "' has dtype ", DataTypeString(dtype),
                                 "; a tf.Example holds only float, int64 and string");
}

// The parsed records of one batch, and how to name them in errors.
class Batch {
 public:
  static absl::StatusOr<Batch> Parse(const Tensor& serialized, const Tensor& names) {
    if (serialized.dtype() != DT_STRING || serialized.dims() > 1) {
      return errors::InvalidArgument("serialized must be a string scalar or vector, got ",
                                     DataTypeString(serialized.dtype()), " ",
                                     serialized.shape().DebugString());
    }
    if (names.NumElements() != 0 &&
        (names.dtype() != DT_STRING || names.shape() != serialized.shape())) {
      return errors::InvalidArgument(
          "names must be empty or shaped like serialized (", serialized.shape().DebugString(),
          "), got ", DataTypeString(names.dtype()), " ", names.shape().DebugString());
    }
    Batch batch(serialized.dims() == 0, &names);
    batch.examples_.resize(serialized.NumElements());
    for (int64_t b = 0; b < serialized.NumElements(); ++b) {
      if (!batch.examples_[b].ParseFromString(serialized.flat<std::string>()[b])) {
        return errors::InvalidArgument("example ", b, batch.Name(b),
                                       " is not a serialized tf.Example (it does not parse)");
      }
    }
    return batch;
  }

  bool scalar() const { return scalar_; }
  int64_t size() const { return static_cast<int64_t>(examples_.size()); }

  // Example b's feature `key`, or nullptr when it has none (or one holding
  // no list). InvalidArgument when its list is not of `dtype`.
  absl::StatusOr<const Feature*> Find(int64_t b, const std::string& key, DataType dtype) const {
    const auto& features = examples_[b].features().feature();
    auto it = features.find(key);
    if (it == features.end() || ListDtype(it->second) == DT_INVALID) return nullptr;
    if (ListDtype(it->second) != dtype) {
      return Error(b, key,
                   absl::StrCat("holds ", DataTypeString(ListDtype(it->second)), " values but ",
                                DataTypeString(dtype), " was expected"));
    }
    return &it->second;
  }

  absl::Status Error(int64_t b, const std::string& key, absl::string_view what) const {
    return errors::InvalidArgument("example ", b, Name(b), ", feature '", key, "': ", what);
  }

 private:
  Batch(bool scalar, const Tensor* names) : scalar_(scalar), names_(names) {}

  std::string Name(int64_t b) const {
    if (names_->NumElements() == 0 || names_->flat<std::string>()[b].empty()) return "";
    return absl::StrCat(" ('", names_->flat<std::string>()[b], "')");
  }

  bool scalar_;
  const Tensor* names_;  // outlives the batch
  std::vector<Example> examples_;
};

// How a dense key's values lie in each example: `elements` values in all
// (fixed length), or any number of rows of `elements` values (variable).
struct DenseLayout {
  bool variable = false;
  int64_t elements = 1;
};

absl::StatusOr<DenseLayout> LayoutOf(const ExampleParserConfig::Dense& d) {
  const PartialTensorShape& s = d.shape;
  auto bad = [&d](absl::string_view why) {
    return errors::InvalidArgument("dense feature '", d.key, "' has shape ", d.shape.DebugString(),
                                   ": ", why);
  };
  if (s.unknown_rank()) return bad("its rank must be known");
  DenseLayout layout;
  layout.variable = s.dims() > 0 && s.dim_size(0) == -1;
  for (int i = layout.variable ? 1 : 0; i < s.dims(); ++i) {
    if (s.dim_size(i) < 0) return bad("only the first dimension may be unknown (variable length)");
    if (!MultiplyWithoutOverflow(layout.elements, s.dim_size(i), &layout.elements)) {
      return bad("its element count overflows");
    }
  }
  const int64_t default_size = d.default_value.NumElements();
  if (layout.variable && default_size > 1) {
    return bad(absl::StrCat("a variable-length feature's default is its padding, one value; got ",
                            d.default_value.shape().DebugString()));
  }
  if (!layout.variable && default_size != 0 && default_size != layout.elements) {
    return bad(absl::StrCat("its default has shape ", d.default_value.shape().DebugString(), " (",
                            default_size, " values, not ", layout.elements, ")"));
  }
  if (default_size != 0 && d.default_value.dtype() != d.dtype) {
    return bad(absl::StrCat("its default is ", DataTypeString(d.default_value.dtype()), ", not ",
                            DataTypeString(d.dtype)));
  }
  return layout;
}

// [B] (none for a scalar batch) followed by `dims`.
absl::StatusOr<TensorShape> BatchShape(const Batch& batch, absl::Span<const int64_t> dims) {
  std::vector<int64_t> all;
  if (!batch.scalar()) all.push_back(batch.size());
  all.insert(all.end(), dims.begin(), dims.end());
  TensorShape shape;
  DF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(all, &shape));
  return shape;
}

absl::StatusOr<Tensor> ParseDense(const Batch& batch, const ExampleParserConfig::Dense& d) {
  DF_ASSIGN_OR_RETURN(DenseLayout layout, LayoutOf(d));
  const std::string what = absl::StrCat("dense feature '", d.key, "'");
  std::vector<const Feature*> found(batch.size());
  int64_t max_rows = 0;
  for (int64_t b = 0; b < batch.size(); ++b) {
    DF_ASSIGN_OR_RETURN(found[b], batch.Find(b, d.key, d.dtype));
    const int64_t n = found[b] == nullptr ? 0 : ListSize(*found[b]);
    if (!layout.variable) {
      if (found[b] == nullptr && d.default_value.NumElements() == 0) {
        return batch.Error(b, d.key, "is required (it has no default) but the example lacks it");
      }
      if (found[b] != nullptr && n != layout.elements) {
        return batch.Error(b, d.key,
                           absl::StrCat("has ", n, " values but its shape ", d.shape.DebugString(),
                                        " needs ", layout.elements));
      }
    } else {
      if (layout.elements == 0 ? n != 0 : n % layout.elements != 0) {
        return batch.Error(b, d.key,
                           absl::StrCat("has ", n, " values, not whole rows of ", layout.elements,
                                        " (its shape is ", d.shape.DebugString(), ")"));
      }
      max_rows = std::max(max_rows, layout.elements == 0 ? 0 : n / layout.elements);
    }
  }
  std::vector<int64_t> dims(d.shape.dim_sizes().begin(), d.shape.dim_sizes().end());
  if (layout.variable) dims[0] = max_rows;
  DF_ASSIGN_OR_RETURN(TensorShape shape, BatchShape(batch, dims));
  Tensor out;
  DF_RETURN_IF_ERROR(Tensor::Allocate(d.dtype, shape, &out, what));
  const int64_t per_example = batch.size() == 0 ? 0 : out.NumElements() / batch.size();
  Tensor padding(d.dtype, TensorShape());
  if (d.default_value.NumElements() == 1) {
    CopyElements(d.dtype, d.default_value.raw_data(), 1, padding.raw_data());
  } else if (d.dtype == DT_FLOAT) {
    padding.scalar<float>() = 0;
  } else if (d.dtype == DT_INT64) {
    padding.scalar<int64_t>() = 0;
  }
  for (int64_t b = 0; b < batch.size(); ++b) {
    const int64_t start = b * per_example;
    if (found[b] != nullptr) {
      CopyList(*found[b], &out, start);
      const int64_t n = ListSize(*found[b]);
      FillElements(d.dtype, padding.raw_data(), per_example - n, ElementAt(out, start + n));
    } else if (layout.variable || d.default_value.NumElements() == 1) {
      FillElements(d.dtype, padding.raw_data(), per_example, ElementAt(out, start));
    } else {
      CopyElements(d.dtype, d.default_value.raw_data(), per_example, ElementAt(out, start));
    }
  }
  return out;
}

// The features of one sparse or ragged key across the batch, and their total.
struct Lists {
  std::vector<const Feature*> found;
  int64_t total = 0;
  int64_t longest = 0;
};

absl::StatusOr<Lists> FindLists(const Batch& batch, const std::string& key, DataType dtype) {
  Lists lists;
  lists.found.resize(batch.size());
  for (int64_t b = 0; b < batch.size(); ++b) {
    DF_ASSIGN_OR_RETURN(lists.found[b], batch.Find(b, key, dtype));
    const int64_t n = lists.found[b] == nullptr ? 0 : ListSize(*lists.found[b]);
    lists.total += n;  // bounded by the bytes of the batch, so it cannot overflow
    lists.longest = std::max(lists.longest, n);
  }
  return lists;
}

// All the lists' values, one after the other.
absl::StatusOr<Tensor> Concatenated(const Lists& lists, DataType dtype, const std::string& key) {
  Tensor values;
  DF_RETURN_IF_ERROR(Tensor::Allocate(dtype, TensorShape({lists.total}), &values,
                                      absl::StrCat("feature '", key, "'")));
  int64_t at = 0;
  for (const Feature* f : lists.found) {
    if (f == nullptr) continue;
    CopyList(*f, &values, at);
    at += ListSize(*f);
  }
  return values;
}

absl::Status ParseSparse(const Batch& batch, const ExampleParserConfig::Sparse& s,
                         ParsedExamples* out) {
  DF_ASSIGN_OR_RETURN(Lists lists, FindLists(batch, s.key, s.dtype));
  const int64_t rank = batch.scalar() ? 1 : 2;
  Tensor indices;
  DF_RETURN_IF_ERROR(Tensor::Allocate(DT_INT64, TensorShape({lists.total, rank}), &indices,
                                      absl::StrCat("sparse feature '", s.key, "'")));
  int64_t* index = indices.base<int64_t>();
  for (int64_t b = 0; b < batch.size(); ++b) {
    const int64_t n = lists.found[b] == nullptr ? 0 : ListSize(*lists.found[b]);
    for (int64_t i = 0; i < n; ++i) {
      if (rank == 2) *index++ = b;
      *index++ = i;
    }
  }
  DF_ASSIGN_OR_RETURN(Tensor values, Concatenated(lists, s.dtype, s.key));
  Tensor shape(DT_INT64, TensorShape({rank}));
  if (rank == 2) shape.flat<int64_t>()[0] = batch.size();
  shape.flat<int64_t>()[rank - 1] = lists.longest;
  out->sparse_indices.push_back(std::move(indices));
  out->sparse_values.push_back(std::move(values));
  out->sparse_shapes.push_back(std::move(shape));
  return absl::OkStatus();
}

template <typename T>
void FillSplits(const Lists& lists, Tensor* splits) {
  T* at = splits->base<T>();
  int64_t sum = 0;
  *at++ = 0;
  for (const Feature* f : lists.found) {
    sum += f == nullptr ? 0 : ListSize(*f);
    *at++ = static_cast<T>(sum);
  }
}

absl::Status ParseRagged(const Batch& batch, const ExampleParserConfig::Ragged& r,
                         ParsedExamples* out) {
  if (r.splits_dtype != DT_INT32 && r.splits_dtype != DT_INT64) {
    return errors::InvalidArgument("ragged feature '", r.key, "' has row splits of dtype ",
                                   DataTypeString(r.splits_dtype), "; int32 or int64 expected");
  }
  DF_ASSIGN_OR_RETURN(Lists lists, FindLists(batch, r.key, r.dtype));
  if (r.splits_dtype == DT_INT32 && lists.total > std::numeric_limits<int32_t>::max()) {
    return errors::InvalidArgument("ragged feature '", r.key, "' has ", lists.total,
                                   " values, too many for int32 row splits");
  }
  DF_ASSIGN_OR_RETURN(Tensor values, Concatenated(lists, r.dtype, r.key));
  Tensor splits(r.splits_dtype, TensorShape({batch.size() + 1}));
  if (r.splits_dtype == DT_INT32) {
    FillSplits<int32_t>(lists, &splits);
  } else {
    FillSplits<int64_t>(lists, &splits);
  }
  out->ragged_values.push_back(std::move(values));
  out->ragged_splits.push_back(std::move(splits));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedExamples> ParseExamples(const ExampleParserConfig& config,
                                             const Tensor& serialized, const Tensor& names) {
  for (const auto& d : config.dense) DF_RETURN_IF_ERROR(CheckListDtype(d.dtype, "dense", d.key));
  for (const auto& s : config.sparse) DF_RETURN_IF_ERROR(CheckListDtype(s.dtype, "sparse", s.key));
  for (const auto& r : config.ragged) DF_RETURN_IF_ERROR(CheckListDtype(r.dtype, "ragged", r.key));
  DF_ASSIGN_OR_RETURN(Batch batch, Batch::Parse(serialized, names));
  ParsedExamples out;
  for (const auto& s : config.sparse) DF_RETURN_IF_ERROR(ParseSparse(batch, s, &out));
  for (const auto& d : config.dense) {
    DF_ASSIGN_OR_RETURN(Tensor t, ParseDense(batch, d));
    out.dense_values.push_back(std::move(t));
  }
  for (const auto& r : config.ragged) DF_RETURN_IF_ERROR(ParseRagged(batch, r, &out));
  return out;
}

}  // namespace distflow
