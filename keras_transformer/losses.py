"""Label-smoothed cross-entropy over non-padding tokens (paper §5.4)."""

import keras
from keras import ops

from keras_transformer.special_tokens import PAD_ID


def label_smoothed_token_losses(labels, logits, label_smoothing=0.1):
    """Per-token loss ``(batch, length)`` of smoothed targets, in float32.

    The target distribution puts ``1 - eps + eps / V`` on the label and
    ``eps / V`` on every other token (Keras' and Szegedy et al.'s
    convention). Written as ``logsumexp(z) - (1 - eps) z_label - eps
    mean(z)``, which never materializes the log-probabilities.
    """
    logits = ops.cast(logits, "float32")
    labels = ops.cast(labels, "int32")
    log_normalizer = ops.logsumexp(logits, axis=-1)
    label_logits = ops.squeeze(
        ops.take_along_axis(logits, labels[..., None], axis=-1), axis=-1
    )
    losses = log_normalizer - (1.0 - label_smoothing) * label_logits
    if label_smoothing:
        losses = losses - label_smoothing * ops.mean(logits, axis=-1)
    return losses


@keras.saving.register_keras_serializable(package="keras_transformer")
class LabelSmoothedCrossEntropy(keras.losses.Loss):
    """Sparse cross-entropy with label smoothing, averaged over real tokens.

    Positions whose label is the padding id carry no loss, and the mean is
    taken over non-padding tokens only (a batch of only padding gives 0, not
    NaN). Logits are cast to float32, so the loss is stable under mixed
    precision.

    Args:
        label_smoothing: float in [0, 1). eps_ls; 0.1 is the paper's.
        pad_id: int. Label id that is ignored. Defaults to 0.
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
        self.pad_id = pad_id

    def __call__(self, y_true, y_pred, sample_weight=None):
        token_weights = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, "float32")
            if len(sample_weight.shape) == 1:
                sample_weight = sample_weight[:, None]
            token_weights = token_weights * sample_weight
        return super().__call__(y_true, y_pred, sample_weight=token_weights)

    def call(self, y_true, y_pred):
        return label_smoothed_token_losses(y_true, y_pred, self.label_smoothing)

    def get_config(self):
        config = super().get_config()
        config.pop("reduction", None)
        config.update(
            {"label_smoothing": self.label_smoothing, "pad_id": self.pad_id}
        )
        return config
