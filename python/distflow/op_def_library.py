"""Builds a node of any registered op from keyword arguments, as TensorFlow's
raw_ops do: inputs are named as the OpDef names them and converted to
tensors (constants become Const nodes; a constant takes the dtype the op's
earlier inputs or attrs fixed), the attrs the inputs determine are inferred
by the C++ NodeBuilder, and the result is a Tensor, a list of Tensors, a
tuple of them (one entry per output arg) or, for an op without outputs, the
Operation."""

from distflow import _distflow
from distflow import dtypes
from distflow import framework

_OP_DEFS = {d["name"]: d for d in _distflow.op_defs()}


def op_def(op_type):
    d = _OP_DEFS.get(op_type)
    if d is None:
        from distflow import errors
        raise errors.NotFoundError(None, None, "op '%s' is not registered" % op_type)
    return d


def op_names():
    return sorted(_OP_DEFS)


def attr_type(op_type, attr_name):
    for a in _OP_DEFS.get(op_type, {}).get("attrs", []):
        if a["name"] == attr_name:
            return a["type"]
    return None


def _attr_for_python(value, attr_type_name):
    if attr_type_name == "type":
        return dtypes.as_dtype(value).as_datatype_enum
    if attr_type_name == "list(type)":
        return [dtypes.as_dtype(v).as_datatype_enum for v in value]
    if attr_type_name == "shape" and isinstance(value, framework.TensorShape):
        return value.dims
    return value


def apply_op(op_type, name=None, **kwargs):
    d = op_def(op_type)
    attr_types = {a["name"]: a["type"] for a in d["attrs"]}
    known_types = {}  # type attr -> DType, as fixed by attrs or earlier inputs
    for a, t in attr_types.items():
        if t == "type" and a in kwargs:
            known_types[a] = dtypes.as_dtype(kwargs[a])
    graph = framework.get_default_graph()
    inputs = []
    for arg in d["inputs"]:
        if arg["name"] not in kwargs:
            raise TypeError("%s() missing the input '%s'" % (op_type, arg["name"]))
        value = kwargs.pop(arg["name"])
        want = None
        if arg["type"]:
            want = dtypes.as_dtype(arg["type"])
        elif arg["type_attr"]:
            want = known_types.get(arg["type_attr"])
        if arg["number_attr"] or arg["type_list_attr"]:
            if not isinstance(value, (list, tuple)):
                raise TypeError("%s() input '%s' is a list" % (op_type, arg["name"]))
            tensors = []
            for i, v in enumerate(value):
                hint = want
                if arg["type_list_attr"] and arg["type_list_attr"] in kwargs:
                    hint = dtypes.as_dtype(kwargs[arg["type_list_attr"]][i])
                t = framework.convert_to_tensor(v, dtype_hint=hint)
                if want is None and arg["number_attr"]:
                    want = t.dtype
                tensors.append(t)
            if arg["type_attr"] and tensors:
                known_types.setdefault(arg["type_attr"], tensors[0].dtype)
            inputs.append(tensors)
        else:
            t = framework.convert_to_tensor(value, dtype_hint=want)
            if arg["type_attr"]:
                known_types.setdefault(arg["type_attr"], t.dtype)
            inputs.append(t)
    attrs = {}
    for key, value in kwargs.items():
        if key not in attr_types:
            raise TypeError("%s() got an unexpected argument '%s' (inputs: %s; attrs: %s)" % (
                op_type, key, [a["name"] for a in d["inputs"]], sorted(attr_types)))
        attrs[key] = _attr_for_python(value, attr_types[key])
    op = graph._add_op(op_type, name or op_type, inputs, attrs)
    return _outputs(op, d)


def _outputs(op, d):
    if not d["outputs"]:
        return op
    outputs = op.outputs
    per_arg = []
    k = 0
    for arg in d["outputs"]:
        if arg["number_attr"]:
            n = op.get_attr(arg["number_attr"])
            per_arg.append(outputs[k:k + n])
        elif arg["type_list_attr"]:
            n = len(op.get_attr(arg["type_list_attr"]))
            per_arg.append(outputs[k:k + n])
        else:
            n = 1
            per_arg.append(outputs[k])
        k += n
    if len(per_arg) == 1:
        return per_arg[0]
    return tuple(per_arg)
