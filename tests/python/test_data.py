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
