"""`CTranslate2Translator`: decodes with a model exported by
`export_ctranslate2`, with the package's length penalty and tokenizer.
"""

import json
import os

import keras
import numpy as np

from keras_transformer import options as decode_options
from keras_transformer.options import DEFAULTS
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.decoding.search import length_penalty
from keras_transformer.export.ctranslate2_converter import (
    METADATA_FILENAME,
    _import_ctranslate2,
    _processor,
    _sentencepiece_proto,
    vocabulary_pieces,
)
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)
from keras_transformer.utils.validation import check_int, check_number


# Options that `CTranslate2Translator.generate` converts itself (CTranslate2's
# length penalty, length limits and returns count otherwise), or that are
# the constructor's (max_source_length).
_CONVERTED = (
    "beam_size", "alpha", "max_extra_length", "min_length", "num_return", "max_source_length",
)


def _passed_options(options):
    """``translate_batch`` keyword arguments of the options set away from
    their defaults that CTranslate2 takes as they are (their
    `Option.ctranslate2` is the keyword); a ValueError naming any other."""
    if options.sampling:
        raise ValueError(
            "CTranslate2Translator decodes with beam or greedy search; it does "
            "not sample. Received: sampling=True"
        )
    passed = {}
    for option in decode_options.OPTIONS:
        value = getattr(options, option.name)
        if option.name in _CONVERTED or value == option.default:
            continue
        if not option.ctranslate2.isidentifier():
            raise ValueError(
                f"{option.name}={value!r} has no CTranslate2 equivalent: "
                f"{option.ctranslate2}."
            )
        passed[option.ctranslate2] = value
    return passed


