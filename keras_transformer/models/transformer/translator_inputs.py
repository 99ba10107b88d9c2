"""The inputs of a `Translator` call, checked and prepared before any
decoding: the `DecodeOptions` of the call, source ids (truncation),
target prefixes, constraint phrases and language tags; and the output
text (detokenization).

`TranslatorInputs` is a mixin of `Translator` (as Keras' ``Model`` takes
its training methods from ``Trainer``): its methods read the translator's
``model``, ``tokenizer``, ``max_positions`` and language settings.
"""

import warnings

import numpy as np

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.decoding.sources import source_limit
from keras_transformer.layers.token_checks import validate_token_ids
from keras_transformer.special_tokens import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    UNK_ID,
    target_language_ids,
)


class TranslatorInputs:
    """`Translator`'s input checks, language tags and detokenization."""

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
