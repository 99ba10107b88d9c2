"""`Translator`: a trained `Transformer` plus its tokenizer, decoding as the paper."""

import math
import warnings

import keras
import numpy as np

from keras_transformer.decoding.backends import compile_for_backend
from keras_transformer.decoding.ensemble import Ensemble
from keras_transformer.decoding.forced import alignments, token_log_probs
from keras_transformer.decoding.generate import Generator
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.decoding.sources import (
    check_vocabulary,
    model_max_positions,
    prepare_sources,
    source_limit,
)
from keras_transformer.layers.token_checks import validate_token_ids
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_models,
    load_models,
)
from keras_transformer.models.transformer.transformer_tokenizer import load_tokenizers
from keras_transformer.special_tokens import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    UNK_ID,
    check_language_tag_position,
    language_tag_ids,
    target_language_ids,
)
from keras_transformer.utils.private_apis import one_garbage_collection

if keras.config.backend() == "tensorflow":
    from keras_transformer.utils.tensorflow_devices import tf
else:  # Only the TensorFlow backend's paths use TensorFlow.
    tf = None


def _round_up(value, multiple):
    return max(multiple, -(-value // multiple) * multiple)


def _batch_bucket(size, batch_size):
    """Smallest power of two >= size, capped at batch_size."""
    return min(batch_size, 1 << max(0, math.ceil(math.log2(max(size, 1)))))


class Translator:
    """Translates text with a `Transformer`: batched, cached beam search.

    Decodes as the paper (§6.1): beam search with beam size 4 and length
    penalty alpha = 0.6, maximum output length = input length + 50, stopping
    early when no live hypothesis can beat the finished ones. Decoding is
    incremental (the encoder runs once per batch, decoder keys/values are
    cached) and compiled: see `keras_transformer.decoding.Generator` for what
    each backend compiles.

    Inputs are tokenized (no BOS), EOS is appended (as in training), and
    sources longer than ``max_source_length`` tokens are truncated to their
    first ``max_source_length - 1`` tokens plus EOS (with a warning). The
    "input length" of the output limit counts the source tokens without EOS;
    the limit counts output tokens with EOS. Sentences are sorted by length
    and translated in batches; results come back in the input order.

    Batches are padded to a few shapes so that compiled functions are not
    rebuilt for every batch: the source to a multiple of ``length_bucket``,
    the output buffer to the source bucket - 1 + ``max_extra_length``, and
    the batch to ``batch_size`` rows (to a power of two when there are fewer
    sentences than that). Where each shape costs a compilation (JAX, XLA) a
    shape already compiled that is at most one bucket longer is reused.
    Padding never changes a translation: padded source positions are masked
    and each sentence keeps its own output limit.

    Args:
        model: a `keras_transformer.Transformer`, or a
            `keras_transformer.decoding.Ensemble` of models sharing the
            tokenizer's vocabulary (every search, scoring and alignment then
            uses the ensemble; see `from_directory`).
        tokenizer: a `keras_transformer.TransformerTokenizer` (or any object
            with ``encode(list[str])``, ``decode(list[list[int]])``,
            ``id_to_piece(ids)`` and ``vocabulary_size``) whose reserved ids
            match `keras_transformer.special_tokens`.
        max_source_length: int. Longest source in tokens, EOS included.
            Defaults to 256.
        batch_size: int. Sentences per batch. Defaults to 32.
        length_bucket: int. Source and output buffer lengths are rounded up
            to a multiple of this. Defaults to 16.
        jit_compile: bool or "auto". XLA on TensorFlow, ``torch.compile``
            of the search loop's body on torch (see `Generator`); "auto"
            (the default): neither.
        quantize: None or "int8". "int8" applies Keras' ``Model.quantize``
            to ``model`` (each model of an ensemble) **in place** (its
            Dense/Embedding kernels become int8; a copy would double the
            memory). Defaults to None.
        language_tag: ``"source"`` or ``"target"``: where a model of
            several target languages was trained to find its language tag
            (`keras_transformer.special_tokens`; `from_directory` reads it
            from the run). Defaults to ``"source"``.
        target_language: str or None. The language `translate` and `score`
            use when a call names none (a multilingual model). The model's
            languages are `languages` (``{code: tag id}``, read from the
            tokenizer's ``proto``; empty for one target language).
        source_tokenizer: optional tokenizer of the sources, over the
            same ids as ``tokenizer`` (which then serves the targets): a
            model with a SentencePiece model per side, as an imported
            Marian model (`keras_transformer.convert`). Defaults to
            ``tokenizer``; `from_directory` loads a run's
            ``source_vocab.spm``.

    Decoding is configured by one `keras_transformer.decoding.DecodeOptions`
    (beam search, greedy, sampling, n-best, lengths), validated before any
    compilation; `translate` and `generate` also take its fields as keyword
    arguments. Sources are prepared by
    `keras_transformer.decoding.sources.prepare_sources` inside the compiled
    function, the code the SavedModel export runs too.

    Example:

    ```python
    translator = Translator.from_directory("runs/multi30k")
    translator.translate(["Two dogs play in the snow."])
    translations, scores = translator.translate(sentences, return_scores=True)
    n_best = translator.translate(sentences, beam_size=5, num_return=3)
    samples = translator.translate(sentences, beam_size=1, sampling=True,
                                   top_p=0.9, seed=7, num_return=4)
    texts, alignments = translator.translate(sentences, return_alignments=True)
    forced = translator.translate(sentences, target_prefix=["Zwei", ""])
    log_probs = translator.score(sentences, references)
    ensemble = Translator.from_directory(["runs/seed0", "runs/seed1"])
    ```
    """

    def __init__(
        self,
        model,
        tokenizer,
        max_source_length=256,
        batch_size=32,
        length_bucket=16,
        jit_compile="auto",
        quantize=None,
        language_tag="source",
        target_language=None,
        source_tokenizer=None,
    ):
        for name, value in (
            ("max_source_length", max_source_length),
            ("batch_size", batch_size),
            ("length_bucket", length_bucket),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(
                    f"{name} must be a positive int. Received: {name}={value!r}"
                )
        if max_source_length < 2:
            raise ValueError(
                "max_source_length must leave room for one token and EOS. "
                f"Received: max_source_length={max_source_length}"
            )
        if quantize not in (None, "int8"):
            raise ValueError(
                f"quantize must be None or 'int8'. Received: quantize={quantize!r}"
            )
        check_vocabulary(tokenizer.vocabulary_size, model.vocabulary_size)
        if quantize is not None:
            # In place: the model's kernels become int8 (Keras' own
            # `Model.quantize`); a copy would double the memory.
            with one_garbage_collection():
                model.quantize(quantize)
        self.quantize = quantize
        self.model = model
        self.tokenizer = tokenizer
        # The source side's own SentencePiece model over the same ids (an
        # imported Marian model); else the shared one.
        if source_tokenizer is not None:
            check_vocabulary(source_tokenizer.vocabulary_size, model.vocabulary_size)
        self.source_tokenizer = source_tokenizer or tokenizer
        self.language_tag = check_language_tag_position(language_tag)
        # ``{language: tag id}`` of a multilingual vocabulary (empty for one
        # target language).
        proto = getattr(tokenizer, "proto", None)
        self.languages = language_tag_ids(proto) if proto is not None else {}
        # The language of `translate` and `score` calls that name none.
        self.target_language = target_language
        if target_language is not None:
            target_language_ids(target_language, self.languages, 1)
        self.batch_size = batch_size
        self.length_bucket = length_bucket
        # Learned positions stop at model.max_length (sinusoidal never do).
        self.max_positions = model_max_positions(model)
        self.max_source_length = source_limit(max_source_length, self.max_positions)
        self.generator = Generator(model, jit_compile=jit_compile)
        self._compiled_shapes = {}
        self._attention_function = None
        self._forced_functions = {}

    def _attention_scores(self, encoder_token_ids, decoder_token_ids):
        # JAX runs eager ops one compiled kernel at a time; one jitted call is
        # much faster there. Elsewhere eager is fine (and never retraces).
        if self._attention_function is None:
            function = self.model.attention_scores
            if keras.config.backend() != "tensorflow":
                function = compile_for_backend(self.model, function)
            self._attention_function = function
        return self._attention_function(encoder_token_ids, decoder_token_ids)

    @classmethod
    def from_directory(cls, directory, weights=None, **kwargs):
        """Loads a trained model and its vocabulary from ``directory``: a run
        directory of ``keras-transformer train`` (``model.keras`` +
        ``vocab.spm``) or a keras-hub preset (``save_to_preset``).

        A list of directories loads an ensemble (as fairseq's ``--path
        a.pt:b.pt`` or OpenNMT-py's ``-model a.pt b.pt``): models of any
        sizes that share one vocabulary, decoded together by a
        `keras_transformer.decoding.Ensemble` (the log of the weighted mean
        of their next-token probabilities at every step). The
        vocabularies are compared before any model loads.

        Args:
            directory: a path, or a list of paths (an ensemble; a list of
                one path is that one model).
            weights: optional list of one number > 0 per directory, the
                ensemble's weights (normalized). Defaults to equal weights.
            **kwargs: `Translator` arguments (``batch_size``, ``quantize``,
                ...).

        Raises:
            FileNotFoundError: a directory holds neither.
            ValueError: naming the file, when one is truncated or corrupt;
                naming the directories, when an ensemble's vocabularies
                differ; bad ``weights``.

        Example:

        ```python
        translator = Translator.from_directory("runs/multi30k")
        ensemble = Translator.from_directory(
            ["runs/seed0", "runs/seed1"], weights=[0.5, 0.5]
        )
        ```
        """

        found = find_trained_models(directory)
        model = load_models(found, weights)
        kwargs.setdefault("language_tag", found[0].language_tag())
        tokenizer, source_tokenizer = load_tokenizers(found[0])
        kwargs.setdefault("source_tokenizer", source_tokenizer)
        return cls(model, tokenizer, **kwargs)

    # --- options ---

    def decode_options(self, options=None, **overrides):
        """The `DecodeOptions` of a call: ``options`` (default: the paper's,
        with this translator's ``max_source_length``) with ``overrides``.

        Accepts the old keyword ``min_output_length`` for ``min_length``.
        Raises `ValueError` naming a bad or unknown option.
        """
        if "min_output_length" in overrides:
            overrides["min_length"] = overrides.pop("min_output_length")
        if options is None:
            options = DecodeOptions(max_source_length=self.max_source_length)
        elif not isinstance(options, DecodeOptions):
            raise ValueError(
                "options must be a DecodeOptions. Received: "
                f"options={type(options).__name__}"
            )
        return options.replace(**overrides) if overrides else options

    # --- token level ---

    def _source_ids(self, token_ids):
        """Appends EOS and truncates; returns (list of lists, count truncated).

        For `attention_weights`, which runs the model on one source outside
        the search (`generate` prepares its sources with `prepare_sources`
        inside the compiled graph).
        """
        sources, truncated = [], 0
        for ids in token_ids:
            ids = [int(i) for i in ids]
            if len(ids) + 1 > self.max_source_length:
                ids = ids[: self.max_source_length - 1]
                truncated += 1
            sources.append(ids + [EOS_ID])
        return sources, truncated

    def _check_sources(self, token_ids, max_source_length):
        """Source ids as lists, their lengths after truncation (EOS excluded)."""
        token_ids = [[int(i) for i in ids] for ids in token_ids]
        keep = source_limit(max_source_length, self.max_positions) - 1
        truncated = sum(len(ids) > keep for ids in token_ids)
        if truncated:
            warnings.warn(
                f"{truncated} source(s) longer than max_source_length="
                f"{keep + 1} tokens were truncated (EOS kept).",
                stacklevel=4,
            )
        if token_ids and any(token_ids):
            validate_token_ids(
                np.concatenate([np.asarray(ids, np.int64) for ids in token_ids]),
                self.model.source_vocabulary_size,
                name="source token ids",
            )
        return token_ids, [min(len(ids), keep) for ids in token_ids]

    def _tag(self, target_language, source_ids, target_ids, default=False):
        """``(source_ids, target_ids)`` with the language tag of each
        sentence added where the model was trained to find it: before the
        source (``language_tag="source"``) or at the start of the target
        (``"target"``; ``target_ids`` None stands for empty prefixes).
        Unchanged when ``target_language`` is None (``default``: the
        translator's ``target_language`` then)."""
        if target_language is None and default:
            target_language = self.target_language
        if target_language is None:
            return source_ids, target_ids
        tags = target_language_ids(target_language, self.languages, len(source_ids))
        if self.language_tag == "source":
            return [[tag] + list(ids) for tag, ids in zip(tags, source_ids)], target_ids
        if target_ids is None:
            target_ids = [[] for _ in source_ids]
        return source_ids, [[tag] + list(ids) for tag, ids in zip(tags, target_ids)]

    def generate(
        self,
        token_ids,
        options=None,
        batch_size=None,
        max_output_lengths=None,
        target_prefix_ids=None,
        progress_bar=None,
        constraint_ids=None,
        target_language=None,
        **option_overrides,
    ):
        """Translates token ids (without EOS); the level below `translate`.

        Args:
            token_ids: list of lists of int, source ids without BOS/EOS.
            options: a `DecodeOptions`; ``option_overrides`` (``beam_size=``,
                ``alpha=``, ``num_return=``, ``sampling=``, ...) replace its
                fields. See `translate`.
            batch_size, max_output_lengths: see `translate`.
            target_prefix_ids: optional list (one per source) of lists of
                int: forced output prefixes (no EOS).
            progress_bar: optional `keras.utils.Progbar` advanced per batch.
            constraint_ids: optional list (one per source) of lists of
                phrases, each a non-empty list of int (no EOS): every
                returned output contains each phrase, its tokens contiguous
                (see `translate`'s ``constraints``).
            target_language: see `translate`. With ``language_tag="target"``
                each returned sequence starts with its language tag id.

        Returns:
            ``(hypotheses, scores)``: for each input a list of ``num_return``
            token-id lists (EOS included) and a float array ``(num_return,)``.

        Raises:
            ValueError: an id is outside the model's source vocabulary, a bad
                option, a prefix that leaves no room for EOS, or bad
                ``constraint_ids`` (see `translate`).
        """
        options = self.decode_options(options, **option_overrides)
        token_ids, target_prefix_ids = self._tag(
            target_language, list(token_ids), target_prefix_ids
        )
        batch_size = batch_size or self.batch_size
        token_ids, lengths = self._check_sources(token_ids, options.max_source_length)
        limits = [n + options.max_extra_length for n in lengths]
        if self.max_positions is not None:
            limits = [min(limit, self.max_positions) for limit in limits]
        caps = None
        if max_output_lengths is not None:
            if len(max_output_lengths) != len(token_ids):
                raise ValueError(
                    "max_output_lengths needs one length per sentence. "
                    f"Received {len(max_output_lengths)} for {len(token_ids)}"
                )
            caps = [max(1, int(cap)) for cap in max_output_lengths]
            limits = [min(limit, cap) for limit, cap in zip(limits, caps)]
        prefixes = self._check_prefixes(target_prefix_ids, limits)
        constraints = self._check_constraints(constraint_ids, limits, options)
        seed = options.seed
        if options.sampling and seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))

        # Longest first (output limit, then source length): batches hold
        # sentences of similar lengths, and the largest shapes come first.
        order = sorted(range(len(token_ids)), key=lambda i: (-limits[i], -lengths[i]))
        hypotheses = [None] * len(token_ids)
        scores = [None] * len(token_ids)
        static = (options.beam_size, options.num_return, options.search)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            # Every batch has batch_size rows when there are enough inputs,
            # else a power of two: few distinct shapes to compile.
            batch = batch_size
            if len(token_ids) < batch_size:
                batch = _batch_bucket(len(rows), batch_size)
            source_length, max_length = self._padded_shape(
                static,
                batch,
                max(lengths[i] for i in rows) + 1,
                max(limits[i] for i in rows),
                options.max_extra_length,
                capped=caps is not None,
            )
            # Raw ids (no EOS): `prepare_sources` runs inside the compiled
            # function, as in the SavedModel. Padding rows: an empty source
            # that must stop after one token.
            raw = np.full((batch, source_length - 1), PAD_ID, np.int32)
            row_caps = np.ones((batch,), np.int32)
            row_ids = np.zeros((batch,), np.int32)
            width = max([1] + [len(prefixes[i]) for i in rows])
            prefix_ids = np.zeros((batch, width), np.int32)
            prefix_lengths = np.zeros((batch,), np.int32)
            for row, i in enumerate(rows):
                raw[row, : lengths[i]] = token_ids[i][: lengths[i]]
                row_caps[row] = limits[i]
                row_ids[row] = i
                prefix_ids[row, : len(prefixes[i])] = prefixes[i]
                prefix_lengths[row] = len(prefixes[i])
            sequences, batch_scores = self.generator.decode(
                raw,
                options,
                max_length,
                output_caps=row_caps,
                max_positions=self.max_positions,
                row_ids=row_ids,
                prefix_ids=prefix_ids,
                prefix_lengths=prefix_lengths,
                seed=seed or 0,
                constraint_ids=_constraint_array(constraints, rows, batch),
            )
            for row, i in enumerate(rows):
                hypotheses[i] = [_until_eos(s) for s in sequences[row]]
                scores[i] = batch_scores[row]
            if progress_bar is not None:
                progress_bar.add(len(rows))
        return hypotheses, scores

    def _check_prefixes(self, target_prefix_ids, limits):
        if target_prefix_ids is None:
            return [[] for _ in limits]
        prefixes = [[int(t) for t in ids] for ids in target_prefix_ids]
        if len(prefixes) != len(limits):
            raise ValueError(
                "target_prefix needs one prefix per sentence. Received "
                f"{len(prefixes)} prefixes for {len(limits)} sentences."
            )
        for i, (prefix, limit) in enumerate(zip(prefixes, limits)):
            if len(prefix) + 1 > limit:
                raise ValueError(
                    f"target_prefix of sentence {i} has {len(prefix)} tokens "
                    f"but its output holds at most {limit} tokens, EOS "
                    "included (raise max_extra_length or shorten the prefix)."
                )
        if any(prefixes):
            validate_token_ids(
                np.concatenate([np.asarray(p, np.int64) for p in prefixes]),
                self.model.vocabulary_size,
                name="target_prefix token ids",
            )
        return prefixes

    def _check_constraints(self, constraint_ids, limits, options):
        """Per sentence, its phrases as lists of int; None for no
        constraints at all. Raises a ValueError naming ``constraints``."""
        if constraint_ids is None:
            return None
        if isinstance(constraint_ids, str) or len(constraint_ids) != len(limits):
            count = "a str" if isinstance(constraint_ids, str) else len(constraint_ids)
            raise ValueError(
                "constraints needs one list of phrases per sentence. Received "
                f"{count} for {len(limits)} sentences."
            )
        phrases = [[[int(t) for t in phrase] for phrase in row] for row in constraint_ids]
        if not any(phrases):
            return None
        if options.sampling:
            raise ValueError(
                "constraints need beam (or greedy) search, not sampling=True."
            )
        for i, (row, limit) in enumerate(zip(phrases, limits)):
            if any(not phrase for phrase in row):
                raise ValueError(
                    f"constraints of sentence {i} include an empty phrase."
                )
            length = sum(len(phrase) for phrase in row)
            if length + 1 > limit:
                raise ValueError(
                    f"constraints of sentence {i} have {length} tokens but its "
                    f"output holds at most {limit} tokens, EOS included (raise "
                    "max_extra_length or shorten the constraints)."
                )
        validate_token_ids(
            np.asarray([t for row in phrases for p in row for t in p], np.int64),
            self.model.vocabulary_size,
            name="constraints token ids",
        )
        if any(t in (PAD_ID, BOS_ID, EOS_ID) for row in phrases for p in row for t in p):
            raise ValueError("constraints cannot contain PAD, BOS or EOS ids.")
        return phrases

    def _padded_shape(
        self, config, batch, source_length, max_limit, max_extra_length, capped
    ):
        """``(source_length, max_length)`` of a batch, rounded to buckets.

        ``source_length`` counts EOS. The output buffer follows the source
        bucket (source bucket - 1 + ``max_extra_length``), unless explicit
        caps make it shorter. Where every new shape costs a compilation
        (JAX, XLA), a shape already compiled that is at most one bucket
        longer in each length is reused.
        """
        bucket = self.length_bucket
        source_length = _round_up(source_length, bucket)
        max_length = source_length - 1 + max_extra_length
        if capped:
            max_length = min(max_length, _round_up(max_limit, bucket))
        if self.max_positions is not None:
            max_length = min(max_length, self.max_positions)
        max_length = max(max_length, max_limit)
        if not self.generator.compiles_per_shape:
            return source_length, max_length
        shapes = self._compiled_shapes.setdefault(config, set())
        reusable = [
            (s, m)
            for b, s, m in shapes
            if b == batch
            and source_length <= s <= source_length + bucket
            and max_length <= m <= max_length + bucket
        ]
        if reusable:
            return min(reusable, key=sum)
        shapes.add((batch, source_length, max_length))
        return source_length, max_length

    # --- forced decoding (scores, alignments) ---

    def _forced(self, kind, source_ids, target_ids, max_source_length, layer=-1):
        """Compiled `token_log_probs` / `alignments` on raw sources (no EOS)
        and EOS-terminated targets, sources prepared by `prepare_sources`."""
        key = (kind, max_source_length, layer)
        if key not in self._forced_functions:
            model, positions = self.model, self.max_positions

            def function(token_ids, targets):
                encoder_ids, _ = prepare_sources(token_ids, max_source_length, 1, positions)
                if kind == "scores":
                    return token_log_probs(model, encoder_ids, targets)
                return alignments(model, encoder_ids, targets, layer=layer)

            signature = None
            if keras.config.backend() == "tensorflow":

                signature = [tf.TensorSpec([None, None], tf.int32)] * 2
            self._forced_functions[key] = compile_for_backend(model, function, signature)
        result = self._forced_functions[key](
            keras.ops.convert_to_tensor(np.asarray(source_ids, np.int32)),
            keras.ops.convert_to_tensor(np.asarray(target_ids, np.int32)),
        )
        return keras.ops.convert_to_numpy(result)

    def _forced_batches(self, kind, source_ids, target_ids, max_source_length, layer=-1):
        """Per pair, the forced pass's row over the target (EOS included),
        batched by length like `generate`."""
        keep = source_limit(max_source_length, self.max_positions) - 1
        order = sorted(
            range(len(source_ids)),
            key=lambda i: (-len(target_ids[i]), -len(source_ids[i])),
        )
        bucket = self.length_bucket
        results = [None] * len(source_ids)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            batch = self.batch_size
            if len(source_ids) < self.batch_size:
                batch = _batch_bucket(len(rows), self.batch_size)
            source_length = _round_up(max(min(len(source_ids[i]), keep) for i in rows) + 1, bucket)
            target_length = _round_up(max(len(target_ids[i]) for i in rows), bucket)
            if self.max_positions is not None:
                target_length = min(target_length, self.max_positions)
            sources = np.full((batch, source_length - 1), PAD_ID, np.int32)
            targets = np.full((batch, target_length), PAD_ID, np.int32)
            targets[:, 0] = EOS_ID  # padding rows: an EOS-only target
            for row, i in enumerate(rows):
                ids = source_ids[i][:keep]
                sources[row, : len(ids)] = ids
                targets[row] = PAD_ID
                targets[row, : len(target_ids[i])] = target_ids[i]
            values = self._forced(kind, sources, targets, max_source_length, layer)
            for row, i in enumerate(rows):
                results[i] = values[row, : len(target_ids[i])]
        return results

    def score_token_ids(
        self, source_ids, target_ids, return_token_scores=False, target_language=None
    ):
        """`score` on token ids (no EOS; EOS is appended to both)."""
        if len(source_ids) != len(target_ids):
            raise ValueError(
                "score needs one target per source. Received: "
                f"{len(source_ids)} sources and {len(target_ids)} targets"
            )
        source_ids, target_ids = self._tag(
            target_language, list(source_ids), target_ids, default=True
        )
        source_ids, _ = self._check_sources(source_ids, self.max_source_length)
        target_ids = [[int(t) for t in ids] + [EOS_ID] for ids in target_ids]
        validate_token_ids(
            np.concatenate([np.asarray(t, np.int64) for t in target_ids] + [np.zeros(0, np.int64)]),
            self.model.vocabulary_size,
            name="target token ids",
        )
        if self.max_positions is not None:
            for i, ids in enumerate(target_ids):
                if len(ids) > self.max_positions:
                    raise ValueError(
                        f"targets[{i}] has {len(ids)} tokens (EOS included); "
                        f"the model has {self.max_positions} learned positions."
                    )
        token_scores = self._forced_batches(
            "scores", source_ids, target_ids, self.max_source_length
        )
        totals = [float(np.sum(row, dtype=np.float64)) for row in token_scores]
        if return_token_scores:
            return totals, [[float(v) for v in row] for row in token_scores]
        return totals

    def score(self, sources, targets, return_token_scores=False, target_language=None):
        """Forced decoding: the model's log-probability of given translations.

        Args:
            sources: list of str.
            targets: list of str, one per source.
            return_token_scores: bool. Also return, per pair, the
                log-probability of each target token (EOS included).
            target_language: the target language of a multilingual model
                (see `translate`). With ``language_tag="target"`` the
                forced language tag counts as the target's first token.

        Returns:
            A list of float: each pair's total log P(target | source), EOS
            included, without length penalty (with ``alpha=0`` this is the
            score a search reports for that output). With
            ``return_token_scores``, ``(totals, token_scores)``.
        """
        for name, value in (("sources", sources), ("targets", targets)):
            if isinstance(value, str):
                raise ValueError(f"{name} must be a list of str, not a single str.")
        sources, targets = list(sources), list(targets)
        if len(sources) != len(targets):
            raise ValueError(
                "score needs one target per source. Received: "
                f"{len(sources)} sources and {len(targets)} targets"
            )
        self._require_language(target_language)
        return self.score_token_ids(
            self.source_tokenizer.encode(sources),
            self.tokenizer.encode(targets),
            return_token_scores=return_token_scores,
            target_language=target_language,
        )

    # --- text level ---

    def translate(
        self,
        sentences,
        options=None,
        batch_size=None,
        return_scores=False,
        return_alignments=False,
        alignment_layer=-1,
        target_prefix=None,
        max_output_lengths=None,
        verbose="auto",
        constraints=None,
        target_language=None,
        **option_overrides,
    ):
        """Translates a list of strings.

        Args:
            sentences: list of str.
            options: a `DecodeOptions` (defaults: the paper's beam 4, alpha
                0.6, output limit source length + 50). Keyword arguments
                named like its fields replace them, e.g. ``beam_size=1``
                (greedy), ``num_return=3`` (n-best), ``sampling=True,
                top_p=0.9, seed=7`` (see `DecodeOptions`);
                ``min_output_length`` is accepted for ``min_length``.
            batch_size: int. Defaults to the translator's.
            return_scores: bool. Also return the scores (log-probability of
                the hypothesis, EOS included, divided by the length penalty
                ``((5 + |Y|) / 6) ** alpha``).
            return_alignments: bool. Also return, for each output token (EOS
                included), the index of the source token (EOS included) that
                the cross-attention of decoder layer ``alignment_layer``,
                averaged over heads, weighs most (as fairseq's
                ``--print-alignment``). For an ensemble, that attention is
                the weighted mean over its models (each model's layer
                ``alignment_layer``).
            alignment_layer: int. Defaults to the last layer.
            target_prefix: optional list of str, one per sentence: each
                output starts with that text's tokens ("" for none), then
                the search continues. Prefix tokens count in the score.
            max_output_lengths: optional list of int, one cap per sentence
                (tighter than ``max_extra_length``), e.g. for benchmarks of
                untrained models.
            verbose: "auto" (a progress bar for more than 4 batches), True or
                False.
            constraints: optional list, one per sentence, of lists of str:
                target phrases that every returned output contains, each
                phrase's tokens contiguous (lexically constrained decoding
                with dynamic beam allocation, Post & Vilar, 2018), e.g.
                ``[["Hund", "roten Ball"], []]``. A phrase is its tokens
                under the model's tokenizer (as if it stood alone in a
                sentence). Beam or greedy search only. A sentence whose
                constraints cannot all be placed within its output limit
                gets no finished output: score ``-inf`` (its text is not a
                translation).
            target_language: for a model trained with several target
                languages (`languages`): the language to translate into, a
                code such as ``"fr"``, or a list of one code per sentence.
                Its tag goes where the model was trained to find it
                (``language_tag``: first source token, or forced first
                output token, which counts in the score and is not printed).
                Raises a ValueError before any decoding for a code the model
                does not know, or when the model has one target language.

        Returns:
            A list of str (or of lists of str with ``num_return > 1``); with
            ``return_scores`` and/or ``return_alignments`` a tuple
            ``(texts, scores, alignments)`` of what was asked for, in that
            order, each shaped like the texts.
        """
        if isinstance(sentences, str):
            raise TypeError("translate expects a list of str, not a single str.")
        sentences = list(sentences)
        options = self.decode_options(options, **option_overrides)
        if not isinstance(alignment_layer, int) or not (
            -self.model.num_layers <= alignment_layer < self.model.num_layers
        ):
            raise ValueError(
                f"alignment_layer must be an int in [-{self.model.num_layers}, "
                f"{self.model.num_layers}). Received: alignment_layer={alignment_layer!r}"
            )
        prefix_ids = None
        if target_prefix is not None:
            if isinstance(target_prefix, str):
                raise ValueError(
                    "target_prefix must be a list of str (one per sentence), "
                    "not a single str."
                )
            target_prefix = list(target_prefix)
            if len(target_prefix) != len(sentences):
                raise ValueError(
                    "target_prefix needs one prefix per sentence. Received "
                    f"{len(target_prefix)} prefixes for {len(sentences)} sentences."
                )
            prefix_ids = self.tokenizer.encode(target_prefix) if sentences else []
        constraint_ids = self._tokenize_constraints(constraints, len(sentences))
        batch_size = batch_size or self.batch_size
        if verbose == "auto":
            verbose = len(sentences) > 4 * batch_size
        progress_bar = keras.utils.Progbar(len(sentences)) if verbose else None
        self._require_language(target_language)
        source_ids = self.source_tokenizer.encode(sentences) if sentences else []
        source_ids, prefix_ids = self._tag(
            target_language, source_ids, prefix_ids, default=True
        )
        if target_language is None:
            target_language = self.target_language
        hypotheses, scores = self.generate(
            source_ids,
            options,
            batch_size=batch_size,
            max_output_lengths=max_output_lengths,
            target_prefix_ids=prefix_ids,
            progress_bar=progress_bar,
            constraint_ids=constraint_ids,
        )
        texts = [self._detokenize(h) for h in hypotheses]
        scores = [[float(s) for s in row] for row in scores]
        aligned = None
        if return_alignments:
            k = options.num_return
            flat = self._forced_batches(
                "alignments",
                [ids for ids in source_ids for _ in range(k)],
                [h for row in hypotheses for h in row],
                options.max_source_length,
                layer=alignment_layer,
            )
            aligned = [
                [self._untagged_alignment(flat[i * k + j], target_language) for j in range(k)]
                for i in range(len(hypotheses))
            ]
        if options.num_return == 1:
            texts = [t[0] for t in texts]
            scores = [s[0] for s in scores]
            if aligned is not None:
                aligned = [a[0] for a in aligned]
        if not (return_scores or return_alignments):
            return texts
        result = [texts]
        if return_scores:
            result.append(scores)
        if return_alignments:
            result.append(aligned)
        return tuple(result)

    def _require_language(self, target_language):
        """A ValueError when a multilingual model is given no
        ``target_language`` (text-level calls: the token-level ones take ids
        that may carry their tag already)."""
        if target_language is None and self.target_language is None and self.languages:
            raise ValueError(
                "target_language is required: the model translates into "
                f"{', '.join(map(repr, sorted(self.languages)))}."
            )

    def _untagged_alignment(self, alignment, target_language):
        """An alignment (source index per output token) of the sentence as
        given, without the language tag: with a source tag the indices
        shift down by one (a token aligned to the tag reads 0); with a
        target tag its entry is dropped."""
        alignment = [int(v) for v in alignment]
        if target_language is None:
            return alignment
        if self.language_tag == "source":
            return [max(v - 1, 0) for v in alignment]
        return alignment[1:]

    def _tokenize_constraints(self, constraints, count):
        """``constraints`` (lists of str) as lists of token-id lists."""
        if constraints is None:
            return None
        if isinstance(constraints, str) or len(constraints) != count:
            received = "a str" if isinstance(constraints, str) else len(constraints)
            raise ValueError(
                "constraints needs one list of phrases per sentence. Received "
                f"{received} for {count} sentences."
            )
        rows = []
        for i, row in enumerate(constraints):
            if isinstance(row, str):
                raise ValueError(
                    f"constraints of sentence {i} must be a list of str, not a str."
                )
            row = list(row)
            if any(not isinstance(p, str) or not p.strip() for p in row):
                raise ValueError(
                    f"constraints of sentence {i} include an empty phrase (or "
                    f"one that is not a str). Received: {row!r}"
                )
            rows.append(self.tokenizer.encode(row) if row else [])
        return rows

    def _detokenize(self, sequences):
        # A model may have more output ids than the tokenizer has pieces
        # (e.g. a vocabulary padded to a multiple of 8): those read as UNK.
        size = self.tokenizer.vocabulary_size
        return self.tokenizer.decode(
            [[t if t < size else UNK_ID for t in ids] for ids in sequences]
        )

    def attention_weights(self, sentence, translation=None, **translate_kwargs):
        """Attention weights of one sentence pair, for plotting.

        Args:
            sentence: str. The source.
            translation: optional str. The target to force; by default the
                model's own translation (``translate_kwargs`` go to
                `generate`, e.g. ``beam_size``).

        Returns:
            A dict with:
            - ``"source_pieces"``: list of str, the source subwords and EOS;
            - ``"target_pieces"``: list of str, the output subwords and EOS;
              row ``i`` of the decoder weights is the query that predicted
              target piece ``i`` (its decoder input is the previous piece,
              BOS for the first);
            - ``"translation"``: str;
            - ``"encoder_self_attention"``: float32 ``(layers, heads, S, S)``;
            - ``"decoder_self_attention"``: ``(layers, heads, T, T)``;
            - ``"decoder_cross_attention"``: ``(layers, heads, T, S)``.

        Raises:
            ValueError: for an ensemble (whose models have attention
                weights of their own: use ``Translator(model, tokenizer)``
                with one of ``translator.model.models``).
        """
        if isinstance(self.model, Ensemble):
            raise ValueError(
                "attention_weights plots one model's attention; this translator "
                "holds an ensemble. Use Translator(translator.model.models[i], "
                "translator.tokenizer), or translate(..., return_alignments=True) "
                "for the ensemble's alignments."
            )
        source_ids, _ = self._source_ids(self.source_tokenizer.encode([sentence]))
        source_ids = source_ids[0]
        validate_token_ids(
            np.asarray(source_ids),
            self.model.source_vocabulary_size,
            "source token ids",
        )
        if translation is None:
            hypotheses, _ = self.generate([source_ids[:-1]], **translate_kwargs)
            target_ids = hypotheses[0][0]
        else:
            target_ids = self.tokenizer.encode([translation])[0] + [EOS_ID]
        if not target_ids or target_ids[-1] != EOS_ID:
            target_ids = list(target_ids) + [EOS_ID]
        decoder_ids = [BOS_ID] + list(target_ids[:-1])
        scores = self._attention_scores(
            np.asarray([source_ids], np.int32), np.asarray([decoder_ids], np.int32)
        )
        result = {
            "source_pieces": self.tokenizer.id_to_piece(source_ids),
            "target_pieces": self.tokenizer.id_to_piece(
                [t if t < self.tokenizer.vocabulary_size else UNK_ID for t in target_ids]
            ),
            "translation": self._detokenize([target_ids])[0],
        }
        for name, per_layer in scores.items():
            result[name] = np.stack(
                [keras.ops.convert_to_numpy(s)[0] for s in per_layer]
            ).astype(np.float32)
        return result


def _constraint_array(constraints, rows, batch):
    """The ``(batch, phrases, phrase_length)`` PAD-padded constraints of a
    batch's ``rows`` (sizes rounded up to a few shapes), or None when none
    of them has a constraint (the unconstrained search)."""
    if constraints is None or not any(constraints[i] for i in rows):
        return None
    count = _round_up(max(len(constraints[i]) for i in rows), 2)
    width = _round_up(max(len(p) for i in rows for p in constraints[i]), 4)
    array = np.full((batch, count, width), PAD_ID, np.int32)
    for row, i in enumerate(rows):
        for j, phrase in enumerate(constraints[i]):
            array[row, j, : len(phrase)] = phrase
    return array


def _until_eos(sequence):
    """Token ids up to and including the first EOS (PAD dropped)."""
    out = []
    for token in sequence:
        token = int(token)
        if token == PAD_ID:
            break
        out.append(token)
        if token == EOS_ID:
            break
    return out
