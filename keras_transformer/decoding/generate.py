"""Search over a `Transformer`, compiled on each backend.

The bridge between the model-agnostic searches (`search.py`) and the model's
decoding interface (`Transformer.encode`, `build_cache`, `grow_cache`,
`decode_step`, `decode`), through the cache functions of `cache.py`:

* `generate`: encoder, cache, then greedy search, beam search or sampling
  (optionally with forced target prefixes), in `keras.ops`. A
  `SearchRequest` holds its static choices; the tensors are its arguments.
* `decode_token_ids`: `prepare_sources` then `generate`: what `Generator`
  compiles and the SavedModel export traces, so both prepare sources and
  search with the same code.
* `Generator`: `decode_token_ids` compiled for the current backend by
  `backends.compile_for_backend`, one function per `StaticDecode`:

  - JAX: one ``jax.jit`` of the whole search (encoder included), with the
    model's variables passed as arguments and read through a
    `keras.StatelessScope` (as keras-hub's ``CausalLM`` does), so weights
    are not baked into the program as constants. JAX compiles once per
    distinct input shape, so callers pad batches to a few shapes (see
    `Translator`). A beam search of 8 sentences or more runs its loops
    one compiled segment at a time instead, its batch halved between
    two as sentences finish (`backends.jax_search_jit`).
  - TensorFlow: one ``tf.function`` per `StaticDecode`, with an
    ``input_signature`` whose batch, source-length and buffer-length
    dimensions are ``None``: traced once, never retraced for a new batch.
    ``jit_compile=True`` adds XLA, which compiles once per distinct input
    shape: faster steps, but a compilation per shape; the default is
    without XLA.
  - torch: eager execution under ``torch.no_grad()``; `keras.ops.while_loop`
    is a Python loop on torch. With ``jit_compile=True`` the loop stays in
    Python (its exit depends on the data) and its body (a decoding step and
    the search's bookkeeping) runs through ``torch.compile`` with static
    shapes: the model step is recorded once per shape as an ATen graph,
    and one graph serves every step of a batch shape and cache stage
    (`torch_steps`; CUDA graphs on a GPU). Each batch shape and stage costs
    a compilation (seconds), so the default ("auto") stays eager, as Keras'
    ``jit_compile="auto"`` does on torch; worth it for long inputs or a
    server (measurements: ``benchmarks/decode_speed.py --torch-compile``).

  The beam size is static; ``alpha``, ``min_length``, the sampling seed,
  the prefixes and the per-sentence maximum lengths are runtime values.
"""

import contextlib

import keras
import numpy as np
from keras import ops

from keras_transformer.decoding.backends import compile_for_backend
from keras_transformer.decoding.cache import (
    cached_tokens_to_logits,
    reorder_transformer_cache,
    reorder_uncached_cache,
    select_transformer_sentences,
    tile_transformer_cache,
    uncached_initial_cache,
    uncached_tokens_to_logits,
)
from keras_transformer.decoding.ensemble import members
from keras_transformer.decoding.options import SearchInputs, SearchRequest, StaticDecode
from keras_transformer.decoding.sampling import sample_tokens
from keras_transformer.decoding.search import (
    CacheFunctions,
    beam_search,
    cache_lengths,
    greedy_search,
    records_steps,
    tile_cache,
    traced,
    traced_step,
)
from keras_transformer.decoding.sources import prepare_sources
from keras_transformer.options import BY_NAME, RUNTIME
from keras_transformer.utils.private_apis import variables_read_as_cast
from keras_transformer.utils.validation import check_choice, check_int

if keras.config.backend() == "tensorflow":
    from keras_transformer.utils.tensorflow_devices import tf
else:  # Only the TensorFlow backend's paths use TensorFlow.
    tf = None

__all__ = [
    "Generator",
    "SearchInputs",
    "SearchRequest",
    "StaticDecode",
    "decode_token_ids",
    "generate",
    "tf_decode_signature",
]


