"""`Translator`: a trained `Transformer` plus its tokenizer, decoding as the paper.

The class is the user's entry point (construction, `generate`,
`translate`); its input checks (`translator_inputs`), forced decoding
(`translator_forced`: scores, alignments, attention) and shape buckets
(`translator_batches`) live in mixins by concern.
"""

import keras
import numpy as np

from keras_transformer.decoding.generate import Generator
from keras_transformer.decoding.options import SearchInputs
from keras_transformer.decoding.sources import check_vocabulary, model_max_positions, source_limit
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_models,
    load_models,
)
from keras_transformer.models.transformer.transformer_tokenizer import load_tokenizers
from keras_transformer.models.transformer.translator_batches import (
    TranslatorBatches,
    batch_bucket,
    constraint_array,
    until_eos,
)
from keras_transformer.models.transformer.translator_forced import TranslatorForcedDecoding
from keras_transformer.models.transformer.translator_inputs import TranslatorInputs
from keras_transformer.options import DEFAULTS
from keras_transformer.special_tokens import (
    PAD_ID,
    check_language_tag_position,
    language_tag_ids,
    target_language_ids,
)
from keras_transformer.utils.quantization import quantize_int8


class Translator(TranslatorInputs, TranslatorForcedDecoding, TranslatorBatches):
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
        quantize: None or "int8". "int8" quantizes ``model`` (each model
            of an ensemble) **in place** the package's way
            (`keras_transformer.utils.quantization.quantize_int8`: its Dense
            kernels become int8, their inputs stay in the compute dtype; a
            copy would double the memory). Defaults to None.
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
        max_source_length=DEFAULTS["max_source_length"],
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
            quantize_int8(model)
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

    @classmethod
    def from_directory(cls, directory, weights=None, **kwargs):
        """Loads a trained model and its vocabulary from ``directory``: a run
        directory of ``keras-transformer train`` (a keras-hub preset: its
        ``model.weights.h5``, ``config.json`` and tokenizer; or, written by
        an earlier version, ``model.keras`` + ``vocab.spm``) or a keras-hub
        preset (``save_to_preset``).

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
                batch = batch_bucket(len(rows), batch_size)
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
            inputs = SearchInputs(
                max_lengths=row_caps,
                prefix_ids=prefix_ids,
                prefix_lengths=prefix_lengths,
                constraint_ids=constraint_array(constraints, rows, batch),
                seed=seed or 0,
                row_ids=row_ids,
            )
            sequences, batch_scores = self.generator.decode(
                raw, options, max_length, inputs, max_positions=self.max_positions
            )
            for row, i in enumerate(rows):
                hypotheses[i] = [until_eos(s) for s in sequences[row]]
                scores[i] = batch_scores[row]
            if progress_bar is not None:
                progress_bar.add(len(rows))
        return hypotheses, scores

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

