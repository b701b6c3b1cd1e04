"""distflow.function: Python functions traced once into graph functions."""

import numpy as np
import pytest

import distflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def test_a_function_is_traced_once_and_called_like_an_op():
    traces = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32),
                                  tf.TensorSpec([], tf.float32)])
    def affine(x, b):
        traces.append(1)
        return tf.reduce_sum(x, axis=1) * 2.0 + b, tf.shape(x)

    x = tf.placeholder(tf.float32, [None, 3])
    y1, shape = affine(x, 1.0)
    y2, _ = affine(x * 2.0, tf.constant(0.5))
    assert y1.op.type == "StatefulPartitionedCall"
    assert len(traces) == 1  # one trace per graph
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        out1, out_shape, out2 = sess.run((y1, shape, y2), {x: data})
    np.testing.assert_allclose(out1, data.sum(axis=1) * 2 + 1)
    np.testing.assert_allclose(out2, data.sum(axis=1) * 4 + 0.5)
    assert list(out_shape) == [2, 3]


def test_a_function_reads_a_variable_it_captures():
    v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")

    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
    def add_v(x):
        return {"sum": x + v.read_value()}

    out = add_v([10.0, 20.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out["sum"]), [11.0, 22.0])
        sess.run(v.assign([5.0, 5.0]))
        np.testing.assert_allclose(sess.run(out["sum"]), [15.0, 25.0])


def test_wrong_calls_name_what_was_wrong():
    with pytest.raises(TypeError, match="input_signature"):
        tf.function(lambda x: x)

    f = tf.function(lambda x: x + 1, input_signature=[tf.TensorSpec([2], tf.int32)])
    with pytest.raises(TypeError, match="takes 1 arguments"):
        f(1, 2)
    with pytest.raises(ValueError, match="signature says"):
        f(tf.constant([1, 2, 3]))
    assert list(tf.Session().run(f([1, 2]))) == [2, 3]
