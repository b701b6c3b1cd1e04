"""Op results against numpy, raw_ops from the registry, feeds of every dtype."""

import numpy as np
import pytest

import distflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict=feed_dict)


def test_arithmetic_operators_match_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    m = rng.standard_normal((4, 2)).astype(np.float32)
    x, y, w = tf.constant(a), tf.constant(b), tf.constant(m)
    out = run({"add": x + y, "sub": x - y, "mul": x * y, "div": x / (y * y + 1.0),
               "neg": -x, "matmul": x @ w, "radd": 1.0 + x, "rsub": 2.0 - x})
    np.testing.assert_allclose(out["add"], a + b, rtol=1e-6)
    np.testing.assert_allclose(out["sub"], a - b, rtol=1e-6)
    np.testing.assert_allclose(out["mul"], a * b, rtol=1e-6)
    np.testing.assert_allclose(out["div"], a / (b * b + 1), rtol=1e-5)
    np.testing.assert_allclose(out["neg"], -a)
    np.testing.assert_allclose(out["matmul"], a @ m, rtol=1e-5)
    np.testing.assert_allclose(out["radd"], 1 + a, rtol=1e-6)
    np.testing.assert_allclose(out["rsub"], 2 - a, rtol=1e-6)


def test_reductions_casts_comparisons():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tf.constant(a)
    out = run([tf.reduce_sum(x), tf.reduce_sum(x, axis=1), tf.reduce_mean(x, axis=0, keepdims=True),
               tf.argmax(x, axis=1), tf.cast(x, tf.int32), tf.equal(x, 5.0),
               tf.reshape(x, [4, 3]), tf.transpose(x), tf.reduce_max(x)])
    assert out[0] == pytest.approx(66.0)
    np.testing.assert_allclose(out[1], a.sum(axis=1))
    np.testing.assert_allclose(out[2], a.mean(axis=0, keepdims=True))
    np.testing.assert_array_equal(out[3], [3, 3, 3])
    assert out[3].dtype == np.int64
    np.testing.assert_array_equal(out[4], a.astype(np.int32))
    np.testing.assert_array_equal(out[5], a == 5)
    np.testing.assert_array_equal(out[6], a.reshape(4, 3))
    np.testing.assert_array_equal(out[7], a.T)
    assert out[8] == 11.0


def test_nn_ops_match_numpy():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((5, 4)).astype(np.float32)
    labels = np.array([0, 3, 1, 2, 3], np.int32)
    x = tf.constant(logits)
    relu, softmax, loss = run([tf.nn.relu(x), tf.nn.softmax(x),
                               tf.nn.sparse_softmax_cross_entropy_with_logits(
                                   labels=tf.constant(labels), logits=x)])
    np.testing.assert_allclose(relu, np.maximum(logits, 0))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax, p, rtol=1e-5)
    np.testing.assert_allclose(loss, -np.log(p[np.arange(5), labels]), rtol=1e-5)


def test_conv2d_and_max_pool_match_numpy():
    rng = np.random.default_rng(2)
    image = rng.standard_normal((1, 5, 5, 2)).astype(np.float32)
    kernel = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    conv, pool = run([tf.nn.conv2d(tf.constant(image), tf.constant(kernel), strides=1,
                                   padding="VALID"),
                      tf.nn.max_pool2d(tf.constant(image), ksize=2, strides=2, padding="VALID")])
    want = np.zeros((1, 3, 3, 4), np.float32)
    for i in range(3):
        for j in range(3):
            patch = image[0, i:i + 3, j:j + 3, :]
            want[0, i, j] = np.tensordot(patch, kernel, axes=([0, 1, 2], [0, 1, 2]))
    np.testing.assert_allclose(conv, want, rtol=1e-4, atol=1e-5)
    want_pool = image[:, :4, :4, :].reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4))
    np.testing.assert_allclose(pool, want_pool)


def test_raw_ops_cover_the_registry():
    assert callable(tf.raw_ops.MatMul)
    assert callable(tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits)
    assert not hasattr(tf.raw_ops, "_Send")
    a = tf.constant([[1.0, 2.0]])
    product = tf.raw_ops.MatMul(a=a, b=a, transpose_b=True, name="mm")
    assert product.op.name == "mm"
    assert product.op.get_attr("transpose_b") is True
    assert product.op.get_attr("T") == tf.float32
    parts = tf.raw_ops.Split(split_dim=1, value=a, num_split=2)
    assert isinstance(parts, list) and len(parts) == 2
    loss, backprop = tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(
        features=a, labels=tf.constant([1]))
    out = run([product, parts, loss])
    np.testing.assert_allclose(out[0], [[5.0]])
    np.testing.assert_allclose(out[1][1], [[2.0]])
    assert out[2][0] == pytest.approx(np.log(1 + np.exp(-1.0)), rel=1e-5)
    with pytest.raises(TypeError, match="unexpected argument"):
        tf.raw_ops.MatMul(a=a, b=a, bogus=1)
    with pytest.raises(TypeError, match="missing the input"):
        tf.raw_ops.MatMul(a=a)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.MatMul(a=a, b=tf.constant([[1, 2]]))


DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
          np.uint32, np.uint64, np.bool_]


