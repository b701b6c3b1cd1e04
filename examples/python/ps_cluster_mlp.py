"""The Fashion-MNIST MLP trained through the cluster coordinator on 1 ps + 2
workers that this script starts (distflow.distribute.Server processes on
loopback), with worker 1 killed mid-run and started again, as the main job
does. Every closure finishes: those the killed worker held run again on the
other one.

    /usr/bin/python3 examples/python/ps_cluster_mlp.py [--steps 600] [--no-kill]
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np

import distflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_mnist_mlp import load  # noqa: E402

SERVER = ("import sys, distflow; distflow.distribute.Server(eval(sys.argv[1]), sys.argv[2], "
          "int(sys.argv[3])).join()")


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def start_server(cluster, job, task):
    return subprocess.Popen([sys.executable, "-c", SERVER, repr(cluster), job, str(task)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--no-kill", action="store_true")
    args = parser.parse_args()

    ports = free_ports(3)
    cluster = {"ps": ["127.0.0.1:%d" % ports[0]],
               "worker": ["127.0.0.1:%d" % p for p in ports[1:]]}
    servers = {("ps", 0): start_server(cluster, "ps", 0)}
    for i in range(2):
        servers[("worker", i)] = start_server(cluster, "worker", i)
    try:
        train(cluster, args, servers)
    finally:
        for p in servers.values():
            p.kill()
            p.wait()


def train(cluster, args, servers):
    train_x, train_y = load("train")
    test_x, test_y = load("t10k")
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.distribute.ClusterSpec(cluster))
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    # One training closure at a time per worker, as `distflow train` runs:
    # closures in flight together compute gradients from the same weights.
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy, max_inflight_closures=1)

    # The model: its variables live on the ps.
    with strategy.scope():
        hidden_w = tf.Variable(np.random.default_rng(1).uniform(
            -0.08, 0.08, (784, 256)).astype(np.float32), name="hidden_w")
        hidden_b = tf.Variable(tf.zeros([256]), name="hidden_b")
        out_w = tf.Variable(np.random.default_rng(2).uniform(
            -0.14, 0.14, (256, 10)).astype(np.float32), name="out_w")
        out_b = tf.Variable(tf.zeros([10]), name="out_b")
    optimizer = tf.train.AdamOptimizer(0.001)

    def logits_of(images):
        return tf.matmul(tf.nn.relu(tf.matmul(images, hidden_w) + hidden_b), out_w) + out_b

    def train_step(images, labels):
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits_of(images)))
        return optimizer.minimize(loss), loss

    def accuracy(images, labels):
        correct = tf.equal(tf.cast(tf.argmax(logits_of(images), axis=1), tf.int32), labels)
        return tf.reduce_mean(tf.cast(correct, tf.float32))

    rng = np.random.default_rng(0)
    losses = []
    start = time.time()
    killed = None
    for step in range(args.steps):
        batch = rng.integers(0, len(train_x), args.batch)
        losses.append(coordinator.schedule(train_step, args=(train_x[batch], train_y[batch])))
        if not args.no_kill and step == args.steps // 3:
            killed = servers[("worker", 1)]
            killed.send_signal(signal.SIGKILL)
        if killed is not None and step == args.steps // 2:
            killed.wait()
            servers[("worker", 1)] = start_server(cluster, "worker", 1)
            killed = None
    coordinator.join()
    evaluation = coordinator.schedule(accuracy, args=(test_x, test_y))
    coordinator.join()
    values = [v.fetch() for v in losses]  # raises if any closure failed
    test_accuracy = evaluation.fetch()
    counters = coordinator.counters
    print("steps %d, loss of the first 50 %.3f, of the last 50 %.3f, test accuracy %.3f, %.1f s"
          % (args.steps, np.mean([v[1] for v in values[:50]]),
             np.mean([v[1] for v in values[-50:]]), test_accuracy, time.time() - start))
    print("closures finished %d of %d, retried %d, worker failures %d, recoveries %d" % (
        len(values) + 1, len(losses) + 1, counters["retried"], counters["worker_failures"],
        counters["recoveries"]))
    coordinator.close()


if __name__ == "__main__":
    main()
