"""Graphs as TensorFlow 1 builds them: Graph, Operation, Tensor.

A Graph wraps the C++ graph of the extension (a root Scope and its shape
refiner); every node is added through it, by Python (`Graph._add_op`, used by
every op function) or by a C++ builder (gradients, variables, optimizers)
under a name prefix Python chose. Python keeps TensorFlow's naming rules:
names are unique per graph, `name_scope` prefixes them, a taken name gets
`_1`, `_2`, ... The graph's device, control-dependency and name-scope stacks
are per Graph and apply to the ops built while they are entered.
Not thread-safe: build a graph from one thread at a time.
"""

import contextlib
import threading

import numpy as np

from distflow import _distflow
from distflow import dtypes


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"


class TensorShape:
    """A shape that may be partly or wholly unknown (dims are ints or None)."""

    def __init__(self, dims):
        self._dims = None if dims is None else [None if d is None else int(d) for d in dims]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    @property
    def rank(self):
        return self.ndims

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return int(np.prod(self._dims, dtype=np.int64))

    def __len__(self):
        if self._dims is None:
            raise ValueError("the rank of this shape is unknown")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("cannot iterate over a shape of unknown rank")
        return iter(self._dims)

    def __getitem__(self, key):
        return self.as_list()[key]

    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self._dims == other._dims
        if other is None:
            return self._dims is None
        try:
            return self._dims == [None if d is None else int(d) for d in other]
        except TypeError:
            return False

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape(%s)" % self._dims


