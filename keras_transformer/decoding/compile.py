"""Search over a `Transformer`, compiled on each backend.

The bridge between the model-agnostic searches (`search.py`) and the model's
decoding interface (`Transformer.encode`, `build_cache`, `decode_step`,
`decode`):

* `cached_tokens_to_logits` / `reorder_transformer_cache`: incremental
  decoding. The encoder runs once per batch; every decoder layer keeps a
  self-attention key/value buffer that each step fills at one position, and
  the encoder-decoder keys/values are computed once (`Transformer.build_cache`)
  and never reordered (they are the same for all beams of a sentence).
* `uncached_tokens_to_logits`: the reference, re-running `Transformer.decode`
  on the whole prefix every step.
* `generate`: encoder + cache + greedy or beam search, in `keras.ops`.
* `Generator`: `generate` compiled for the current backend:

  - JAX: one ``jax.jit`` of the whole search (encoder included), with the
    model's variables passed as arguments and read through a
    `keras.StatelessScope` (as keras-hub's ``CausalLM`` does), so weights
    are not baked into the program as constants. JAX compiles once per
    distinct input shape, so callers pad batches to a few shapes (see
    `Translator`).
  - TensorFlow: one ``tf.function`` per (beam size, number of returned
    hypotheses), with an ``input_signature`` whose batch, source-length and
    buffer-length dimensions are ``None``: traced once, never retraced for a
    new batch. ``jit_compile=True`` adds XLA, which then compiles once per
    distinct input shape (about 20% faster steps on CPU, but each shape
    costs seconds of compilation); the default is without XLA.
  - torch: eager execution under ``torch.no_grad()``; `keras.ops.while_loop`
    is a Python loop on torch. ``torch.compile`` is not used: the loop's
    data-dependent exit and Keras' Python-level layer calls would break its
    graphs, and compilation would cost more than it saves at these sizes.

  The beam size is static; ``alpha``, ``min_length`` and the per-sentence
  maximum lengths are runtime values.
"""

import itertools

import keras
import numpy as np
from keras import ops

from keras_transformer.decoding.search import beam_search, greedy_search
from keras_transformer.special_tokens import PAD_ID


def cached_tokens_to_logits(model):
    """``tokens_to_logits`` for `beam_search` using the model's cache."""

    def tokens_to_logits(token_ids, cache, index):
        logits, cache = model.decode_step(token_ids, cache, index)
        return logits[:, -1], cache  # (rows, vocabulary_size)

    return tokens_to_logits


def reorder_transformer_cache(cache, flat_indices):
    """Reorders only the per-hypothesis leaves: the self-attention buffers and
    the decoder padding mask (the encoder parts are per sentence)."""
    return dict(
        cache,
        self_attention=tuple(
            ops.take(layer_cache, flat_indices, axis=0)
            for layer_cache in cache["self_attention"]
        ),
        decoder_padding_mask=ops.take(
            cache["decoder_padding_mask"], flat_indices, axis=0
        ),
    )


def uncached_initial_cache(encoder_output, encoder_padding_mask, max_length):
    """State of `uncached_tokens_to_logits`: the tokens so far, PAD-filled."""
    batch = ops.shape(encoder_output)[0]
    return {
        "token_ids": ops.full((batch, max_length), PAD_ID, dtype="int32"),
        "encoder_output": encoder_output,
        "encoder_padding_mask": encoder_padding_mask,
    }


def reorder_uncached_cache(cache, flat_indices):
    """Reorders only the tokens (the encoder output is per sentence)."""
    return dict(cache, token_ids=ops.take(cache["token_ids"], flat_indices, axis=0))


