"""Clusters from Python: tf.distribute's Server, ClusterSpec,
ParameterServerStrategy and ClusterCoordinator over the C++ ones.

    strategy = distflow.distribute.experimental.ParameterServerStrategy(
        distflow.distribute.cluster_resolver.SimpleClusterResolver(cluster_spec))
    coordinator = distflow.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        w = distflow.Variable(...)            # on the ps tasks, round-robin
    def step(x):                               # traced once into the graph
        ...
        return loss
    value = coordinator.schedule(step, args=(batch,))
    coordinator.join()
    print(value.fetch())

A scheduled function is traced once (per argument signature) into the
default graph; the nodes added since the last registration join every
worker's session. Variables created since the last schedule are initialized
on a worker first. Failover (a worker lost mid-closure: the closure runs
again on another) and every deadline are the C++ coordinator's."""

import contextlib
import types

import numpy as np

from distflow import _distflow
from distflow import array_ops
from distflow import dtypes
from distflow import framework
from distflow import nest
from distflow import op_def_library
from distflow import variables as variables_lib


def _cluster_dict(cluster):
    if isinstance(cluster, ClusterSpec):
        return cluster.as_dict()
    if hasattr(cluster, "cluster_spec"):
        return cluster.cluster_spec().as_dict()
    if isinstance(cluster, dict):
        return dict(cluster)
    raise TypeError("expected a ClusterSpec, a cluster resolver or a dict, not %r" % (cluster,))


class ClusterSpec:
    """Jobs and their task addresses: {"ps": ["host:port"], "worker": [...]}."""

    def __init__(self, cluster):
        jobs = {}
        for job, tasks in _cluster_dict(cluster).items():
            if isinstance(tasks, dict):
                jobs[job] = {int(k): v for k, v in tasks.items()}
            else:
                jobs[job] = list(tasks)
        self._jobs = jobs

    def as_dict(self):
        return {job: (dict(t) if isinstance(t, dict) else list(t)) for job, t in self._jobs.items()}

    @property
    def jobs(self):
        return list(self._jobs)

    def num_tasks(self, job_name):
        return len(self._jobs[job_name])

    def task_address(self, job_name, task_index):
        return self._jobs[job_name][task_index]


class SimpleClusterResolver:
    def __init__(self, cluster_spec, task_type=None, task_id=None, rpc_layer="grpc"):
        self._spec = cluster_spec if isinstance(cluster_spec, ClusterSpec) else \
            ClusterSpec(cluster_spec)
        self.task_type = task_type
        self.task_id = task_id
        self.rpc_layer = rpc_layer

    def cluster_spec(self):
        return self._spec