def generate(model, encoder_token_ids, max_length, request=None, inputs=None):
    """Encodes a batch and searches; all in `keras.ops` (not compiled here).

    Args:
        model: a `keras_transformer.Transformer`, or an `Ensemble` (each
            model keeps its own cache; the search reads the ensemble's
            mixture of their next-token probabilities).
        encoder_token_ids: int ``(batch, source_length)``, EOS-terminated,
            PAD-padded.
        max_length: int, or a scalar int tensor in a TensorFlow graph: the
            output buffer length (at least ``max(inputs.max_lengths)``).
        request: a `SearchRequest`: the search and its static settings.
            Defaults to ``SearchRequest()`` (beam search, 4 beams).
        inputs: a `SearchInputs`: ``max_lengths`` (int ``(batch,)``, each
            row's maximum output length), ``alpha``, ``min_length``, the
            forced prefixes (see `search`), ``seed`` and ``row_ids``
            (sampling only: a sentence id that does not depend on its
            batch; sample ``j`` of row ``b`` draws with row id
            ``row_ids[b] * num_return + j`` (`sample_tokens`), so a
            sentence's samples do not depend on the batch it is in;
            defaults to the row positions) and ``constraint_ids`` (read only
            with ``request.constrained``; greedy search then runs as a
            constrained beam search of one beam). Defaults to
            ``SearchInputs()``.

    Returns:
        ``(sequences, scores)``: int32 ``(batch, num_return, max_length)``
        and float32 ``(batch, num_return)``, as `beam_search` returns them.
        Greedy search returns one hypothesis per row; sampling returns
        ``num_return`` samples per row, in sample order (not sorted).
    """
    request = SearchRequest() if request is None else request
    inputs = SearchInputs() if inputs is None else inputs
    with _weights_cast_once(model):
        return _generate(model, encoder_token_ids, max_length, request, inputs)


def _weights_cast_once(model):
    """Under TensorFlow and torch, the weights that a mixed-precision model
    reads cast (a float32 kernel of a ``mixed_bfloat16`` layer) are cast
    once per search instead of at every step (`variables_read_as_cast`): a
    TensorFlow graph without XLA repeats every op of the loop's body, casts
    included, and so do torch's eager loop and its compiled one (one call of
    the compiled step per token). XLA and JAX move such loop-invariant casts
    out of the loop themselves. A compiled torch step, recorded once with
    the tensors it reads (`records_steps`), reads the cast weights from
    tensors kept per variable and refilled by each search; other searches'
    casts last for the search only."""
    if keras.config.backend() not in ("tensorflow", "torch"):
        return contextlib.nullcontext()
    return variables_read_as_cast(
        [member for member, _ in members(model)], keep=records_steps()
    )


def _generate(model, encoder_token_ids, max_length, request, inputs):
    """`generate`'s search, with ``request`` and ``inputs`` given."""
    kind = request.kind
    batch = ops.shape(encoder_token_ids)[0]
    choose_token = None
    if kind == "sample":
        row_ids = inputs.row_ids
        if row_ids is None:
            row_ids = ops.arange(batch, dtype="int32")
        choose_token = _token_sampler(request, inputs.seed, row_ids)
        # Each sentence becomes num_return rows, one per sample.
        max_lengths = inputs.max_lengths
        if max_lengths is not None:
            max_lengths = ops.cast(max_lengths, "int32")
        encoder_token_ids, max_lengths, prefix_ids, prefix_lengths = (
            None if x is None else ops.repeat(x, request.num_return, axis=0)
            for x in (encoder_token_ids, max_lengths, inputs.prefix_ids,
                      inputs.prefix_lengths)
        )
        inputs = inputs.replace(
            max_lengths=max_lengths, prefix_ids=prefix_ids, prefix_lengths=prefix_lengths
        )
    tokens_to_logits, cache, cache_functions = _decoder(
        model, encoder_token_ids, max_length, request
    )
    # Constrained decoding is a beam search (greedy: a beam of one).
    if request.constrained or kind == "beam":
        if not request.constrained:
            inputs = inputs.replace(constraint_ids=None)
        return beam_search(tokens_to_logits, cache, max_length, request, inputs, cache_functions)
    sequences, scores = greedy_search(
        tokens_to_logits, cache, max_length, request,
        inputs.replace(constraint_ids=None), cache_functions, choose_token,
    )
    if kind == "greedy":
        return sequences[:, None], scores[:, None]
    samples = request.num_return
    return (
        ops.reshape(sequences, (batch, samples, -1)),
        ops.reshape(scores, (batch, samples)),
    )


