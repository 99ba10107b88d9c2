"""How a `Translator` batches sentences: batch sizes and lengths rounded
to a few shapes (few compilations), a shape already compiled reused where
every new one costs a compilation, constraint arrays padded alike, and
outputs cut at EOS.

`TranslatorBatches` is a mixin of `Translator` (as Keras' ``Model`` takes
its training methods from ``Trainer``): it reads the translator's
``length_bucket``, ``max_positions`` and ``generator``.
"""

import math

import numpy as np

from keras_transformer.special_tokens import EOS_ID, PAD_ID


def round_up(value, multiple):
    return max(multiple, -(-value // multiple) * multiple)


def batch_bucket(size, batch_size):
    """Smallest power of two >= size, capped at batch_size."""
    return min(batch_size, 1 << max(0, math.ceil(math.log2(max(size, 1)))))


def constraint_array(constraints, rows, batch):
    """The ``(batch, phrases, phrase_length)`` PAD-padded constraints of a
    batch's ``rows`` (sizes rounded up to a few shapes), or None when none
    of them has a constraint (the unconstrained search)."""
    if constraints is None or not any(constraints[i] for i in rows):
        return None
    count = round_up(max(len(constraints[i]) for i in rows), 2)
    width = round_up(max(len(p) for i in rows for p in constraints[i]), 4)
    array = np.full((batch, count, width), PAD_ID, np.int32)
    for row, i in enumerate(rows):
        for j, phrase in enumerate(constraints[i]):
            array[row, j, : len(phrase)] = phrase
    return array


def until_eos(sequence):
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


class TranslatorBatches:
    """`Translator`'s shape buckets."""

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
        source_length = round_up(source_length, bucket)
        max_length = source_length - 1 + max_extra_length
        if capped:
            max_length = min(max_length, round_up(max_limit, bucket))
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
