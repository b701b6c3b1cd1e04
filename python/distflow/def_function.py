"""Python functions traced into graph functions (a graph's library).

`trace(fn, specs, name)` calls fn once on placeholders of the given dtypes
and shapes, in a graph of its own, and turns what it built into a
FunctionDef (the C++ GraphToFunctionDef). A tensor of another graph that
fn uses (a constant, a variable's handle) is captured as TensorFlow does:
it becomes an extra argument, fed by the caller from its own graph.

`distflow.function(fn, input_signature=[TensorSpec(...)])` (tf.function's
shape for graph-mode callers) traces fn once per signature; calling the
result with tensors adds the function to the caller's graph and one
StatefulPartitionedCall node that runs it. `Dataset.map` traces its
function the same way (data.py)."""

import itertools

from distflow import _distflow
from distflow import dtypes
from distflow import framework
from distflow import nest

_counter = itertools.count()


class TensorSpec:
    """The dtype and shape (None: any) of a function argument."""

    def __init__(self, shape=None, dtype=dtypes.float32, name=None):
        self.shape = framework.TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def __repr__(self):
        return "TensorSpec(shape=%s, dtype=%s)" % (self.shape.dims, self.dtype.name)


class _FuncGraph(framework.Graph):
    """A graph fn is traced in: tensors of the outer graphs become
    placeholders, recorded as captures."""

    def __init__(self, outer):
        super().__init__()
        self._outer = outer
        self.captures = []  # (outer tensor, placeholder) in order

    def _check_own(self, tensor):
        if tensor.graph is self:
            return tensor
        for outer, inner in self.captures:
            if outer is tensor:
                return inner
        from distflow import array_ops
        with self.control_dependencies(None), self.name_scope(""):
            inner = array_ops.placeholder(tensor.dtype, tensor.shape,
                                          name="capture_" + tensor.op.name.replace("/", "_"))
        self.captures.append((tensor, inner))
        return inner


class TracedFunction:
    """A traced function: its name and FunctionDef, argument placeholders,
    captured outer tensors, output dtypes and shapes, and the structure of
    what fn returned."""

    def __init__(self, fn, specs, name, outer):
        self.name = name
        graph = _FuncGraph(outer)
        with graph.as_default():
            args = [_placeholder(s, "arg%d" % i) for i, s in enumerate(specs)]
            out = fn(*args)
            leaves, self.rebuild = nest.flatten(out)
            if not leaves:
                raise ValueError("function '%s' returns no tensor" % name)
            # Each output through an Identity: fn may return an argument or
            # a captured tensor itself.
            from distflow import array_ops
            outputs = [array_ops.identity(framework.convert_to_tensor(leaf), name="output%d" % i)
                       for i, leaf in enumerate(leaves)]
        self.captures = [outer_t for outer_t, _ in graph.captures]
        arg_ops = [a.op for a in args] + [inner.op for _, inner in graph.captures]
        self.function_def = _distflow.graph_to_function(
            graph._c, name, [op._id for op in arg_ops], [t._ref() for t in outputs])
        self.output_dtypes = [t.dtype for t in outputs]
        self.output_shapes = [t.shape for t in outputs]

    def add_to(self, graph):
        _distflow.add_function(graph._c, self.function_def)


def _compatible(shape, spec):
    if shape.ndims is None or spec.ndims is None:
        return True
    return shape.ndims == spec.ndims and all(
        a is None or b is None or a == b for a, b in zip(shape.dims, spec.dims))


def _placeholder(spec, name):
    from distflow import array_ops
    return array_ops.placeholder(spec.dtype, spec.shape.dims, name=name)


def _valid_name(name):
    """`name` with what a node or function name may not hold replaced."""
    name = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)
    return name if name[:1].isalnum() else "fn" + name


def trace(fn, specs, name=None):
    """fn traced on arguments of `specs` (TensorSpecs), for the default graph."""
    unique = "%s_%d" % (_valid_name(name or getattr(fn, "__name__", "fn")), next(_counter))
    return TracedFunction(fn, specs, unique, framework.get_default_graph())


class Function:
    """What `distflow.function` returns: callable with tensors (or values)
    matching its input signature, in any graph."""

    def __init__(self, fn, input_signature, name):
        self._fn = fn
        self._signature = list(input_signature)
        self._name = _valid_name(name or getattr(fn, "__name__", "function"))
        self._traced = {}  # id(graph) -> (graph, TracedFunction)

    def __call__(self, *args):
        if len(args) != len(self._signature):
            raise TypeError("%s takes %d arguments (its input_signature), got %d"
                            % (self._name, len(self._signature), len(args)))
        graph = framework.get_default_graph()
        tensors = [framework.convert_to_tensor(a, dtype=s.dtype)
                   for a, s in zip(args, self._signature)]
        for t, s in zip(tensors, self._signature):
            if not _compatible(t.shape, s.shape):
                raise ValueError("%s: argument %s has shape %s, the signature says %s"
                                 % (self._name, t.name, t.shape.dims, s.shape.dims))
        entry = self._traced.get(id(graph))
        if entry is None or entry[0] is not graph:
            traced = trace(self._fn, self._signature, self._name)
            traced.add_to(graph)
            entry = (graph, traced)
            self._traced[id(graph)] = entry
        traced = entry[1]
        from distflow import op_def_library
        outputs = op_def_library.apply_op(
            "StatefulPartitionedCall", name=self._name, args=tensors + traced.captures,
            Tout=traced.output_dtypes, f=traced.name)
        if isinstance(outputs, framework.Operation):
            outputs = []
        return traced.rebuild(list(outputs))

    @property
    def input_signature(self):
        return list(self._signature)


def function(func=None, input_signature=None, name=None):
    """tf.function for graph-mode callers: `input_signature` is required
    (distflow traces once per graph, not per call's shapes)."""
    def wrap(fn):
        if input_signature is None:
            raise TypeError("distflow.function needs input_signature (a list of TensorSpec)")
        return Function(fn, input_signature, name)
    return wrap(func) if func is not None else wrap
