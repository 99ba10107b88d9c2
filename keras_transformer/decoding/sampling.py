"""Sampling a token per row: temperature, top-k, nucleus (top-p), seeded.

Reproducibility is the requirement that shapes this module: the same seed
must give the same samples on every backend, inside `jax.jit`, a
`tf.function` and eager torch, whatever the batch a sentence lands in (the
`Translator` sorts and batches sentences by length). Keras' random ops take
a Python int or a stateful `keras.random.SeedGenerator`; neither can follow a
per-sentence, per-step seed through a compiled `while_loop` without threading
generator state through the loop. So the noise is a counter-based hash,
written in `keras.ops` integer arithmetic: the uniform number for (seed,
sentence, step, token) is a pure function of those four integers, identical
on all backends (tests compare it with a NumPy reference). Tokens are drawn
with the Gumbel-max trick: ``argmax(logits / T + Gumbel noise)`` is an exact
sample of ``softmax(logits / T)``.
"""

from keras import ops

from keras_transformer.decoding.search import NEG_INF
from keras_transformer.options import DEFAULTS

# "lowbias32" (C. Wellons, 2018), a 32-bit integer finaliser with good
# avalanche; constants as signed int32 (two's complement of the uint32 ones).
_MULTIPLIER_1 = 0x7FEB352D
_MULTIPLIER_2 = 0x846CA68B - (1 << 32)
_GOLDEN = 0x9E3779B9 - (1 << 32)
# Below any logit, however small the temperature makes them; finite in float32.
_LOWEST = -3.0e38


def _shift_right(x, bits):
    # Logical shift on int32: the arithmetic shift, then clear the sign copies.
    return ops.bitwise_and(ops.right_shift(x, bits), (1 << (32 - bits)) - 1)


def hash32(x):
    """The lowbias32 hash of int32 ``x`` (elementwise, wrapping arithmetic)."""
    x = ops.cast(x, "int32")
    x = ops.bitwise_xor(x, _shift_right(x, 16))
    x = ops.multiply(x, ops.convert_to_tensor(_MULTIPLIER_1, "int32"))
    x = ops.bitwise_xor(x, _shift_right(x, 15))
    x = ops.multiply(x, ops.convert_to_tensor(_MULTIPLIER_2, "int32"))
    return ops.bitwise_xor(x, _shift_right(x, 16))


def uniform_noise(seed, step, row_ids, vocabulary_size):
    """Uniform floats in (0, 1), ``(rows, vocabulary_size)``.

    A pure function of ``seed`` (int scalar), ``step`` (int scalar),
    ``row_ids`` (int ``(rows,)``, e.g. sentence index * samples + sample)
    and the token id.
    """
    golden = ops.convert_to_tensor(_GOLDEN, "int32")
    key = hash32(ops.bitwise_xor(hash32(seed), ops.multiply(ops.cast(step, "int32") + 1, golden)))
    rows = hash32(ops.bitwise_xor(key, hash32(ops.cast(row_ids, "int32"))))  # (rows,)
    tokens = ops.arange(vocabulary_size, dtype="int32")
    bits = hash32(ops.bitwise_xor(rows[:, None], hash32(tokens + golden)[None, :]))
    # The top 24 bits, centred in their interval: never 0 or 1.
    mantissa = ops.cast(_shift_right(bits, 8), "float32")
    return (mantissa + 0.5) / float(1 << 24)


def filter_logits(logits, allowed, top_k=None, top_p=DEFAULTS["top_p"]):
    """The tokens kept by top-k and top-p: a bool mask like ``allowed``.

    ``logits`` ``(rows, vocab)`` float32; ``allowed`` the tokens that may be
    drawn at all. ``top_k`` (a Python int or None) keeps the k largest
    logits; ``top_p`` (a float in (0, 1]) keeps the smallest set of largest
    logits whose softmax mass reaches it (the most probable allowed token
    always stays). Both may be given: top-k first, then top-p.
    """
    vocabulary_size = logits.shape[-1]
    if top_k is not None and top_k < vocabulary_size:
        kth = ops.top_k(ops.where(allowed, logits, _LOWEST), top_k)[0][:, -1:]
        allowed = ops.logical_and(allowed, logits >= kth)
    if top_p < 1.0:
        masked = ops.where(allowed, logits, _LOWEST)
        ordered = ops.flip(ops.sort(masked, axis=-1), axis=-1)  # descending
        probs = ops.softmax(ordered, axis=-1)
        mass_before = ops.cumsum(probs, axis=-1) - probs
        kept = mass_before < top_p  # a prefix of `ordered`; never empty
        # The smallest kept logit: tokens below it fall outside the nucleus.
        # `ops.amin`, not `ops.min`: Keras' torch `min` inspects its result's
        # ``.values`` in Python, which breaks torch.compile's graph.
        threshold = ops.amin(ops.where(kept, ordered, -_LOWEST), axis=-1, keepdims=True)
        allowed = ops.logical_and(allowed, masked >= threshold)
    return allowed


def sample_tokens(
    log_probs, seed, step, row_ids, temperature=DEFAULTS["temperature"], top_k=None,
    top_p=DEFAULTS["top_p"],
):
    """One token per row from ``softmax(log_probs / temperature)``, filtered.

    ``log_probs`` ``(rows, vocab)``: float32, forbidden tokens at or below
    ``NEG_INF`` (they are never drawn). ``seed`` and ``step`` are int
    scalars, ``row_ids`` int ``(rows,)`` (see `uniform_noise`). Returns int32
    ``(rows,)``.
    """
    log_probs = ops.cast(log_probs, "float32")
    allowed = log_probs > NEG_INF / 2
    logits = ops.divide(log_probs, float(temperature))
    allowed = filter_logits(logits, allowed, top_k=top_k, top_p=top_p)
    noise = uniform_noise(seed, step, row_ids, logits.shape[-1])
    gumbel = -ops.log(-ops.log(noise))
    scores = ops.where(allowed, logits + gumbel, _LOWEST)
    return ops.cast(ops.argmax(scores, axis=-1), "int32")
