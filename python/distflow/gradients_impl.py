"""tf.gradients: symbolic gradients built by the C++ AddSymbolicGradients."""

from distflow import _distflow
from distflow import framework


def _as_tensor_or_handle(x):
    # A Variable is differentiated through its handle, as the optimizers do.
    handle = getattr(x, "handle", None)
    if handle is not None and not isinstance(x, framework.Tensor):
        return handle
    return framework.convert_to_tensor(x)


def gradients(ys, xs, grad_ys=None, name="gradients", stop_gradients=None):
    """The gradients of sum(ys) with respect to each of `xs` (a list, in
    order). Where no y depends on an x, its gradient is zeros (TensorFlow
    gives None), as the C++ AddSymbolicGradients builds it."""
    if stop_gradients:
        raise NotImplementedError("stop_gradients: use distflow.stop_gradient in the graph")
    graph = framework.get_default_graph()
    single_y = not isinstance(ys, (list, tuple))
    ys = [ys] if single_y else list(ys)
    xs_list = [xs] if not isinstance(xs, (list, tuple)) else list(xs)
    ys = [framework.convert_to_tensor(y) for y in ys]
    xs_t = [_as_tensor_or_handle(x) for x in xs_list]
    c_grad_ys = None
    if grad_ys is not None:
        grad_ys = [grad_ys] if not isinstance(grad_ys, (list, tuple)) else list(grad_ys)
        c_grad_ys = [framework.convert_to_tensor(g, dtype=y.dtype)._ref()
                     for g, y in zip(grad_ys, ys)]
    prefix = graph._builder_prefix(name)
    refs = _distflow.gradients(graph._c, [y._ref() for y in ys], [x._ref() for x in xs_t],
                               c_grad_ys, prefix)
    graph._register_new_nodes()
    return [None if r is None else graph._op_by_id(r[0]).outputs[r[1]] for r in refs]
