"""Session.run: nested fetches, feeds, zero-copy numpy, errors, tracing."""

import collections
import json
import tracemalloc

import numpy as np
import pytest

import distflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def test_nested_fetch_structures():
    Pair = collections.namedtuple("Pair", ["first", "second"])
    a = tf.constant(1.0, name="a")
    b = tf.constant([2, 3], name="b")
    op = tf.no_op()
    with tf.Session() as sess:
        out = sess.run({"list": [a, (b, a)], "pair": Pair(a, b), "op": op, "name": "b:0",
                        "nested": {"x": [[a]]}})
    assert out["list"][0] == 1.0
    assert isinstance(out["list"][1], tuple)
    np.testing.assert_array_equal(out["list"][1][0], [2, 3])
    assert isinstance(out["pair"], Pair) and out["pair"].first == 1.0
    np.testing.assert_array_equal(out["pair"].second, [2, 3])
    assert out["op"] is None
    np.testing.assert_array_equal(out["name"], [2, 3])
    assert out["nested"] == {"x": [[1.0]]}


def test_feeds_by_tensor_and_name_and_graph_changes_after_session():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x * 2.0
    sess = tf.Session()
    np.testing.assert_allclose(sess.run(y, {x: [1, 2]}), [2, 4])
    np.testing.assert_allclose(sess.run(y, {"x:0": np.array([3, 4], np.float32)}), [6, 8])
    # Nodes added after the session was made run too.
    z = y + 1.0
    np.testing.assert_allclose(sess.run(z, {x: [0, 0]}), [1, 1])
    sess.close()
    with pytest.raises(RuntimeError):
        sess.run(z, {x: [0, 0]})


def test_outputs_share_the_tensor_buffer_and_inputs_are_not_copied():
    x = tf.placeholder(tf.float32, [None])
    y = tf.identity(x)
    value = np.arange(1 << 20, dtype=np.float32)
    with tf.Session() as sess:
        out = sess.run(y, feed_dict={x: value})
    # Identity forwards its input, so the fetched array is the fed memory.
    assert out.ctypes.data == value.ctypes.data
    assert not out.flags.owndata
    np.testing.assert_array_equal(out, value)


def test_a_64_mib_fetch_allocates_no_copy():
    n = 16 << 20  # 64 MiB of float32
    big = tf.fill([n], 1.5)
    with tf.Session() as sess:
        sess.run(big)  # warm up: the executable is built once
        tracemalloc.start()
        out = sess.run(big)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert out.shape == (n,) and out[0] == 1.5 and out[-1] == 1.5
    # numpy reports the allocations it makes to tracemalloc: a copy would be
    # 64 MiB; the fetch wraps the tensor's buffer instead.
    assert peak < (1 << 20)


def test_feed_errors():
    x = tf.placeholder(tf.float32, [2])
    y = x + 1.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
            sess.run(y, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot convert"):
            sess.run(y, {x: ["a", "b"]})
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(y)  # not fed


def test_error_classes():
    assert issubclass(tf.errors.NotFoundError, tf.errors.OpError)
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            sess.run(v.value())
        assert info.value.code == tf.errors.FAILED_PRECONDITION
        assert info.value.message
    q = tf.raw_ops.FIFOQueueV2(component_types=[tf.float32], capacity=1)
    dequeue = tf.raw_ops.QueueDequeueV2(handle=q, component_types=[tf.float32])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=200))
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.load_checkpoint("/nonexistent/prefix-%d" % id(v)).get_tensor("x")
    with pytest.raises(tf.errors.UnavailableError):
        with tf.Session("grpc://127.0.0.1:1") as sess:
            sess.run(tf.constant(1.0), options=tf.RunOptions(timeout_in_ms=3000))
    bad = tf.GraphDef.from_text('node { name: "n" op: "NoSuchOp" }')
    with pytest.raises(tf.errors.UnimplementedError):
        tf.import_graph_def(bad)


def test_trace_and_timeline():
    a = tf.constant(np.ones((8, 8), np.float32))
    b = tf.matmul(a, a, name="product")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(b, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    names = [s["node_name"] for s in metadata.step_stats]
    assert "product" in names
    trace = json.loads(tf.timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    assert any(e.get("name") == "product" or e.get("args", {}).get("name") == "product"
               for e in trace["traceEvents"])


def test_an_error_carries_the_node_it_names():
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.control_dependencies([tf.no_op(name="before")]):
        shaped = tf.reshape(x, [2, 2], name="shaped")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(shaped, {x: [1.0, 2.0, 3.0]})
    err = info.value
    assert err.op_name == "shaped"
    assert err.op is tf.get_default_graph().get_operation_by_name("shaped")
    assert err.node_def.op == "Reshape"
    assert err.node_def.input[0] == "x:0"
    assert err.node_def.input[-1] == "^before"


INTERRUPTED_RUN = r"""
import os, signal, sys, threading
import distflow as tf
q = tf.raw_ops.FIFOQueueV2(component_types=[tf.float32], capacity=1)
blocked = tf.raw_ops.QueueDequeueV2(handle=q, component_types=[tf.float32])
sess = tf.Session(sys.argv[1])
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    sess.run(blocked)  # waits for an element that never comes
    print("the run returned")
except KeyboardInterrupt:
    print("interrupted")
print("after", sess.run(tf.constant(3)))
"""


@pytest.mark.parametrize("target", ["", "server"])
def test_ctrl_c_cancels_the_running_step_and_the_session_goes_on(target, tmp_path):
    import subprocess
    import sys
    server = None
    if target == "server":
        server = tf.distribute.Server.create_local_server()
        target = server.target
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_RUN)
    try:
        result = subprocess.run([sys.executable, str(script), target], capture_output=True,
                                text=True, timeout=60)
    finally:
        if server is not None:
            server.stop()
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split("\n")[:2] == ["interrupted", "after 3"], result.stdout