class Operation:
    """A node of a Graph. Made by the graph; compare with `is`."""

    def __init__(self, graph, node_id):
        self._graph = graph
        self._id = node_id
        c = graph._c
        self._name = c.name(node_id)
        self._type = c.type(node_id)
        self._outputs = [Tensor(self, i, dtypes.as_dtype(t))
                         for i, t in enumerate(c.output_types(node_id))]

    @property
    def graph(self):
        return self._graph

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def device(self):
        return self._graph._c.device(self._id)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def inputs(self):
        return [self._graph._op_by_id(i).outputs[k] for i, k in self._graph._c.inputs(self._id)]

    @property
    def control_inputs(self):
        return [self._graph._op_by_id(i) for i in self._graph._c.control_inputs(self._id)]

    @property
    def node_def(self):
        """The NodeDef, serialized (distflow has no Python protobuf classes)."""
        return self._graph._c.node_def(self._id)

    def get_attr(self, name):
        value = self._graph._c.attr(self._id, name)
        from distflow import op_def_library
        attr_type = op_def_library.attr_type(self._type, name)
        if attr_type == "type":
            return dtypes.as_dtype(value)
        if attr_type == "list(type)":
            return [dtypes.as_dtype(v) for v in value]
        return value

    def run(self, feed_dict=None, session=None):
        from distflow import session as session_lib
        session_lib._session_or_default(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "<distflow.Operation '%s' type=%s>" % (self._name, self._type)


class Tensor:
    """Output `value_index` of an Operation."""

    # numpy arrays on the left of an operator defer to Tensor's reflected one.
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._index = value_index
        self._dtype = dtype

    @property
    def op(self):
        return self._op

    @property
    def graph(self):
        return self._op._graph

    @property
    def value_index(self):
        return self._index

    @property
    def name(self):
        return "%s:%d" % (self._op.name, self._index)

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return TensorShape(self.graph._c.output_shape(self._op._id, self._index))

    def get_shape(self):
        return self.shape

    @property
    def device(self):
        return self._op.device

    def consumers(self):
        g = self.graph
        return [g._op_by_id(i) for i in g._c.consumers(self._op._id, self._index)]

    def eval(self, feed_dict=None, session=None):
        from distflow import session as session_lib
        return session_lib._session_or_default(session).run(self, feed_dict=feed_dict)

    def _ref(self):
        return (self._op._id, self._index)

    def __repr__(self):
        return "<distflow.Tensor '%s' shape=%s dtype=%s>" % (
            self.name, self.shape, self._dtype.name)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __bool__(self):
        raise TypeError("a distflow.Tensor has no truth value while the graph is built; "
                        "use distflow.cond for a data-dependent choice")

    def __len__(self):
        raise TypeError("len() of a symbolic Tensor is unknown; use tensor.shape")

    def __iter__(self):
        raise TypeError("a symbolic Tensor cannot be iterated")

    # Operators: TensorFlow's ops, through the same functions users call.
    def __add__(self, other):
        from distflow import math_ops
        return math_ops.add(self, other)

    def __radd__(self, other):
        from distflow import math_ops
        return math_ops.add(other, self)

    def __sub__(self, other):
        from distflow import math_ops
        return math_ops.subtract(self, other)

    def __rsub__(self, other):
        from distflow import math_ops
        return math_ops.subtract(other, self)

    def __mul__(self, other):
        from distflow import math_ops
        return math_ops.multiply(self, other)

    def __rmul__(self, other):
        from distflow import math_ops
        return math_ops.multiply(other, self)

    def __truediv__(self, other):
        from distflow import math_ops
        return math_ops.divide(self, other)

    def __rtruediv__(self, other):
        from distflow import math_ops
        return math_ops.divide(other, self)

    def __matmul__(self, other):
        from distflow import math_ops
        return math_ops.matmul(self, other)

    def __rmatmul__(self, other):
        from distflow import math_ops
        return math_ops.matmul(other, self)

    def __neg__(self):
        from distflow import math_ops
        return math_ops.negative(self)

    def __pow__(self, other):
        from distflow import math_ops
        return math_ops.pow(self, other)

    def __lt__(self, other):
        from distflow import math_ops
        return math_ops.less(self, other)

    def __le__(self, other):
        from distflow import math_ops
        return math_ops.less_equal(self, other)

    def __gt__(self, other):
        from distflow import math_ops
        return math_ops.greater(self, other)

    def __ge__(self, other):
        from distflow import math_ops
        return math_ops.greater_equal(self, other)

    def __abs__(self):
        from distflow import math_ops
        return math_ops.abs(self)

    def __getitem__(self, key):
        from distflow import array_ops
        return array_ops.strided_slice_of(self, key)


class Graph:
    """A dataflow graph under construction (tf.Graph)."""

    def __init__(self):
        self._c = _distflow.Graph()
        self._ops = {}  # node id -> Operation
        self._names_in_use = {}  # lower-case name -> count
        self._name_stack = ""
        self._device_stack = []
        self._control_stack = []  # lists of Operations
        self._collections = {}
        self._seen_id = 0  # nodes below this id have their names registered
        # Initializers of one-shot iterators: each session runs them once,
        # before its first run that needs them (distflow/data.py).
        self._one_shot_initializers = []

    # Naming.
    def unique_name(self, name, mark_as_used=True):
        if self._name_stack:
            name = self._name_stack + "/" + name
        self._register_new_nodes()
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = name
            while name.lower() in self._names_in_use:
                name = "%s_%d" % (base, i)
                i += 1
            if mark_as_used:
                self._names_in_use[name.lower()] = 1
        return name

    def _mark_used(self, name):
        parts = name.split("/")
        for k in range(1, len(parts) + 1):
            key = "/".join(parts[:k]).lower()
            self._names_in_use.setdefault(key, 1)

    def _register_new_nodes(self):
        """Learns the names of the nodes a C++ builder added."""
        if self._c.next_id == self._seen_id:
            return
        for node_id in self._c.nodes_since(self._seen_id):
            self._mark_used(self._c.name(node_id))
        self._seen_id = self._c.next_id

    @contextlib.contextmanager
    def name_scope(self, name):
        """Ops built inside are named "<scope>/<op>". A name ending in "/"
        is used as is; "" or None returns to the top level."""
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def device(self, device_name):
        """Ops built inside request `device_name` ("/job:ps/task:0", ...);
        None clears the request."""
        self._device_stack.append(device_name or "")
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops built inside run after `control_inputs` (ops or tensors);
        None clears the dependencies of the enclosing contexts."""
        if control_inputs is None:
            saved, self._control_stack = self._control_stack, []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        ops = []
        for c in control_inputs:
            c = getattr(c, "_as_control_input", lambda c=c: c)()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError("a control input must be an Operation or a Tensor, not %r" % (c,))
            ops.append(c)
        self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _current_device(self):
        return self._device_stack[-1] if self._device_stack else ""

    def _current_control_ids(self):
        ids = []
        for ops in self._control_stack:
            ids.extend(op._id for op in ops if op._id not in ids)
        return ids

    @contextlib.contextmanager
    def as_default(self):
        _default_graph_stack.append(self)
        try:
            yield self
        finally:
            _default_graph_stack.pop()

    # Nodes.
    def _op_by_id(self, node_id):
        op = self._ops.get(node_id)
        if op is None:
            op = Operation(self, node_id)
            self._ops[node_id] = op
        return op

    def _add_op(self, op_type, name, inputs, attrs):
        """Adds a node; `inputs` holds a Tensor or a list of Tensors per
        input arg, `attrs` Python values by attr name."""
        c_inputs = []
        for arg in inputs:
            if isinstance(arg, (list, tuple)):
                c_inputs.append([self._check_own(t)._ref() for t in arg])
            else:
                c_inputs.append(self._check_own(arg)._ref())
        full_name = self.unique_name(name)
        node_id = self._c.add_op(op_type, full_name, c_inputs, attrs, self._current_device(),
                                 self._current_control_ids())
        self._seen_id = max(self._seen_id, node_id + 1)
        return self._op_by_id(node_id)

    def _check_own(self, tensor):
        if tensor.graph is not self:
            raise ValueError("tensor %s is from another graph" % tensor.name)
        return tensor

    def _builder_prefix(self, name):
        """A unique name scope for a C++ builder's ops."""
        return self.unique_name(name)

    def get_operations(self):
        self._register_new_nodes()
        return [self._op_by_id(i) for i in self._c.node_ids()]

    def get_operation_by_name(self, name):
        op = self._find_op(name)
        if op is None:
            raise KeyError("the graph has no operation named %r" % name)
        return op

    def _find_op(self, name):
        for op in self._ops.values():
            if op.name == name:
                return op
        for node_id in self._c.node_ids():
            if self._c.name(node_id) == name:
                return self._op_by_id(node_id)
        return None

    def get_tensor_by_name(self, name):
        if ":" not in name:
            raise ValueError("the name %r refers to an operation, not a tensor "
                             "(tensor names look like 'op:0')" % name)
        op_name, index = name.rsplit(":", 1)
        op = self.get_operation_by_name(op_name)
        try:
            return op.outputs[int(index)]
        except (ValueError, IndexError):
            raise KeyError("operation %r has no output %s" % (op_name, index)) from None

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError("%r names an operation; a tensor was expected" % obj)
        if isinstance(obj, Tensor) and allow_tensor or isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError("%s is from another graph" % obj.name)
            return obj
        graph_element = getattr(obj, "_graph_element", None)
        if graph_element is not None:
            return self.as_graph_element(graph_element, allow_tensor, allow_operation)
        raise TypeError("cannot interpret %r as a tensor or an operation" % (obj,))

    def as_graph_def(self):
        from distflow import graph_def
        return graph_def.GraphDef.FromString(self._c.graph_def())

    # Collections (tf.add_to_collection and friends).
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name, scope=None):
        items = list(self._collections.get(name, []))
        if scope:
            items = [i for i in items if getattr(i, "name", "").startswith(scope)]
        return items

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def finalize(self):
        pass