class CTranslate2Translator:
    """Translates with an exported directory as `keras_transformer.Translator`.

    `ctranslate2.Translator.translate_batch` is called with these settings:

    * ``beam_size`` as given; ``num_hypotheses=beam_size * patience``:
      every finished hypothesis CTranslate2 keeps comes back, to be
      re-ranked here (with fewer, CTranslate2 would drop some by its own
      ranking first, which can drop the GNMT-best one).
    * ``length_penalty=alpha``: CTranslate2 divides by ``|Y| ** alpha``, not
      by GNMT's ``((5 + |Y|) / 6) ** alpha``. Its scores are multiplied back
      by ``|Y| ** alpha`` (giving the log-probability) and the n-best is
      re-ranked with the GNMT penalty. With ``alpha=0`` the scores are the
      log-probabilities and CTranslate2 stops once its best beam ended
      (and ``num_hypotheses`` finished), which cannot miss the best one.
    * ``patience`` (default 2): with a non-zero penalty CTranslate2 stops
      once ``beam_size * patience`` hypotheses finished, where this package
      stops once no live hypothesis can beat the best finished one. With 1,
      CTranslate2 can stop before the GNMT-best hypothesis finished; 2
      gives it more finished hypotheses to re-rank, at the cost of some
      decoding time.
    * ``return_end_token=True``: ``|Y|`` counts EOS, as here.
    * ``min_decoding_length=max(min_length - 1, 0)``: CTranslate2 counts
      the tokens before EOS, this package's ``min_length`` the output with
      EOS; CTranslate2's default 1 would forbid an immediate EOS, which
      this package allows. Where ``min_length`` binds, CTranslate2 bans EOS
      its own way and its scores, hence some outputs, differ from the
      package's (both hold at least ``min_length`` tokens).
    * ``no_repeat_ngram_size``, ``repetition_penalty`` and any other option
      whose `keras_transformer.options.Option.ctranslate2` names a
      ``translate_batch`` argument: passed as they are.
    * ``max_decoding_length``: source tokens (EOS excluded) plus
      ``max_extra_length``, per batch (CTranslate2 takes one limit per
      call); sentences are sorted by length and batched, so each batch's
      limit is close to each of its sentences'.
    * No ``suppress_sequences``: this package never generates PAD or BOS,
      but only masks them when choosing; CTranslate2 would renormalize the
      log-probabilities over the remaining tokens, which changes every score
      (by 0.04 for a label-smoothed model). A trained model gives PAD and
      BOS no weight, so they are never chosen.
    * ``max_input_length=0``: sources are truncated here to
      ``max_source_length - 1`` tokens (then EOS), as the `Translator` does.

    Remaining differences: a hypothesis that reaches the length limit ends
    there in CTranslate2 but with a forced EOS here, and CTranslate2's
    stopping rule (above) is a heuristic where this package's is a bound.
    Neither shows on a trained model's outputs; an untrained model's
    outputs, which run to the limit, differ.

    Args:
        model_dir: str. A directory written by `export_ctranslate2`.
        device: "cpu", "cuda" or "auto". Defaults to "cpu".
        compute_type: CTranslate2 compute type ("default", "float32",
            "int8", "int8_float32", "float16", ...). Defaults to "default"
            (the saved weights' type).
        intra_threads: int. CPU threads per translation (0: CTranslate2's
            default). Defaults to 0.
        max_source_length: int. As `Translator`'s. Defaults to 256.
        batch_size: int. Sentences per `translate_batch` call. Defaults to 32.
        patience: float >= 1. CTranslate2's beam patience, see above.
            Defaults to 2.
    """

    def __init__(
        self,
        model_dir,
        device="cpu",
        compute_type="default",
        intra_threads=0,
        max_source_length=DEFAULTS["max_source_length"],
        batch_size=32,
        patience=2.0,
    ):
        ctranslate2 = _import_ctranslate2()
        model_dir = os.fspath(model_dir)
        metadata_path = os.path.join(model_dir, METADATA_FILENAME)
        if not os.path.isfile(metadata_path):
            raise FileNotFoundError(
                f"No {METADATA_FILENAME} in {model_dir!r}: not a directory "
                "written by keras_transformer's export_ctranslate2."
            )
        with open(metadata_path) as f:
            self.metadata = json.load(f)
        # At least one source token and EOS.
        max_source_length = check_int("max_source_length", max_source_length, minimum=2)
        batch_size = check_int("batch_size", batch_size)
        self.patience = check_number("patience", patience, minimum=1)
        self.max_positions = int(self.metadata["max_positions"])
        self.max_source_length = min(max_source_length, self.max_positions)
        self.batch_size = batch_size
        self.processor = _processor(
            _sentencepiece_proto(os.path.join(model_dir, VOCABULARY_FILENAME))
        )
        # The sources' own SentencePiece model, where the model has one.
        source_path = os.path.join(model_dir, SOURCE_VOCABULARY_FILENAME)
        self.source_processor = (
            _processor(_sentencepiece_proto(source_path))
            if os.path.isfile(source_path)
            else self.processor
        )
        self.translator = ctranslate2.Translator(
            model_dir,
            device=device,
            compute_type=compute_type,
            intra_threads=intra_threads,
        )
        self._pieces = vocabulary_pieces(
            self.processor, self.metadata["model_config"]["vocabulary_size"]
        )
        self._ids = {piece: i for i, piece in enumerate(self._pieces)}

    # --- token level ---

    def _source_pieces(self, token_ids):
        sources = []
        for ids in token_ids:
            ids = [int(i) for i in ids][: self.max_source_length - 1]
            sources.append([self._pieces[i] for i in ids])
        return sources

    def generate(self, token_ids, options=None, **option_overrides):
        """Translates token ids (without EOS), as `Translator.generate`.

        Args:
            token_ids: a list of id lists, one per source, without EOS.
            options: a `DecodeOptions` (default: its defaults); keyword
                arguments named like its fields (``beam_size=``,
                ``alpha=``, ``min_length=``, ...) replace its values. Each
                option maps to CTranslate2 as `keras_transformer.options`
                says (``Option.ctranslate2``); one with no CTranslate2
                equivalent (sampling) is refused by name.

        Returns:
            ``(hypotheses, scores)``: for each input a list of ``num_return``
            id lists (EOS included when the hypothesis ended with it) and a
            float array ``(num_return,)`` of GNMT-normalized log-probs.
        """
        options = (options or DecodeOptions()).replace(**option_overrides)
        passed = _passed_options(options)
        beam_size, alpha, num_return = options.beam_size, options.alpha, options.num_return
        max_extra_length = options.max_extra_length
        sources = self._source_pieces(token_ids)
        # Longest first, so that each batch's length limit is close to each
        # of its sources'.
        order = sorted(range(len(sources)), key=lambda i: -len(sources[i]))
        hypotheses = [None] * len(sources)
        scores = [None] * len(sources)
        patience = self.patience if beam_size > 1 else 1.0
        num_hypotheses = max(beam_size, int(beam_size * patience))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            limit = max(len(sources[i]) for i in rows) + max_extra_length
            limit = min(limit, self.max_positions)
            results = self.translator.translate_batch(
                [sources[i] for i in rows],
                beam_size=beam_size,
                num_hypotheses=num_hypotheses,
                length_penalty=alpha,
                patience=patience,
                return_scores=True,
                return_end_token=True,
                # Here EOS may end an output of min_length tokens (EOS
                # included); CTranslate2 counts the tokens before EOS.
                min_decoding_length=max(options.min_length - 1, 0),
                max_decoding_length=limit,
                max_input_length=0,
                **passed,
            )
            ranked = self._rerank(results, alpha, num_return)
            for i, (row_hypotheses, row_scores) in zip(rows, ranked):
                hypotheses[i] = row_hypotheses
                scores[i] = row_scores
        return hypotheses, scores

    def _rerank(self, results, alpha, num_return):
        """``[(ids lists, float32 scores)]``: each result's ``num_return``
        best hypotheses by GNMT-normalized log-probability.

        CTranslate2's scores are ``log P / |Y| ** alpha``; multiplied back by
        ``|Y| ** alpha`` they are log-probabilities, divided by
        `keras_transformer.decoding.search.length_penalty` (one call for all
        of the results' hypotheses).
        """
        hypotheses = [
            [[self._ids[t] for t in tokens] for tokens in result.hypotheses]
            for result in results
        ]
        lengths = np.array([len(ids) for row in hypotheses for ids in row], np.float64)
        raw_scores = np.array(
            [score for result in results for score in result.scores], np.float64
        )
        penalties = keras.ops.convert_to_numpy(length_penalty(lengths, alpha))
        normalized = raw_scores * lengths**alpha / penalties
        ranked = []
        start = 0
        for row in hypotheses:
            row_scores = normalized[start : start + len(row)]
            start += len(row)
            best = sorted(range(len(row)), key=lambda j: -row_scores[j])[:num_return]
            ranked.append(
                ([row[j] for j in best], np.array([row_scores[j] for j in best], np.float32))
            )
        return ranked

    def score(self, source_ids, target_ids):
        """Per-token log-probabilities of given targets (`score_batch`).

        Args:
            source_ids: list of id lists, without EOS (appended, as the
                `Translator` does).
            target_ids: list of id lists, without BOS or EOS.

        Returns:
            A list of float32 arrays, one per pair: ``log P(y_t | y_<t, x)``
            of each target token and then of EOS, as
            `keras_transformer.decoding.forced.token_log_probs` gives for the
            target with EOS appended.
        """
        if len(source_ids) != len(target_ids):
            raise ValueError(
                "score needs one target per source. Received "
                f"{len(source_ids)} sources and {len(target_ids)} targets"
            )
        results = self.translator.score_batch(
            self._source_pieces(source_ids),
            [[self._pieces[int(i)] for i in ids] for ids in target_ids],
            max_batch_size=self.batch_size,
            max_input_length=0,
        )
        return [np.asarray(result.log_probs, np.float32) for result in results]

    # --- text level ---

    def detokenize(self, ids):
        """Text of one id sequence, cut at EOS; PAD and BOS dropped, ids past
        the tokenizer read as UNK (as `Translator`)."""
        size = self.processor.get_piece_size()
        kept = []
        for token in ids:
            if token == EOS_ID:
                break
            if token not in (PAD_ID, BOS_ID):
                kept.append(token if token < size else UNK_ID)
        return self.processor.decode(kept)

    def translate(self, sentences, options=None, return_scores=False, **option_overrides):
        """Translates a list of str, as `keras_transformer.Translator.translate`
        (``options`` and ``option_overrides`` as in `generate`)."""
        if isinstance(sentences, str):
            raise TypeError("translate expects a list of str, not a single str.")
        options = (options or DecodeOptions()).replace(**option_overrides)
        token_ids = self.source_processor.encode(list(sentences), out_type=int)
        hypotheses, scores = self.generate(token_ids, options)
        num_return = options.num_return
        texts = [[self.detokenize(ids) for ids in row] for row in hypotheses]
        scores = [[float(s) for s in row] for row in scores]
        if num_return == 1:
            texts = [t[0] for t in texts]
            scores = [s[0] for s in scores]
        return (texts, scores) if return_scores else texts
