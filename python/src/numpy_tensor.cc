#include "numpy_tensor.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

struct DtypePair {
  DataType dtype;
  char kind;  // numpy's dtype.kind
  int size;   // bytes
};

// The element types numpy and distflow share with one memory layout.
constexpr DtypePair kPairs[] = {
    {DT_FLOAT, 'f', 4},  {DT_DOUBLE, 'f', 8}, {DT_HALF, 'f', 2},   {DT_INT8, 'i', 1},
    {DT_INT16, 'i', 2},  {DT_INT32, 'i', 4},  {DT_INT64, 'i', 8},  {DT_UINT8, 'u', 1},
    {DT_UINT16, 'u', 2}, {DT_UINT32, 'u', 4}, {DT_UINT64, 'u', 8}, {DT_BOOL, 'b', 1},
};

// Arrays whose tensors were released off the GIL, waiting for a GIL holder.
absl::Mutex released_mu;
std::vector<PyObject*>* released ABSL_GUARDED_BY(released_mu) = new std::vector<PyObject*>;

// A tensor over `array`'s memory, holding a reference to it.
Tensor WrapArray(py::array array, DataType dtype) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  // The runtime never writes a fed tensor (it holds a reference for the
  // whole step, so no kernel forwards it as an output), so read-only arrays
  // are fine.
  void* data = const_cast<void*>(array.data());
  const size_t bytes = static_cast<size_t>(array.nbytes());
  PyObject* owner = array.release().ptr();
  RefPtr<TensorBuffer> buffer = MakeExternalBuffer(data, bytes, [owner] {
    absl::MutexLock lock(&released_mu);
    released->push_back(owner);
  });
  return Tensor(dtype, TensorShape(dims), std::move(buffer));
}

absl::Status StringTensor(py::handle value, Tensor* out) {
  py::array array = py::array::ensure(value, py::array::c_style);
  if (!array) {
    PyErr_Clear();
    return errors::InvalidArgument("cannot convert ", std::string(py::str(py::repr(value))),
                                   " to a string tensor");
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  Tensor t(DT_STRING, TensorShape(dims));
  py::object flat = array.attr("ravel")();
  std::string* elements = t.base<std::string>();
  int64_t i = 0;
  for (py::handle item : flat) {
    if (py::isinstance<py::bytes>(item)) {
      elements[i++] = item.cast<std::string>();
    } else if (py::isinstance<py::str>(item)) {
      elements[i++] = item.cast<std::string>();  // UTF-8
    } else {
      return errors::InvalidArgument("a string tensor's elements must be bytes or str, not ",
                                     std::string(py::str(py::repr(item))));
    }
  }
  *out = std::move(t);
  return absl::OkStatus();
}

}  // namespace

absl::Status NumpyDtype(DataType dtype, py::dtype* out) {
  if (dtype == DT_STRING) {
    *out = py::dtype("O");
    return absl::OkStatus();
  }
  for (const DtypePair& p : kPairs) {
    if (p.dtype == dtype) {
      *out = py::dtype(std::string(1, p.kind) + std::to_string(p.size));
      return absl::OkStatus();
    }
  }
  return errors::InvalidArgument("numpy has no dtype for ", DataTypeString(dtype));
}

absl::Status DataTypeOfNumpy(const py::dtype& dtype, DataType* out) {
  const char kind = dtype.kind();
  if (kind == 'O' || kind == 'S' || kind == 'U') {
    *out = DT_STRING;
    return absl::OkStatus();
  }
  for (const DtypePair& p : kPairs) {
    if (p.kind == kind && p.size == dtype.itemsize()) {
      *out = p.dtype;
      return absl::OkStatus();
    }
  }
  return errors::InvalidArgument("distflow has no dtype for numpy's ",
                                 std::string(py::str(static_cast<const py::handle&>(dtype))));
}

py::object TensorToNumpy(const Tensor& tensor) {
  std::vector<py::ssize_t> shape(tensor.dims());
  for (int d = 0; d < tensor.dims(); ++d) shape[d] = tensor.dim_size(d);
  if (tensor.dtype() == DT_STRING) {
    py::array result(py::dtype("O"), shape);
    py::object flat = result.attr("reshape")(-1);
    const std::string* elements = tensor.base<std::string>();
    for (int64_t i = 0; i < tensor.NumElements(); ++i) {
      flat[py::int_(i)] = py::bytes(elements[i]);
    }
    return result;
  }
  py::dtype dtype;
  if (absl::Status s = NumpyDtype(tensor.dtype(), &dtype); !s.ok()) {
    throw py::type_error(std::string(s.message()));
  }
  if (tensor.NumElements() == 0 || tensor.raw_data() == nullptr) {
    return py::array(dtype, shape);
  }
  py::capsule owner(new Tensor(tensor), [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, {}, tensor.raw_data(), owner);
}

absl::Status NumpyToTensor(py::handle value, DataType dtype, Tensor* out) {
  DrainReleasedArrays();
  if (dtype == DT_STRING) return StringTensor(value, out);
  if (dtype == DT_INVALID) {
    py::array probe = py::array::ensure(value);
    if (!probe) {
      PyErr_Clear();
      return errors::InvalidArgument("cannot convert ", std::string(py::str(py::repr(value))),
                                     " to a tensor");
    }
    DF_RETURN_IF_ERROR(DataTypeOfNumpy(probe.dtype(), &dtype));
    if (dtype == DT_STRING) return StringTensor(value, out);
  }
  py::dtype want;
  DF_RETURN_IF_ERROR(NumpyDtype(dtype, &want));
  // numpy.asarray returns `value` itself when it already is a C-contiguous
  // array of the dtype: then the tensor shares its memory.
  static py::handle as_array = py::object(py::module_::import("numpy").attr("asarray")).release();
  py::object array;
  try {
    array = as_array(value, py::arg("dtype") = want, py::arg("order") = "C");
  } catch (py::error_already_set& e) {
    return errors::InvalidArgument("cannot convert ", std::string(py::str(py::repr(value))),
                                   " to a ", DataTypeString(dtype), " tensor: ", e.what());
  }
  *out = WrapArray(py::reinterpret_borrow<py::array>(array), dtype);
  return absl::OkStatus();
}

void DrainReleasedArrays() {
  std::vector<PyObject*> drained;
  {
    absl::MutexLock lock(&released_mu);
    drained.swap(*released);
  }
  for (PyObject* array : drained) Py_DECREF(array);
}

}  // namespace python
}  // namespace distflow