@pytest.mark.parametrize("np_dtype", DTYPES)
def test_feeds_of_every_dtype(np_dtype):
    dtype = tf.as_dtype(np_dtype)
    x = tf.placeholder(dtype, [None])
    y = tf.identity(x)
    value = np.array([0, 1, 1, 0], dtype=np_dtype)
    with tf.Session() as sess:
        out = sess.run(y, feed_dict={x: value})
        assert out.dtype == np_dtype
        np.testing.assert_array_equal(out, value)
        # Lists and scalars convert to the placeholder's dtype.
        np.testing.assert_array_equal(sess.run(y, feed_dict={x: [1, 0]}),
                                      np.array([1, 0], np_dtype))


def test_string_feeds_and_fetches():
    x = tf.placeholder(tf.string, [None])
    with tf.Session() as sess:
        out = sess.run(tf.identity(x), feed_dict={x: [b"ab", "c\u00e9"]})
    assert list(out) == [b"ab", "c\u00e9".encode()]
    assert run(tf.constant("hello")) == b"hello"


def test_scalars_come_back_as_numpy_scalars():
    value = run(tf.constant(2.5) * 2.0)
    assert isinstance(value, np.float32) and value == 5.0


def test_indexing_matches_numpy():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = tf.constant(a)
    keys = [1, -1, (0, 2), (slice(None), 1), (Ellipsis, 2),
            (slice(None, None, -1),), (0, slice(1, 3), slice(None, None, 2)), (None, 1),
            (slice(-2, None),)]
    out = run([x[k] for k in keys])
    for k, got in zip(keys, out):
        np.testing.assert_array_equal(got, a[k], err_msg=str(k))


def test_while_loop_sums_and_counts_like_python():
    n = tf.placeholder(tf.int32, [])
    # Sum of 0.5 * i for i < n, and the count; n comes in as a loop variable
    # (cond and body use only what they are given), and a constant built in
    # the body lives in the loop's frame.
    i, acc, _ = tf.while_loop(
        lambda i, acc, n: tf.less(i, n),
        lambda i, acc, n: (i + 1, acc + tf.cast(i, tf.float32) * 0.5, n),
        [tf.constant(0), tf.constant(0.0), n])
    assert i.op.type == "Exit"
    with tf.Session() as sess:
        for limit in (0, 1, 10):
            out_i, out_acc = sess.run((i, acc), {n: limit})
            assert out_i == limit
            assert out_acc == pytest.approx(0.5 * sum(range(limit)))


def test_while_loop_single_variable_nested_and_maximum_iterations():
    x = tf.placeholder(tf.float32, [3])
    # A single loop variable comes back alone.
    doubled = tf.while_loop(lambda v: tf.reduce_sum(v) < 100.0, lambda v: v * 2.0, x)
    # A dict of loop variables keeps its structure; maximum_iterations bounds
    # a loop whose cond never ends it.
    out = tf.while_loop(lambda s: tf.constant(True), lambda s: {"a": s["a"] + 1, "b": s["b"] * 3},
                        {"a": tf.constant(0), "b": tf.constant(1)}, maximum_iterations=4)
    # An inner loop inside an outer loop's body.
    def outer_body(i, total):
        inner = tf.while_loop(lambda j, t: j < 3, lambda j, t: (j + 1, t + 1), [0, total])
        return i + 1, inner[1]
    nested = tf.while_loop(lambda i, t: i < 5, outer_body, [0, 0])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(doubled, {x: [1.0, 2.0, 3.0]}), [32.0, 64.0, 96.0])
        assert sess.run(out) == {"a": 4, "b": 81}
        assert sess.run(nested[1]) == 15


def test_while_loop_errors_name_what_was_wrong():
    with pytest.raises(ValueError, match="at least one loop variable"):
        tf.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(ValueError, match="body returned 1 values for 2 loop variables"):
        tf.while_loop(lambda a, b: a < 3, lambda a, b: [a + 1], [0, 0])
    with pytest.raises(ZeroDivisionError):
        tf.while_loop(lambda a: a < 3, lambda a: 1 / 0, [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="parallel_iterations"):
        tf.while_loop(lambda a: a < 3, lambda a: a + 1, [0], parallel_iterations=0)
    # The graph stays usable after a failed loop.
    assert run(tf.while_loop(lambda a: a < 3, lambda a: a + 1, [0])) == 3


def test_cond_runs_only_the_branch_pred_picks():
    x = tf.placeholder(tf.float32, [2])
    p = tf.placeholder(tf.bool, [])
    v = tf.Variable(0.0, name="counter")
    with tf.control_dependencies([v.initializer]):
        start = tf.no_op()

    def then_fn():
        with tf.control_dependencies([v.assign_add(1.0)]):
            return x * 2.0, tf.reduce_sum(x)

    def else_fn():
        return x - 1.0, tf.constant(-1.0)

    doubled, total = tf.cond(p, then_fn, else_fn)
    assert doubled.op.type == "Merge"
    with tf.Session() as sess:
        sess.run(start)
        out = sess.run((doubled, total), {x: [1.0, 2.0], p: True})
        np.testing.assert_allclose(out[0], [2.0, 4.0])
        assert out[1] == 3.0
        out = sess.run((doubled, total), {x: [1.0, 2.0], p: False})
        np.testing.assert_allclose(out[0], [0.0, 1.0])
        assert out[1] == -1.0
        # The then branch's assign ran once: only for pred True.
        assert sess.run(v) == 1.0
    with pytest.raises(ZeroDivisionError):
        tf.cond(p, lambda: 1 / 0, else_fn)
