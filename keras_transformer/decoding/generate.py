"""Search over a `Transformer`, compiled on each backend.

The bridge between the model-agnostic searches (`search.py`) and the model's
decoding interface (`Transformer.encode`, `build_cache`, `decode_step`,
`decode`):

* `cached_tokens_to_logits` / `reorder_transformer_cache`: incremental
  decoding. The encoder runs once per batch; every decoder layer keeps a
  self-attention key/value buffer that each step fills at one position, and
  the encoder-decoder keys/values are computed once (`Transformer.build_cache`)
  and neither tiled by beam nor reordered (`tile_transformer_cache`: they are
  the same for all beams of a sentence). The self-attention buffer grows in
  stages with the output (`Transformer.grow_cache`, `search.cache_lengths`).
* `uncached_tokens_to_logits`: the reference, re-running `Transformer.decode`
  on the whole prefix every step.
* `generate`: encoder + cache + greedy search, beam search or sampling
  (optionally with forced target prefixes), in `keras.ops`.
* `decode_token_ids`: `prepare_sources` then `generate`: the core that
  `Generator.decode` compiles and the SavedModel export traces.
* `compile_for_backend`: the one place that compiles a decode function for
  the current backend (`Generator`, `compiled_decode`, `Translator`'s
  forced decoding and attention all use it).
* `Generator`: `generate` compiled for the current backend:

  - JAX: one ``jax.jit`` of the whole search (encoder included), with the
    model's variables passed as arguments and read through a
    `keras.StatelessScope` (as keras-hub's ``CausalLM`` does), so weights
    are not baked into the program as constants. JAX compiles once per
    distinct input shape, so callers pad batches to a few shapes (see
    `Translator`).
  - TensorFlow: one ``tf.function`` per static configuration (beam size,
    number of returns, search kind, sampling filters, length options),
    with an ``input_signature`` whose batch, source-length and
    buffer-length dimensions are ``None``: traced once, never retraced for a
    new batch. ``jit_compile=True`` adds XLA, which then compiles once per
    distinct input shape (about 20% faster steps on CPU, but each shape
    costs seconds of compilation); the default is without XLA.
  - torch: eager execution under ``torch.no_grad()``; `keras.ops.while_loop`
    is a Python loop on torch. With ``jit_compile=True`` the loop stays in
    Python (its exit depends on the data) and its body (a decoding step and
    the search's bookkeeping) runs through ``torch.compile(dynamic=True)``
    (`search.compiled_loop_bodies`). It compiles once per batch shape
    (Keras ops turn shapes into Python ints, so the graphs specialise
    despite ``dynamic=True``), at about half a minute each on 2 CPU cores;
    then a step costs about half of an eager one
    (`benchmarks/decode_speed.py --torch-compile`). Worth it for long inputs
    or a server; the default stays eager, as Keras' ``jit_compile="auto"``
    does on torch.

  The beam size is static; ``alpha``, ``min_length``, the sampling seed,
  the prefixes and the per-sentence maximum lengths are runtime values.
"""

import collections

import keras
import numpy as np
from keras import ops

from keras_transformer.decoding.backends import compile_for_backend
from keras_transformer.decoding.cache import (
    cached_tokens_to_logits,
    reorder_transformer_cache,
    reorder_uncached_cache,
    tile_transformer_cache,
    uncached_initial_cache,
    uncached_tokens_to_logits,
)
from keras_transformer.decoding.sampling import sample_tokens
from keras_transformer.decoding.search import (
    beam_search,
    cache_lengths,
    greedy_search,
    tile_cache,
)
from keras_transformer.decoding.sources import prepare_sources

try:
    import tensorflow as tf
