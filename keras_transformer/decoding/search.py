"""Batched greedy and beam search over a ``tokens_to_logits`` function:
the conventions they share, and their public names in one place.

The searches live by concern: `greedy` (greedy search and sampling),
`beam` (beam search), `constraints` (lexically constrained beam search),
`search_step` (what every step masks) and `search_loop` (the compiled
loop, the growing cache, the length penalty). Each takes a
`SearchRequest` (static settings: beam size, number of returns, Python
loop), a `SearchInputs` (runtime values: alpha, lengths, prefixes,
constraints) and a `CacheFunctions` (how the cache is tiled, reordered and
grown).

The searches know nothing about the model. As in flax ``examples/wmt``, the
model is a function

    tokens_to_logits(token_ids, cache, index) -> (logits, cache)

that takes the last token of every hypothesis ``token_ids`` (int32
``(rows, 1)``), a cache (any nest of tensors whose leaves are row-major, i.e.
have ``rows`` as their first axis) and the position ``index`` (an int32 scalar;
the start token sits at position 0), and returns the float logits of the next
token ``(rows, vocabulary_size)`` and the updated cache. Beam search tiles the
initial cache ``beam_size`` times (rows = ``batch * beam_size``, beams of one
batch element adjacent) and reorders it after each step with
``CacheFunctions.reorder`` (by default a gather of every leaf on axis 0).

Conventions shared by both searches:

* Hypotheses start with ``BOS_ID`` (not returned) and end with ``EOS_ID``
  (returned), the ids of `keras_transformer.special_tokens`. ``|Y|`` counts
  the generated tokens, the final EOS included.
* ``max_length`` sizes the buffers: at most that many tokens are generated.
  A Python int (static); in TensorFlow graphs it may also be a scalar int
  tensor (e.g. from a ``None`` dimension), which lets one traced graph serve
  every buffer length. ``max_lengths`` (optional, int ``(batch,)``, at most
  ``max_length``; a `SearchInputs` field, as are the values below) caps
  each batch element: its last allowed token is forced to be EOS (as
  fairseq does), so every returned hypothesis ends with EOS.
* ``min_length`` (an int scalar): EOS is forbidden before that many tokens.
  PAD and BOS are never generated.
* ``prefix_ids`` (optional int ``(batch, P)``, ``P >= 1``) with
  ``prefix_lengths`` (int ``(batch,)``, each at most ``P`` and below the
  row's maximum length) force the first ``prefix_lengths[b]`` tokens of
  every hypothesis of batch element ``b``: at those steps only the prefix
  token is selectable (its log-probability counts as any token's), then the
  search continues as usual. Rows may have prefixes of different lengths
  (0: no prefix).
* ``constraint_ids`` (beam search only; optional int ``(batch, phrases,
  phrase_length)``, PAD-padded) are target phrases that every finished
  hypothesis contains, each as contiguous tokens (Post & Vilar, 2018; see
  `constrained_candidates`). Without them the search is the unconstrained
  one.
* Scores are ``log P(Y | x) / lp(Y)`` with the GNMT length penalty
  ``lp(Y) = ((5 + |Y|) / 6) ** alpha`` (Wu et al., 2016). ``log P`` is the sum
  of the model's log-softmax (float32) over the generated tokens, EOS
  included; forbidding tokens affects which tokens are chosen, never their
  log-probabilities.
* The loop is `keras.ops.while_loop` with every shape fixed across
  iterations, so it compiles under ``jax.jit`` and ``tf.function`` (a plain
  Python loop on torch, where `keras.ops.while_loop` is one).
  ``SearchRequest(python_loop=True)`` runs a Python loop on any backend,
  with a concrete ``index`` passed to ``tokens_to_logits``.
"""

from keras_transformer.decoding.beam import beam_search, blocked_top_k
from keras_transformer.decoding.constraints import constrained_candidates
from keras_transformer.decoding.greedy import greedy_search
from keras_transformer.decoding.options import SearchInputs, SearchRequest
from keras_transformer.decoding.search_loop import (
    NEG_INF,
    CacheFunctions,
    cache_lengths,
    compiled_loop_bodies,
    fixed_shape_loops,
    gather_cache,
    length_penalty,
    records_steps,
    tile_cache,
    traced,
    traced_step,
)

__all__ = [
    "NEG_INF",
    "CacheFunctions",
    "SearchInputs",
    "SearchRequest",
    "beam_search",
    "blocked_top_k",
    "cache_lengths",
    "compiled_loop_bodies",
    "fixed_shape_loops",
    "constrained_candidates",
    "gather_cache",
    "greedy_search",
    "length_penalty",
    "records_steps",
    "tile_cache",
    "traced",
    "traced_step",
]
