"""tf.cond: the C++ BuildCond (TF1's Switch/Merge form) with branches built
by Python functions. A branch's ops run after its pivot, so only the branch
`pred` picks runs; each branch output goes through an Identity inside the
branch, so a branch that returns an outer tensor is dead when not taken."""

import contextlib

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


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """tf.compat.v1.while_loop: `while cond(*loop_vars): loop_vars =
    body(*loop_vars)` as TF1's Enter/Merge/Switch/Exit frame (the C++
    BuildWhileLoop). `loop_vars` is a tensor or a (nested) list, tuple or
    dict of them; a list or tuple is passed to cond and body as separate
    arguments, as TensorFlow does. body returns the same structure. cond
    and body may use tensors from outside the loop only as loop variables.
    The result has loop_vars' structure; a single variable comes back
    alone unless return_same_structure. shape_invariants, back_prop and
    swap_memory are accepted for TensorFlow's signature and do nothing (the
    loop's shapes are not checked across iterations)."""
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop needs callable cond and body")
    graph = framework.get_default_graph()
    leaves, rebuild = nest.flatten(loop_vars)
    if not leaves:
        raise ValueError("while_loop needs at least one loop variable")
    if maximum_iterations is not None:
        # TensorFlow's form: a counter and its limit, as loop variables,
        # bound the iterations.
        user_cond, user_body, user_rebuild = cond, body, rebuild

        def cond(i, limit, *rest):
            from distflow import math_ops
            return math_ops.logical_and(math_ops.less(i, limit),
                                        _call(user_cond, user_rebuild(list(rest))))

        def body(i, limit, *rest):
            out = _call(user_body, user_rebuild(list(rest)))
            if len(rest) == 1 and not isinstance(out, (list, tuple, dict)):
                out = [out]
            return [i + 1, limit] + nest.flatten(out)[0]

        leaves = [framework.convert_to_tensor(0, dtype=dtypes.int32),
                  framework.convert_to_tensor(maximum_iterations, dtype=dtypes.int32)] + \
            list(leaves)
        rebuild = list
    tensors = [framework.convert_to_tensor(leaf) for leaf in leaves]
    for t in tensors:
        graph._check_own(t)

    def as_tensors(refs):
        graph._register_new_nodes()
        return [graph._op_by_id(i).outputs[k] for i, k in refs]

    @contextlib.contextmanager
    def scoped(prefix, control_ids):
        # After the loop's pivot only: an enclosing loop's pivot would put
        # the op in the outer frame.
        pivots = [graph._op_by_id(i) for i in control_ids]
        with graph.name_scope(prefix + "/"), graph.control_dependencies(None), \
                graph.control_dependencies(pivots):
            yield

    def build_cond(prefix, control_ids, refs):
        args = rebuild(as_tensors(refs))
        with scoped(prefix, control_ids):
            pred = framework.convert_to_tensor(_call(cond, args), dtype=dtypes.bool)
            # In the frame even when cond returns a loop variable itself.
            pred = array_ops.identity(pred)
        return pred._ref()

    def build_body(prefix, control_ids, refs):
        args = rebuild(as_tensors(refs))
        with scoped(prefix, control_ids):
            out = _call(body, args)
            if len(leaves) == 1 and not isinstance(out, (list, tuple, dict)):
                out = [out]
            out_leaves, _ = nest.flatten(out)
            if len(out_leaves) != len(leaves):
                raise ValueError("while_loop: body returned %d values for %d loop variables"
                                 % (len(out_leaves), len(leaves)))
            outputs = [array_ops.identity(framework.convert_to_tensor(leaf, dtype=t.dtype))
                       for leaf, t in zip(out_leaves, tensors)]
        return [t._ref() for t in outputs]

    prefix = graph._builder_prefix(name or "while")
    refs = _distflow.while_loop(graph._c, [t._ref() for t in tensors], build_cond, build_body,
                                prefix, int(parallel_iterations))
    graph._register_new_nodes()
    results = [graph._op_by_id(i).outputs[k] for i, k in refs]
    if maximum_iterations is not None:
        results = results[2:]
        result = user_rebuild(results)
    else:
        result = rebuild(results)
    if not return_same_structure:
        flat, _ = nest.flatten(result)
        if len(flat) == 1:
            return flat[0]
    return result


def _call(fn, args):
    """fn(*args) for a list or tuple of loop variables, fn(args) otherwise."""
    if isinstance(args, (list, tuple)):
        return fn(*args)
    return fn(args)