_default_graph_stack = []
_global_default = threading.local()


def get_default_graph():
    if _default_graph_stack:
        return _default_graph_stack[-1]
    graph = getattr(_global_default, "graph", None)
    if graph is None:
        graph = Graph()
        _global_default.graph = graph
    return graph


def reset_default_graph():
    if _default_graph_stack:
        raise AssertionError("reset_default_graph inside a Graph.as_default() block")
    _global_default.graph = Graph()


def name_scope(name, default_name=None, values=None):
    return get_default_graph().name_scope(name if name is not None else default_name)


def device(device_name):
    return get_default_graph().device(device_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(name, scope=None):
    return get_default_graph().get_collection(name, scope)


def _python_dtype(value):
    """TensorFlow's default dtype for a constant written in Python."""
    array = np.asarray(value)
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return dtypes.as_dtype(array.dtype)
    if array.dtype == np.float64:
        return dtypes.float32
    if array.dtype == np.int64:
        info = np.iinfo(np.int32)
        if array.size == 0 or (array.min() >= info.min and array.max() <= info.max):
            return dtypes.int32
        return dtypes.int64
    return dtypes.as_dtype(array.dtype)


def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None):
    """`value` as a Tensor of the default graph: a Tensor as is (its dtype
    checked), a Variable's value, anything numpy takes as a Const node."""
    if isinstance(value, Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError("tensor %s has dtype %s, not the requested %s" % (
                value.name, value.dtype.name, dtypes.as_dtype(dtype).name))
        return value
    convert = getattr(value, "_as_tensor", None)
    if convert is not None:
        return convert_to_tensor(convert(), dtype=dtype, name=name)
    from distflow import constant_op
    if dtype is None and dtype_hint is not None:
        try:
            return constant_op.constant(value, dtype=dtype_hint, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant_op.constant(value, dtype=dtype, name=name or "Const")
