"""Label-smoothed cross-entropy over non-padding tokens (paper §5.4)."""

import keras
from keras import ops

from keras_transformer.layers.token_checks import check_token_ids
from keras_transformer.special_tokens import PAD_ID


def check_pad_id(pad_id):
    """The padding id of losses and metrics must be the model's, `PAD_ID`.

    The `Transformer` derives its padding masks from `special_tokens.PAD_ID`
    (as the tokenizer, the data pipeline and the decoders do); a loss or
    metric ignoring another id would score positions the model treats as
    padding, and the reverse. The argument is kept so that configs saved
    with ``pad_id=0`` load.
    """
    if isinstance(pad_id, bool) or pad_id != PAD_ID:
        raise ValueError(
            f"pad_id must be {PAD_ID} (special_tokens.PAD_ID): the Transformer "
            "masks padding by that id and has no other. Received: "
            f"pad_id={pad_id!r}"
        )
    return PAD_ID


def label_smoothed_token_losses(labels, logits, label_smoothing=0.1):
    """Per-token loss ``(batch, length)`` of smoothed targets, in float32.

    The target distribution puts ``1 - eps + eps / V`` on the label and
    ``eps / V`` on every other token (Keras' and Szegedy et al.'s
    convention): ``loss = logsumexp(z) - (1 - eps) z_label - eps mean(z)``.

    The loss over ``V`` logits per token is a large part of a training step
    (on 2 CPU cores, V=8000 and 2,048 tokens: ~140 ms of a ~570 ms step with
    TensorFlow, written as above), and the fastest way to write it differs by
    backend, so each backend gets its fastest of four equal formulations
    (same values and gradients; `benchmarks/loss_formulations.py` times them,
    `benchmarks/loss_buffers.py` counts the float32 tensors of the logits'
    size that a training step makes with each):

    * TensorFlow: dense cross-entropy with the smoothed one-hot targets, which
      Keras maps to TF's fused ``softmax_cross_entropy_with_logits`` kernel
      (it computes the gradient in the forward pass): 1.7x faster.
    * JAX: the ``logsumexp`` form above, which XLA fuses best.
    * PyTorch: the ``logsumexp`` form with its gradient written out and
      computed in place (`_custom_gradient_form`): faster than one
      ``log_softmax`` reused for the label and the mean, and its eager step
      allocates three float32 tensors of the logits' size (the logits,
      ``logsumexp``'s temporary, the gradient; at most two alive at once)
      where the log-softmax form allocates five (four alive at once).
    """
    logits = ops.cast(logits, "float32")
    labels = ops.cast(labels, "int32")
    formulation = _FORMULATIONS.get(keras.config.backend(), _logsumexp_form)
    return formulation(labels, logits, float(label_smoothing))


def _at_labels(values, labels):
    """``values[b, t, labels[b, t]]``: ``(batch, length, V)`` -> ``(batch, length)``."""
    return ops.squeeze(ops.take_along_axis(values, labels[..., None], axis=-1), axis=-1)


def _logsumexp_form(labels, logits, label_smoothing):
    log_normalizer = ops.logsumexp(logits, axis=-1)
    losses = log_normalizer - (1.0 - label_smoothing) * _at_labels(logits, labels)
    if label_smoothing:
        losses = losses - label_smoothing * ops.mean(logits, axis=-1)
    return losses


def _fused_softmax_form(labels, logits, label_smoothing):
    if not label_smoothing:
        return ops.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    vocabulary_size = ops.shape(logits)[-1]
    targets = ops.one_hot(labels, vocabulary_size, dtype="float32")
    targets = targets * (1.0 - label_smoothing) + label_smoothing / ops.cast(
        vocabulary_size, "float32"
    )
    return ops.categorical_crossentropy(targets, logits, from_logits=True)


def _log_softmax_form(labels, logits, label_smoothing):
    log_probs = ops.log_softmax(logits, axis=-1)
    losses = -(1.0 - label_smoothing) * _at_labels(log_probs, labels)
    if label_smoothing:
        losses = losses - label_smoothing * ops.mean(log_probs, axis=-1)
    return losses


