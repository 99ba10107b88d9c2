"""Token accuracy over non-padding positions."""

import keras
from keras import ops

from keras_transformer.objectives.losses import check_pad_id
from keras_transformer.special_tokens import PAD_ID


@keras.saving.register_keras_serializable(package="keras_transformer")
class MaskedTokenAccuracy(keras.metrics.Metric):
    """Fraction of non-padding target tokens whose argmax logit is the label.

    Args:
        pad_id: int. Label id that is ignored; must be
            `special_tokens.PAD_ID` (0), the model's padding id (kept for
            saved configs). Defaults to 0.
        name: str. Defaults to "token_accuracy".

    Example:
    >>> metric = MaskedTokenAccuracy()
    >>> metric.update_state(np.array([[1, 2, 0]]), np.eye(3)[None, [1, 0, 0]])
    >>> float(metric.result())
    0.5
    """

    def __init__(self, pad_id=PAD_ID, name="token_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = check_pad_id(pad_id)
        self.correct = self.add_variable(
            shape=(), initializer="zeros", dtype="float32", name="correct"
        )
        self.count = self.add_variable(
            shape=(), initializer="zeros", dtype="float32", name="count"
        )

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        predictions = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        weights = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, "float32")
            if len(sample_weight.shape) == 1:
                sample_weight = sample_weight[:, None]
            weights = weights * sample_weight
        hits = ops.cast(ops.equal(predictions, y_true), "float32") * weights
        self.correct.assign_add(ops.sum(hits))
        self.count.assign_add(ops.sum(weights))

    def result(self):
        return ops.divide_no_nan(self.correct, self.count)

    def reset_state(self):
        self.correct.assign(0.0)
        self.count.assign(0.0)

    def get_config(self):
        config = super().get_config()
        config.update({"pad_id": self.pad_id})
        return config