def _decoder(model, encoder_token_ids, max_length, request):
    """Runs the encoder and sets up the decoder's cache for the searches:
    the one cache setup of greedy search, beam search and sampling.
    Returns the model as a search sees it: ``(tokens_to_logits,
    initial_cache, cache_functions)``.

    Cached (``request.use_cache``): key/value buffers that start with
    ``request.cache_growth`` positions and grow in stages
    (`search.cache_lengths`), or one buffer of ``max_length`` positions
    for ``cache_growth=None``. Uncached: the tokens so far, re-decoded
    every step.
    """
    if request.use_cache:
        return _cached_decoder(model, encoder_token_ids, max_length, request)
    encoder_output, encoder_padding_mask = model.encode(encoder_token_ids)
    return (
        uncached_tokens_to_logits(
            model, decode_fn=request.decode_fn, prefix_multiple=request.prefix_multiple
        ),
        uncached_initial_cache(encoder_output, encoder_padding_mask, max_length),
        CacheFunctions(reorder=reorder_uncached_cache, tile=tile_cache),
    )


def _cached_decoder(model, encoder_token_ids, max_length, request):
    """`_decoder` with a key/value cache. Under the compiled torch decode
    the encoder and the cache's setup run as one recorded graph per shape
    (`traced`): a one-sentence request otherwise spends about a third of
    its time in the Keras layers' Python of the encoder."""
    length, grow, stages = max_length, None, None
    if request.cache_growth is not None:
        stages = cache_lengths(max_length, request.cache_growth)
        length, grow = stages[0], model.grow_cache
    cache_functions = CacheFunctions(
        reorder=reorder_transformer_cache, tile=tile_transformer_cache, grow=grow, stages=stages,
        select=select_transformer_sentences,
    )

    def initial_cache(encoder_token_ids):
        encoder_output, encoder_padding_mask = model.encode(encoder_token_ids)
        return model.build_cache(encoder_output, encoder_padding_mask, length)

    if not ops.is_tensor(length):  # a tensor only in a TensorFlow graph
        initial_cache = traced(("initial_cache", length), initial_cache)
    return (
        traced_step(cached_tokens_to_logits(model)),
        initial_cache(encoder_token_ids),
        cache_functions,
    )


def _token_sampler(request, seed, row_ids):
    """``choose_token`` for `greedy_search` on rows repeated
    ``request.num_return`` times: `sample_tokens` with row id
    ``row_ids[b] * num_return + j`` for sample ``j`` of sentence ``b``."""
    k = request.num_return
    row_ids = ops.cast(row_ids, "int32")
    sample_rows = ops.reshape(
        row_ids[:, None] * k + ops.arange(k, dtype="int32")[None, :], (-1,)
    )

    def choose_token(selectable, index):
        return sample_tokens(
            selectable,
            seed,
            index,
            sample_rows,
            temperature=request.temperature,
            top_k=request.top_k,
            top_p=request.top_p,
        )

    return choose_token


def decode_token_ids(model, token_ids, max_length, inputs, static):
    """Raw source ids -> searched outputs: `prepare_sources` then `generate`.

    The function that `Generator` compiles and the SavedModel traces, so
    both prepare sources and search with the same code.

    Args:
        token_ids: int ``(batch, length)``, PAD-padded, no EOS.
        max_length: int or scalar int tensor: the output buffer length.
        inputs: a `SearchInputs` (see `generate`) of tensors; its
            ``max_lengths`` (optional int ``(batch,)``) are extra per-row
            caps on the output length (the smaller of this and the source's
            limit applies); ``constraint_ids`` is read only with
            ``static.constrained``.
        static: a `StaticDecode` (Python values that shape the graph).

    Returns:
        ``(sequences (batch, num_return, max_length), scores (batch,
        num_return))``.
    """
    encoder_ids, limits = prepare_sources(
        token_ids, static.max_source_length, static.max_extra_length,
        static.max_positions,
    )
    if inputs.max_lengths is not None:
        limits = ops.minimum(limits, ops.cast(inputs.max_lengths, "int32"))
    return generate(model, encoder_ids, max_length, static, inputs.replace(max_lengths=limits))


