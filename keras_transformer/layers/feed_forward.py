"""Position-wise feed-forward network (paper §3.3)."""

import keras


@keras.saving.register_keras_serializable(package="keras_transformer")
class PositionwiseFeedForward(keras.layers.Layer):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position.

    Args:
        d_model: int. Input and output width.
        d_ff: int. Inner width (2048 in the base model).
        activation: str. Inner activation. Defaults to "relu" (the paper's).
        kernel_initializer: Defaults to "glorot_uniform".

    Call arguments:
        inputs: float tensor ``(..., d_model)``.

    Example:
    >>> PositionwiseFeedForward(d_model=16, d_ff=64)(np.zeros((2, 3, 16))).shape
    (2, 3, 16)

    References:
        Vaswani et al., 2017, §3.3.
    """

    def __init__(
        self,
        d_model,
        d_ff,
        activation="relu",
        kernel_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if d_model <= 0 or d_ff <= 0:
            raise ValueError(
                "d_model and d_ff must be positive. Received: "
                f"d_model={d_model}, d_ff={d_ff}"
            )
        self.d_model = int(d_model)
        self.d_ff = int(d_ff)
        self.activation = activation
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build(self, inputs_shape):
        self.inner_dense = keras.layers.Dense(
            self.d_ff,
            activation=self.activation,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy,
            name="inner",
        )
        self.inner_dense.build(inputs_shape)
        self.output_dense = keras.layers.Dense(
            self.d_model,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy,
            name="output",
        )
        self.output_dense.build(tuple(inputs_shape[:-1]) + (self.d_ff,))
        self.built = True

    def call(self, inputs):
        return self.output_dense(self.inner_dense(inputs))

    def compute_output_shape(self, inputs_shape):
        return tuple(inputs_shape[:-1]) + (self.d_model,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "d_model": self.d_model,
                "d_ff": self.d_ff,
                "activation": self.activation,
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
            }
        )
        return config