class Server:
    """A distflow server (master and worker services) in this process."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol="grpc",
                 config=None, start=True):
        if job_name is None or task_index is None:
            raise ValueError("a Server needs job_name and task_index")
        self._c = _distflow.Server(_cluster_dict(server_or_cluster_def), job_name,
                                   int(task_index), protocol or "grpc")
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        return Server({"localhost": ["127.0.0.1:0"]}, "localhost", 0, start=start)

    def start(self):
        self._c.start()

    def join(self):
        self._c.join()

    def stop(self):
        self._c.stop()

    @property
    def target(self):
        return self._c.target

    @property
    def port(self):
        return self._c.port


class ParameterServerStrategy:
    """Variables built in scope() go to the "ps" tasks round-robin (the C++
    strategy's placement); every other op runs on the worker that runs the
    closure."""

    def __init__(self, cluster_resolver, variable_partitioner=None):
        if variable_partitioner is not None:
            raise NotImplementedError("variable_partitioner")
        self.cluster_resolver = cluster_resolver
        self._c = _distflow.ParameterServerStrategy(_cluster_dict(cluster_resolver))

    @property
    def num_ps(self):
        return self._c.num_ps

    @property
    def num_workers(self):
        return self._c.num_workers

    @contextlib.contextmanager
    def scope(self):
        graph = framework.get_default_graph()
        _distflow.set_variable_strategy(graph._c, self._c)
        try:
            yield self
        finally:
            _distflow.set_variable_strategy(graph._c, None)


class RemoteValue:
    """The value of a scheduled closure (its structure rebuilt)."""

    def __init__(self, c_value, rebuild):
        self._c = c_value
        self._rebuild = rebuild

    def fetch(self, timeout=600.0):
        return self._rebuild(self._c.fetch(float(timeout)))

    get = fetch

    @property
    def state(self):
        return self._c.state


class PerWorkerValues:
    """One value per worker (an iterator per worker); a closure taking it
    gets the value of the worker that runs it."""

    def __init__(self, c_values, element_spec):
        self._c = c_values
        self._element_spec = element_spec

    def __iter__(self):
        return self

    def __next__(self):
        raise TypeError("next() of a per-worker dataset's iterator is read on a worker: pass it "
                        "to a function given to ClusterCoordinator.schedule and call next() "
                        "there")


class _IteratorArg:
    """What a traced function sees for a PerWorkerValues argument:
    next(iterator) reads the worker's iterator through its string handle."""

    def __init__(self, handle, element_spec):
        self._handle = handle
        self._element_spec = element_spec  # (structure, dtypes, shapes)

    def __next__(self):
        structure, types_, shapes = self._element_spec
        resource = op_def_library.apply_op(
            "IteratorFromStringHandleV2", name="IteratorFromStringHandle",
            string_handle=self._handle, output_types=types_, output_shapes=shapes)
        tensors = op_def_library.apply_op(
            "IteratorGetNext", name="IteratorGetNext", iterator=resource,
            output_types=types_, output_shapes=shapes)
        from distflow import data
        return data._structure(structure, list(tensors))

    def get_next(self):
        return next(self)


def _as_scalar(array):
    return array[()] if isinstance(array, np.ndarray) and array.ndim == 0 else array


class ClusterCoordinator:
    def __init__(self, strategy, call_timeout=30.0, worker_wait=600.0,
                 max_inflight_closures=_distflow.DEFAULT_INFLIGHT_CLOSURES):
        self.strategy = strategy
        self._graph = framework.get_default_graph()
        self._c = _distflow.ClusterCoordinator(strategy._c, float(call_timeout),
                                               float(worker_wait), int(max_inflight_closures))
        self._sent_id = 0
        self._initialized = set()
        self._traced = {}  # (function, signature) -> (id, rebuild)

    def _register(self, args, results, targets):
        delta = self._graph._c.graph_def_since(self._sent_id)
        self._sent_id = self._graph._c.next_id
        return self._c.register_function(delta, [a.name for a in args],
                                         [r.name for r in results], [t.name for t in targets])

    def _initialize_new_variables(self):
        new = [v for v in variables_lib.global_variables() if v.op._id not in self._initialized]
        if not new:
            return
        with self._graph.as_default():
            with self._graph.device(None):
                init = array_ops.group([v.initializer for v in new], name="init")
        fn = self._register([], [], [init])
        self._c.run_on_worker(fn, 0, [])
        self._initialized.update(v.op._id for v in new)

    def _signature(self, args):
        sig = []
        for a in args:
            if isinstance(a, PerWorkerValues):
                sig.append(("per_worker", id(a)))
            else:
                a = np.asarray(a)
                sig.append((a.dtype.str, a.shape))
        return tuple(sig)

    def _trace(self, fn, args):
        key = (fn, self._signature(args))
        if key in self._traced:
            return self._traced[key]
        graph = self._graph
        with graph.as_default(), graph.name_scope(getattr(fn, "__name__", "fn")):
            placeholders, fn_args = [], []
            for i, a in enumerate(args):
                if isinstance(a, PerWorkerValues):
                    p = array_ops.placeholder(dtypes.string, [], name="iterator_handle_%d" % i)
                    fn_args.append(_IteratorArg(p, a._element_spec))
                else:
                    a = np.asarray(a)
                    p = array_ops.placeholder(dtypes.as_dtype(a.dtype), list(a.shape),
                                              name="arg_%d" % i)
                    fn_args.append(p)
                placeholders.append(p)
            result = fn(*fn_args)
            leaves, rebuild = nest.flatten(result)
            tensors, targets = [], []
            for leaf in leaves:
                element = graph.as_graph_element(leaf)
                if isinstance(element, framework.Operation):
                    targets.append(element)
                else:
                    tensors.append(element)
            if targets:
                with graph.control_dependencies(targets):
                    tensors = [array_ops.identity(t) for t in tensors]
                    done = array_ops.no_op(name="done")
                targets = [done]
        kinds = [isinstance(graph.as_graph_element(leaf), framework.Operation) for leaf in leaves]

        def rebuild_values(values, kinds=kinds, rebuild=rebuild):
            it = iter(values)
            return rebuild([None if is_op else _as_scalar(next(it)) for is_op in kinds])

        traced = (self._register(placeholders, tensors, targets), rebuild_values)
        self._traced[key] = traced
        return traced

    def schedule(self, fn, args=None, kwargs=None):
        if kwargs:
            raise NotImplementedError("schedule(kwargs=...): pass arguments in args")
        args = tuple(args or ())
        fn_id, rebuild = self._trace(fn, args)
        self._initialize_new_variables()
        c_args = [a._c if isinstance(a, PerWorkerValues) else a for a in args]
        return RemoteValue(self._c.schedule(fn_id, c_args), rebuild)

    def join(self, timeout=600.0):
        self._c.join(float(timeout))

    def done(self):
        return self._c.done()

    def fetch(self, val):
        if isinstance(val, RemoteValue):
            return val.fetch()
        if isinstance(val, (list, tuple)):
            return type(val)(self.fetch(v) for v in val)
        if isinstance(val, dict):
            return {k: self.fetch(v) for k, v in val.items()}
        return val

    def create_per_worker_dataset(self, dataset_fn):
        """Runs `dataset_fn` (returning a Dataset) once per worker, each
        worker keeping its own iterator; pass iter() of the result to a
        scheduled function and call next() on it there."""
        from distflow import data
        graph = self._graph
        with graph.as_default(), graph.name_scope("per_worker_dataset"):
            with graph.device(None):
                dataset = dataset_fn() if callable(dataset_fn) else dataset_fn
                iterator = data.make_initializable_iterator(dataset)
                next_tensors = iterator._next
                with graph.control_dependencies([iterator.initializer]):
                    handle = op_def_library.apply_op(
                        "IteratorToStringHandle", name="string_handle",
                        resource_handle=iterator._handle)
        element_spec = (iterator._structure, [t.dtype for t in next_tensors],
                        [t.shape.dims for t in next_tensors])
        fn_id = self._register([], [handle], [])
        self._initialize_new_variables()
        return PerWorkerValues(self._c.create_per_worker_resource(fn_id), element_spec)

    @property
    def counters(self):
        return self._c.counters()

    def close(self):
        self._c.close()


experimental = types.SimpleNamespace(ParameterServerStrategy=ParameterServerStrategy)
coordinator = types.SimpleNamespace(ClusterCoordinator=ClusterCoordinator,
                                    RemoteValue=RemoteValue, PerWorkerValues=PerWorkerValues)
cluster_resolver = types.SimpleNamespace(SimpleClusterResolver=SimpleClusterResolver)
