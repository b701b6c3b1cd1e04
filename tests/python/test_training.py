"""Gradients against finite differences, training that lowers the loss,
optimizers, Saver and checkpoint reading."""

import os

import numpy as np
import pytest

import distflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def numeric_gradient(f, x, eps=1e-3):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((2, 3))
    w0 = rng.standard_normal((3, 2))
    x = tf.placeholder(tf.float64, [2, 3])
    w = tf.constant(w0)
    y = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * tf.square(x @ w)) + tf.reduce_sum(tf.exp(-x * x))
    (grad,) = tf.gradients(y, [x])
    assert grad.op.name.startswith("gradients/")
    with tf.Session() as sess:
        analytic = sess.run(grad, {x: x0})
        numeric = numeric_gradient(lambda v: sess.run(y, {x: v}), x0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_gradient_of_an_unconnected_input_is_zero():
    # AddSymbolicGradients gives zeros where TensorFlow's Python gives None.
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    grads = tf.gradients(a * 3.0, [a, b])
    with tf.Session() as sess:
        assert sess.run(grads) == [3.0, 0.0]
    assert tf.gradients(a * 3.0, [a], name="gradients")[0].op.name.startswith("gradients_1/")


def make_regression(seed=4, n=64):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((n, 3)).astype(np.float32)
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    ys = xs @ true_w + 0.25
    return xs, ys


def linear_model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    return x, y, w, b, loss


@pytest.mark.parametrize("optimizer", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.05, momentum=0.9),
    lambda: tf.train.AdamOptimizer(0.05),
])
def test_training_lowers_the_loss(optimizer):
    xs, ys = make_regression()
    x, y, w, b, loss = linear_model()
    step = tf.train.get_or_create_global_step()
    train_op = optimizer().minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xs, y: ys})
        for _ in range(300):
            sess.run(train_op, {x: xs, y: ys})
        last = sess.run(loss, {x: xs, y: ys})
        assert sess.run(step) == 300
    assert first > 1.0
    assert last < 1e-3


def test_compute_and_apply_gradients():
    xs, ys = make_regression()
    x, y, w, b, loss = linear_model()
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w, b]
    train_op = opt.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g = sess.run(grads_and_vars[1][0], {x: xs, y: ys})
        assert g == pytest.approx(2 * np.mean(-ys), rel=1e-4)
        sess.run(train_op, {x: xs, y: ys})
        assert sess.run(b) == pytest.approx(-0.1 * g, rel=1e-4)


def test_saver_round_trip_and_checkpoint_reader(tmp_path):
    directory = str(tmp_path / ("saver_%d" % os.getpid()))
    os.makedirs(directory)
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver([w, step])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step.assign(7))
        prefix = saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
        assert prefix.endswith("model.ckpt-7")
        assert tf.train.latest_checkpoint(directory) == prefix
        sess.run(w.assign(np.zeros((2, 3), np.float32)))
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))
    reader = tf.train.load_checkpoint(directory)
    assert reader.get_variable_to_shape_map() == {"w": [2, 3], "global_step": []}
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    np.testing.assert_array_equal(reader.get_tensor("w"), np.arange(6).reshape(2, 3))
    with pytest.raises(tf.errors.NotFoundError):
        reader.get_tensor("missing")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
