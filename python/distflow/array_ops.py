"""The array functions of tf.compat.v1: placeholders, shapes, fills."""

import numpy as np

from distflow import dtypes
from distflow import framework
from distflow import op_def_library

_apply = op_def_library.apply_op


def placeholder(dtype, shape=None, name=None):
    """A tensor the caller feeds at run time; shape None means any shape."""
    dims = None if shape is None else list(framework.TensorShape(shape).dims or [])
    if isinstance(shape, framework.TensorShape):
        dims = shape.dims
    return _apply("Placeholder", name=name or "Placeholder", dtype=dtypes.as_dtype(dtype),
                  shape=dims)


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    return _apply("PlaceholderWithDefault", name=name or "PlaceholderWithDefault",
                  input=input, shape=list(shape))


def identity(input, name=None):  # noqa: A002
    return _apply("Identity", name=name or "Identity", input=input)


def stop_gradient(input, name=None):  # noqa: A002
    return _apply("StopGradient", name=name or "StopGradient", input=input)


def _shape_tensor(shape):
    if isinstance(shape, framework.Tensor):
        return shape
    return framework.convert_to_tensor(np.asarray(list(shape), dtype=np.int32))


def reshape(tensor, shape, name=None):
    return _apply("Reshape", name=name or "Reshape", tensor=tensor, shape=_shape_tensor(shape))


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return _apply("Shape", name=name or "Shape", input=input, out_type=out_type)


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return _apply("Size", name=name or "Size", input=input, out_type=out_type)


def rank(input, name=None):  # noqa: A002
    return _apply("Rank", name=name or "Rank", input=input)


def fill(dims, value, name=None):
    return _apply("Fill", name=name or "Fill", dims=_shape_tensor(dims), value=value)


def zeros(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    return fill(shape, np.zeros((), dtype=dtype.as_numpy_dtype), name=name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    return fill(shape, np.ones((), dtype=dtype.as_numpy_dtype), name=name or "ones")


def zeros_like(tensor, name=None):
    return _apply("ZerosLike", name=name or "zeros_like", x=tensor)


def ones_like(tensor, name=None):
    return _apply("OnesLike", name=name or "ones_like", x=tensor)


def concat(values, axis, name="concat"):
    return _apply("ConcatV2", name=name, values=list(values),
                  axis=framework.convert_to_tensor(axis, dtype=dtypes.int32))


def stack(values, axis=0, name="stack"):
    return _apply("Pack", name=name, values=list(values), axis=axis)


def unstack(value, num=None, axis=0, name="unstack"):
    value = framework.convert_to_tensor(value)
    if num is None:
        num = value.shape[axis]
    return _apply("Unpack", name=name, value=value, num=num, axis=axis)


def transpose(a, perm=None, name="transpose"):
    a = framework.convert_to_tensor(a)
    if perm is None:
        perm = list(range(a.shape.ndims))[::-1]
    return _apply("Transpose", name=name, x=a, perm=_shape_tensor(perm))


def expand_dims(input, axis, name=None):  # noqa: A002
    return _apply("ExpandDims", name=name or "ExpandDims", input=input,
                  dim=framework.convert_to_tensor(axis, dtype=dtypes.int32))


def squeeze(input, axis=None, name=None):  # noqa: A002
    dims = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return _apply("Squeeze", name=name or "Squeeze", input=input, squeeze_dims=dims)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1, dtype=dtypes.float32,
            name=None):
    dtype = dtypes.as_dtype(dtype)
    return _apply("OneHot", name=name or "one_hot", indices=indices,
                  depth=framework.convert_to_tensor(depth, dtype=dtypes.int32),
                  on_value=framework.convert_to_tensor(on_value, dtype=dtype),
                  off_value=framework.convert_to_tensor(off_value, dtype=dtype), axis=axis)


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        return _apply("Where", name=name or "Where", input=condition)
    return _apply("SelectV2", name=name or "SelectV2", condition=condition, t=x, e=y)


def gather(params, indices, axis=0, name=None):
    return _apply("GatherV2", name=name or "GatherV2", params=params, indices=indices,
                  axis=framework.convert_to_tensor(axis, dtype=dtypes.int32))


def no_op(name=None):
    return _apply("NoOp", name=name or "NoOp")


def group(*inputs, name=None):
    """An op that runs after every one of `inputs` (ops or tensors)."""
    ops = []
    for i in inputs:
        if isinstance(i, (list, tuple)):
            ops.extend(i)
        else:
            ops.append(i)
    with framework.control_dependencies(ops):
        return no_op(name=name or "group_deps")


def strided_slice_of(tensor, key, name="strided_slice"):
    """tensor[key] for ints, slices, Ellipsis and None (a new axis), as one
    StridedSlice op, numpy's indexing rules."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        bit = 1 << i
        if isinstance(k, slice):
            if k.step == 0:
                raise ValueError("a slice step cannot be 0")
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(1 if k.step is None else int(k.step))
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
        elif k is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif k is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            try:
                index = int(k)
            except TypeError:
                raise TypeError("tensors are indexed by ints, slices, ... and None, not %r"
                                % (k,)) from None
            begin.append(index), end.append(index + 1), strides.append(1)
            masks["shrink_axis_mask"] |= bit
    as_index = lambda v: framework.convert_to_tensor(np.asarray(v, dtype=np.int32))  # noqa: E731
    return _apply("StridedSlice", name=name, input=tensor, begin=as_index(begin),
                  end=as_index(end), strides=as_index(strides), **masks)
