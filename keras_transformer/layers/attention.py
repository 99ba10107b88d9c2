"""Multi-head scaled dot-product attention (paper §3.2)."""

import math
from typing import Any, NamedTuple

import keras
from keras import ops

from keras_transformer.layers.buffer_writes import write_along
from keras_transformer.layers.masks import causal_mask, merge_attention_masks
from keras_transformer.layers.relative_positions import (
    check_max_relative_position,
    relative_logits,
    relative_position_ids,
    relative_values,
)

PROJECTION_LAYOUTS = ("head_major", "qkv_major")
# The layout of models saved before `projection_layout` existed.
LEGACY_PROJECTION_LAYOUT = "qkv_major"


def with_legacy_projection_layout(config):
    """A copy of ``config`` (of a layer or model that takes
    ``projection_layout``) that loads files saved before the option existed:
    their fused kernels are ``[Q | K | V]`` ("qkv_major"). Every
    ``from_config`` of such a class passes its config through here."""
    config = dict(config)
    config.setdefault("projection_layout", LEGACY_PROJECTION_LAYOUT)
    return config


def check_projection_layout(projection_layout):
    if projection_layout not in PROJECTION_LAYOUTS:
        raise ValueError(
            f"projection_layout must be one of {PROJECTION_LAYOUTS}. "
            f"Received: projection_layout={projection_layout!r}"
        )


def fused_attention_supported(dtype):
    """Whether `keras.ops.dot_product_attention` can train in ``dtype`` here.

    Backend-specific: Keras' JAX fallback computes float16 logits with
    ``preferred_element_type=float32``, a dot_general that XLA:CPU cannot
    compile (its gradient fails with "precision 'F16_F16_F32' is not
    supported"). float16 on a JAX CPU therefore takes the explicit path.
    """
    if keras.config.backend() != "jax" or dtype != "float16":
        return True
    import jax

    return jax.default_backend() != "cpu"


class AttentionOutput(NamedTuple):
    """What `MultiHeadAttention` returns, whatever its arguments.

    Attributes:
        outputs: float ``(batch, query_length, d_model)``.
        cache: the key/value cache when one was given (written at
            ``cache_index`` for self-attention, unchanged for encoder-decoder
            attention), else None.
        attention_scores: the attention weights ``(batch, num_heads,
            query_length, key_length)`` when requested, else None.
    """

    outputs: Any
    cache: Any = None
    attention_scores: Any = None


def _head_major(key_value):
    """``(batch, 2, time, heads, d)`` -> the cache layout ``(batch, 2, heads,
    time, d)``."""
    return ops.transpose(key_value, (0, 1, 3, 2, 4))


