"""tf.cond: the C++ BuildCond (TF1's Switch/Merge form) with branches built
by Python functions. A branch's ops run after its pivot, so only the branch
`pred` picks runs; each branch output goes through an Identity inside the
branch, so a branch that returns an outer tensor is dead when not taken."""

from distflow import _distflow
from distflow import array_ops
from distflow import dtypes
from distflow import framework
from distflow import nest


def cond(pred, true_fn=None, false_fn=None, name=None):
    if true_fn is None or false_fn is None:
        raise TypeError("cond needs true_fn and false_fn")
    graph = framework.get_default_graph()
    pred = framework.convert_to_tensor(pred, dtype=dtypes.bool)
    rebuilders = {}

    def branch(fn, key):
        def build(prefix, control_ids):
            pivots = [graph._op_by_id(i) for i in control_ids]
            with graph.name_scope(prefix + "/"), graph.control_dependencies(pivots):
                leaves, rebuild = nest.flatten(fn())
                outputs = [array_ops.identity(framework.convert_to_tensor(leaf))
                           for leaf in leaves]
            rebuilders[key] = rebuild
            return [t._ref() for t in outputs]
        return build

    prefix = graph._builder_prefix(name or "cond")
    refs = _distflow.cond(graph._c, pred._ref(), branch(true_fn, "then"),
                          branch(false_fn, "else"), prefix)
    graph._register_new_nodes()
    return rebuilders["then"]([graph._op_by_id(i).outputs[k] for i, k in refs])
