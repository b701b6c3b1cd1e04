"""Chrome traces of traced runs (tf.python.client.timeline's shape)."""

from distflow import _distflow


class Timeline:
    def __init__(self, step_stats=None, run_metadata=None):
        if run_metadata is None:
            run_metadata = step_stats
        serialized = getattr(run_metadata, "_serialized", None)
        if serialized is None:
            raise TypeError("Timeline takes the RunMetadata of a traced run")
        self._serialized = serialized

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The step as Chrome trace JSON (chrome://tracing, Perfetto)."""
        return _distflow.chrome_trace(self._serialized)