@keras.saving.register_keras_serializable(package="keras_transformer")
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head scaled dot-product attention, §3.2 of the paper.

    ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V`` and
    ``d_k = d_v = d_model / h``. The per-head projections are stored as one
    fused kernel: ``(d_model, 3 * d_model)`` for self-attention (Q, K and V
    in one matmul) and ``(d_model, d_model)`` + ``(d_model, 2 * d_model)``
    for encoder-decoder attention, where K and V come from the encoder.

    The fused kernels' columns are grouped by head (``projection_layout=
    "head_major"``: ``[q_1 k_1 v_1 | q_2 k_2 v_2 | ...]``, Megatron-LM's
    layout), so that splitting the columns into contiguous blocks over
    devices gives each device whole heads (see
    `keras_transformer.distribution`). ``"qkv_major"`` (``[Q | K | V]``, each
    ``[q_1 ... q_h]``) is the layout of models saved before the option
    existed; configs without the key load with it.

    The hot path is `keras.ops.dot_product_attention` (each backend's fused
    kernel). Two paths compute the same function where it cannot serve or is
    slower (``test_the_attention_paths_compute_one_function``): einsums when
    the weights are requested, with relative positions and for float16 on a
    JAX CPU (`_attention_with_scores`); a cached step's one query on the
    cache's own layout (`_single_query_attention` says why).

    Masks: ``padding_mask`` (True on real keys, shape ``(batch, key_length)``),
    ``attention_mask`` (per query, ``(batch, query_length, key_length)``) and
    ``use_causal_mask`` are combined with a logical AND. A query row whose
    keys are all masked (e.g. an all-padding source) attends to nothing: its
    output is exactly zero, and outputs and gradients stay finite.

    Cached decoding: pass ``cache`` (a tensor ``(batch, 2, num_heads,
    cache_length, head_dim)`` holding keys and values, head-major so that a
    decoding step reads it without transposing) and, for self-attention,
    ``cache_index`` (position of the first query token). Self-attention writes
    the new keys/values into the cache at ``cache_index`` and attends to the
    positions ``<= cache_index + t``; encoder-decoder attention reads the
    cache built once by `compute_key_value_cache` and leaves it unchanged.

    The layer returns one structure whatever its arguments, an
    `AttentionOutput` ``(outputs, cache, attention_scores)`` whose ``cache``
    and ``attention_scores`` are None when not asked for. (Keras refuses
    None among a functional model's layer outputs: in a functional model,
    call the layer inside another layer, as the encoder and decoder layers
    do.)

    Args:
        d_model: int. Model width; inputs and outputs have this last dim.
        num_heads: int. Number of heads ``h``; must divide ``d_model``.
        self_attention: bool. True for self-attention (query, keys and
            values from the same sequence; fused QKV projection), False for
            encoder-decoder attention. Defaults to True.
        use_bias: bool. Whether the projections have biases. Defaults to True.
        kernel_initializer: initializer for the projection kernels.
            Defaults to "glorot_uniform".
        projection_layout: "head_major" or "qkv_major": the column order of
            the fused projections, see above. Defaults to "head_major".
        max_relative_position: int >= 0. ``m > 0``: relative positions
            (Shaw et al., 2018; self-attention only): tables
            ``relative_position_keys`` and ``relative_position_values`` of
            ``2m + 1`` rows of ``head_dim``, shared by the heads, add ``q_i .
            a^K_ij`` to the logits and ``sum_j w_ij a^V_ij`` to the outputs,
            ``a_ij`` the row of ``clip(j - i, -m, m)``. 0 (default): none.

    Call arguments:
        query: float tensor ``(batch, query_length, d_model)``.
        key_value: float tensor ``(batch, key_length, d_model)``; for
            encoder-decoder attention only (ignored when a cache is given).
        padding_mask: optional boolean ``(batch, key_length)``, True on keys
            that may be attended to.
        attention_mask: optional boolean ``(batch, query_length,
            key_length)``, True where a query may attend to a key (packed
            rows: `keras_transformer.layers.masks.segment_attention_mask`);
            combined with the other masks by a logical AND.
        use_causal_mask: bool. Mask keys after each query position.
        cache: optional key/value cache, see above.
        cache_index: int scalar (tensor or Python int); the position of the
            first query token inside the self-attention cache.
        return_attention_scores: bool. Also compute the attention weights
            ``(batch, num_heads, query_length, key_length)`` (the output's
            ``attention_scores``).

    Returns:
        An `AttentionOutput` ``(outputs, cache, attention_scores)``.

    Example:
    >>> attention = MultiHeadAttention(d_model=64, num_heads=4)
    >>> x = np.random.rand(2, 5, 64).astype("float32")
    >>> attention(x, use_causal_mask=True).outputs.shape
    (2, 5, 64)
    >>> outputs, cache, scores = attention(x, return_attention_scores=True)
    >>> cache is None, scores.shape
    (True, (2, 4, 5, 5))

    References:
        Vaswani et al., 2017, "Attention Is All You Need", §3.2.
    """

    def __init__(
        self,
        d_model,
        num_heads,
        self_attention=True,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        projection_layout="head_major",
        max_relative_position=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_projection_layout(projection_layout)
        self.max_relative_position = check_max_relative_position(
            max_relative_position, self_attention
        )
        if d_model <= 0 or num_heads <= 0:
            raise ValueError(
                "d_model and num_heads must be positive. "
                f"Received: d_model={d_model}, num_heads={num_heads}"
            )
        if d_model % num_heads != 0:
            raise ValueError(
                "d_model must be divisible by num_heads (d_k = d_model / h). "
                f"Received: d_model={d_model}, num_heads={num_heads}"
            )
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.head_dim = self.d_model // self.num_heads
        self.self_attention = bool(self_attention)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.projection_layout = projection_layout

    def _dense(self, units, name):
        return keras.layers.Dense(
            units,
            use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy,
            name=name,
        )

    def build(self, query_shape, key_value_shape=None):
        # Shapes arrive as lists when a saved model is rebuilt from its config.
        query_shape = tuple(query_shape)
        if query_shape[-1] is not None and query_shape[-1] != self.d_model:
            raise ValueError(
                f"{self.name}: the query's last dimension must equal d_model="
                f"{self.d_model}. Received query shape {tuple(query_shape)}"
            )
        if self.self_attention:
            self.qkv_dense = self._dense(3 * self.d_model, "qkv")
            self.qkv_dense.build(query_shape)
        else:
            self.query_dense = self._dense(self.d_model, "query")
            self.query_dense.build(query_shape)
            self.key_value_dense = self._dense(2 * self.d_model, "key_value")
            self.key_value_dense.build(
                key_value_shape
                if key_value_shape is not None
                else query_shape
            )
        self.output_dense = self._dense(self.d_model, "output")
        self.output_dense.build(query_shape[:-1] + (self.d_model,))
        rows = 2 * self.max_relative_position + 1
        for name in ("relative_position_keys", "relative_position_values"):
            if self.max_relative_position:  # Shaw et al.'s a^K and a^V
                weight = self.add_weight(
                    name=name, shape=(rows, self.head_dim), initializer=self.kernel_initializer
                )
                setattr(self, name, weight)
        self.built = True

    # (batch, time, n * d_model) -> n tensors (batch, time, heads, head_dim)
    def _split_heads(self, x, n):
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        if self.projection_layout == "head_major":
            # columns [h_1: n * head_dim | h_2: ... ]
            shape, axis = (batch, length, self.num_heads, n, self.head_dim), 3
        else:
            # columns [n_1: heads * head_dim | n_2: ... ]
            shape, axis = (batch, length, n, self.num_heads, self.head_dim), 2
        # unstack, not n slices: on TensorFlow the slices and their
        # gradients cost ~17% of a training step (benchmarks/train_components.py).
        return ops.unstack(ops.reshape(x, shape), num=n, axis=axis)

    def compute_key_value_cache(self, key_value):
        """Keys and values of the encoder output, computed once for decoding.

        Returns a tensor ``(batch, 2, num_heads, key_length, head_dim)``.
        """
        if self.self_attention:
            raise ValueError(
                "compute_key_value_cache is for encoder-decoder attention; a "
                "self-attention cache starts as zeros (see "
                "`Transformer.build_cache`)."
            )
        key, value = self._split_heads(self.key_value_dense(key_value), 2)
        return _head_major(ops.stack([key, value], axis=1))

    def call(
        self,
        query,
        key_value=None,
        padding_mask=None,
        use_causal_mask=False,
        cache=None,
        cache_index=None,
        return_attention_scores=False,
        training=None,
        attention_mask=None,
    ):
        query_length = ops.shape(query)[1]
        causal_offset = 0
        if cache is not None:
            self._check_cache(cache)
        if self.self_attention:
            q, k, v = self._split_heads(self.qkv_dense(query), 3)
            if cache is not None:
                if cache_index is None:
                    raise ValueError(
                        "A self-attention cache needs `cache_index`, the "
                        "position of the first query token."
                    )
                new = _head_major(ops.stack([k, v], axis=1))
                cache = write_along(cache, ops.cast(new, cache.dtype), cache_index, axis=3)
                k, v = cache[:, 0], cache[:, 1]
                causal_offset = cache_index
                # Keys past the current position are zeros not yet written;
                # the causal mask hides them.
                use_causal_mask = True
        else:
            # (batch, time, d_model) -> (batch, time, heads, head_dim)
            q = ops.reshape(
                self.query_dense(query),
                (ops.shape(query)[0], query_length, self.num_heads, self.head_dim),
            )
            if cache is not None:
                k, v = cache[:, 0], cache[:, 1]
            else:
                if key_value is None:
                    raise ValueError(
                        "Encoder-decoder attention needs `key_value` (the "
                        "encoder output) or a cache."
                    )
                k, v = self._split_heads(self.key_value_dense(key_value), 2)
        # A cache holds keys and values head-major: (batch, heads, keys, d).
        key_axis = 2 if cache is not None else 1
        key_length = ops.shape(k)[key_axis]

        causal = None
        if use_causal_mask:
            causal = causal_mask(query_length, key_length, causal_offset)
        mask = merge_attention_masks(padding_mask, causal, attention_mask)
        any_valid = None
        if mask is not None and (padding_mask is not None or attention_mask is not None):
            # Rows whose keys are all masked would give NaN (0/0) in some
            # backends' fused kernels. Let such rows attend everywhere (finite)
            # and zero their output below. (Keys' batch: an encoder-decoder
            # cache may hold one row per sentence for all of its beams.)
            mask = ops.broadcast_to(
                mask, (ops.shape(k)[0], 1, query_length, key_length)
            )
            any_valid = ops.any(mask, axis=-1, keepdims=True)
            mask = ops.logical_or(mask, ops.logical_not(any_valid))

        scores = None
        single_query = isinstance(query_length, int) and query_length == 1
        explicit = return_attention_scores or self.max_relative_position
        if cache is not None and single_query and not explicit:
            # One decoding step: see `_single_query_attention`.
            outputs = self._single_query_attention(q, k, v, mask, any_valid)
            any_valid = None
        else:
            if cache is not None:
                # Several cached positions at once (a forced prefix) or
                # weights requested: the general path, on (batch, keys,
                # heads, d), with a shared encoder-decoder cache repeated
                # for every query row.
                k = ops.transpose(k, (0, 2, 1, 3))
                v = ops.transpose(v, (0, 2, 1, 3))
                if not self.self_attention:
                    groups = ops.shape(q)[0] // ops.shape(k)[0]
                    k, v = (ops.repeat(x, groups, axis=0) for x in (k, v))
                    if any_valid is not None:
                        mask = ops.repeat(mask, groups, axis=0)
                        any_valid = ops.repeat(any_valid, groups, axis=0)
            outputs, scores = self._general_attention(
                q, k, v, mask, return_attention_scores, causal_offset
            )
        if any_valid is not None:
            # any_valid: (B, 1, T, 1) -> (B, T, 1, 1) to match (B, T, h, d)
            keep = ops.transpose(any_valid, (0, 2, 1, 3))
            outputs = ops.where(keep, outputs, ops.zeros_like(outputs))
            if scores is not None:
                scores = ops.where(any_valid, scores, ops.zeros_like(scores))
        # (batch, time, heads, head_dim) -> (batch, time, d_model)
        outputs = ops.reshape(
            outputs, (ops.shape(q)[0], query_length, self.d_model)
        )
        outputs = self.output_dense(outputs)
        if not return_attention_scores:
            scores = None  # computed by the explicit path, not asked for
        return AttentionOutput(outputs, cache, scores)

    def _check_cache(self, cache):
        shape = tuple(cache.shape)
        expected = (2, self.num_heads, None, self.head_dim)
        if len(shape) != 5 or any(
            e is not None and d is not None and d != e
            for d, e in zip(shape[1:], expected)
        ):
            raise ValueError(
                f"{self.name}: a key/value cache has shape (batch, 2, num_heads="
                f"{self.num_heads}, length, head_dim={self.head_dim}). Received "
                f"cache shape {shape}"
            )

    def _general_attention(self, q, k, v, mask, return_attention_scores, query_start=0):
        """``(outputs, scores or None)`` for ``(batch, time, heads, d)`` inputs."""
        if self.max_relative_position:
            return self._attention_with_scores(q, k, v, mask, query_start)
        if return_attention_scores or not fused_attention_supported(
            keras.backend.standardize_dtype(q.dtype)
        ):
            return self._attention_with_scores(q, k, v, mask)
        q, scale = self._scaled_query(q)
        return ops.dot_product_attention(q, k, v, mask=mask, scale=scale), None

    def _scaled_query(self, q):
        """``(q, scale)`` for a product that scales after QK^T.

        Some backends (TensorFlow) compute QK^T in float16 and scale
        afterwards, so logits that fit after scaling overflow to inf (then
        NaN): in float16 the queries are scaled first and the scale is 1.
        """
        scale = 1.0 / math.sqrt(self.head_dim)
        if keras.backend.standardize_dtype(q.dtype) == "float16":
            return q * ops.cast(scale, q.dtype), 1.0
        return q, scale

    def _single_query_attention(self, q, k, v, mask, any_valid):
        """Attention of one query position per row: a cached decoding step.

        ``q`` is ``(rows, 1, heads, head_dim)``; ``k`` and ``v`` are the
        cache's head-major ``(batch, heads, keys, head_dim)``, where ``rows``
        is a multiple ``g`` of ``batch``: an encoder-decoder cache holds one
        row per sentence, shared by its ``g`` consecutive beams (beam search
        does not tile it), and the ``g`` queries of a sentence are one small
        matmul against it; self-attention caches have a row per hypothesis
        (``g = 1``). ``mask`` and ``any_valid`` have ``batch`` rows.

        Written as einsums on the head-major layout the products need no
        transposes (the fused kernel wants ``(batch, keys, heads, d)``, and
        XLA copied every layer's cache into its layout at every step: 10% of
        a JAX decoding step, `benchmarks/decode_profile.py`). The arithmetic
        is Keras' `ops.dot_product_attention`'s (products in the compute
        dtype, scale and softmax in float32), so that cached decoding of a
        half-precision model picks the tokens that the uncached decoder picks.
        """
        rows = ops.shape(q)[0]
        batch = ops.shape(k)[0]
        query, scale = self._scaled_query(q[:, 0])  # (rows, h, d)
        query = ops.reshape(query, (batch, -1, self.num_heads, self.head_dim))
        logits = ops.einsum("bghd,bhsd->bghs", query, k)
        logits = ops.cast(logits, "float32") * scale  # (B, g, h, S)
        if mask is not None:
            # (B or 1, 1, 1, S) broadcasts over (B, g, h, S).
            logits = ops.where(mask, logits, ops.full_like(logits, -1e9))
        weights = ops.softmax(logits, axis=-1)
        outputs = ops.einsum("bghs,bhsd->bghd", ops.cast(weights, v.dtype), v)
        if any_valid is not None:
            # (B, 1, 1, 1): rows whose keys are all masked give zeros.
            outputs = ops.where(any_valid, outputs, ops.zeros_like(outputs))
        return ops.reshape(outputs, (rows, 1, self.num_heads, self.head_dim))

    def _attention_with_scores(self, q, k, v, mask, query_start=0):
        # (batch, heads, query_time, key_time), in float32: half-precision
        # QK^T can overflow (float16) before the scale brings it back.
        q = ops.cast(q, "float32")
        logits = ops.einsum("bthd,bshd->bhts", q, ops.cast(k, "float32"))
        ids = None
        if self.max_relative_position:
            m = self.max_relative_position
            ids = relative_position_ids(ops.shape(q)[1], ops.shape(k)[1], m, query_start)
            logits = logits + relative_logits(q, self.relative_position_keys, ids)
        logits = logits / math.sqrt(self.head_dim)
        if mask is not None:
            logits = ops.where(mask, logits, ops.full_like(logits, -1e9))
        weights = ops.softmax(logits, axis=-1)
        value_weights = ops.cast(weights, v.dtype)
        outputs = ops.einsum("bhts,bshd->bthd", value_weights, v)
        if ids is not None:
            outputs = outputs + relative_values(
                value_weights, self.relative_position_values, ids
            )
        return outputs, weights

    def compute_output_shape(self, query_shape, key_value_shape=None):
        return query_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "d_model": self.d_model,
                "num_heads": self.num_heads,
                "self_attention": self.self_attention,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
                "projection_layout": self.projection_layout,
            }
        )
        if self.max_relative_position:  # only where used: other configs unchanged
            config["max_relative_position"] = self.max_relative_position
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(with_legacy_projection_layout(config))
