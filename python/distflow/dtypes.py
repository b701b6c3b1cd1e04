"""Element types, as tf.DType: distflow's DataType enum values with names."""

import numpy as np


class DType:
    """One element type. Compares equal to itself and to its enum value."""

    def __init__(self, enum, name, numpy_dtype):
        self._enum = enum
        self._name = name
        self._numpy = numpy_dtype

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def name(self):
        return self._name

    @property
    def as_numpy_dtype(self):
        return self._numpy

    @property
    def base_dtype(self):
        return self

    @property
    def is_floating(self):
        return self._numpy is not None and np.issubdtype(self._numpy, np.floating)

    @property
    def is_integer(self):
        return self._numpy is not None and np.issubdtype(self._numpy, np.integer)

    @property
    def is_bool(self):
        return self._enum == 10

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._enum == other._enum
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __hash__(self):
        return self._enum

    def __repr__(self):
        return "distflow." + self._name


float32 = DType(1, "float32", np.float32)
float64 = DType(2, "float64", np.float64)
int32 = DType(3, "int32", np.int32)
uint8 = DType(4, "uint8", np.uint8)
int16 = DType(5, "int16", np.int16)
int8 = DType(6, "int8", np.int8)
string = DType(7, "string", np.object_)
int64 = DType(9, "int64", np.int64)
bool = DType(10, "bool", np.bool_)  # noqa: A001 (TensorFlow's name)
bfloat16 = DType(14, "bfloat16", None)
uint16 = DType(17, "uint16", np.uint16)
float16 = DType(19, "float16", np.float16)
resource = DType(20, "resource", None)
variant = DType(21, "variant", None)
uint32 = DType(22, "uint32", np.uint32)
uint64 = DType(23, "uint64", np.uint64)
half = float16
double = float64

_BY_ENUM = {d.as_datatype_enum: d for d in (
    float32, float64, int32, uint8, int16, int8, string, int64, bool, bfloat16, uint16,
    float16, resource, variant, uint32, uint64)}
_BY_NAME = {d.name: d for d in _BY_ENUM.values()}
_BY_NAME.update({"half": float16, "double": float64})


def as_dtype(value):
    """The DType of a DType, enum value, name, numpy dtype or Python type."""
    if isinstance(value, DType):
        return value
    if isinstance(value, int) and not isinstance(value, type(True)):
        if value in _BY_ENUM:
            return _BY_ENUM[value]
        if value - 100 in _BY_ENUM:  # a reference type
            return _BY_ENUM[value - 100]
        raise TypeError("no DType has enum value %d" % value)
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError("no DType is named %r" % value)
    if value is float:
        return float32
    if value is int:
        return int32
    if value is type(True):
        return bool
    if value in (bytes, str):
        return string
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError("cannot convert %r to a DType" % (value,)) from None
    if np_dtype.kind in "OSU":
        return string
    for d in _BY_ENUM.values():
        if d.as_numpy_dtype is not None and d.as_numpy_dtype is not np.object_ and \
                np.dtype(d.as_numpy_dtype) == np_dtype:
            return d
    raise TypeError("distflow has no dtype for numpy's %s" % np_dtype)
