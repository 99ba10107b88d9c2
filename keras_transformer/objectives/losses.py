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
    backend, so each backend gets its fastest of three equal formulations
    (same values and gradients; `benchmarks/loss_formulations.py` times them):

    * TensorFlow: dense cross-entropy with the smoothed one-hot targets, which
      Keras maps to TF's fused ``softmax_cross_entropy_with_logits`` kernel
      (it computes the gradient in the forward pass): 1.7x faster.
    * JAX: the ``logsumexp`` form above, which XLA fuses best.
    * PyTorch: one ``log_softmax`` reused for the label and the mean: 1.4x
      faster than the ``logsumexp`` form.
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


_FORMULATIONS = {
    "tensorflow": _fused_softmax_form,
    "jax": _logsumexp_form,
    "torch": _log_softmax_form,
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
