"""tf.constant: a Const node holding a numpy value."""

import numpy as np

from distflow import dtypes
from distflow import framework


def constant(value, dtype=None, shape=None, name="Const"):
    if dtype is None:
        dtype = framework._python_dtype(value)
    dtype = dtypes.as_dtype(dtype)
    if dtype.as_numpy_dtype is None:
        raise TypeError("a constant cannot have dtype %s" % dtype.name)
    try:
        array = np.asarray(value, dtype=dtype.as_numpy_dtype)
    except (TypeError, ValueError) as e:
        raise TypeError("cannot make a %s constant of %r: %s" % (dtype.name, value, e)) from None
    if shape is not None:
        shape = [int(d) for d in shape]
        if array.size == 1 and int(np.prod(shape)) != 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape, dtype=np.int64)):
            array = array.reshape(shape)
        else:
            raise ValueError("a constant of %d elements cannot have shape %s" % (array.size, shape))
    graph = framework.get_default_graph()
    op = graph._add_op("Const", name, [], {"value": array, "dtype": dtype.as_datatype_enum})
    return op.outputs[0]
