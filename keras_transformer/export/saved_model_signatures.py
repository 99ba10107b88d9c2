"""The SavedModel's signatures, one method each (see `saved_model` for what
each one takes and returns).

`SignatureBuilder` holds what the signatures share: the model, the
tokenizer, the decode settings fixed at export, and the helpers that turn
strings into token ids (`pieces`), run the `Translator`'s decode path
(`decode`) and turn hypotheses back into strings (`best_of`).
`SignatureBuilder.concrete_functions` traces each signature once, as a
`tf.function` without AutoGraph, into the concrete function saved under its
name.

A multilingual model (its vocabulary holds language tags, see
`keras_transformer.special_tokens.language_tag_ids`) gets one more input in
every signature that takes text: ``target_language``, a string ``[None]``
with one language code per sentence. A lookup table in the graph maps each
code to its tag id, which goes where the model was trained to find it
(``language_tag``): before the source's ids (``"source"``) or as the first
forced output token (``"target"``, before any ``translate_prefix`` prefix),
as `Translator._tag` places it.

Longer than the package's usual module because it is one class,
`SignatureBuilder`, whose signature methods share its state (the model, the
tokenizers, the language table, the searches traced once) and its helpers.
"""

import dataclasses

import tensorflow as tf

from keras_transformer.decoding.forced import token_log_probs
from keras_transformer.decoding.generate import SearchInputs, StaticDecode, decode_token_ids
from keras_transformer.decoding.sources import (
    model_max_positions,
    prepare_sources,
    source_limit,
)
from keras_transformer.layers.token_checks import check_token_ids
from keras_transformer.options import BY_NAME, RUNTIME, SAVED_MODEL_INPUTS
from keras_transformer.special_tokens import (
    PAD_ID,
    UNK_ID,
    check_language_tag_position,
    language_tag_ids,
)
from keras_transformer.utils.validation import check_int


def _strings(name):
    return tf.TensorSpec([None], tf.string, name=name)


# Signature name -> (method of `SignatureBuilder`, input signature).
SIGNATURES = {
    "serving_default": ("serve", [_strings("sentences")]),
    "translate_nbest": ("serve_nbest", [_strings("sentences")]),
    "translate_token_ids": (
        "serve_token_ids",
        [tf.TensorSpec([None, None], tf.int32, name="token_ids")],
    ),
    "translate_prefix": ("serve_prefix", [_strings("sources"), _strings("prefixes")]),
    "translate_constrained": (
        "serve_constrained",
        [_strings("sources"), tf.TensorSpec([None, None], tf.string, name="constraints")],
    ),
    "translate_sample": (
        "serve_sample",
        [_strings("sentences"), tf.TensorSpec([], tf.int32, name="seed")],
    ),
    "score": ("serve_score", [_strings("sources"), _strings("targets")]),
    # The beam search with the request's runtime options, one scalar each
    # (`keras_transformer.options.SAVED_MODEL_INPUTS`: alpha, min_length,
    # repetition_penalty); the other signatures use the export's values.
    "translate_options": (
        "serve_options",
        [
            _strings("sentences"),
            *(tf.TensorSpec([], BY_NAME[name].dtype, name=name) for name in SAVED_MODEL_INPUTS),
        ],
    ),
}

# The signatures that take text: a multilingual model's take
# ``target_language`` after their other inputs. ``translate_token_ids``
# does not: its ids carry their tag already (``language_tag="source"``).
TEXT_SIGNATURES = (
    "serving_default",
    "translate_nbest",
    "translate_prefix",
    "translate_constrained",
    "translate_sample",
    "score",
    "translate_options",
)


def signature_inputs(multilingual):
    """Signature name -> (method of `SignatureBuilder`, input signature):
    `SIGNATURES`, with ``target_language`` added to `TEXT_SIGNATURES` when
    ``multilingual``."""
    if not multilingual:
        return dict(SIGNATURES)
    return {
        name: (
            method,
            inputs + [_strings("target_language")] if name in TEXT_SIGNATURES else inputs,
        )
        for name, (method, inputs) in SIGNATURES.items()
    }


