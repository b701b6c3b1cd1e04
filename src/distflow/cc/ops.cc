#include "distflow/cc/ops.h"

#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

Output Operation::input(int i) const {
  for (const Edge* e : node_->in_edges()) {
    if (e->dst_input() == i) return Output(e->src(), e->src_output());
  }
  return Output();
}

Output Operation::output(int o) const { return Output(node_, o); }

std::string Output::name() const { return absl::StrCat(node()->name(), ":", index_); }

size_t OutputHash::operator()(const Output& o) const { return absl::HashOf(o.node(), o.index()); }

absl::Status Input::Initializer::CountMismatch(size_t count, const TensorShape& shape) {
  return errors::InvalidArgument("constant has ", count, " values but shape ", shape.DebugString(),
                                 " needs ", shape.num_elements());
}

Input::Initializer::Initializer(std::initializer_list<Initializer> v) {
  if (v.size() == 0) {
    status = errors::InvalidArgument(
        "cannot build a constant from an empty initializer list: its type is "
        "unknown (pass a Tensor instead)");
    return;
  }
  const Initializer& first = *v.begin();
  int i = 0;
  for (const Initializer& e : v) {
    if (!e.status.ok()) {
      status = e.status;
      return;
    }
    if (e.tensor.dtype() != first.tensor.dtype()) {
      status = errors::InvalidArgument("initializer list element ", i, " is ",
                                       DataTypeString(e.tensor.dtype()), " but element 0 is ",
                                       DataTypeString(first.tensor.dtype()),
                                       "; all elements must have one type");
      return;
    }
    if (e.tensor.shape() != first.tensor.shape()) {
      status = errors::InvalidArgument("ragged initializer list: element ", i, " has shape ",
                                       e.tensor.shape().DebugString(), " but element 0 has shape ",
                                       first.tensor.shape().DebugString(),
                                       "; nested lists must all have the same length");
      return;
    }
    ++i;
  }
  TensorShape shape = first.tensor.shape();
  shape.InsertDim(0, static_cast<int64_t>(v.size()));
  const DataType dtype = first.tensor.dtype();
  tensor = Tensor(dtype, shape);
  const int64_t per = first.tensor.NumElements();
  int64_t offset = 0;
  for (const Initializer& e : v) {
    if (dtype == DT_STRING) {
      auto src = e.tensor.flat<std::string>();
      std::string* dst = tensor.base<std::string>() + offset;
      for (int64_t k = 0; k < per; ++k) dst[k] = src[k];
    } else if (per > 0) {
      const size_t bytes = static_cast<size_t>(per) * DataTypeSize(dtype);
      std::memcpy(static_cast<char*>(tensor.raw_data()) + offset * DataTypeSize(dtype),
                  e.tensor.raw_data(), bytes);
    }
    offset += per;
  }
}

}  // namespace distflow
