"""Fashion-MNIST, a 784-256-10 MLP trained in one process, TensorFlow 1 style.

    /usr/bin/python3 examples/python/fashion_mnist_mlp.py [--epochs 2]

Reads the images Debian's dataset-fashion-mnist installs, feeds numpy
batches through placeholders, trains with Adam and prints the test accuracy
after every epoch."""

import argparse
import gzip
import time
import zlib

import numpy as np

import distflow as tf

DATA = "/usr/share/datasets/fashion-mnist/"


def load(kind):
    with gzip.open(DATA + "%s-images-idx3-ubyte.gz" % kind) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(DATA + "%s-labels-idx1-ubyte.gz" % kind) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return (images / np.float32(255)).astype(np.float32), labels.astype(np.int32)


def dense(x, fan_in, units, name, activation=None):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    limit = np.sqrt(6.0 / (fan_in + units))
    with tf.name_scope(name):
        w = tf.Variable(rng.uniform(-limit, limit, (fan_in, units)).astype(np.float32), name="w")
        b = tf.Variable(tf.zeros([units]), name="b")
        y = tf.matmul(x, w) + b
    return activation(y) if activation else y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    train_x, train_y = load("train")
    test_x, test_y = load("t10k")

    images = tf.placeholder(tf.float32, [None, 784], name="images")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    hidden = dense(images, 784, 256, "hidden", tf.nn.relu)
    logits = dense(hidden, 256, 10, "logits")
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    correct = tf.equal(tf.cast(tf.argmax(logits, axis=1), tf.int32), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.001).minimize(loss, global_step=step)

    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(args.epochs):
            start = time.time()
            order = rng.permutation(len(train_x))
            for i in range(0, len(order) - args.batch + 1, args.batch):
                batch = order[i:i + args.batch]
                _, batch_loss = sess.run([train_op, loss],
                                         {images: train_x[batch], labels: train_y[batch]})
            test_accuracy = sess.run(accuracy, {images: test_x, labels: test_y})
            print("epoch %d: loss %.3f, test accuracy %.3f, %.1f s" % (
                epoch + 1, batch_loss, test_accuracy, time.time() - start))


if __name__ == "__main__":
    main()