except ImportError:  # TensorFlow is needed only on its own backend.
    tf = None


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
    prefix_ids=None,
    prefix_lengths=None,
    sampling=None,
    cache_growth=16,
):
    """Encodes a batch and searches; all in `keras.ops` (not compiled here).

    ``search``: "beam", "greedy" (needs ``beam_size=1``), "sample" or "auto"
    (greedy for ``beam_size=1``, beam otherwise). Returns ``(sequences,
    scores)``: int32 ``(batch, num_return, max_length)`` and float32
    ``(batch, num_return)``, as `beam_search` does. ``decode_fn`` and
    ``prefix_multiple`` go to `uncached_tokens_to_logits`;
    ``prefix_ids``/``prefix_lengths`` force prefixes (see `search.py`).

    ``sampling`` (for ``search="sample"``) is a dict with ``seed`` (int
    scalar), ``row_ids`` (int ``(batch,)``, a sentence id that does not
    depend on its batch), ``temperature``, ``top_k`` and ``top_p`` (Python
    values). Each batch element then gets ``num_return`` independent samples
    (in sample order, not sorted), drawn with `sample_tokens` whose row id
    is ``row_ids[b] * num_return + j``: a sentence's samples do not depend on
    the batch it is in.

    ``cache_growth``: the cached searches start with a key/value buffer of
    this many positions and grow it in stages (`search.cache_lengths`);
    ``None``: one buffer of ``max_length`` positions from the start.
    """
    if search not in ("auto", "beam", "greedy", "sample"):
        raise ValueError(
            "search must be 'auto', 'beam', 'greedy' or 'sample'. "
            f"Received: search={search!r}"
        )
    if search in ("greedy", "sample") and beam_size != 1:
        raise ValueError(
            f"{search.capitalize()} search has no beams. Received: beam_size={beam_size}"
        )
    if search == "sample":
        return _sample(
            model, encoder_token_ids, max_lengths, alpha, min_length, max_length,
            num_return, use_cache, python_loop, decode_fn, prefix_multiple,
            prefix_ids, prefix_lengths, sampling, cache_growth,
        )
    encoder_output, encoder_padding_mask = model.encode(encoder_token_ids)
    growing = {}
    if use_cache:
        cache, growing = _growing_cache(
            model, encoder_output, encoder_padding_mask, max_length, cache_growth
        )
        tokens_to_logits = cached_tokens_to_logits(model)
        reorder = reorder_transformer_cache
        tile = tile_transformer_cache
    else:
        cache = uncached_initial_cache(
            encoder_output, encoder_padding_mask, max_length
        )
        tokens_to_logits = uncached_tokens_to_logits(
            model, decode_fn=decode_fn, prefix_multiple=prefix_multiple
        )
        reorder = reorder_uncached_cache
        tile = tile_cache
    if search == "greedy" or (search == "auto" and beam_size == 1):
        sequences, scores = greedy_search(
            tokens_to_logits,
            cache,
            max_length,
            max_lengths=max_lengths,
            min_length=min_length,
            alpha=alpha,
            python_loop=python_loop,
            prefix_ids=prefix_ids,
            prefix_lengths=prefix_lengths,
            **growing,
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
        tile_cache=tile,
        python_loop=python_loop,
        prefix_ids=prefix_ids,
        prefix_lengths=prefix_lengths,
        **growing,
    )


def _growing_cache(model, encoder_output, encoder_padding_mask, max_length, first):
    """``(cache, search keyword arguments)`` for a cache that grows in stages
    (`search.cache_lengths`) from ``first`` positions; ``first=None``: one
    buffer of ``max_length``."""
    if first is None:
        cache = model.build_cache(encoder_output, encoder_padding_mask, max_length)
        return cache, {}
    stages = cache_lengths(max_length, first)
    cache = model.build_cache(encoder_output, encoder_padding_mask, stages[0])
    return cache, {"grow_cache": model.grow_cache, "cache_stages": stages}