def _prefix_arrays(prefix_ids, prefix_lengths, batch):
    """Numpy ``(batch, P >= 1)`` prefix ids and ``(batch,)`` lengths; no
    prefix is a width-1 array of lengths 0 (one compiled function for both)."""
    if prefix_ids is None or np.asarray(prefix_ids).shape[-1] == 0:
        return np.zeros((batch, 1), np.int32), np.zeros((batch,), np.int32)
    prefix_ids = np.asarray(prefix_ids, np.int32)
    if prefix_lengths is None:
        prefix_lengths = np.full((batch,), prefix_ids.shape[1], np.int32)
    return prefix_ids, np.asarray(prefix_lengths, np.int32)


# The `SearchInputs` fields that `Generator` passes to its compiled
# function as tensors, after the source ids and the buffer, in this order.
# The runtime decoding options (`keras_transformer.options.RUNTIME`: alpha,
# min_length, ...) come right after the output caps, one scalar each.
_INPUT_FIELDS = (
    "max_lengths", *RUNTIME, "seed", "row_ids", "prefix_ids", "prefix_lengths",
    "constraint_ids",
)


def runtime_tensors(options):
    """The runtime options of ``options`` (a `DecodeOptions`) as scalar
    tensors, in `keras_transformer.options.RUNTIME`'s order."""
    return [
        ops.convert_to_tensor(np.asarray(getattr(options, name), BY_NAME[name].dtype))
        for name in RUNTIME
    ]


def tf_decode_signature():
    """`tf.TensorSpec` list of `decode_token_ids`' tensor inputs."""

    return [
        tf.TensorSpec([None, None], tf.int32),  # token_ids
        tf.TensorSpec([None], tf.int32),  # buffer: its length only
        tf.TensorSpec([None], tf.int32),  # max_lengths: output caps
        *(tf.TensorSpec([], BY_NAME[name].dtype) for name in RUNTIME),
        tf.TensorSpec([], tf.int32),  # seed
        tf.TensorSpec([None], tf.int32),  # row_ids
        tf.TensorSpec([None, None], tf.int32),  # prefix_ids
        tf.TensorSpec([None], tf.int32),  # prefix_lengths
        tf.TensorSpec([None, None, None], tf.int32),  # constraint_ids
    ]