def _custom_gradient_form(labels, logits, label_smoothing):
    """The ``logsumexp`` form with its gradient written out.

    Differentiated automatically, the other forms keep a float32 tensor of
    the logits' size from the forward pass for the backward one (the
    log-softmax, or the ``exp(z - max)`` inside ``logsumexp``) and build
    the gradient from several more (the label's as a scatter into zeros,
    then sums). Here the forward pass reduces the logits to three
    ``(batch, length)`` rows (log-normalizer, the label's logit, the mean)
    and the backward pass computes the gradient from the logits and those
    rows alone:

        d loss / d z = softmax(z) - targets

    Under PyTorch the gradient is computed in place (`_torch_gradient`).
    Under JAX, XLA's CPU compiler makes more of these tensors from this form
    than from the ``logsumexp`` one (it keeps the ``exp`` and lays the
    gradient out twice for the output projection's two matmuls), so JAX
    keeps that form (`benchmarks/loss_buffers.py` counts both).
    """
    vocabulary_size = logits.shape[-1]
    on_label = 1.0 - label_smoothing + label_smoothing / vocabulary_size
    off_label = label_smoothing / vocabulary_size
    torch_backend = keras.config.backend() == "torch"

    @ops.custom_gradient
    def token_losses(logits):
        log_normalizer = ops.logsumexp(logits, axis=-1)
        losses = log_normalizer - (1.0 - label_smoothing) * _at_labels(logits, labels)
        if label_smoothing:
            losses = losses - label_smoothing * ops.mean(logits, axis=-1)

        def gradient(*args, upstream=None):
            # JAX and TensorFlow pass the upstream gradient as an argument,
            # PyTorch as ``upstream`` (`keras.ops.custom_gradient`).
            if upstream is None:
                (upstream,) = args
            if torch_backend:
                return _torch_gradient(
                    logits, log_normalizer, labels, upstream, on_label, off_label
                )
            is_label = ops.equal(
                ops.arange(vocabulary_size, dtype="int32"), labels[..., None]
            )
            targets = ops.where(is_label, on_label, off_label)
            probs = ops.exp(logits - log_normalizer[..., None])
            return (probs - targets) * upstream[..., None]

        return losses, gradient

    return token_losses(logits)


def _torch_gradient(logits, log_normalizer, labels, upstream, on_label, off_label):
    """``(softmax(logits) - targets) * upstream``, in place in one tensor.

    PyTorch-only: its eager operations each allocate their result, so the
    `keras.ops` expression would allocate five float32 tensors of the
    logits' size (difference, exp, targets, subtraction, product); in
    place, one. (`torch.compile` fuses either into the same kernels.)
    """
    import torch

    gradient = torch.sub(logits, log_normalizer[..., None]).exp_()
    gradient.sub_(off_label)
    index = labels[..., None].to(torch.int64)
    gradient.scatter_add_(
        -1, index, torch.full(index.shape, off_label - on_label, dtype=gradient.dtype,
                              device=gradient.device),
    )  # fmt: skip
    return gradient.mul_(upstream[..., None])


_FORMULATIONS = {
    "tensorflow": _fused_softmax_form,
    "jax": _logsumexp_form,
    "torch": _custom_gradient_form,
}


@keras.saving.register_keras_serializable(package="keras_transformer")
class LabelSmoothedCrossEntropy(keras.losses.Loss):
    """Sparse cross-entropy with label smoothing, averaged over real tokens.

    Positions whose label is the padding id carry no loss, and the mean is
    taken over non-padding tokens only (a batch of only padding gives 0, not
    NaN). Logits are cast to float32, so the loss is stable under mixed
    precision.

    Args:
        label_smoothing: float in [0, 1). eps_ls; 0.1 is the paper's.
        pad_id: int. Label id that is ignored; must be
            `special_tokens.PAD_ID` (0), the model's padding id (kept for
            saved configs). Defaults to 0.
        name: str. Defaults to "label_smoothed_cross_entropy".

    Example:
    >>> loss = LabelSmoothedCrossEntropy(label_smoothing=0.1)
    >>> labels = np.array([[5, 6, 0]]); logits = np.zeros((1, 3, 10))
    >>> float(loss(labels, logits))  # log(10) on the two real tokens
    2.302585...
    """

    def __init__(
        self,
        label_smoothing=0.1,
        pad_id=PAD_ID,
        name="label_smoothed_cross_entropy",
        **kwargs,
    ):
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="mean_with_sample_weight", **kwargs)
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(
                "label_smoothing must be in [0, 1). "
                f"Received: label_smoothing={label_smoothing}"
            )
        self.label_smoothing = float(label_smoothing)
        self.pad_id = check_pad_id(pad_id)

    def __call__(self, y_true, y_pred, sample_weight=None):
        token_weights = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, "float32")
            if len(sample_weight.shape) == 1:
                sample_weight = sample_weight[:, None]
            token_weights = token_weights * sample_weight
        return super().__call__(y_true, y_pred, sample_weight=token_weights)

    def call(self, y_true, y_pred):
        # Labels outside [0, V) (other than pad_id) raise instead of training
        # silently on a wrapped or missing target (layers/token_checks.py).
        y_true = check_token_ids(
            y_true, y_pred.shape[-1], "labels", ignore_id=self.pad_id
        )
        return label_smoothed_token_losses(y_true, y_pred, self.label_smoothing)

    def get_config(self):
        config = super().get_config()
        config.pop("reduction", None)
        config.update(
            {"label_smoothing": self.label_smoothing, "pad_id": self.pad_id}
        )
        return config
