"""tf.data as in tf.compat.v1.data: Datasets built into the graph by the C++
Dataset builder, read through iterators.

    dataset = distflow.data.Dataset.from_tensor_slices((images, labels)) \\
        .shuffle(1000).batch(32).repeat()
    images_batch, labels_batch = distflow.data.make_one_shot_iterator(dataset).get_next()

An iterator's end is an OutOfRangeError from the run that reads past it. A
one-shot iterator is initialized by the first Session.run of its graph."""

from distflow import _distflow
from distflow import framework


class Dataset:
    def __init__(self, c_dataset, structure, graph):
        self._c = c_dataset
        self._structure = structure  # "single", "tuple", "list" or "dict" (keys)
        self._graph = graph

    @staticmethod
    def from_tensor_slices(tensors):
        graph = framework.get_default_graph()
        if isinstance(tensors, dict):
            structure = ("dict", list(tensors.keys()))
            components = list(tensors.values())
        elif isinstance(tensors, tuple):
            structure = ("tuple", len(tensors))
            components = list(tensors)
        else:
            structure = ("single", 1)
            components = [tensors]
        components = [framework.convert_to_tensor(c) for c in components]
        prefix = graph._builder_prefix("TensorSliceDataset")
        c = _distflow.dataset_from_tensor_slices(graph._c, [t._ref() for t in components], prefix)
        graph._register_new_nodes()
        return Dataset(c, structure, graph)

    @staticmethod
    def range(*args):
        start, stop, step = 0, None, 1
        if len(args) == 1:
            stop = args[0]
        elif len(args) == 2:
            start, stop = args
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise TypeError("range(stop), range(start, stop) or range(start, stop, step)")
        graph = framework.get_default_graph()
        c = _distflow.dataset_range(graph._c, int(start), int(stop), int(step),
                                    graph._builder_prefix("RangeDataset"))
        graph._register_new_nodes()
        return Dataset(c, ("single", 1), graph)

    @staticmethod
    def zip(datasets):
        datasets = list(datasets)
        graph = framework.get_default_graph()
        c = _distflow.dataset_zip(graph._c, [d._c for d in datasets],
                                  graph._builder_prefix("ZipDataset"))
        graph._register_new_nodes()
        return Dataset(c, ("zip", [d._structure for d in datasets]), graph)

    def _then(self, c):
        self._graph._register_new_nodes()
        return Dataset(c, self._structure, self._graph)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        seed = 0 if seed is None else int(seed)
        return self._then(self._c.shuffle(int(buffer_size), seed, seed,
                                          bool(reshuffle_each_iteration)))

    def batch(self, batch_size, drop_remainder=False):
        return self._then(self._c.batch(int(batch_size), bool(drop_remainder)))

    def repeat(self, count=None):
        return self._then(self._c.repeat(-1 if count is None else int(count)))

    def take(self, count):
        return self._then(self._c.take(int(count)))

    def skip(self, count):
        return self._then(self._c.skip(int(count)))

    def prefetch(self, buffer_size=-1):
        return self._then(self._c.prefetch(int(buffer_size)))

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """map_func traced once into a graph function (function.py) and
        applied to each element; it gets the element's components as
        arguments (a tuple's as separate ones, a dict's as one dict) and
        may use tensors of the dataset's graph, which are captured.
        num_parallel_calls (an int, or AUTOTUNE = -1) runs calls side by
        side, keeping the order."""
        from distflow import def_function as function_lib
        types, shapes = self._c.element_spec()
        specs = [function_lib.TensorSpec(shape, dtype)
                 for shape, dtype in zip(_shapes(shapes), types)]
        structure = self._structure

        def call(*components):
            element = _structure(structure, list(components))
            if structure[0] == "tuple" or structure[0] == "zip":
                return map_func(*element)
            return map_func(element)

        with self._graph.as_default():
            traced = function_lib.trace(call, specs, getattr(map_func, "__name__", "map_fn"))
            traced.add_to(self._graph)
        out_structure = _structure_of(traced.rebuild(list(range(len(traced.output_dtypes)))))
        parallel = 0 if num_parallel_calls is None else int(num_parallel_calls)
        c = self._c.map(traced.name, [t._ref() for t in traced.captures],
                        [d.as_datatype_enum for d in traced.output_dtypes],
                        [None if s.dims is None else [-1 if d is None else d for d in s.dims]
                         for s in traced.output_shapes],
                        parallel)
        self._graph._register_new_nodes()
        return Dataset(c, out_structure, self._graph)

    def make_one_shot_iterator(self):
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return make_initializable_iterator(self, shared_name)


AUTOTUNE = -1


def _shapes(shapes):
    """The C++ element shapes (dims with -1 unknown, or None) as Python's."""
    return [None if s is None else [None if d < 0 else d for d in s] for s in shapes]


def _structure_of(value):
    """The element structure of what a map function returned (its leaves
    replaced by their indices)."""
    if isinstance(value, dict):
        return ("dict", list(value.keys()))
    if isinstance(value, tuple):
        if any(isinstance(v, (tuple, list, dict)) for v in value):
            raise NotImplementedError("a map function returning nested structures")
        return ("tuple", len(value))
    if isinstance(value, list):
        raise TypeError("a map function returns a tensor, a tuple or a dict, not a list "
                        "(as in TensorFlow, where a list becomes one stacked tensor)")
    return ("single", 1)


def _structure(structure, tensors):
    kind, info = structure
    if kind == "single":
        return tensors[0]
    if kind == "tuple":
        return tuple(tensors)
    if kind == "dict":
        return dict(zip(info, tensors))
    parts, k = [], 0
    for sub in info:
        if sub[0] == "zip":
            raise NotImplementedError("a zip of zips")
        n = len(sub[1]) if sub[0] == "dict" else sub[1]
        parts.append(_structure(sub, tensors[k:k + n]))
        k += n
    return tuple(parts)


class Iterator:
    def __init__(self, dataset, shared_name):
        graph = dataset._graph
        handle, init_id, next_refs = dataset._c.make_iterator(shared_name or "")
        graph._register_new_nodes()
        self._graph = graph
        self._handle = graph._op_by_id(handle[0]).outputs[handle[1]]
        self._initializer = graph._op_by_id(init_id)
        self._next = [graph._op_by_id(i).outputs[k] for i, k in next_refs]
        self._structure = dataset._structure

    @property
    def initializer(self):
        return self._initializer

    def get_next(self, name=None):
        return _structure(self._structure, self._next)


def make_initializable_iterator(dataset, shared_name=None):
    return Iterator(dataset, shared_name)


def make_one_shot_iterator(dataset):
    iterator = Iterator(dataset, None)
    dataset._graph._one_shot_initializers.append(iterator.initializer)
    return iterator
