"""The math functions of tf.compat.v1, each one registered op (or a few)."""

import builtins

import numpy as np

from distflow import dtypes
from distflow import framework
from distflow import op_def_library

_apply = op_def_library.apply_op


def _binary(op_type, x, y, name):
    # The second operand takes the first's dtype when it is a constant, and
    # the other way round, as TensorFlow's operators do.
    if isinstance(x, framework.Tensor) or hasattr(x, "_as_tensor"):
        x = framework.convert_to_tensor(x)
        y = framework.convert_to_tensor(y, dtype_hint=x.dtype)
    else:
        y = framework.convert_to_tensor(y)
        x = framework.convert_to_tensor(x, dtype_hint=y.dtype)
    return _apply(op_type, name=name or op_type, x=x, y=y)


def add(x, y, name=None):
    return _binary("AddV2", x, y, name)


def subtract(x, y, name=None):
    return _binary("Sub", x, y, name)


def multiply(x, y, name=None):
    return _binary("Mul", x, y, name)


def divide(x, y, name=None):
    """x / y: RealDiv for floating types, integer division (Div) otherwise."""
    x = framework.convert_to_tensor(x)
    op = "RealDiv" if x.dtype.is_floating else "Div"
    return _binary(op, x, y, name)


def floordiv(x, y, name=None):
    return _binary("FloorDiv", x, y, name)


def maximum(x, y, name=None):
    return _binary("Maximum", x, y, name)


def minimum(x, y, name=None):
    return _binary("Minimum", x, y, name)


def pow(x, y, name=None):  # noqa: A001 (TensorFlow's name)
    return _binary("Pow", x, y, name)


def equal(x, y, name=None):
    return _binary("Equal", x, y, name)


def not_equal(x, y, name=None):
    return _binary("NotEqual", x, y, name)


def logical_and(x, y, name=None):
    return _binary("LogicalAnd", x, y, name)


def logical_or(x, y, name=None):
    return _binary("LogicalOr", x, y, name)


def less(x, y, name=None):
    return _binary("Less", x, y, name)


def less_equal(x, y, name=None):
    return _binary("LessEqual", x, y, name)


def greater(x, y, name=None):
    return _binary("Greater", x, y, name)


def greater_equal(x, y, name=None):
    return _binary("GreaterEqual", x, y, name)


def _unary(op_type):
    def f(x, name=None):
        return _apply(op_type, name=name or op_type, x=x)

    f.__name__ = op_type.lower()
    f.__doc__ = "Elementwise %s (op %s)." % (op_type.lower(), op_type)
    return f


negative = _unary("Neg")
abs = _unary("Abs")  # noqa: A001 (TensorFlow's name)
square = _unary("Square")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
exp = _unary("Exp")
log = _unary("Log")
sigmoid = _unary("Sigmoid")
tanh = _unary("Tanh")


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a = framework.convert_to_tensor(a)
    b = framework.convert_to_tensor(b, dtype_hint=a.dtype)
    return _apply("MatMul", name=name or "MatMul", a=a, b=b, transpose_a=transpose_a,
                  transpose_b=transpose_b)


def add_n(inputs, name=None):
    return _apply("AddN", name=name or "AddN", inputs=list(inputs))


def cast(x, dtype, name=None):
    x = framework.convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return _apply("Cast", name=name or "Cast", x=x, DstT=dtype)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    if axis is None:
        axis = 0 if dimension is None else dimension
    return _apply("ArgMax", name=name or "ArgMax", input=input,
                  dimension=framework.convert_to_tensor(axis, dtype=dtypes.int32),
                  output_type=output_type)


def _reduction_axes(x, axis):
    if axis is None:
        rank = x.shape.ndims
        if rank is not None:
            return framework.convert_to_tensor(np.arange(rank, dtype=np.int32))
        return _apply("Range", start=0, limit=_apply("Rank", input=x), delta=1)
    return framework.convert_to_tensor(np.asarray(axis, dtype=np.int32))


def _reduce(op_type, default_name):
    def f(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
          keep_dims=None):
        x = framework.convert_to_tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        if keep_dims is not None:
            keepdims = keep_dims
        return _apply(op_type, name=name or default_name, input=x,
                      reduction_indices=_reduction_axes(x, axis), keep_dims=builtins.bool(keepdims))

    f.__name__ = default_name
    return f


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")
reduce_min = _reduce("Min", "Min")
reduce_prod = _reduce("Prod", "Prod")
