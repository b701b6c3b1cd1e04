#include "attrs.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/tensor_proto.h"
#include "numpy_tensor.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

absl::Status ShapeFromPython(py::handle value, TensorShapeProto* out) {
  out->Clear();
  if (value.is_none()) {
    out->set_unknown_rank(true);
    return absl::OkStatus();
  }
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) {
    return errors::InvalidArgument("a shape is None or a sequence of ints and Nones, not ",
                                   std::string(py::str(py::repr(value))));
  }
  for (py::handle dim : value) {
    if (dim.is_none()) {
      out->add_dim()->set_size(-1);
    } else {
      try {
        out->add_dim()->set_size(dim.cast<int64_t>());
      } catch (const py::cast_error&) {
        return errors::InvalidArgument("a shape's dimensions are ints or None, not ",
                                       std::string(py::str(py::repr(dim))));
      }
    }
  }
  return absl::OkStatus();
}

// One element of an attr of scalar type `type` ("int", "float", ...).
absl::Status ScalarFromPython(absl::string_view type, py::handle value, AttrValue* out) {
  try {
    if (type == "int") {
      out->set_i(value.cast<int64_t>());
    } else if (type == "float") {
      out->set_f(value.cast<float>());
    } else if (type == "bool") {
      out->set_b(value.cast<bool>());
    } else if (type == "string") {
      out->set_s(value.cast<std::string>());
    } else if (type == "type") {
      out->set_type(static_cast<DataType>(value.cast<int>()));
    } else if (type == "shape") {
      return ShapeFromPython(value, out->mutable_shape());
    } else if (type == "tensor") {
      Tensor t;
      DF_RETURN_IF_ERROR(NumpyToTensor(value, DT_INVALID, &t));
      TensorToProto(t, out->mutable_tensor());
    } else if (type == "func") {
      out->mutable_func()->set_name(value.cast<std::string>());
    } else {
      return errors::Unimplemented("attrs of type ", type, " cannot be set from Python");
    }
  } catch (const py::cast_error&) {
    return errors::InvalidArgument("expected ", type, ", got ",
                                   std::string(py::str(py::repr(value))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AttrValueFromPython(absl::string_view attr_name, absl::string_view type,
                                 py::handle value, AttrValue* out) {
  out->Clear();
  absl::Status s;
  if (absl::StartsWith(type, "list(")) {
    const absl::string_view element = type.substr(5, type.size() - 6);
    if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) {
      s = errors::InvalidArgument("expected a list of ", element, ", got ",
                                  std::string(py::str(py::repr(value))));
    } else {
      AttrValue::ListValue* list = out->mutable_list();
      for (py::handle item : value) {
        AttrValue one;
        s = ScalarFromPython(element, item, &one);
        if (!s.ok()) break;
        if (element == "int") list->add_i(one.i());
        if (element == "float") list->add_f(one.f());
        if (element == "bool") list->add_b(one.b());
        if (element == "string") list->add_s(one.s());
        if (element == "type") list->add_type(one.type());
        if (element == "shape") *list->add_shape() = one.shape();
        if (element == "tensor") *list->add_tensor() = one.tensor();
        if (element == "func") *list->add_func() = one.func();
      }
    }
  } else {
    s = ScalarFromPython(type, value, out);
  }
  if (!s.ok()) return errors::Annotate(s, absl::StrCat("attr '", attr_name, "': "));
  return absl::OkStatus();
}

py::object AttrValueToPython(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS:
      return py::bytes(value.s());
    case AttrValue::kI:
      return py::int_(value.i());
    case AttrValue::kF:
      return py::float_(value.f());
    case AttrValue::kB:
      return py::bool_(value.b());
    case AttrValue::kType:
      return py::int_(static_cast<int>(value.type()));
    case AttrValue::kShape: {
      if (value.shape().unknown_rank()) return py::none();
      py::list dims;
      for (const auto& d : value.shape().dim()) {
        dims.append(d.size() < 0 ? py::object(py::none()) : py::object(py::int_(d.size())));
      }
      return dims;
    }
    case AttrValue::kTensor: {
      Tensor t;
      if (!TensorFromProto(value.tensor(), &t).ok()) return py::none();
      return TensorToNumpy(t);
    }
    case AttrValue::kFunc:
      return py::str(value.func().name());
    case AttrValue::kList: {
      py::list items;
      const AttrValue::ListValue& l = value.list();
      for (const auto& x : l.s()) items.append(py::bytes(x));
      for (int64_t x : l.i()) items.append(py::int_(x));
      for (float x : l.f()) items.append(py::float_(x));
      for (bool x : l.b()) items.append(py::bool_(x));
      for (int x : l.type()) items.append(py::int_(x));
      for (const auto& x : l.shape()) {
        AttrValue one;
        *one.mutable_shape() = x;
        items.append(AttrValueToPython(one));
      }
      return items;
    }
    default:
      return py::none();
  }
}

}  // namespace python
}  // namespace distflow
