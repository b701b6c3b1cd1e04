"""Nested structures of lists, tuples and dicts: their leaves, and the
structure rebuilt from new leaves."""


def flatten(structure):
    """(leaves, rebuild): rebuild(values) is `structure` with its leaves
    replaced by `values`, in order. None has no leaves."""
    if isinstance(structure, (list, tuple)):
        parts = [flatten(s) for s in structure]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(values, parts=parts, kind=type(structure)):
            out, k = [], 0
            for p in parts:
                out.append(p[1](values[k:k + len(p[0])]))
                k += len(p[0])
            return out if kind is list else tuple(out)
        return leaves, rebuild
    if isinstance(structure, dict):
        keys = list(structure)
        leaves, rebuild_list = flatten([structure[k] for k in keys])
        return leaves, lambda values: dict(zip(keys, rebuild_list(values)))
    if structure is None:
        return [], lambda values: None
    return [structure], lambda values: values[0]
