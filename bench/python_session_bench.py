"""Session.run from Python next to its floors, in one process:

  - a trivial fetch (a scalar constant) through distflow.Session.run, µs per
    call, next to the same fetch through C++ ClientSession::Run (timed in
    C++ in this process) and a pybind11 call that does nothing;
  - a 64 MiB float32 feed and fetch (Identity) next to numpy's copy of
    64 MiB (memcpy) and to what it would cost if the feed and the fetch
    were copied.

    /usr/bin/python3 bench/python_session_bench.py [--calls 20000]

Run with PYTHONPATH=build/release/python, or after scripts/install_python.sh.
For reference, TensorFlow's Python Session.run of a trivial fetch costs
about 89 µs (published)."""

import argparse
import time

import numpy as np

import distflow as tf
from distflow import _distflow


def per_call(fn, calls):
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def median(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--reps", type=int, default=21)
    args = parser.parse_args()

    trivial = tf.constant(1.0)
    x = tf.placeholder(tf.float32, [None])
    y = tf.identity(x)
    big = np.ones(16 << 20, np.float32)  # 64 MiB
    with tf.Session() as sess:
        py_run = per_call(lambda: sess.run(trivial), args.calls)
        cc_run = _distflow._time_client_session_run(sess._c, trivial.op._id, 0, args.calls)
        noop = per_call(_distflow._noop, args.calls * 10)
        print("trivial fetch, distflow.Session.run (Python): %7.2f us/call" % (py_run * 1e6))
        print("trivial fetch, ClientSession::Run (C++):      %7.2f us/call" % (cc_run * 1e6))
        print("bare pybind11 call:                           %7.2f us/call" % (noop * 1e6))
        print("Python overhead over C++:                     %7.2f us/call" % (
            (py_run - cc_run) * 1e6))
        feed_fetch = median(lambda: sess.run(y, {x: big}), args.reps)
        copy = median(lambda: np.copy(big), args.reps)
        out = sess.run(y, {x: big})
        print("64 MiB feed + fetch (Identity):               %7.3f ms (shares memory: %s)" % (
            feed_fetch * 1e3, out.ctypes.data == big.ctypes.data))
        print("memcpy of 64 MiB (np.copy):                   %7.3f ms" % (copy * 1e3))


if __name__ == "__main__":
    main()
