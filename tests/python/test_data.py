"""Input pipelines: Dataset transformations and iterators."""

import numpy as np
import pytest

import distflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def read_all(next_element, sess):
    values = []
    while True:
        try:
            values.append(sess.run(next_element))
        except tf.errors.OutOfRangeError:
            return values


def test_range_take_skip_batch():
    dataset = tf.data.Dataset.range(10).skip(2).take(7).batch(3)
    next_element = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as sess:
        batches = read_all(next_element, sess)
    assert [list(b) for b in batches] == [[2, 3, 4], [5, 6, 7], [8]]


def test_from_tensor_slices_of_a_tuple_shuffled_and_repeated():
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.int32)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(6, seed=1).repeat(2)
    iterator = tf.data.make_initializable_iterator(dataset)
    image, label = iterator.get_next()
    assert image.dtype == tf.float32 and label.dtype == tf.int32
    with tf.Session() as sess:
        for _ in range(2):  # an initializable iterator restarts
            sess.run(iterator.initializer)
            pairs = read_all((image, label), sess)
            assert len(pairs) == 12
            assert sorted(int(l) for _, l in pairs) == sorted(list(range(6)) * 2)
            for img, lbl in pairs:
                np.testing.assert_array_equal(img, images[lbl])


def test_zip_and_prefetch():
    a = tf.data.Dataset.range(3)
    b = tf.data.Dataset.from_tensor_slices(np.array([10.0, 20.0, 30.0], np.float32))
    x, y = tf.data.make_one_shot_iterator(tf.data.Dataset.zip((a, b)).prefetch(2)).get_next()
    with tf.Session() as sess:
        assert read_all((x, y), sess) == [(0, 10.0), (1, 20.0), (2, 30.0)]


def test_map_applies_a_python_function_traced_into_the_graph():
    # A function of one component, with a constant and a captured tensor.
    scale = tf.constant(10, tf.int64, name="scale")
    squares = tf.data.Dataset.range(5).map(lambda x: x * x + scale)
    with tf.Session() as sess:
        values = read_all(tf.data.make_one_shot_iterator(squares).get_next(), sess)
    assert values == [10, 11, 14, 19, 26]


def test_map_over_tuples_and_dicts_in_parallel_keeps_the_order():
    images = np.arange(24, dtype=np.float32).reshape(6, 2, 2)
    labels = np.arange(6, dtype=np.int32)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(
        lambda image, label: {"pixels": tf.reshape(image, [4]) / 2.0,
                              "label": tf.cast(label, tf.int64)},
        num_parallel_calls=tf.data.AUTOTUNE).batch(4)
    element = tf.data.make_one_shot_iterator(dataset).get_next()
    assert sorted(element) == ["label", "pixels"]
    assert element["pixels"].shape.as_list() == [None, 4]
    with tf.Session() as sess:
        batches = read_all(element, sess)
    assert [len(b["label"]) for b in batches] == [4, 2]
    np.testing.assert_allclose(batches[0]["pixels"], images[:4].reshape(4, 4) / 2.0)
    assert list(batches[1]["label"]) == [4, 5]
    assert batches[1]["label"].dtype == np.int64


def test_map_errors_name_what_was_wrong():
    dataset = tf.data.Dataset.range(3)
    with pytest.raises(ZeroDivisionError):
        dataset.map(lambda x: 1 / 0)
    with pytest.raises(TypeError, match="not a list"):
        dataset.map(lambda x: [x, x])
    # Shapes known when tracing are checked then.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot reshape"):
        dataset.map(lambda x: tf.reshape(x, [2]))
    # A run-time error inside the function is the step's error: element 0
    # (one value) cannot take the shape [0].
    bad = dataset.map(lambda x: tf.reshape(x, tf.reshape(x, [1])))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(tf.data.make_one_shot_iterator(bad).get_next())
