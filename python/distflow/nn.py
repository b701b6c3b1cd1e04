"""tf.compat.v1.nn: activations, losses, convolution and pooling."""

from distflow import op_def_library

_apply = op_def_library.apply_op


def relu(features, name=None):
    return _apply("Relu", name=name or "Relu", features=features)


def relu6(features, name=None):
    return _apply("Relu6", name=name or "Relu6", features=features)


def elu(features, name=None):
    return _apply("Elu", name=name or "Elu", features=features)


def softplus(features, name=None):
    return _apply("Softplus", name=name or "Softplus", features=features)


def sigmoid(x, name=None):
    return _apply("Sigmoid", name=name or "Sigmoid", x=x)


def tanh(x, name=None):
    return _apply("Tanh", name=name or "Tanh", x=x)


def softmax(logits, axis=None, name=None):
    if axis not in (None, -1):
        raise ValueError("softmax is over the last axis only")
    return _apply("Softmax", name=name or "Softmax", logits=logits)


def log_softmax(logits, axis=None, name=None):
    if axis not in (None, -1):
        raise ValueError("log_softmax is over the last axis only")
    return _apply("LogSoftmax", name=name or "LogSoftmax", logits=logits)


def bias_add(value, bias, data_format=None, name=None):
    return _apply("BiasAdd", name=name or "BiasAdd", value=value, bias=bias,
                  data_format=data_format or "NHWC")


def l2_loss(t, name=None):
    return _apply("L2Loss", name=name or "L2Loss", t=t)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """The per-example loss of `logits` [batch, classes] for int `labels`
    [batch]."""
    if labels is None or logits is None:
        raise ValueError("pass labels= and logits= by name")
    loss, _ = _apply("SparseSoftmaxCrossEntropyWithLogits",
                     name=name or "SparseSoftmaxCrossEntropyWithLogits", features=logits,
                     labels=labels)
    return loss


def softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    if labels is None or logits is None:
        raise ValueError("pass labels= and logits= by name")
    loss, _ = _apply("SoftmaxCrossEntropyWithLogits",
                     name=name or "SoftmaxCrossEntropyWithLogits", features=logits,
                     labels=labels)
    return loss


def _four(v, data_format):
    if isinstance(v, int):
        v = [v, v]
    v = list(v)
    if len(v) == 4:
        return v
    if len(v) == 1:
        v = v * 2
    return [1] + v + [1] if data_format == "NHWC" else [1, 1] + v


def conv2d(input, filters=None, strides=None, padding=None, data_format="NHWC",  # noqa: A002
           dilations=None, name=None, filter=None):  # noqa: A002
    filters = filters if filters is not None else filter
    attrs = {"strides": _four(strides, data_format), "padding": padding,
             "data_format": data_format}
    if dilations is not None:
        attrs["dilations"] = _four(dilations, data_format)
    return _apply("Conv2D", name=name or "Conv2D", input=input, filter=filters, **attrs)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _apply("MaxPool", name=name or "MaxPool", input=input,
                  ksize=_four(ksize, data_format), strides=_four(strides, data_format),
                  padding=padding, data_format=data_format)


max_pool = max_pool2d


def avg_pool2d(value, ksize, strides, padding, data_format="NHWC", name=None):
    return _apply("AvgPool", name=name or "AvgPool", value=value,
                  ksize=_four(ksize, data_format), strides=_four(strides, data_format),
                  padding=padding, data_format=data_format)


avg_pool = avg_pool2d
