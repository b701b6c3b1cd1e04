"""GraphDef as Python sees it, and import_graph_def.

distflow ships no Python protobuf classes: a GraphDef here holds the
serialized proto (what `.pb` files contain, byte for byte) with protobuf's
method names for reading and writing it and a read-only `node` list."""

import collections

from distflow import _distflow
from distflow import framework

NodeDef = collections.namedtuple("NodeDef", ["name", "op", "input", "device"])


class GraphDef:
    def __init__(self, serialized=b""):
        self._serialized = bytes(serialized)

    @classmethod
    def FromString(cls, serialized):  # noqa: N802 (protobuf's name)
        graph_def = cls()
        graph_def.ParseFromString(serialized)
        return graph_def

    def ParseFromString(self, serialized):  # noqa: N802
        serialized = bytes(serialized)
        _distflow.graph_def_nodes(serialized)  # raises when it does not parse
        self._serialized = serialized

    def SerializeToString(self):  # noqa: N802
        return self._serialized

    @property
    def node(self):
        return [NodeDef(*n) for n in _distflow.graph_def_nodes(self._serialized)]

    def __str__(self):
        return _distflow.graph_def_to_text(self._serialized)

    @classmethod
    def from_text(cls, text):
        return cls(_distflow.graph_def_from_text(text))


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Adds `graph_def`'s nodes to the default graph under the name scope
    `name` ("import" by default, as TensorFlow names it); `input_map` maps
    its tensor names to tensors of this graph. Returns the Tensors and
    Operations `return_elements` names, or None."""
    graph = framework.get_default_graph()
    if isinstance(graph_def, (bytes, bytearray)):
        graph_def = GraphDef(graph_def)
    if name is None:
        name = "import"
    prefix = graph.unique_name(name) if name else ""
    c_map = {}
    for key, value in (input_map or {}).items():
        tensor = framework.convert_to_tensor(value)
        c_map[key] = tensor._ref()
    ids = graph._c.import_graph_def(graph_def.SerializeToString(), prefix, c_map)
    for node_id in ids:
        graph._mark_used(graph._c.name(node_id))
    graph._seen_id = max(graph._seen_id, graph._c.next_id)
    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        full = prefix + "/" + element if prefix else element
        results.append(graph.as_graph_element(full))
    return results
