"""The paper's learning-rate schedule and optimizer (§5.3)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5), §5.3.

    The rate rises linearly for ``warmup_steps`` steps and then decays with
    the inverse square root of the step. Keras counts optimizer iterations
    from 0; step 0 is evaluated as step 1 (a small positive rate instead of
    the formula's 0 / inf), every other step exactly as the formula.

    Args:
        d_model: int. Model width.
        warmup_steps: int. Defaults to 4000 (the paper's).
        scale: float. Multiplies the rate (1.0 is the paper's). Defaults to 1.0.
        decay_steps: optional int. Also multiplies the rate by ``max(0, 1 -
            step / decay_steps)``, a linear decay that reaches zero at that
            step (not in the paper; for a fixed training budget, where a rate
            that ends at zero usually beats one cut off mid-decay). ``None``
            (the default): the paper's schedule.

    Example:
    >>> schedule = TransformerSchedule(d_model=512)
    >>> optimizer = keras.optimizers.Adam(schedule, 0.9, 0.98, 1e-9)
    """

    def __init__(self, d_model, warmup_steps=4000, scale=1.0, decay_steps=None):
        if not isinstance(d_model, int) or d_model <= 0:
            raise ValueError(f"d_model must be a positive int. Received: d_model={d_model!r}")
        if not isinstance(warmup_steps, int) or warmup_steps <= 0:
            raise ValueError(
                f"warmup_steps must be a positive int. Received: warmup_steps={warmup_steps!r}"
            )
        if not scale > 0:
            raise ValueError(f"scale must be positive. Received: scale={scale!r}")
        if decay_steps is not None and (
            not isinstance(decay_steps, int) or decay_steps <= warmup_steps
        ):
            raise ValueError(
                "decay_steps must be an int above warmup_steps "
                f"({warmup_steps}), or None. Received: decay_steps={decay_steps!r}"
            )
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.scale = float(scale)
        self.decay_steps = decay_steps

    def __call__(self, step):
        step = ops.maximum(ops.cast(step, "float32"), 1.0)
        warmup = float(self.warmup_steps) ** -1.5
        rate = ops.minimum(ops.rsqrt(step), step * warmup)
        if self.decay_steps is not None:
            rate = rate * ops.maximum(1.0 - step / float(self.decay_steps), 0.0)
        return (self.scale * float(self.d_model) ** -0.5) * rate

    def get_config(self):
        return {
            "d_model": self.d_model,
            "warmup_steps": self.warmup_steps,
            "scale": self.scale,
            "decay_steps": self.decay_steps,
        }


def transformer_optimizer(
    d_model, warmup_steps=4000, scale=1.0, decay_steps=None, **kwargs
):
    """Adam(beta_1=0.9, beta_2=0.98, epsilon=1e-9) with `TransformerSchedule`, §5.3.

    Extra keyword arguments go to `keras.optimizers.Adam` (e.g. ``clipnorm``).
    """
    return keras.optimizers.Adam(
        learning_rate=TransformerSchedule(d_model, warmup_steps, scale, decay_steps),
        beta_1=0.9,
        beta_2=0.98,
        epsilon=1e-9,
        **kwargs,
    )
