"""Resource variables (tf.Variable in TensorFlow 1 with resource variables).

A Variable is built by the C++ Variable builder: a VarHandleOp named as the
variable, whose shared_name is that name (so every session and every task of
a cluster means the same variable), and an AssignVariableOp initializer. Its
value is a ReadVariableOp built with it; using a Variable where a tensor is
expected uses that value."""

from distflow import _distflow
from distflow import framework
from distflow import op_def_library

_apply = op_def_library.apply_op


class Variable:
    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None,
                 collections=None, _handle_op=None, _initializer_op=None):
        graph = framework.get_default_graph()
        self._graph = graph
        if _handle_op is not None:
            # One the C++ side made (an optimizer's slot).
            self._handle_op = _handle_op
            self._initializer_op = _initializer_op
        else:
            if initial_value is None:
                raise ValueError("a Variable needs an initial_value")
            base = graph.unique_name(name or "Variable")
            with graph.name_scope(base + "/"):
                with graph.name_scope("Initializer"):
                    if callable(initial_value):
                        initial_value = initial_value()
                    init = framework.convert_to_tensor(initial_value, dtype=dtype)
            with graph.control_dependencies(None):
                handle_id, init_id = _distflow.variable(
                    graph._c, base, init._ref(), graph._current_device(), [])
            graph._register_new_nodes()
            self._handle_op = graph._op_by_id(handle_id)
            self._initializer_op = graph._op_by_id(init_id)
        self._dtype = self._handle_op.get_attr("dtype")
        with graph.name_scope(self._handle_op.name + "/Read/"):
            with graph.device(self._handle_op.device):
                self._value = _apply("ReadVariableOp", name="ReadVariableOp",
                                     resource=self.handle, dtype=self._dtype)
        if collections is None:
            collections = [framework.GraphKeys.GLOBAL_VARIABLES]
            if trainable:
                collections.append(framework.GraphKeys.TRAINABLE_VARIABLES)
        for c in collections:
            graph.add_to_collection(c, self)

    @property
    def name(self):
        return self._handle_op.name + ":0"

    @property
    def op(self):
        return self._handle_op

    @property
    def handle(self):
        return self._handle_op.outputs[0]

    @property
    def graph(self):
        return self._graph

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return framework.TensorShape(self._handle_op.get_attr("shape"))

    def get_shape(self):
        return self.shape

    @property
    def device(self):
        return self._handle_op.device

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def _graph_element(self):
        return self._value

    def value(self):
        return self._value

    def read_value(self):
        with self._graph.device(self._handle_op.device):
            return _apply("ReadVariableOp", name=self._handle_op.name + "/Read",
                          resource=self.handle, dtype=self._dtype)

    def _as_tensor(self):
        return self._value

    def _as_control_input(self):
        return self._value.op

    def assign(self, value, name=None):
        """The AssignVariableOp that stores `value` (run it to assign)."""
        value = framework.convert_to_tensor(value, dtype=self._dtype)
        with self._graph.device(self._handle_op.device):
            return _apply("AssignVariableOp", name=name or "AssignVariableOp",
                          resource=self.handle, value=value)

    def assign_add(self, delta, name=None):
        delta = framework.convert_to_tensor(delta, dtype=self._dtype)
        with self._graph.device(self._handle_op.device):
            return _apply("AssignAddVariableOp", name=name or "AssignAddVariableOp",
                          resource=self.handle, value=delta)

    def assign_sub(self, delta, name=None):
        delta = framework.convert_to_tensor(delta, dtype=self._dtype)
        with self._graph.device(self._handle_op.device):
            return _apply("AssignSubVariableOp", name=name or "AssignSubVariableOp",
                          resource=self.handle, value=delta)

    def eval(self, session=None):
        return self._value.eval(session=session)

    def __repr__(self):
        return "<distflow.Variable '%s' shape=%s dtype=%s>" % (
            self.name, self.shape, self._dtype.name)


def _delegate(method):
    def f(self, *args):
        return getattr(self._value, method)(*args)

    f.__name__ = method
    return f


for _method in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__neg__",
                "__pow__", "__lt__", "__le__", "__gt__", "__ge__", "__abs__", "__getitem__"):
    setattr(Variable, _method, _delegate(_method))


def global_variables(scope=None):
    return framework.get_collection(framework.GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return framework.get_collection(framework.GraphKeys.TRAINABLE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    from distflow import array_ops
    return array_ops.group([v.initializer for v in var_list], name=name)


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer
