"""The cluster coordinator from Python: examples/python/ps_cluster_mlp.py on
1 ps + 2 worker processes, a worker killed mid-run and restarted; and a
linear model on in-process servers."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import distflow as tf

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def test_example_finishes_every_closure_with_a_killed_worker():
    steps = 150
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples/python/ps_cluster_mlp.py"),
         "--steps", str(steps)], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    done = re.search(r"closures finished (\d+) of (\d+), retried (\d+), worker failures (\d+)",
                     result.stdout)
    assert done, result.stdout
    # Every training closure and the evaluation closure returned its value,
    # after the killed worker failed at least once.
    assert int(done.group(1)) == int(done.group(2)) == steps + 1
    assert int(done.group(4)) >= 1
    losses = re.search(r"loss of the first 50 ([0-9.]+), of the last 50 ([0-9.]+)", result.stdout)
    assert float(losses.group(2)) < float(losses.group(1))
    accuracy = float(re.search(r"test accuracy ([0-9.]+)", result.stdout).group(1))
    assert accuracy > 0.6


def test_linear_model_on_in_process_servers():
    import socket
    sockets = [socket.socket() for _ in range(2)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    cluster = tf.distribute.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                         "worker": ["127.0.0.1:%d" % ports[1]]})
    servers = [tf.distribute.Server(cluster, "ps", 0), tf.distribute.Server(cluster, "worker", 0)]
    strategy = tf.distribute.experimental.ParameterServerStrategy(cluster)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
        b = tf.Variable(0.0, name="b")
    assert w.device == "/job:ps/task:0"
    optimizer = tf.train.GradientDescentOptimizer(0.1)

    def train_step(x, y):
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        return optimizer.minimize(loss), loss

    rng = np.random.default_rng(0)
    values = []
    for _ in range(200):
        x = rng.standard_normal((32, 3)).astype(np.float32)
        y = x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25
        values.append(coordinator.schedule(train_step, args=(x, y)))
    coordinator.join()
    assert coordinator.done()
    losses = [v.fetch()[1] for v in values]
    # Several closures run at once, so the first one scheduled may read the
    # variables after others updated them. Whichever read them first saw the
    # untrained model (loss about 6.6); the last ones see it trained.
    assert max(losses) > 1.0, losses[:20]
    assert max(losses[-10:]) < 1e-3, losses[-10:]
    assert all(v >= 0 for v in losses)
    coordinator.close()
    for s in servers:
        s.stop()


def test_per_worker_datasets_give_each_worker_its_own_iterator():
    import collections
    import socket
    sockets = [socket.socket() for _ in range(3)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    cluster = tf.distribute.ClusterSpec({
        "ps": ["127.0.0.1:%d" % ports[0]],
        "worker": ["127.0.0.1:%d" % ports[1], "127.0.0.1:%d" % ports[2]]})
    servers = [tf.distribute.Server(cluster, "ps", 0), tf.distribute.Server(cluster, "worker", 0),
               tf.distribute.Server(cluster, "worker", 1)]
    strategy = tf.distribute.experimental.ParameterServerStrategy(cluster)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        offset = tf.Variable(1000, dtype=tf.int64, name="offset")

    def dataset_fn():
        # Elements 0, 10, 20, ... (a map traced into the dataset's graph).
        return tf.data.Dataset.range(100).map(lambda x: x * 10)

    per_worker = coordinator.create_per_worker_dataset(dataset_fn)
    iterator = iter(per_worker)

    def step(it):
        return next(it) + offset.read_value()

    values = [coordinator.schedule(step, args=(iterator,)) for _ in range(30)]
    coordinator.join()
    got = [int(v.fetch()) for v in values]
    # Each worker reads its own iterator from the start: every value is an
    # element plus the offset, no element is read more than once per worker,
    # and the elements read are the first ones of each worker's pass.
    counts = collections.Counter(got)
    assert all(v >= 1000 and (v - 1000) % 10 == 0 for v in got), got
    assert max(counts.values()) <= 2, counts
    assert max(got) < 1000 + 10 * 30, got
    assert sum(1 for v in got if v == 1000) >= 1
    coordinator.close()
    for s in servers:
        s.stop()


def test_closures_in_flight_out_of_range_is_invalid_argument():
    cluster = tf.distribute.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]})
    strategy = tf.distribute.experimental.ParameterServerStrategy(cluster)
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_inflight_closures"):
        tf.distribute.coordinator.ClusterCoordinator(strategy, max_inflight_closures=0)