def _sample(
    model, encoder_token_ids, max_lengths, alpha, min_length, max_length,
    num_return, use_cache, python_loop, decode_fn, prefix_multiple,
    prefix_ids, prefix_lengths, sampling, cache_growth,
):
    """`generate`'s sampling: ``num_return`` rows per sentence, then greedy
    search with `sample_tokens` choosing each token."""

    k = num_return
    repeat = lambda x: ops.repeat(x, k, axis=0)  # noqa: E731
    row_ids = ops.cast(sampling["row_ids"], "int32")
    sample_rows = ops.reshape(
        row_ids[:, None] * k + ops.arange(k, dtype="int32")[None, :], (-1,)
    )

    def choose_token(selectable, index):
        return sample_tokens(
            selectable,
            sampling["seed"],
            index,
            sample_rows,
            temperature=sampling.get("temperature", 1.0),
            top_k=sampling.get("top_k"),
            top_p=sampling.get("top_p", 1.0),
        )

    encoder_output, encoder_padding_mask = model.encode(repeat(encoder_token_ids))
    growing = {}
    if use_cache:
        cache, growing = _growing_cache(
            model, encoder_output, encoder_padding_mask, max_length, cache_growth
        )
        tokens_to_logits = cached_tokens_to_logits(model)
    else:
        cache = uncached_initial_cache(encoder_output, encoder_padding_mask, max_length)
        tokens_to_logits = uncached_tokens_to_logits(
            model, decode_fn=decode_fn, prefix_multiple=prefix_multiple
        )
    sequences, scores = greedy_search(
        tokens_to_logits,
        cache,
        max_length,
        max_lengths=repeat(ops.cast(max_lengths, "int32")),
        min_length=min_length,
        alpha=alpha,
        python_loop=python_loop,
        prefix_ids=None if prefix_ids is None else repeat(prefix_ids),
        prefix_lengths=None if prefix_lengths is None else repeat(prefix_lengths),
        choose_token=choose_token,
        **growing,
    )
    batch = ops.shape(encoder_token_ids)[0]
    return (
        ops.reshape(sequences, (batch, k, -1)),
        ops.reshape(scores, (batch, k)),
    )


def decode_token_ids(
    model,
    token_ids,
    output_caps,
    max_length,
    alpha,
    min_length,
    seed,
    row_ids,
    prefix_ids,
    prefix_lengths,
    static,
    use_cache=True,
    cache_growth=16,
):
    """Raw source ids -> searched outputs: `prepare_sources` then `generate`.

    The core that `Generator` compiles and the SavedModel traces, so both
    prepare sources and search with the same code.

    Args:
        token_ids: int ``(batch, length)``, PAD-padded, no EOS.
        output_caps: int ``(batch,)``: extra per-row caps on the output
            length (the smaller of this and the source's limit applies).
        max_length: int or scalar int tensor: the output buffer length.
        alpha, min_length, seed: scalars (runtime values).
        row_ids: int ``(batch,)`` (sampling: each sentence's id).
        prefix_ids, prefix_lengths: ``(batch, P >= 1)`` and ``(batch,)``;
            lengths 0 for no prefix.
        static: a `StaticDecode` (Python values that shape the graph).
        use_cache, cache_growth: as in `generate`.

    Returns:
        ``(sequences (batch, num_return, max_length), scores (batch,
        num_return))``.
    """

    encoder_ids, limits = prepare_sources(
        token_ids, static.max_source_length, static.max_extra_length,
        static.max_positions,
    )
    limits = ops.minimum(limits, ops.cast(output_caps, "int32"))
    sampling = None
    if static.search == "sample":
        sampling = dict(
            seed=seed, row_ids=row_ids, temperature=static.temperature,
            top_k=static.top_k, top_p=static.top_p,
        )
    return generate(
        model,
        encoder_ids,
        limits,
        alpha,
        min_length,
        max_length=max_length,
        beam_size=static.beam_size,
        num_return=static.num_return,
        use_cache=use_cache,
        search=static.search,
        prefix_ids=prefix_ids,
        prefix_lengths=prefix_lengths,
        sampling=sampling,
        cache_growth=cache_growth,
    )


def _prefix_arrays(prefix_ids, prefix_lengths, batch):
    """Numpy ``(batch, P >= 1)`` prefix ids and ``(batch,)`` lengths; no
    prefix is a width-1 array of lengths 0 (one compiled function for both)."""
    if prefix_ids is None or np.asarray(prefix_ids).shape[-1] == 0:
        return np.zeros((batch, 1), np.int32), np.zeros((batch,), np.int32)
    prefix_ids = np.asarray(prefix_ids, np.int32)
    if prefix_lengths is None:
        prefix_lengths = np.full((batch,), prefix_ids.shape[1], np.int32)
    return prefix_ids, np.asarray(prefix_lengths, np.int32)


class StaticDecode(
    collections.namedtuple(
        "StaticDecode",
        "beam_size num_return search temperature top_k top_p "
        "max_source_length max_extra_length max_positions",
    )
):
    """The parts of a `DecodeOptions` that shape a compiled graph."""

    @classmethod
    def from_options(cls, options, max_positions=None):
        return cls(
            options.beam_size, options.num_return, options.search,
            float(options.temperature), options.top_k, float(options.top_p),
            options.max_source_length, options.max_extra_length, max_positions,
        )


