"""Every registered op as a function, generated from the op registry at
import time: `distflow.raw_ops.MatMul(a=x, b=y, transpose_b=True)`.
Arguments are keyword-only and named as the op's OpDef names its inputs and
attrs; `name=` names the node."""

from distflow import op_def_library


def _make(op_type, summary):
    def op_function(name=None, **kwargs):
        return op_def_library.apply_op(op_type, name=name, **kwargs)

    op_function.__name__ = op_type
    op_function.__qualname__ = op_type
    d = op_def_library.op_def(op_type)
    op_function.__doc__ = "%s\n\nInputs: %s\nAttrs: %s" % (
        summary or op_type, ", ".join(a["name"] for a in d["inputs"]) or "none",
        ", ".join(a["name"] for a in d["attrs"]) or "none")
    return op_function


def _generate():
    names = []
    for op_type in op_def_library.op_names():
        if not op_type.isidentifier() or op_type.startswith("_"):
            continue
        globals()[op_type] = _make(op_type, op_def_library.op_def(op_type)["summary"])
        names.append(op_type)
    return names


__all__ = _generate()
