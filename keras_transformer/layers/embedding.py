"""Token embeddings scaled by sqrt(d_model) and tied to the output projection (§3.4)."""

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_transformer")
class TokenEmbedding(keras.layers.Layer):
    """Token embedding multiplied by sqrt(d_model), reusable as the output layer.

    The paper (§3.4) shares one weight matrix between the encoder input
    embedding, the decoder input embedding and the pre-softmax linear
    transformation, and multiplies the embeddings by sqrt(d_model). Calling
    this layer with ``reverse=True`` computes logits ``x @ E^T`` with the same
    matrix, in ``logits_dtype``: the hidden states and the (float32) matrix
    are cast to it before the matmul, as keras-hub's
    ``ReversibleEmbedding(reverse_dtype=...)`` does. The float32 default
    gives logits of float32 precision under mixed precision (casting a
    bfloat16 matmul's result afterwards would only change the dtype), so
    softmax, the loss and beam-search scores are stable.

    Written here rather than taken from keras-hub's `ReversibleEmbedding`
    because the sqrt(d_model) scale and float32 logits must be part of the
    layer for the model to match the paper under every dtype policy.

    Args:
        vocabulary_size: int. Number of token ids.
        d_model: int. Embedding width.
        scale: bool. Multiply embeddings by sqrt(d_model). Defaults to True.
        embeddings_initializer: initializer. Defaults to a normal with
            stddev d_model^-0.5, so that scaled embeddings have unit scale.
        logits_dtype: float dtype of the ``reverse=True`` matmul and its
            output. Defaults to "float32"; ``None`` uses the compute dtype
            (faster under mixed precision, at half-precision accuracy).
        output_bias: bool. Add a learned bias (one per id, zeros at first)
            to the ``reverse=True`` logits, as Marian's
            ``final_logits_bias``. Defaults to False (the paper's tied
            projection has none).

    Call arguments:
        inputs: int ids ``(batch, length)``, or with ``reverse=True`` float
            hidden states ``(batch, length, d_model)``.
        reverse: bool. Project hidden states to vocabulary logits.

    Example:
    >>> embedding = TokenEmbedding(vocabulary_size=100, d_model=16)
    >>> h = embedding(np.array([[5, 6, 0]]))
    >>> embedding(h, reverse=True).shape
    (1, 3, 100)
    """

    def __init__(
        self,
        vocabulary_size,
        d_model,
        scale=True,
        embeddings_initializer=None,
        logits_dtype="float32",
        output_bias=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.output_bias = bool(output_bias)
        if logits_dtype is not None:
            logits_dtype = keras.backend.standardize_dtype(logits_dtype)
            if "float" not in logits_dtype:
                raise ValueError(
                    "logits_dtype must be a float dtype or None. Received: "
                    f"logits_dtype={logits_dtype!r}"
                )
        self.logits_dtype = logits_dtype
        if vocabulary_size <= 0 or d_model <= 0:
            raise ValueError(
                "vocabulary_size and d_model must be positive. Received: "
                f"vocabulary_size={vocabulary_size}, d_model={d_model}"
            )
        self.vocabulary_size = int(vocabulary_size)
        self.d_model = int(d_model)
        self.scale = bool(scale)
        if embeddings_initializer is None:
            embeddings_initializer = keras.initializers.RandomNormal(
                stddev=self.d_model**-0.5
            )
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer
        )

    def build(self, inputs_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.vocabulary_size, self.d_model),
            initializer=self.embeddings_initializer,
            # Read in float32 inside `call` (not autocast to the compute
            # dtype): the lookup casts only the gathered rows, and the
            # output projection gets a float32 kernel for `logits_dtype`.
            autocast=False,
        )
        if self.output_bias:
            self.bias = self.add_weight(
                name="output_bias",
                shape=(self.vocabulary_size,),
                initializer="zeros",
                autocast=False,
            )
        self.built = True

    def cast_reads(self):
        """``[(variable, dtype)]``: the variables that `call` only ever uses
        cast to ``dtype`` (read once per search by a decoding loop, see
        `keras_transformer.utils.private_apis.variables_read_as_cast`): the
        output bias, and the embeddings when the logits' dtype is the
        compute dtype (the lookup casts its rows to it too)."""
        dtype = self._logits_dtype()
        reads = []
        if dtype == self.compute_dtype:
            reads.append((self.embeddings, dtype))
        if self.output_bias:
            reads.append((self.bias, dtype))
        return [(variable, dtype) for variable, dtype in reads if variable.dtype != dtype]

    def call(self, inputs, reverse=False):
        if reverse:
            dtype = self._logits_dtype()
            kernel = ops.cast(self.embeddings, dtype)
            logits = ops.matmul(ops.cast(inputs, dtype), ops.transpose(kernel))
            if self.output_bias:
                logits = logits + ops.cast(self.bias, dtype)
            return logits
        outputs = ops.take(self.embeddings, ops.cast(inputs, "int32"), axis=0)
        outputs = ops.cast(outputs, self.compute_dtype)
        if self.scale:
            outputs = outputs * ops.cast(math.sqrt(self.d_model), outputs.dtype)
        return outputs

    def compute_output_shape(self, input_shape, reverse=False):
        if reverse:
            return tuple(input_shape[:-1]) + (self.vocabulary_size,)
        return tuple(input_shape) + (self.d_model,)

    def compute_output_spec(self, inputs, reverse=False):
        shape = self.compute_output_shape(inputs.shape, reverse)
        dtype = self._logits_dtype() if reverse else self.compute_dtype
        return keras.KerasTensor(shape, dtype=dtype)

    def _logits_dtype(self):
        return self.logits_dtype or self.compute_dtype

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "d_model": self.d_model,
                "scale": self.scale,
                "embeddings_initializer": keras.initializers.serialize(
                    self.embeddings_initializer
                ),
                "logits_dtype": self.logits_dtype,
                "output_bias": self.output_bias,
            }
        )
        return config
