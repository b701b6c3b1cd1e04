"""Sessions (tf.compat.v1.Session): run a graph here or on a cluster.

`run(fetches, feed_dict)` takes any nesting of lists, tuples, dicts and
namedtuples whose leaves are Tensors, Operations, Variables or names, and
returns the same structure with numpy values (None for an Operation). The
arrays share the fetched tensors' buffers; fed numpy arrays of the
placeholder's dtype and C layout are not copied. The step runs without the
GIL."""

import signal
import threading

from distflow import _distflow
from distflow import errors
from distflow import framework


class RunOptions:
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, timeout_in_ms=0, trace_level=NO_TRACE):
        self.timeout_in_ms = timeout_in_ms
        self.trace_level = trace_level


class StepStats(list):
    """The nodes a traced step ran: dicts of device, node_name,
    all_start_micros and all_end_rel_micros. timeline.Timeline takes it."""

    def __init__(self, serialized):
        super().__init__(_distflow.step_stats(serialized) if serialized else [])
        self._serialized = serialized


class RunMetadata:
    """What a traced run reports: `step_stats`, one entry per node run
    (device, node name, start and end in microseconds)."""

    def __init__(self):
        self._serialized = b""

    @property
    def step_stats(self):
        return StepStats(self._serialized)

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return self._serialized


_default_session_stack = []


def get_default_session():
    return _default_session_stack[-1] if _default_session_stack else None


def _session_or_default(session):
    session = session or get_default_session()
    if session is None:
        raise ValueError("no session given and no default session: pass session= or use "
                         "`with sess.as_default():`")
    return session


class _FetchPlan:
    """Flattens a fetch structure into the unique tensors and ops to run and
    rebuilds the structure from their values."""

    def __init__(self, graph, fetches):
        self.tensors = []  # unique Tensors, in first-seen order
        self.tensor_index = {}
        self.targets = []
        self._graph = graph
        self.structure = self._flatten(fetches)

    def _flatten(self, f):
        if isinstance(f, dict):
            return ("dict", type(f), [(k, self._flatten(v)) for k, v in f.items()])
        if isinstance(f, tuple) and hasattr(f, "_fields"):
            return ("namedtuple", type(f), [self._flatten(v) for v in f])
        if isinstance(f, (list, tuple)):
            return ("seq", type(f), [self._flatten(v) for v in f])
        if f is None:
            raise TypeError("a fetch cannot be None")
        element = self._graph.as_graph_element(f)
        if isinstance(element, framework.Operation):
            if element not in self.targets:
                self.targets.append(element)
            return ("op", None, None)
        if element not in self.tensor_index:
            self.tensor_index[element] = len(self.tensors)
            self.tensors.append(element)
        return ("tensor", None, self.tensor_index[element])

    def build(self, values):
        return self._build(self.structure, values)

    def _build(self, node, values):
        kind, cls, items = node
        if kind == "tensor":
            return values[items]
        if kind == "op":
            return None
        if kind == "dict":
            out = cls() if cls is not dict else {}
            for k, v in items:
                out[k] = self._build(v, values)
            return out
        if kind == "namedtuple":
            return cls(*[self._build(v, values) for v in items])
        built = [self._build(v, values) for v in items]
        return built if cls is list else cls(built)


def _first(values):
    return values[0]


def _as_numpy_scalar(array):
    # TensorFlow returns numpy scalars (np.float32, bytes) for 0-d fetches.
    return array[()] if array.ndim == 0 else array


_interrupts_watched = False


def _watch_interrupts():
    """Ctrl-C cancels running steps: Python's SIGINT handler writes to
    the extension's pipe (signal.set_wakeup_fd), whose reader cancels them.
    Only from the main thread, and only while nothing else (asyncio) uses
    the wakeup fd."""
    global _interrupts_watched
    if _interrupts_watched or threading.current_thread() is not threading.main_thread():
        return
    _interrupts_watched = True
    fd = _distflow.interrupt_fd()
    if fd < 0:
        return
    try:
        old = signal.set_wakeup_fd(fd, warn_on_full_buffer=False)
    except ValueError:
        return
    if old != -1:
        signal.set_wakeup_fd(old)


class Session:
    def __init__(self, target="", graph=None, config=None):
        _watch_interrupts()
        self._graph = graph or framework.get_default_graph()
        config_bytes = b"" if config is None else config.SerializeToString()
        self._target = target
        self._c = _distflow.Session(self._graph._c, target, config_bytes)
        self._closed = False
        self._one_shot_done = 0

    @property
    def graph(self):
        return self._graph

    @property
    def sess_str(self):
        return self._target

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("attempted to use a closed Session")
        pending = self._graph._one_shot_initializers[self._one_shot_done:]
        if pending:
            self._c.run([], [], [op._id for op in pending], 0, RunOptions.NO_TRACE)
            self._one_shot_done += len(pending)
        if type(fetches) is framework.Tensor and fetches.graph is self._graph:
            # The common single-tensor fetch skips the structure walk.
            fetch_refs, target_ids, rebuild = [fetches._ref()], [], _first
        else:
            plan = _FetchPlan(self._graph, fetches)
            fetch_refs = [t._ref() for t in plan.tensors]
            target_ids = [op._id for op in plan.targets]
            rebuild = plan.build
        feeds = []
        for key, value in (feed_dict or {}).items():
            tensor = self._graph.as_graph_element(key, allow_operation=False)
            if not isinstance(tensor, framework.Tensor):
                raise TypeError("cannot feed %r: feed keys are tensors" % (key,))
            op_id, index = tensor._ref()
            feeds.append((op_id, index, value))
        timeout = options.timeout_in_ms if options is not None else 0
        trace = options.trace_level if options is not None else RunOptions.NO_TRACE
        try:
            values, metadata = self._c.run(feeds, fetch_refs, target_ids, timeout, trace)
        except errors.OpError as e:
            _attach_node(e, self._graph)
            raise
        if run_metadata is not None:
            run_metadata._serialized = metadata
        return rebuild([_as_numpy_scalar(v) for v in values])

    def close(self):
        if not self._closed:
            self._closed = True
            self._c.close()

    def as_default(self):
        return _DefaultSession(self)

    def __enter__(self):
        self._default = _DefaultSession(self)
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()
        self._default.__enter__()
        return self

    def __exit__(self, *exc):
        self._default.__exit__(*exc)
        self._graph_context.__exit__(*exc)
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


class _DefaultSession:
    def __init__(self, session):
        self._session = session

    def __enter__(self):
        _default_session_stack.append(self._session)
        return self._session

    def __exit__(self, *exc):
        _default_session_stack.remove(self._session)
        return False


InteractiveSession = Session


def _attach_node(error, graph):
    """Sets error.op and error.node_def to the node its message names, when
    the graph has it (TensorFlow's OpError carries both)."""
    name = error.op_name
    op = graph._find_op(name) if name else None
    if op is None:
        return
    from distflow import graph_def
    inputs = [t.name for t in op.inputs] + ["^" + c.name for c in op.control_inputs]
    error._op = op
    error._node_def = graph_def.NodeDef(op.name, op.type, inputs, op.device)
