"""Runs a real TensorFlow frozen graph (a .pb TensorFlow wrote) on numpy input:
imports it with import_graph_def, feeds each Placeholder random values of
its shape (unknown dimensions as 1) and prints the graph's outputs (the
nodes nothing consumes).

    /usr/bin/python3 examples/python/frozen_graph.py [path.pb]
"""

import os
import sys

import numpy as np

import distflow as tf

DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "../../../shared/tf_real_graphs/keras_mnist_frozen.pb")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    with open(path, "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    ops = graph.get_operations()
    inputs = [op.outputs[0] for op in ops if op.type == "Placeholder"]
    outputs = [t for op in ops if op.type not in ("NoOp", "Const") for t in op.outputs
               if not t.consumers()]
    rng = np.random.default_rng(0)
    feeds = {}
    for t in inputs:
        dims = t.shape.dims if t.shape.dims is not None else [1]
        shape = [1 if d is None else d for d in dims]
        feeds[t] = rng.random(shape).astype(t.dtype.as_numpy_dtype)
        print("input  %s %s %s" % (t.name, t.dtype.name, shape))
    with tf.Session(graph=graph) as sess:
        values = sess.run(outputs, feed_dict=feeds)
    for t, v in zip(outputs, values):
        print("output %s %s %s" % (t.name, np.shape(v), np.array2string(np.asarray(v).ravel()[:10],
                                                                   precision=4)))


if __name__ == "__main__":
    main()
