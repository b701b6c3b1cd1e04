"""distflow: TensorFlow 1's graph API over distflow's C++ runtime.

    import distflow as tf
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.matmul(x, tf.Variable(tf.ones([3, 1])))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(y, feed_dict={x: [[1, 2, 3]]}))

The names are those of tf.compat.v1 wherever distflow has the feature
(`distflow.compat.v1` is this module); every registered op is also in
`distflow.raw_ops`. Graphs, sessions, kernels, gradients, optimizers and
checkpoints are the C++ runtime's, through the extension distflow._distflow.
"""

from distflow import data
from distflow import distribute
from distflow import dtypes
from distflow import errors
from distflow import nn
from distflow import raw_ops
from distflow import saved_model
from distflow import timeline
from distflow import train
from distflow.array_ops import (concat, expand_dims, fill, gather, group, identity, no_op,
                                one_hot, ones, ones_like, placeholder, placeholder_with_default,
                                rank, reshape, shape, size, squeeze, stack, stop_gradient,
                                transpose, unstack, where, zeros, zeros_like)
from distflow.constant_op import constant
from distflow.control_flow_ops import cond, while_loop
from distflow.dtypes import (DType, as_dtype, bfloat16, bool, double, float16, float32, float64,
                             half, int8, int16, int32, int64, resource, string, uint8, uint16,
                             uint32, uint64, variant)
from distflow.framework import (Graph, GraphKeys, Operation, Tensor, TensorShape,
                                add_to_collection, control_dependencies, convert_to_tensor,
                                device, get_collection, get_default_graph, name_scope,
                                reset_default_graph)
from distflow.graph_def import GraphDef, import_graph_def
from distflow.def_function import Function, TensorSpec, function
from distflow.gradients_impl import gradients
from distflow.math_ops import (abs, add, add_n, argmax, cast, divide, equal, exp, floordiv,
                               greater, greater_equal, less, less_equal, log, logical_and,
                               logical_or, matmul, maximum,
                               minimum, multiply, negative, not_equal, pow, reduce_max,
                               reduce_mean, reduce_min, reduce_prod, reduce_sum, rsqrt, sigmoid,
                               sqrt, square, subtract, tanh)
from distflow.session import (InteractiveSession, RunMetadata, RunOptions, Session,
                              get_default_session)
from distflow.variables import (Variable, global_variables, global_variables_initializer,
                                initialize_all_variables, trainable_variables,
                                variables_initializer)

__version__ = "0.1.0"


class _Compat:
    """distflow.compat.v1 is distflow itself (its names are tf.compat.v1's)."""

    def __init__(self, module):
        self.v1 = module


import sys as _sys  # noqa: E402

compat = _Compat(_sys.modules[__name__])
del _sys
