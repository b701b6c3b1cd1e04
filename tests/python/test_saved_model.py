"""saved_model.loader.load against SavedModels TensorFlow wrote (TF Serving's
test models, a TF 0.12 session bundle, a Keras model)."""

import os

import numpy as np
import pytest

import distflow as tf

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/saved_models")


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def model(name):
    path = os.path.join(MODELS, name)
    if not os.path.exists(path):
        pytest.skip("TensorFlow's SavedModels are not beside the checkout")
    return path


def batch(sess, name, values):
    """`values` as a batch for placeholder `name`: [n, 1] where it is a
    matrix, [n] otherwise."""
    shape = sess.graph.get_tensor_by_name(name).shape
    column = shape.ndims == 2
    return np.array(values, np.float32).reshape([-1, 1] if column else [-1])


@pytest.mark.parametrize("name,offset", [("serving_half_plus_two_cpu", 2.0),
                                         ("serving_half_plus_three", 3.0),
                                         ("serving_half_plus_two_2_versions", 2.0),
                                         ("legacy_half_plus_two", 2.0)])
def test_half_plus_models_compute_half_x_plus_their_offset(name, offset):
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                          model(name))
        sig = meta.signature_def[
            tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == "tensorflow/serving/predict"
        x, y = sig.inputs["x"], sig.outputs["y"]
        assert x.dtype == tf.float32
        out = sess.run(y.name, {x.name: batch(sess, x.name, [1.0, 2.0, 5.0])})
        np.testing.assert_allclose(out.ravel(), [0.5 + offset, 1.0 + offset, 2.5 + offset])


def test_a_model_loads_under_an_import_scope_beside_another():
    with tf.Session() as sess:
        a = tf.saved_model.loader.load(sess, ["serve"], model("serving_half_plus_two_cpu"),
                                       import_scope="two")
        tf.saved_model.loader.load(sess, ["serve"], model("serving_half_plus_three"),
                                   import_scope="three")
        name = a.signature_def["serving_default"].outputs["y"].name
        x = a.signature_def["serving_default"].inputs["x"].name
        feed = np.array([[4.0]], np.float32)
        assert sess.run("two/" + name, {"two/" + x: feed}).ravel()[0] == 4.0
        assert sess.run("three/" + name, {"three/" + x: feed}).ravel()[0] == 5.0


def test_the_counter_models_variable_persists_across_runs():
    with tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], model("serving_counter"))
        sigs = meta.signature_def
        incr = sigs["incr_counter"].outputs["output"].name
        read = sigs["get_counter"].outputs["output"].name
        start = sess.run(read)
        sess.run(incr)
        sess.run(incr)
        assert sess.run(read) == start + 2


def test_a_keras_model_predicts_from_its_signature():
    with tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], model("keras_heart_mlp"))
        sig = meta.signature_def["serving_default"]
        (key, x), = sig.inputs.items()
        (out_key, y), = sig.outputs.items()
        shape = sess.graph.get_tensor_by_name(x.name).shape.as_list()
        batch = np.zeros([2] + [d or 1 for d in shape[1:]], x.dtype.as_numpy_dtype)
        out = sess.run(y.name, {x.name: batch})
        assert out.shape[0] == 2
        assert np.all(np.isfinite(out))


def test_errors_name_what_was_wrong(tmp_path):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="serve"):
            tf.saved_model.loader.load(sess, ["no_such_tag"], model("serving_half_plus_two_cpu"))
        with pytest.raises(tf.errors.NotFoundError):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
        (tmp_path / "saved_model.pb").write_bytes(b"\xff\xff not a model")
        with pytest.raises(tf.errors.InvalidArgumentError, match="saved_model.pb"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
    assert tf.saved_model.loader.maybe_saved_model_directory(model("serving_half_plus_two_cpu")
                                                             + "/00000123")