def tf_decode_signature():
    """`tf.TensorSpec` list of `decode_token_ids`' tensor inputs."""

    return [
        tf.TensorSpec([None, None], tf.int32),  # token_ids
        tf.TensorSpec([None], tf.int32),  # output_caps
        tf.TensorSpec([None], tf.int32),  # buffer: its length only
        tf.TensorSpec([], tf.float32),  # alpha
        tf.TensorSpec([], tf.int32),  # min_length
        tf.TensorSpec([], tf.int32),  # seed
        tf.TensorSpec([None], tf.int32),  # row_ids
        tf.TensorSpec([None, None], tf.int32),  # prefix_ids
        tf.TensorSpec([None], tf.int32),  # prefix_lengths
    ]


class Generator:
    """`generate` for one model, compiled for the current Keras backend.

    See the module docstring for what each backend compiles. Inputs are
    numpy arrays; outputs are numpy arrays.

    Two entry points share the compiled machinery (`compile_for_backend`):

    - ``generator(encoder_token_ids, max_lengths, max_length, ...)``:
      EOS-terminated source ids and explicit per-row limits (tests,
      benchmarks).
    - ``generator.decode(token_ids, options, ...)``: raw source ids (no
      EOS), prepared inside the compiled function by `prepare_sources`
      exactly as in the SavedModel (`Translator` uses this).

    Args:
        model: a `keras_transformer.Transformer`.
        jit_compile: bool or "auto". TensorFlow: compile the
            ``tf.function`` with XLA. torch: compile the search loop's body
            with ``torch.compile`` (see the module docstring). "auto" (the
            default) does neither: one TensorFlow trace then serves every
            shape, while XLA compiles per shape, and torch needs no
            compilation time.
        use_cache: bool. Incremental decoding (True) or full recomputation
            of the decoder every step (False, for tests and benchmarks).
        cache_growth: int or None. The key/value buffer starts with this
            many positions and grows in stages up to the output buffer's
            length (`search.cache_lengths`; each stage compiles its own
            loop). None: the full buffer from the start. Defaults to 16.

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
        prefix_ids, prefix_lengths: optional forced prefixes.

    Returns:
        numpy ``(sequences, scores)``: int32 ``(batch, num_return,
        max_length)`` and float32 ``(batch, num_return)``.

    Example:
    >>> generator = Generator(model)
    >>> ids, scores = generator(np.array([[5, 6, 3]]), np.array([10]),
    ...                         max_length=16)
    """

    def __init__(self, model, jit_compile="auto", use_cache=True, cache_growth=16):
        if jit_compile not in ("auto", True, False):
            raise ValueError(
                "jit_compile must be True, False or 'auto'. "
                f"Received: jit_compile={jit_compile!r}"
            )
        self.model = model
        self.backend = keras.config.backend()
        self.jit_compile = False if jit_compile == "auto" else jit_compile
        self.use_cache = use_cache
        if cache_growth is not None and (
            not isinstance(cache_growth, int)
            or isinstance(cache_growth, bool)
            or cache_growth < 1
        ):
            raise ValueError(
                "cache_growth must be None or a positive int. "
                f"Received: cache_growth={cache_growth!r}"
            )
        self.cache_growth = cache_growth
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

    def _core(self, token_ids, caps, buffer, alpha, min_length, seed, row_ids,
              prefix_ids, prefix_lengths, static):
        if self.backend in ("jax", "tensorflow"):
            self.trace_count += 1  # only runs while tracing
        # The buffer length comes from a shape: a Python int under JAX and
        # torch, a scalar tensor in a TensorFlow graph with a None dimension.
        return decode_token_ids(
            self.model, token_ids, caps, ops.shape(buffer)[0], alpha,
            min_length, seed, row_ids, prefix_ids, prefix_lengths, static,
            use_cache=self.use_cache, cache_growth=self.cache_growth,
        )

    def _compiled(self, static):
        if static not in self._functions:
            signature = tf_decode_signature() if self.backend == "tensorflow" else None
            self._functions[static] = compile_for_backend(
                self.model,
                lambda *args: self._core(*args, static),
                signature,
                jit_compile=self.jit_compile,
            )
        return self._functions[static]

    def decode(
        self,
        token_ids,
        options,
        max_length,
        output_caps=None,
        max_positions=None,
        row_ids=None,
        prefix_ids=None,
        prefix_lengths=None,
        seed=0,
    ):
        """Raw source ids (no EOS, PAD-padded) -> numpy ``(sequences, scores)``.

        ``options`` is a `DecodeOptions`: its beam size, number of returns,
        search kind, sampling filters and source/output lengths are static
        (one compiled function each), alpha, min_length and ``seed`` are
        runtime values. ``output_caps`` (optional ``(batch,)``) tightens
        each row's output limit.
        """
        token_ids = np.asarray(token_ids, np.int32)
        batch = token_ids.shape[0]
        if output_caps is None:
            output_caps = np.full((batch,), np.iinfo(np.int32).max, np.int32)
        if row_ids is None:
            row_ids = np.arange(batch, dtype=np.int32)
        prefix_ids, prefix_lengths = _prefix_arrays(prefix_ids, prefix_lengths, batch)
        static = StaticDecode.from_options(options, max_positions)
        function = self._compiled(static)
        sequences, scores = function(
            ops.convert_to_tensor(token_ids),
            ops.convert_to_tensor(np.asarray(output_caps, np.int32)),
            ops.convert_to_tensor(np.zeros((int(max_length),), np.int32)),
            ops.convert_to_tensor(np.float32(options.alpha)),
            ops.convert_to_tensor(np.int32(options.min_length)),
            ops.convert_to_tensor(np.int32(seed)),
            ops.convert_to_tensor(np.asarray(row_ids, np.int32)),
            ops.convert_to_tensor(np.asarray(prefix_ids, np.int32)),
            ops.convert_to_tensor(np.asarray(prefix_lengths, np.int32)),
        )
        return ops.convert_to_numpy(sequences), ops.convert_to_numpy(scores)

    def _legacy_core(self, encoder_token_ids, max_lengths, alpha, min_length,
                     buffer, prefix_ids, prefix_lengths, static):
        if self.backend in ("jax", "tensorflow"):
            self.trace_count += 1  # only runs while tracing
        beam_size, num_return, search = static
        return generate(
            self.model, encoder_token_ids, max_lengths, alpha, min_length,
            max_length=ops.shape(buffer)[0], beam_size=beam_size,
            num_return=num_return, use_cache=self.use_cache, search=search,
            prefix_ids=prefix_ids, prefix_lengths=prefix_lengths,
            cache_growth=self.cache_growth,
        )

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
        prefix_ids=None,
        prefix_lengths=None,
    ):
        static = ("ids", int(beam_size), int(num_return), search)
        if static not in self._functions:
            signature = None
            if self.backend == "tensorflow":

                signature = [
                    tf.TensorSpec([None, None], tf.int32),  # encoder_token_ids
                    tf.TensorSpec([None], tf.int32),  # max_lengths
                    tf.TensorSpec([], tf.float32),  # alpha
                    tf.TensorSpec([], tf.int32),  # min_length
                    tf.TensorSpec([None], tf.int32),  # buffer: its length only
                    tf.TensorSpec([None, None], tf.int32),  # prefix_ids
                    tf.TensorSpec([None], tf.int32),  # prefix_lengths
                ]
            self._functions[static] = compile_for_backend(
                self.model,
                lambda *args: self._legacy_core(*args, static[1:]),
                signature,
                jit_compile=self.jit_compile,
            )
        encoder_token_ids = np.asarray(encoder_token_ids, np.int32)
        batch = encoder_token_ids.shape[0]
        prefix_ids, prefix_lengths = _prefix_arrays(prefix_ids, prefix_lengths, batch)
        sequences, scores = self._functions[static](
            ops.convert_to_tensor(encoder_token_ids),
            ops.convert_to_tensor(np.asarray(max_lengths, np.int32)),
            ops.convert_to_tensor(np.float32(alpha)),
            ops.convert_to_tensor(np.int32(min_length)),
            ops.convert_to_tensor(np.zeros((int(max_length),), np.int32)),
            ops.convert_to_tensor(np.asarray(prefix_ids, np.int32)),
            ops.convert_to_tensor(np.asarray(prefix_lengths, np.int32)),
        )
        return ops.convert_to_numpy(sequences), ops.convert_to_numpy(scores)
