"""tf.compat.v1.train: optimizers, the global step, Saver, checkpoints.

The optimizers are the C++ ones (src/distflow/training/): GradientDescentOptimizer,
MomentumOptimizer and AdamOptimizer build one ResourceApply* op per variable,
colocated with it. Variables an optimizer creates (slots, Adam's beta powers)
join the GLOBAL_VARIABLES collection, so a global_variables_initializer()
made after minimize() initializes them."""

import os

from distflow import _distflow
from distflow import dtypes
from distflow import framework
from distflow import variables as variables_lib


class Optimizer:
    _KIND = None

    def __init__(self, learning_rate, name, **params):
        self._learning_rate = learning_rate
        self._name = name
        self._params = params
        self._c = None
        self._graph = None

    def _optimizer(self):
        graph = framework.get_default_graph()
        if self._c is None:
            self._graph = graph
            lr = self._learning_rate
            if isinstance(lr, (framework.Tensor, variables_lib.Variable)):
                lr = framework.convert_to_tensor(lr)._ref()
            else:
                lr = float(lr)
            prefix = graph._builder_prefix(self._name)
            self._c = _distflow.Optimizer(graph._c, self._KIND, prefix, lr, self._params)
        elif graph is not self._graph:
            raise ValueError("an optimizer builds into one graph")
        return self._c

    def compute_gradients(self, loss, var_list=None):
        var_list = list(var_list) if var_list is not None else \
            variables_lib.trainable_variables()
        loss = framework.convert_to_tensor(loss)
        c = self._optimizer()
        by_id = {v.op._id: v for v in var_list}
        pairs = c.compute_gradients(loss._ref(), [v.op._id for v in var_list])
        graph = self._graph
        graph._register_new_nodes()
        return [(None if g is None else graph._op_by_id(g[0]).outputs[g[1]], by_id[vid])
                for g, vid in pairs]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        c = self._optimizer()
        graph = self._graph
        pairs = []
        for g, v in grads_and_vars:
            pairs.append((None if g is None else framework.convert_to_tensor(g)._ref(), v.op._id))
        before = set(c.variables())
        step_id = global_step.op._id if global_step is not None else -1
        op_id = c.apply_gradients(pairs, step_id)
        graph._register_new_nodes()
        for handle_id, init_id in zip(c.variables(), c.initializers()):
            if handle_id not in before:
                with graph.as_default():
                    variables_lib.Variable(
                        _handle_op=graph._op_by_id(handle_id),
                        _initializer_op=graph._op_by_id(init_id),
                        collections=[framework.GraphKeys.GLOBAL_VARIABLES])
        op = graph._op_by_id(op_id)
        graph.add_to_collection(framework.GraphKeys.TRAIN_OP, op)
        return op

    def minimize(self, loss, global_step=None, var_list=None, name=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def variables(self):
        if self._c is None:
            return []
        ids = set(self._c.variables())
        return [v for v in variables_lib.global_variables() if v.op._id in ids]


class GradientDescentOptimizer(Optimizer):
    _KIND = "GradientDescent"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(learning_rate, name)


class MomentumOptimizer(Optimizer):
    _KIND = "Momentum"

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(learning_rate, name, momentum=float(momentum),
                         use_nesterov=bool(use_nesterov))


class AdamOptimizer(Optimizer):
    _KIND = "Adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(learning_rate, name, beta1=float(beta1), beta2=float(beta2),
                         epsilon=float(epsilon))


def get_global_step(graph=None):
    graph = graph or framework.get_default_graph()
    steps = graph.get_collection(framework.GraphKeys.GLOBAL_STEP)
    return steps[0] if steps else None


def get_or_create_global_step(graph=None):
    graph = graph or framework.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        with graph.as_default():
            step = variables_lib.Variable(0, name="global_step", dtype=dtypes.int64,
                                          trainable=False)
        graph.add_to_collection(framework.GraphKeys.GLOBAL_STEP, step)
    return step


create_global_step = get_or_create_global_step


class Saver:
    """Checkpoints of variables in TensorFlow's format (the C++ Saver).

    save(sess, "dir/model.ckpt", global_step=n) writes "dir/model.ckpt-n"
    (distflow always names checkpoints model.ckpt-<step>) and lists it in
    "dir/checkpoint"; restore(sess, prefix) restores every variable or
    none."""

    def __init__(self, var_list=None, max_to_keep=5, name="save"):
        graph = framework.get_default_graph()
        if var_list is None:
            var_list = variables_lib.global_variables()
        if isinstance(var_list, dict):
            names, var_list = list(var_list.keys()), list(var_list.values())
        else:
            var_list = list(var_list)
            names = [v.op.name for v in var_list]
        self._graph = graph
        self._c = _distflow.Saver(graph._c, [v.op._id for v in var_list], names,
                                  graph._builder_prefix(name), int(max_to_keep))
        graph._register_new_nodes()

    def save(self, sess, save_path, global_step=None):
        if global_step is None:
            step = 0
        elif isinstance(global_step, int):
            step = global_step
        else:
            step = int(sess.run(global_step))
        directory = os.path.dirname(save_path) or "."
        return self._c.save(sess._c, directory, step)

    def restore(self, sess, save_path):
        if save_path is None:
            raise ValueError("restore needs a checkpoint prefix (see latest_checkpoint)")
        self._c.restore(sess._c, save_path)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    return _distflow.latest_checkpoint(checkpoint_dir)


class CheckpointReader:
    """Reads the tensors of one checkpoint by name."""

    def __init__(self, prefix):
        self._prefix = prefix
        self._entries = _distflow.checkpoint_entries(prefix)

    def get_variable_to_shape_map(self):
        return {name: list(shape) for name, (_, shape) in self._entries.items()}

    def get_variable_to_dtype_map(self):
        return {name: dtypes.as_dtype(dtype) for name, (dtype, _) in self._entries.items()}

    def has_tensor(self, name):
        return name in self._entries

    def get_tensor(self, name):
        return _distflow.checkpoint_tensor(self._prefix, name)


def load_checkpoint(ckpt_dir_or_file):
    prefix = ckpt_dir_or_file
    if os.path.isdir(prefix):
        prefix = latest_checkpoint(prefix)
        if prefix is None:
            from distflow import errors
            raise errors.NotFoundError(None, None,
                                       "no checkpoint in directory %s" % ckpt_dir_or_file)
    return CheckpointReader(prefix)


NewCheckpointReader = CheckpointReader