class SignatureBuilder:
    """Builds the export's signatures from a model and its tokenizer.

    Args:
        model: a `keras_transformer.Transformer` or an `Ensemble` of them
            (TensorFlow backend).
        tokenizer: its `TransformerTokenizer`.
        options: the `DecodeOptions` of the beam-search signatures.
        n_best: int. The ``k`` of ``translate_nbest``.
        sample_options: the `DecodeOptions` of ``translate_sample``.
        language_tag: ``"source"`` or ``"target"``: where a multilingual
            model finds its language tag (unused for a model of one target
            language).
        source_tokenizer: the sources' own `TransformerTokenizer` over the
            same ids (an imported Marian model), or None (``tokenizer``).
        parallel_searches: int >= 1. Each request's sentences are searched
            in this many groups at once (`decode`).

    Attributes:
        languages: ``{language: tag id}`` of the tokenizer's language tags;
            empty for a model of one target language.
        language_table: a `tf.lookup.StaticHashTable` from language code to
            tag id (-1 for an unknown code), or None without languages. The
            exported module must hold it (it is a resource the signatures
            capture).
    """

    def __init__(
        self, model, tokenizer, options, n_best, sample_options, language_tag="source",
        source_tokenizer=None, parallel_searches=1,
    ):  # fmt: skip
        self.model = model
        self.parallel_searches = check_int("parallel_searches", parallel_searches)
        self.tokenizer = tokenizer
        # The sources' own SentencePiece model over the same ids, if any.
        self.source_tokenizer = source_tokenizer or tokenizer
        self.language_tag = check_language_tag_position(language_tag)
        self.languages = language_tag_ids(tokenizer.proto)
        self.language_table = None
        if self.languages:
            codes = sorted(self.languages)
            self.language_table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(codes, tf.string),
                    tf.constant([self.languages[code] for code in codes], tf.int32),
                ),
                default_value=-1,
            )
        self.options = options
        self.n_best = n_best
        self.tokenizer_size = tokenizer.vocabulary_size
        max_positions = model_max_positions(model)
        self.max_positions = max_positions
        # Source tokens kept before EOS, as `prepare_sources` keeps them.
        self.keep = source_limit(options.max_source_length, max_positions) - 1
        self.best = StaticDecode.from_options(options.replace(num_return=1), max_positions)
        self.nbest = StaticDecode.from_options(
            options.replace(num_return=n_best), max_positions
        )
        self.sample = StaticDecode.from_options(sample_options, max_positions)
        self.constrained = StaticDecode.from_options(
            options.replace(num_return=1), max_positions, constrained=True
        )
        # The request's runtime options: the repetition penalty is applied
        # whatever its value (1.0 leaves the scores as they are).
        self.with_options = dataclasses.replace(self.best, penalize_repetition=True)
        self._searches = {}  # StaticDecode -> its search's tf.function

    def concrete_functions(self):
        """{signature name: concrete function}, each traced once.

        Without AutoGraph: the decode code's control flow is explicit
        (`keras.ops.while_loop`, `tf.cond`), so AutoGraph would only convert
        every function it calls for nothing; a Python ``if`` on a tensor
        fails loudly instead of being converted.
        """
        functions = {}
        for name, (method, input_signature) in signature_inputs(bool(self.languages)).items():
            function = tf.function(
                getattr(self, method), input_signature=input_signature, autograph=False
            )
            functions[name] = function.get_concrete_function()
        return functions

    # --- shared steps ---

    def pieces(self, sentences, target=False):
        """int32 token ids ``(batch, length)``, 0-padded, and which inputs
        are blank ("" and whitespace-only inputs have no tokens); sources
        by default, targets with ``target=True``."""
        tokenizer = self.tokenizer if target else self.source_tokenizer
        tokenized = tokenizer.tokenize(sentences)
        token_ids = tf.cast(tokenized.to_tensor(default_value=PAD_ID), tf.int32)
        return token_ids, tf.equal(tokenized.row_lengths(), 0)

    def tag_ids(self, target_language, count, signature):
        """int32 ``(batch,)``: the tag id of each sentence's code in
        ``target_language``. A count other than ``count`` or a code the
        model does not know fails the request with INVALID_ARGUMENT (before
        any decoding)."""
        count_check = tf.debugging.assert_equal(
            tf.shape(target_language)[0], count,
            message=f"{signature} needs one target_language per sentence",
        )
        with tf.control_dependencies([count_check]):
            ids = self.language_table.lookup(target_language)
        unknown = ids < 0
        known_check = tf.debugging.Assert(
            tf.logical_not(tf.reduce_any(unknown)),
            [
                tf.constant(
                    "target_language: the model does not translate into these "
                    f"codes; it knows {', '.join(sorted(self.languages))}:"
                ),
                tf.boolean_mask(target_language, unknown),
            ],
        )
        with tf.control_dependencies([known_check]):
            return tf.identity(ids)

    def tagged(self, target_language, token_ids, signature, prefix_ids=None,
               prefix_lengths=None):
        """``(token_ids, prefix_ids, prefix_lengths)`` with each sentence's
        language tag where the model finds it: the first source token
        (``language_tag="source"``), or the first token of the forced
        prefix (``"target"``; None prefixes stand for empty ones).
        Unchanged when ``target_language`` is None (a model of one target
        language)."""
        if target_language is None:
            return token_ids, prefix_ids, prefix_lengths
        tags = self.tag_ids(target_language, tf.shape(token_ids)[0], signature)[:, None]
        if self.language_tag == "source":
            return tf.concat([tags, token_ids], axis=1), prefix_ids, prefix_lengths
        if prefix_ids is None:
            return token_ids, tags, tf.ones_like(tags[:, 0])
        return token_ids, tf.concat([tags, prefix_ids], axis=1), prefix_lengths + 1

    def check_prefix_room(self, token_ids, prefix_lengths):
        """``(token_ids, prefix_lengths)`` behind a check (`_checked`) that
        fails the request unless each forced prefix leaves room for EOS in
        its output (`Translator`'s check of ``target_prefix``)."""
        check = tf.debugging.assert_less(
            prefix_lengths, self.output_limits(token_ids),
            message="a prefix leaves no room for EOS in its output "
            "(raise --max-extra-length at export or shorten the prefix)",
        )
        return _checked(check, token_ids, prefix_lengths)

    def output_limits(self, token_ids):
        """int32 ``(batch,)``: each source's output length limit, EOS
        included (`prepare_sources`)."""
        options = self.options
        _, limits = prepare_sources(
            token_ids, options.max_source_length, options.max_extra_length,
            self.max_positions,
        )
        return tf.cast(limits, tf.int32)

    def decode(self, token_ids, static, seed=None, prefix_ids=None, prefix_lengths=None,
               constraint_ids=None, runtime=None):
        """`decode_token_ids` on int32 ``token_ids`` (batch, length),
        0-padded, without EOS; ``prefix_ids`` (batch, P) are forced output
        prefixes of ``prefix_lengths`` (batch,) tokens; ``constraint_ids``
        (batch, phrases, phrase_length), PAD-padded, the constraint phrases
        of a ``static`` with ``constrained=True``. ``runtime``: the scalar
        tensors of `keras_transformer.options.RUNTIME` (alpha, min_length,
        ...); None: the export's values.

        Returns int32 sequences ``(batch, k, L)`` and float32 scores
        ``(batch, k)``; an empty batch gives empty outputs.

        The search of each ``static`` is one ``tf.function`` that every
        signature using it calls (``serving_default``,
        ``translate_token_ids`` and ``translate_prefix`` share the beam
        search): traced once, and held once in the SavedModel.
        """
        batch = tf.shape(token_ids)[0]
        if prefix_ids is None:
            prefix_ids = tf.zeros([batch, 1], tf.int32)
            prefix_lengths = tf.zeros([batch], tf.int32)
        if seed is None:
            seed = tf.constant(0, tf.int32)
        if constraint_ids is None:
            constraint_ids = tf.zeros([batch, 1, 1], tf.int32)
        if runtime is None:
            runtime = [
                tf.constant(getattr(self.options, name), BY_NAME[name].dtype)
                for name in RUNTIME
            ]
        if static not in self._searches:
            self._searches[static] = tf.function(
                lambda *args: self._search(static, *args),
                input_signature=[
                    tf.TensorSpec([None, None], tf.int32),  # token_ids
                    tf.TensorSpec([None], tf.int32),  # row_ids
                    tf.TensorSpec([], tf.int32),  # seed
                    tf.TensorSpec([None, None], tf.int32),  # prefix_ids
                    tf.TensorSpec([None], tf.int32),  # prefix_lengths
                    tf.TensorSpec([None, None, None], tf.int32),  # constraint_ids
                    *(tf.TensorSpec([], BY_NAME[name].dtype) for name in RUNTIME),
                ],
                autograph=False,
            )
        search = self._searches[static]
        inputs = (seed, prefix_ids, prefix_lengths, constraint_ids, *runtime)

        def whole():
            return search(token_ids, tf.range(batch), *inputs)

        if self.parallel_searches == 1:
            return whole()
        # Groups where each gets a sentence; a smaller request is one search.
        return tf.cond(
            batch >= self.parallel_searches,
            lambda: self._grouped_search(search, token_ids, inputs),
            whole,
        )

    def _grouped_search(self, search, token_ids, inputs):
        """``search``'s outputs for ``token_ids`` and the per-sentence
        ``inputs`` of `decode` (seed, prefixes, constraints, runtime
        scalars), searched in ``parallel_searches`` groups of sentences at
        once, each row back in its place. The groups: the sentences by
        source length, longest first, dealt out in turn, so that each group
        holds the same number of sentences of every length and the searches
        end together."""
        seed, prefix_ids, prefix_lengths, constraint_ids, *runtime = inputs
        lengths = tf.reduce_sum(tf.cast(token_ids != PAD_ID, tf.int32), axis=1)
        order = tf.argsort(lengths, direction="DESCENDING", stable=True)
        groups = [order[group::self.parallel_searches] for group in range(self.parallel_searches)]
        outputs = [
            search(
                tf.gather(token_ids, rows), rows, seed, tf.gather(prefix_ids, rows),
                tf.gather(prefix_lengths, rows), tf.gather(constraint_ids, rows), *runtime,
            )
            for rows in groups
        ]
        # Each group's buffer is the batch's (the same source width).
        return (
            tf.dynamic_stitch(groups, [sequences for sequences, _ in outputs]),
            tf.dynamic_stitch(groups, [scores for _, scores in outputs]),
        )

    def _search(self, static, token_ids, row_ids, seed, prefix_ids, prefix_lengths,
                constraint_ids, *runtime):
        """`decode`'s search, traced once per ``static``."""
        options = self.options
        batch = tf.shape(token_ids)[0]
        if not static.constrained:
            constraint_ids = None
        width = tf.minimum(tf.shape(token_ids)[1], self.keep)
        # The output buffer: the longest source's limit (prepare_sources
        # gives each row its own).
        max_length = width + options.max_extra_length
        if self.max_positions is not None:
            max_length = tf.minimum(max_length, self.max_positions)

        def run():
            inputs = SearchInputs(
                **dict(zip(RUNTIME, runtime)),
                prefix_ids=prefix_ids,
                prefix_lengths=prefix_lengths,
                constraint_ids=constraint_ids,
                seed=seed,
                row_ids=row_ids,  # sampling: each sentence's index in the request
            )
            sequences, scores = decode_token_ids(self.model, token_ids, max_length, inputs, static)
            return tf.cast(sequences, tf.int32), tf.cast(scores, tf.float32)

        def empty():
            k = static.num_return
            return tf.zeros([0, k, 1], tf.int32), tf.zeros([0, k], tf.float32)

        return tf.cond(batch > 0, run, empty)

    def detokenize(self, sequences):
        """Strings of id sequences; model ids the tokenizer lacks (a padded
        vocabulary) read as UNK, as in `Translator`."""
        sequences = tf.where(sequences < self.tokenizer_size, sequences, UNK_ID)
        return self.tokenizer.detokenize(sequences)

    def best_of(self, sequences, scores, blank):
        """The outputs of the best hypothesis of each row; blank inputs give
        "" with score 0."""
        translations = tf.where(blank, tf.constant(""), self.detokenize(sequences[:, 0]))
        scores = tf.where(blank, tf.zeros_like(scores[:, 0]), scores[:, 0])
        return {"translations": translations, "scores": scores}

    # --- the signatures ---
    #
    # ``target_language`` is None for a model of one target language (its
    # signatures do not take it), else a string (batch,) of codes.

    def forced_tag(self, token_ids, prefix_ids, prefix_lengths):
        """``(token_ids, prefix_lengths)``; with ``language_tag="target"``
        behind a check that fails the request unless the forced tag leaves
        room for EOS (as `Translator` checks its prefix)."""
        if prefix_ids is None:
            return token_ids, prefix_lengths
        return self.check_prefix_room(token_ids, prefix_lengths)

    def serve(self, sentences, target_language=None):
        token_ids, blank = self.pieces(sentences)
        token_ids, prefix_ids, prefix_lengths = self.tagged(
            target_language, token_ids, "serving_default"
        )
        token_ids, prefix_lengths = self.forced_tag(token_ids, prefix_ids, prefix_lengths)
        sequences, scores = self.decode(
            token_ids, self.best, prefix_ids=prefix_ids, prefix_lengths=prefix_lengths
        )
        return self.best_of(sequences, scores, blank)

    def serve_options(self, sentences, *values):
        """``serving_default`` with the request's `SAVED_MODEL_INPUTS`
        (then ``target_language`` for a multilingual model)."""
        target_language = values[-1] if self.languages else None
        requested = dict(zip(SAVED_MODEL_INPUTS, values))
        checks = []
        for name, value in requested.items():
            # A request's value outside the option's range fails the request
            # with a message naming the input (TF Serving answers 400).
            option = BY_NAME[name]
            minimum = tf.constant(option.minimum, option.dtype)
            check = tf.debugging.assert_greater if option.above_minimum else (
                tf.debugging.assert_greater_equal)
            relation = ">" if option.above_minimum else ">="
            checks.append(
                check(value, minimum, message=f"{name} must be {relation} {option.minimum}")
            )
        runtime = [
            requested.get(name, tf.constant(getattr(self.options, name), BY_NAME[name].dtype))
            for name in RUNTIME
        ]
        runtime = _checked(checks, *runtime)
        token_ids, blank = self.pieces(sentences)
        token_ids, prefix_ids, prefix_lengths = self.tagged(
            target_language, token_ids, "translate_options"
        )
        token_ids, prefix_lengths = self.forced_tag(token_ids, prefix_ids, prefix_lengths)
        sequences, scores = self.decode(
            token_ids, self.with_options, prefix_ids=prefix_ids,
            prefix_lengths=prefix_lengths, runtime=runtime,
        )
        return self.best_of(sequences, scores, blank)

    def serve_nbest(self, sentences, target_language=None):
        token_ids, blank = self.pieces(sentences)
        token_ids, prefix_ids, prefix_lengths = self.tagged(
            target_language, token_ids, "translate_nbest"
        )
        token_ids, prefix_lengths = self.forced_tag(token_ids, prefix_ids, prefix_lengths)
        sequences, scores = self.decode(  # (batch, k, L)
            token_ids, self.nbest, prefix_ids=prefix_ids, prefix_lengths=prefix_lengths
        )
        shape = tf.shape(sequences)
        flat = tf.reshape(sequences, [shape[0] * self.n_best, shape[2]])
        translations = tf.reshape(self.detokenize(flat), [shape[0], self.n_best])
        translations = tf.where(blank[:, None], tf.constant(""), translations)
        scores = tf.where(blank[:, None], tf.zeros_like(scores), scores)
        return {"translations": translations, "scores": scores}

    def serve_token_ids(self, token_ids):
        # Ids as given, and no target_language: a multilingual model's
        # sources carry their language tag already (its id first, with
        # language_tag="source"); with language_tag="target" no tag is
        # forced.
        # Out-of-range ids would wrap (-1 reads the last embedding row):
        # fail with an error naming the vocabulary size instead.
        token_ids = check_token_ids(token_ids, self.model.vocabulary_size, "token_ids")
        sequences, scores = self.decode(token_ids, self.best)
        return {"token_ids": sequences[:, 0], "scores": scores[:, 0]}

    def serve_prefix(self, sources, prefixes, target_language=None):
        # Each output starts with its prefix's tokens ("" for none), then
        # the beam search continues, as Translator(target_prefix=...); with
        # language_tag="target" the language tag comes before the prefix.
        token_ids, blank = self.pieces(sources)
        prefix_pieces = self.tokenizer.tokenize(prefixes)
        check = tf.debugging.assert_equal(
            tf.shape(token_ids)[0], prefix_pieces.nrows(out_type=tf.int32),
            message="translate_prefix needs one prefix per source",
        )
        token_ids, = _checked(check, token_ids)
        prefix_lengths = tf.cast(prefix_pieces.row_lengths(), tf.int32)
        prefix_ids = tf.cast(prefix_pieces.to_tensor(default_value=PAD_ID), tf.int32)
        prefix_ids = tf.pad(prefix_ids, [[0, 0], [0, 1]])  # at least 1 column
        token_ids, prefix_ids, prefix_lengths = self.tagged(
            target_language, token_ids, "translate_prefix", prefix_ids, prefix_lengths
        )
        token_ids, prefix_lengths = self.check_prefix_room(token_ids, prefix_lengths)
        sequences, scores = self.decode(
            token_ids, self.best, prefix_ids=prefix_ids, prefix_lengths=prefix_lengths
        )
        return self.best_of(sequences, scores, blank)

    def serve_constrained(self, sources, constraints, target_language=None):
        # Every output contains each non-empty string of its row of
        # ``constraints`` (batch, phrases; "" pads), its tokens contiguous,
        # as Translator.translate(..., constraints=...).
        token_ids, blank = self.pieces(sources)
        shape = tf.shape(constraints)
        check = tf.debugging.assert_equal(
            tf.shape(token_ids)[0], shape[0],
            message="translate_constrained needs one row of constraints per source",
        )
        token_ids, constraints = _checked(check, token_ids, constraints)
        phrases = self.tokenizer.tokenize(tf.reshape(constraints, [-1]))
        phrase_ids = tf.cast(phrases.to_tensor(default_value=PAD_ID), tf.int32)
        phrase_ids = tf.pad(phrase_ids, [[0, 0], [0, 1]])  # at least 1 column
        constraint_ids = tf.reshape(phrase_ids, [shape[0], shape[1], -1])
        lengths = tf.reduce_sum(
            tf.reshape(tf.cast(phrases.row_lengths(), tf.int32), [shape[0], shape[1]]), axis=1
        )
        token_ids, prefix_ids, prefix_lengths = self.tagged(
            target_language, token_ids, "translate_constrained"
        )
        token_ids, prefix_lengths = self.forced_tag(token_ids, prefix_ids, prefix_lengths)
        check = tf.debugging.assert_less(
            lengths, self.output_limits(token_ids),
            message="constraints longer than their output allows, EOS included "
            "(raise --max-extra-length at export or shorten the constraints)",
        )
        token_ids, constraint_ids = _checked(check, token_ids, constraint_ids)
        sequences, scores = self.decode(
            token_ids, self.constrained, prefix_ids=prefix_ids,
            prefix_lengths=prefix_lengths, constraint_ids=constraint_ids,
        )
        return self.best_of(sequences, scores, blank)

    def serve_sample(self, sentences, seed, target_language=None):
        # One sample per sentence (temperature/top_k/top_p fixed at
        # export); the same seed gives Translator.translate(sentences,
        # sampling=True, seed=seed)'s samples.
        token_ids, blank = self.pieces(sentences)
        check = tf.debugging.assert_non_negative(seed, message="seed must be >= 0")
        seed, = _checked(check, seed)
        token_ids, prefix_ids, prefix_lengths = self.tagged(
            target_language, token_ids, "translate_sample"
        )
        token_ids, prefix_lengths = self.forced_tag(token_ids, prefix_ids, prefix_lengths)
        sequences, scores = self.decode(
            token_ids, self.sample, seed=seed, prefix_ids=prefix_ids,
            prefix_lengths=prefix_lengths,
        )
        return self.best_of(sequences, scores, blank)

    def serve_score(self, sources, targets, target_language=None):
        # Forced decoding, as `Translator.score`: total log P(target + EOS |
        # source), no length penalty. Blank targets score EOS. A language
        # tag forced as the target's first token counts in the score.
        max_positions = self.max_positions
        source_ids, _ = self.pieces(sources)
        target_ids, _ = self.pieces(targets, target=True)
        check = tf.debugging.assert_equal(
            tf.shape(source_ids)[0], tf.shape(target_ids)[0],
            message="score needs one target per source",
        )
        source_ids, target_ids = _checked(check, source_ids, target_ids)
        if target_language is not None:
            tags = self.tag_ids(target_language, tf.shape(source_ids)[0], "score")[:, None]
            if self.language_tag == "source":
                source_ids = tf.concat([tags, source_ids], axis=1)
            else:
                target_ids = tf.concat([tags, target_ids], axis=1)
        encoder_ids, _ = prepare_sources(
            source_ids, self.options.max_source_length, 1, max_positions
        )
        # EOS after each target: prepare_sources' EOS placement, no cut.
        targets_eos, _ = prepare_sources(target_ids, tf.int32.max, 1)
        if max_positions is not None:
            check = tf.debugging.assert_less_equal(
                tf.shape(targets_eos)[1], max_positions,
                message=f"a target is longer than the model's {max_positions} "
                "learned positions",
            )
            targets_eos, = _checked(check, targets_eos)

        def run():
            log_probs = token_log_probs(self.model, encoder_ids, targets_eos)
            return tf.reduce_sum(tf.cast(log_probs, tf.float32), axis=1)

        def empty():
            return tf.zeros([0], tf.float32)

        scores = tf.cond(tf.shape(source_ids)[0] > 0, run, empty)
        return {"scores": scores}


def _checked(checks, *tensors):
    """``tensors`` behind the assertion op(s) ``checks`` (one, or a list):
    the search reads them only once the checks passed, so a bad request
    fails with its check's message whatever order the executor runs
    independent ops in (with one inter-op thread it may otherwise run the
    search first and fail inside it, or answer a request whose values the
    checks refuse)."""
    with tf.control_dependencies(checks if isinstance(checks, list) else [checks]):
        return [tf.identity(tensor) for tensor in tensors]
