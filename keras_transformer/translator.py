"""`Translator`: a trained `Transformer` plus its tokenizer, decoding as the paper."""

import math
import os
import warnings

import keras
import numpy as np

from keras_transformer.decoding.compile import Generator, jax_stateless_jit
from keras_transformer.layers.embedding import validate_token_ids
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID

MODEL_FILENAME = "model.keras"


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
        model: a `keras_transformer.Transformer`.
        tokenizer: a `keras_transformer.data.SubwordTokenizer` (or any object
            with ``encode(list[str])``, ``decode(list[list[int]])``,
            ``id_to_piece(ids)`` and ``vocabulary_size``) whose reserved ids
            match `keras_transformer.special_tokens`.
        max_source_length: int. Longest source in tokens, EOS included.
            Defaults to 256.
        batch_size: int. Sentences per batch. Defaults to 32.
        length_bucket: int. Source and output buffer lengths are rounded up
            to a multiple of this. Defaults to 16.
        jit_compile: bool or "auto". XLA on TensorFlow (see `Generator`).

    Example:

    ```python
    translator = Translator.from_directory("runs/multi30k")
    translator.translate(["Two dogs play in the snow."])
    translations, scores = translator.translate(sentences, return_scores=True)
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
        if tokenizer.vocabulary_size > model.vocabulary_size:
            raise ValueError(
                f"The tokenizer has {tokenizer.vocabulary_size} pieces but the "
                f"model only {model.vocabulary_size} output ids; they were "
                "not trained together."
            )
        self.model = model
        self.tokenizer = tokenizer
        self.max_source_length = max_source_length
        self.batch_size = batch_size
        self.length_bucket = length_bucket
        # Learned positions stop at model.max_length (sinusoidal never do).
        self.max_positions = None
        if model.positional_encoding == "learned":
            self.max_positions = model.max_length
            self.max_source_length = min(max_source_length, model.max_length)
        self.generator = Generator(model, jit_compile=jit_compile)
        self._compiled_shapes = {}
        self._attention_function = None

    def _attention_scores(self, encoder_token_ids, decoder_token_ids):
        # JAX runs eager ops one compiled kernel at a time; one jitted call is
        # much faster there. Elsewhere eager is fine (and never retraces).
        if self._attention_function is None:
            function = self.model.attention_scores
            if keras.config.backend() == "jax":
                function = jax_stateless_jit(self.model, function)
            elif keras.config.backend() == "torch":
                import torch

                function = torch.no_grad()(function)
            self._attention_function = function
        return self._attention_function(encoder_token_ids, decoder_token_ids)

    @classmethod
    def from_directory(cls, directory, **kwargs):
        """Loads ``directory/model.keras`` and ``directory/vocab.spm``."""
        from keras_transformer.data.tokenizer import SubwordTokenizer
        from keras_transformer.run_directory import load_model

        path = os.path.join(directory, MODEL_FILENAME)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"No model at {path!r} (expected {MODEL_FILENAME} next to "
                "vocab.spm)."
            )
        # Errors name the file (a truncated or corrupt model.keras, ...).
        model = load_model(path)
        return cls(model, SubwordTokenizer.load(directory), **kwargs)

    # --- token level ---

    def _source_ids(self, token_ids):
        """Appends EOS and truncates; returns (list of lists, count truncated)."""
        sources, truncated = [], 0
        for ids in token_ids:
            ids = [int(i) for i in ids]
            if len(ids) + 1 > self.max_source_length:
                ids = ids[: self.max_source_length - 1]
                truncated += 1
            sources.append(ids + [EOS_ID])
        return sources, truncated

    def generate(
        self,
        token_ids,
        beam_size=4,
        alpha=0.6,
        max_extra_length=50,
        num_return=1,
        batch_size=None,
        min_output_length=0,
        max_output_lengths=None,
        progress_bar=None,
    ):
        """Translates token ids (without EOS); the level below `translate`.

        Args:
            token_ids: list of lists of int, source ids without BOS/EOS.
            beam_size, alpha, max_extra_length, num_return, batch_size,
            min_output_length, max_output_lengths: see `translate`.
            progress_bar: optional `keras.utils.Progbar` advanced per batch.

        Returns:
            ``(hypotheses, scores)``: for each input a list of ``num_return``
            token-id lists (EOS included) and a float array ``(num_return,)``.

        Raises:
            ValueError: an id is outside the model's source vocabulary.
        """
        if not isinstance(beam_size, int) or beam_size < 1:
            raise ValueError(
                f"beam_size must be a positive int. Received: beam_size={beam_size!r}"
            )
        if not isinstance(num_return, int) or not 1 <= num_return <= beam_size:
            raise ValueError(
                "num_return must be an int in [1, beam_size]. Received: "
                f"num_return={num_return!r}, beam_size={beam_size}"
            )
        if alpha < 0:
            raise ValueError(f"alpha must be >= 0. Received: alpha={alpha!r}")
        if not isinstance(max_extra_length, int) or max_extra_length < 1:
            raise ValueError(
                "max_extra_length must be a positive int. "
                f"Received: max_extra_length={max_extra_length!r}"
            )
        batch_size = batch_size or self.batch_size
        sources, truncated = self._source_ids(token_ids)
        if truncated:
            warnings.warn(
                f"{truncated} source(s) longer than max_source_length="
                f"{self.max_source_length} tokens were truncated (EOS kept).",
                stacklevel=3,
            )
        if sources:
            validate_token_ids(
                np.concatenate([np.asarray(s, np.int64) for s in sources]),
                self.model.source_vocabulary_size,
                name="source token ids",
            )
        limits = [len(s) - 1 + max_extra_length for s in sources]
        if max_output_lengths is not None:
            if len(max_output_lengths) != len(sources):
                raise ValueError(
                    "max_output_lengths needs one length per sentence. "
                    f"Received {len(max_output_lengths)} for {len(sources)}"
                )
            limits = [
                min(limit, max(1, int(cap)))
                for limit, cap in zip(limits, max_output_lengths)
            ]
        if self.max_positions is not None:
            limits = [min(limit, self.max_positions) for limit in limits]

        # Longest first (output limit, then source length): batches hold
        # sentences of similar lengths, and the largest shapes come first.
        order = sorted(
            range(len(sources)), key=lambda i: (-limits[i], -len(sources[i]))
        )
        hypotheses = [None] * len(sources)
        scores = [None] * len(sources)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            # Every batch has batch_size rows when there are enough inputs,
            # else a power of two: few distinct shapes to compile.
            batch = batch_size
            if len(sources) < batch_size:
                batch = _batch_bucket(len(rows), batch_size)
            source_length, max_length = self._padded_shape(
                (beam_size, num_return),
                batch,
                max(len(sources[i]) for i in rows),
                max(limits[i] for i in rows),
                max_extra_length,
                capped=max_output_lengths is not None,
            )
            encoder_ids = np.full((batch, source_length), PAD_ID, np.int32)
            # Padding rows: an empty source that must stop after one token.
            encoder_ids[:, 0] = EOS_ID
            max_lengths = np.ones((batch,), np.int32)
            for row, i in enumerate(rows):
                encoder_ids[row] = PAD_ID
                encoder_ids[row, : len(sources[i])] = sources[i]
                max_lengths[row] = limits[i]
            sequences, batch_scores = self.generator(
                encoder_ids,
                max_lengths,
                max_length=max_length,
                beam_size=beam_size,
                alpha=alpha,
                num_return=num_return,
                min_length=min_output_length,
            )
            for row, i in enumerate(rows):
                hypotheses[i] = [_until_eos(s) for s in sequences[row]]
                scores[i] = batch_scores[row]
            if progress_bar is not None:
                progress_bar.add(len(rows))
        return hypotheses, scores

    def _padded_shape(
        self, config, batch, source_length, max_limit, max_extra_length, capped
    ):
        """``(source_length, max_length)`` of a batch, rounded to buckets.

        The output buffer follows the source bucket (source bucket - 1 +
        ``max_extra_length``), unless explicit caps make it shorter. Where
        every new shape costs a compilation (JAX, XLA), a shape already
        compiled that is at most one bucket longer in each length is reused.
        """
        bucket = self.length_bucket
        source_length = _round_up(source_length, bucket)
        max_length = source_length - 1 + max_extra_length
        if capped:
            max_length = min(max_length, _round_up(max_limit, bucket))
        if self.max_positions is not None:
            max_length = min(max_length, self.max_positions)
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

    # --- text level ---

    def translate(
        self,
        sentences,
        beam_size=4,
        alpha=0.6,
        max_extra_length=50,
        batch_size=None,
        num_return=1,
        return_scores=False,
        min_output_length=0,
        max_output_lengths=None,
        verbose="auto",
    ):
        """Translates a list of strings.

        Args:
            sentences: list of str.
            beam_size: int. 1 is greedy search. Defaults to 4.
            alpha: float >= 0. Length-penalty exponent. Defaults to 0.6.
            max_extra_length: int. Output length limit (EOS included) is the
                source length (tokens, EOS excluded) plus this. Defaults to 50.
            batch_size: int. Defaults to the translator's.
            num_return: int <= beam_size. Hypotheses per sentence; > 1 returns
                a list of lists, best first. Defaults to 1.
            return_scores: bool. Also return the scores (log-probability of
                the hypothesis, EOS included, divided by the length penalty
                ``((5 + |Y|) / 6) ** alpha``).
            min_output_length: int. EOS is forbidden before this many tokens.
            max_output_lengths: optional list of int, one cap per sentence
                (tighter than ``max_extra_length``), e.g. for benchmarks of
                untrained models.
            verbose: "auto" (a progress bar for more than 4 batches), True or
                False.

        Returns:
            A list of str (or of lists of str with ``num_return > 1``), and
            with ``return_scores`` a list of float (or lists of float).
        """
        if isinstance(sentences, str):
            raise TypeError("translate expects a list of str, not a single str.")
        sentences = list(sentences)
        batch_size = batch_size or self.batch_size
        if verbose == "auto":
            verbose = len(sentences) > 4 * batch_size
        progress_bar = keras.utils.Progbar(len(sentences)) if verbose else None
        hypotheses, scores = self.generate(
            self.tokenizer.encode(sentences),
            beam_size=beam_size,
            alpha=alpha,
            max_extra_length=max_extra_length,
            num_return=num_return,
            batch_size=batch_size,
            min_output_length=min_output_length,
            max_output_lengths=max_output_lengths,
            progress_bar=progress_bar,
        )
        texts = [self._detokenize(h) for h in hypotheses]
        scores = [[float(s) for s in row] for row in scores]
        if num_return == 1:
            texts = [t[0] for t in texts]
            scores = [s[0] for s in scores]
        return (texts, scores) if return_scores else texts

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
        """
        source_ids, _ = self._source_ids(self.tokenizer.encode([sentence]))
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