def uncached_tokens_to_logits(model, decode_fn=None, prefix_multiple=None):
    """``tokens_to_logits`` that re-runs the full decoder on the prefix.

    The "cache" only stores the tokens fed so far (see
    `uncached_initial_cache`). By default the decoder runs over the whole
    fixed-size buffer (positions after ``index`` are PAD and masked), which
    works inside a compiled loop. With ``prefix_multiple`` (needs
    ``python_loop=True`` in the search, so that ``index`` is concrete) it runs
    on the prefix only, padded up to a multiple of ``prefix_multiple``, via
    ``decode_fn(token_ids, encoder_output, encoder_padding_mask)`` (e.g. a
    jitted `Transformer.decode`; defaults to ``model.decode``).
    """
    decode_fn = decode_fn or model.decode

    def tokens_to_logits(token_ids, cache, index):
        buffer = ops.slice_update(
            cache["token_ids"], [0, index], ops.cast(token_ids, "int32")
        )
        cache = dict(cache, token_ids=buffer)
        if prefix_multiple:
            position = int(ops.convert_to_numpy(index))
            length = -(-(position + 1) // prefix_multiple) * prefix_multiple
            length = min(length, buffer.shape[1])
            logits = decode_fn(
                buffer[:, :length],
                cache["encoder_output"],
                cache["encoder_padding_mask"],
            )
            return logits[:, position], cache
        logits = decode_fn(
            buffer, cache["encoder_output"], cache["encoder_padding_mask"]
        )
        return ops.take(logits, index, axis=1), cache

    return tokens_to_logits


def generate(
    model,
    encoder_token_ids,
    max_lengths,
    alpha,
    min_length,
    max_length,
    beam_size=4,
    num_return=1,
    use_cache=True,
    python_loop=False,
    decode_fn=None,
    prefix_multiple=None,
    search="auto",
):
    """Encodes a batch and searches; all in `keras.ops` (not compiled here).

    ``search``: "beam", "greedy" (needs ``beam_size=1``) or "auto" (greedy
    for ``beam_size=1``, beam otherwise). Returns ``(sequences, scores)``:
    int32 ``(batch, num_return, max_length)`` and float32
    ``(batch, num_return)``, as `beam_search` does. ``decode_fn`` and
    ``prefix_multiple`` go to `uncached_tokens_to_logits`.
    """
    if search not in ("auto", "beam", "greedy"):
        raise ValueError(
            f"search must be 'auto', 'beam' or 'greedy'. Received: search={search!r}"
        )
    if search == "greedy" and beam_size != 1:
        raise ValueError(
            f"Greedy search has no beams. Received: beam_size={beam_size}"
        )
    encoder_output, encoder_padding_mask = model.encode(encoder_token_ids)
    if use_cache:
        cache = model.build_cache(encoder_output, encoder_padding_mask, max_length)
        tokens_to_logits = cached_tokens_to_logits(model)
        reorder = reorder_transformer_cache
    else:
        cache = uncached_initial_cache(
            encoder_output, encoder_padding_mask, max_length
        )
        tokens_to_logits = uncached_tokens_to_logits(
            model, decode_fn=decode_fn, prefix_multiple=prefix_multiple
        )
        reorder = reorder_uncached_cache
    if search == "greedy" or (search == "auto" and beam_size == 1):
        sequences, scores = greedy_search(
            tokens_to_logits,
            cache,
            max_length,
            max_lengths=max_lengths,
            min_length=min_length,
            alpha=alpha,
            python_loop=python_loop,
        )
        return sequences[:, None], scores[:, None]
    return beam_search(
        tokens_to_logits,
        cache,
        max_length,
        beam_size=beam_size,
        alpha=alpha,
        num_return=num_return,
        max_lengths=max_lengths,
        min_length=min_length,
        reorder_cache=reorder,
        python_loop=python_loop,
    )


def jax_stateless_jit(model, function):
    """``jax.jit`` of ``function(*args)`` reading ``model``'s variables as inputs.

    The variables' current values are passed to the jitted function on every
    call and mapped onto the model inside a `keras.StatelessScope` (as
    keras-hub's ``CausalLM`` does), so they are not baked in as constants.
    """
    import jax

    @jax.jit
    def compiled(state, *args):
        trainable, non_trainable = state
        mapping = itertools.chain(
            zip(model.trainable_variables, trainable),
            zip(model.non_trainable_variables, non_trainable),
        )
        with keras.StatelessScope(state_mapping=mapping):
            return function(*args)

    def wrapped(*args):
        state = (
            [v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables],
        )
        return compiled(state, *args)

    return wrapped


def compiled_decode(model):
    """`Transformer.decode` compiled for the backend, for uncached baselines.

    JAX: `jax_stateless_jit` (one compilation per input shape); TensorFlow:
    a ``tf.function`` with ``None`` dimensions (one trace); torch: eager
    under ``torch.no_grad()``.
    """
    backend = keras.config.backend()
    if backend == "jax":
        return jax_stateless_jit(model, model.decode)
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.function(
            model.decode,
            input_signature=[
                tf.TensorSpec([None, None], tf.int32),
                tf.TensorSpec([None, None, model.d_model], model.compute_dtype),
                tf.TensorSpec([None, None], tf.bool),
            ],
        )
    if backend == "torch":
        import torch

        def decode(*args):
            with torch.no_grad():
                return model.decode(*args)

        return decode
    return model.decode


class Generator:
    """`generate` for one model, compiled for the current Keras backend.

    See the module docstring for what each backend compiles. Inputs are
    numpy arrays; outputs are numpy arrays.

    Args:
        model: a `keras_transformer.Transformer`.
        jit_compile: bool or "auto". TensorFlow only: compile the
            ``tf.function`` with XLA. "auto" (the default) does not: one
            trace then serves every shape, while XLA compiles per shape.
        use_cache: bool. Incremental decoding (True) or full recomputation
            of the decoder every step (False, for tests and benchmarks).

    Call arguments:
        encoder_token_ids: int ``(batch, source_length)``, PAD-padded.
        max_lengths: int ``(batch,)``, maximum output length of each row.
        max_length: int. Buffer length (>= ``max(max_lengths)``); a new
            value is a new shape (a compilation on JAX and XLA).
        beam_size: int. Static; 1 is greedy search.
        alpha: float. Length-penalty exponent.
        num_return: int. Hypotheses per row.
        min_length: int. EOS is forbidden before this many tokens.
        search: "auto", "beam" or "greedy", see `generate`.

    Returns:
        numpy ``(sequences, scores)``: int32 ``(batch, num_return,
        max_length)`` and float32 ``(batch, num_return)``.

    Example:
    >>> generator = Generator(model)
    >>> ids, scores = generator(np.array([[5, 6, 3]]), np.array([10]),
    ...                         max_length=16)
    """

    def __init__(self, model, jit_compile="auto", use_cache=True):
        if jit_compile not in ("auto", True, False):
            raise ValueError(
                "jit_compile must be True, False or 'auto'. "
                f"Received: jit_compile={jit_compile!r}"
            )
        self.model = model
        self.backend = keras.config.backend()
        self.jit_compile = False if jit_compile == "auto" else jit_compile
        self.use_cache = use_cache
        # Incremented each time a function is traced (never on torch), so
        # that tests can check that new batches do not retrace.
        self.trace_count = 0
        self._functions = {}

    @property
    def compiles_per_shape(self):
        """Whether each new input shape costs a compilation (JAX, XLA)."""
        return self.backend == "jax" or (
            self.backend == "tensorflow" and bool(self.jit_compile)
        )

    def _core(self, encoder_token_ids, max_lengths, alpha, min_length, buffer, static):
        if self.backend in ("jax", "tensorflow"):
            self.trace_count += 1  # only runs while tracing
        beam_size, num_return, search = static
        # The buffer length comes from a shape: a Python int under JAX and
        # torch, a scalar tensor in a TensorFlow graph with a None dimension.
        max_length = ops.shape(buffer)[0]
        return generate(
            self.model,
            encoder_token_ids,
            max_lengths,
            alpha,
            min_length,
            max_length=max_length,
            beam_size=beam_size,
            num_return=num_return,
            use_cache=self.use_cache,
            search=search,
        )

    def _compiled(self, static):
        if static in self._functions:
            return self._functions[static]
        if self.backend == "jax":
            function = jax_stateless_jit(
                self.model, lambda *args: self._core(*args, static)
            )
        elif self.backend == "tensorflow":
            import tensorflow as tf

            signature = [
                tf.TensorSpec([None, None], tf.int32),  # encoder_token_ids
                tf.TensorSpec([None], tf.int32),  # max_lengths
                tf.TensorSpec([], tf.float32),  # alpha
                tf.TensorSpec([], tf.int32),  # min_length
                tf.TensorSpec([None], tf.int32),  # buffer: its length only
            ]
            function = tf.function(
                lambda *args: self._core(*args, static),
                input_signature=signature,
                jit_compile=self.jit_compile,
            )
        elif self.backend == "torch":
            import torch

            def function(*args):
                with torch.no_grad():
                    return self._core(*args, static)

        else:
            function = lambda *args: self._core(*args, static)  # noqa: E731
        self._functions[static] = function
        return function

    def __call__(
        self,
        encoder_token_ids,
        max_lengths,
        max_length,
        beam_size=4,
        alpha=0.6,
        num_return=1,
        min_length=0,
        search="auto",
    ):
        function = self._compiled((int(beam_size), int(num_return), search))
        sequences, scores = function(
            ops.convert_to_tensor(np.asarray(encoder_token_ids, np.int32)),
            ops.convert_to_tensor(np.asarray(max_lengths, np.int32)),
            ops.convert_to_tensor(np.float32(alpha)),
            ops.convert_to_tensor(np.int32(min_length)),
            ops.convert_to_tensor(np.zeros((int(max_length),), np.int32)),
        )
        return ops.convert_to_numpy(sequences), ops.convert_to_numpy(scores)