class Generator:
    """`decode_token_ids` for one model (or an `Ensemble`), compiled for the
    current Keras backend.

    See the module docstring for what each backend compiles. One entry
    point, `decode`: raw source ids (no EOS) in, prepared inside the
    compiled function by `prepare_sources` exactly as in the SavedModel;
    numpy arrays in and out.

    Args:
        model: a `keras_transformer.Transformer` or an `Ensemble` (one
            compiled search for all its models).
        jit_compile: bool or "auto". TensorFlow: compile the
            ``tf.function`` with XLA. torch: compile the search loop's body
            with ``torch.compile``, static shapes per cache stage (see
            the module docstring). "auto" (the
            default) does neither: one TensorFlow trace then serves every
            shape, while XLA compiles per shape, and torch needs no
            compilation time.
        use_cache: bool. Incremental decoding (True) or full recomputation
            of the decoder every step (False, for tests and benchmarks).
        cache_growth: int or None. The key/value buffer starts with this
            many positions and grows in stages up to the output buffer's
            length (`search.cache_lengths`; each stage compiles its own
            loop). None: the full buffer from the start. Defaults to 16.

    Example:
    >>> generator = Generator(model)
    >>> ids, scores = generator.decode(np.array([[5, 6]]), DecodeOptions(),
    ...                                max_length=16)
    """

    def __init__(self, model, jit_compile="auto", use_cache=True, cache_growth=16):
        check_choice("jit_compile", jit_compile, ("auto", True, False))
        self.model = model
        self.backend = keras.config.backend()
        self.jit_compile = False if jit_compile == "auto" else jit_compile
        self.use_cache = use_cache
        self.cache_growth = check_int("cache_growth", cache_growth, allow_none=True)
        # Incremented each time a function is traced (never on torch), so
        # that tests can check that new batches do not retrace.
        self.trace_count = 0
        self._functions = {}

    @property
    def compiles_per_shape(self):
        """Whether each new input shape costs a compilation (JAX, XLA)."""
        return self.backend == "jax" or (
            self.backend in ("tensorflow", "torch") and bool(self.jit_compile)
        )

    def _core(self, static, token_ids, buffer, *values):
        """`decode_token_ids` on the tensors of `tf_decode_signature`, in
        its order: ``values`` are the `SearchInputs` fields of
        `_INPUT_FIELDS`."""
        if self.backend in ("jax", "tensorflow"):
            self.trace_count += 1  # only runs while tracing
        # The buffer length comes from a shape: a Python int under JAX and
        # torch, a scalar tensor in a TensorFlow graph with a None dimension.
        inputs = SearchInputs(**dict(zip(_INPUT_FIELDS, values)))
        return decode_token_ids(self.model, token_ids, ops.shape(buffer)[0], inputs, static)

    def _compiled(self, static):
        if static not in self._functions:
            signature = tf_decode_signature() if self.backend == "tensorflow" else None
            self._functions[static] = compile_for_backend(
                self.model,
                lambda *args: self._core(static, *args),
                signature,
                jit_compile=self.jit_compile,
                search=True,
            )
        return self._functions[static]

    def decode(self, token_ids, options, max_length, inputs=None, max_positions=None):
        """Raw source ids (no EOS, PAD-padded) -> numpy ``(sequences, scores)``.

        ``options`` is a `DecodeOptions`: its beam size, number of returns,
        search kind, sampling filters and source/output lengths are static
        (one compiled function each), alpha and min_length are runtime
        values. ``inputs`` (optional `SearchInputs` of arrays; its alpha and
        min_length are ``options``') holds the other runtime values:
        ``max_lengths`` (``(batch,)``) tightens each row's output limit,
        ``row_ids``, ``seed``, the forced prefixes, and ``constraint_ids``
        (int ``(batch, phrases, phrase_length)``, PAD-padded; see
        `beam_search`), which runs the constrained search (its own compiled
        function); None runs the unconstrained one.
        """
        inputs = SearchInputs() if inputs is None else inputs
        token_ids = np.asarray(token_ids, np.int32)
        batch = token_ids.shape[0]
        output_caps = inputs.max_lengths
        if output_caps is None:
            output_caps = np.full((batch,), np.iinfo(np.int32).max, np.int32)
        row_ids = inputs.row_ids
        if row_ids is None:
            row_ids = np.arange(batch, dtype=np.int32)
        prefix_ids, prefix_lengths = _prefix_arrays(
            inputs.prefix_ids, inputs.prefix_lengths, batch
        )
        constrained = inputs.constraint_ids is not None
        if constrained:
            constraint_ids = np.asarray(inputs.constraint_ids, np.int32)
        else:
            constraint_ids = np.zeros((batch, 1, 1), np.int32)
        static = StaticDecode.from_options(
            options, max_positions, use_cache=self.use_cache,
            cache_growth=self.cache_growth, constrained=constrained,
        )
        function = self._compiled(static)
        sequences, scores = function(
            ops.convert_to_tensor(token_ids),
            ops.convert_to_tensor(np.zeros((int(max_length),), np.int32)),
            ops.convert_to_tensor(np.asarray(output_caps, np.int32)),
            *runtime_tensors(options),
            ops.convert_to_tensor(np.int32(inputs.seed)),
            ops.convert_to_tensor(np.asarray(row_ids, np.int32)),
            ops.convert_to_tensor(np.asarray(prefix_ids, np.int32)),
            ops.convert_to_tensor(np.asarray(prefix_lengths, np.int32)),
            ops.convert_to_tensor(constraint_ids),
        )
        return ops.convert_to_numpy(sequences), ops.convert_to_numpy(scores)
