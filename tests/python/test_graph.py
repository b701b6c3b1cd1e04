"""Graphs: names, scopes, devices, control dependencies, GraphDefs."""

import os

import numpy as np
import pytest

import distflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def test_names_are_unique_and_scoped():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="a")
    with tf.name_scope("layer"):
        c = tf.add(a, b)
        with tf.name_scope("inner"):
            d = tf.multiply(c, 2.0, name="d")
    with tf.name_scope("layer"):
        e = tf.identity(d)
    assert a.name == "a:0"
    assert b.name == "a_1:0"
    assert c.op.name == "layer/AddV2"
    assert d.op.name == "layer/inner/d"
    assert e.op.name == "layer_1/Identity"
    assert c.op.type == "AddV2"
    assert [t.op.name for t in c.op.inputs] == ["a", "a_1"]


def test_tensor_properties():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.ones((3, 2), np.float32))
    y = x @ w
    assert x.dtype == tf.float32
    assert x.shape.as_list() == [None, 3]
    assert y.shape.as_list() == [None, 2]
    assert y.op.type == "MatMul"
    assert y.graph is tf.get_default_graph()
    assert x.consumers() == [y.op]
    assert tf.placeholder(tf.int32).shape.ndims is None


def test_lookup_by_name():
    with tf.name_scope("s"):
        t = tf.constant([1, 2], name="c")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("s/c:0") is t
    assert g.get_operation_by_name("s/c") is t.op
    with pytest.raises(KeyError):
        g.get_operation_by_name("missing")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("s/c")


def test_device_and_control_dependencies():
    a = tf.constant(1.0)
    with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
        b = tf.constant(2.0)
    with tf.control_dependencies([a]):
        c = tf.identity(b)
        with tf.control_dependencies(None):
            d = tf.identity(b)
    assert b.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert a.device == ""
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []


def test_graphs_are_separate():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
        assert tf.get_default_graph() is g
    assert tf.get_default_graph() is not g
    assert x.graph is g
    with pytest.raises(ValueError):
        tf.add(x, tf.constant(2.0))


def test_graph_def_round_trip_and_import():
    g1 = tf.Graph()
    with g1.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.multiply(x, 3.0, name="y")
    graph_def = g1.as_graph_def()
    assert sorted(n.name for n in graph_def.node) == ["Const", "x", "y"]
    assert "Placeholder" in str(graph_def)
    again = tf.GraphDef.FromString(graph_def.SerializeToString())
    assert [n.op for n in again.node] == [n.op for n in graph_def.node]

    g2 = tf.Graph()
    with g2.as_default():
        feed = tf.constant([1.0, 2.0], name="feed")
        (y,) = tf.import_graph_def(graph_def, input_map={"x:0": feed}, return_elements=["y:0"],
                                   name="model")
        assert y.name == "model/y:0"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), [3.0, 6.0])
        # A second import gets its own prefix.
        (y2,) = tf.import_graph_def(graph_def, input_map={"x": feed}, return_elements=["y:0"],
                                    name="model")
        assert y2.name == "model_1/y:0"


def test_import_errors():
    g1 = tf.Graph()
    with g1.as_default():
        tf.placeholder(tf.float32, [2], name="x")
    graph_def = g1.as_graph_def()
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a tensor"):
        tf.import_graph_def(graph_def, input_map={"nope:0": tf.constant(1.0)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="of type"):
        tf.import_graph_def(graph_def, input_map={"x:0": tf.constant([1, 2])})
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.GraphDef.FromString(b"\xff\xff not a graph")


def test_a_tensorflow_frozen_graph_runs_on_numpy_input():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "../../../shared/tf_real_graphs/keras_mnist_frozen.pb")
    if not os.path.exists(path):
        pytest.skip("TensorFlow's graphs are not beside the checkout")
    with open(path, "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    images = tf.placeholder(tf.float32, [None, 28, 28], name="images")
    (probabilities,) = tf.import_graph_def(graph_def, input_map={"Input:0": images},
                                           return_elements=["Identity:0"], name="keras")
    batch = np.random.default_rng(5).random((4, 28, 28)).astype(np.float32)
    with tf.Session() as sess:
        out = sess.run(probabilities, {images: batch})
    assert out.shape == (4, 10)
    np.testing.assert_allclose(out.sum(axis=1), np.ones(4), rtol=1e-5)
    assert (out >= 0).all()
