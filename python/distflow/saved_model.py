"""tf.compat.v1.saved_model: loading a SavedModel into a session.

`loader.load(sess, tags, export_dir)` does what TensorFlow 1's does: the
MetaGraphDef whose tag set is exactly `tags` is imported into sess.graph
(under `import_scope` when given), its variables are restored from
EXPORT_DIR/variables/variables with the saver's restore op, its init op
(main_op or legacy_init_op) runs with the asset files fed, and the
MetaGraphDef comes back, its signatures readable as
`meta_graph_def.signature_def["serving_default"].inputs["x"].name`.
A directory of numbered versions loads the highest; a session bundle
(export.meta + export checkpoint) loads too. The reading and the choice of
graph are the C++ loader's (saved_model/loader.h); errors are its errors
(NotFoundError listing the tag sets there are, InvalidArgumentError naming a
file that is not a SavedModel)."""

import collections
import types

from distflow import _distflow
from distflow import dtypes
from distflow import graph_def as graph_def_lib

TensorInfo = collections.namedtuple("TensorInfo", ["name", "dtype"])
SignatureDef = collections.namedtuple("SignatureDef", ["method_name", "inputs", "outputs"])


class MetaGraphDef:
    """The loaded MetaGraphDef: `signature_def` by key, `graph_def`, and the
    serialized proto (SerializeToString)."""

    def __init__(self, plan):
        self._serialized = plan["meta_graph_def"]
        self.graph_def = graph_def_lib.GraphDef(plan["graph_def"])
        self.signature_def = {
            key: SignatureDef(method, _infos(inputs), _infos(outputs))
            for key, (method, inputs, outputs) in plan["signatures"].items()}

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return self._serialized


def _infos(infos):
    # dtype 0 (DT_INVALID): a composite tensor's info, which has none.
    return {key: TensorInfo(name, dtypes.as_dtype(dtype) if dtype else None)
            for key, (name, dtype) in infos.items()}


def _scoped(name, import_scope):
    if not name or not import_scope:
        return name
    return import_scope + "/" + name


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the SavedModel in `export_dir` with tag set `tags` into `sess`;
    returns its MetaGraphDef."""
    if isinstance(tags, str):
        tags = [tags]
    plan = _distflow.saved_model_load_plan(str(export_dir), list(tags))
    with sess.graph.as_default():
        graph_def_lib.import_graph_def(graph_def_lib.GraphDef(plan["graph_def"]),
                                       name=import_scope or "")
    if plan["restore_op"]:
        sess.run(_scoped(plan["restore_op"], import_scope),
                 {_scoped(plan["filename_tensor"], import_scope): plan["variables_prefix"]})
    if plan["init_op"]:
        feeds = {_scoped(name, import_scope): path for name, path in plan["asset_feeds"]}
        sess.run(_scoped(plan["init_op"], import_scope), feeds)
    return MetaGraphDef(plan)


def maybe_saved_model_directory(export_dir):
    """True when `export_dir` holds saved_model.pb or saved_model.pbtxt."""
    return _distflow.has_saved_model_proto(str(export_dir))


loader = types.SimpleNamespace(load=load, maybe_saved_model_directory=maybe_saved_model_directory)
tag_constants = types.SimpleNamespace(SERVING="serve", TRAINING="train", GPU="gpu", TPU="tpu")
signature_constants = types.SimpleNamespace(
    DEFAULT_SERVING_SIGNATURE_DEF_KEY="serving_default",
    PREDICT_METHOD_NAME="tensorflow/serving/predict",
    CLASSIFY_METHOD_NAME="tensorflow/serving/classify",
    REGRESS_METHOD_NAME="tensorflow/serving/regress",
    PREDICT_INPUTS="inputs", PREDICT_OUTPUTS="outputs")
