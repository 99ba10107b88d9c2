"""Forced decoding through a `Translator`: the model's scores of given
translations (`score`, `score_token_ids`), the alignments of
``translate(..., return_alignments=True)`` and `attention_weights`, each
compiled once per kind and batched by length like the search.

`TranslatorForcedDecoding` is a mixin of `Translator` (as Keras' ``Model``
takes its training methods from ``Trainer``).
"""

import keras
import numpy as np

from keras_transformer.decoding.backends import compile_for_backend
from keras_transformer.decoding.ensemble import Ensemble
from keras_transformer.decoding.forced import alignments, token_log_probs
from keras_transformer.decoding.sources import prepare_sources, source_limit
from keras_transformer.layers.token_checks import validate_token_ids
from keras_transformer.models.transformer.translator_batches import batch_bucket, round_up
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID

if keras.config.backend() == "tensorflow":
    from keras_transformer.utils.tensorflow_devices import tf
else:  # Only the TensorFlow backend's paths use TensorFlow.
    tf = None


class TranslatorForcedDecoding:
    """`Translator`'s forced decoding: scores, alignments, attention."""

    def _attention_scores(self, encoder_token_ids, decoder_token_ids):
        # JAX runs eager ops one compiled kernel at a time; one jitted call is
        # much faster there. Elsewhere eager is fine (and never retraces).
        if self._attention_function is None:
            function = self.model.attention_scores
            if keras.config.backend() != "tensorflow":
                function = compile_for_backend(self.model, function)
            self._attention_function = function
        return self._attention_function(encoder_token_ids, decoder_token_ids)

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
                batch = batch_bucket(len(rows), self.batch_size)
            source_length = round_up(max(min(len(source_ids[i]), keep) for i in rows) + 1, bucket)
            target_length = round_up(max(len(target_ids[i]) for i in rows), bucket)
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
