"""A small Transformer trained a few seconds on the default task (its beams
end with EOS), shared by the export tests that compare an exported model's
scores and translations with the `Translator`'s."""

import itertools

import keras
import numpy as np

from keras_transformer import Transformer
from keras_transformer.data.default_task import default_task_splits
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.special_tokens import BOS_ID, EOS_ID

VOCABULARY_SIZE = 64
LENGTH = 24  # longer than every tokenized number (<= 23 pieces)


def task(num_test):
    """``(tokenizer, train pairs, test pairs)`` of the default task."""
    splits = default_task_splits(seed=0, num_train=2000, num_valid=0, num_test=num_test)
    source, target = splits["train"]
    tokenizer = SubwordTokenizer.train(
        itertools.chain(source, target), vocabulary_size=VOCABULARY_SIZE
    )
    return tokenizer, splits["train"], splits["test"]


def id_arrays(tokenizer, sources, targets, length=LENGTH):
    """Encoder ids (EOS-terminated), decoder inputs (BOS first) and labels."""
    encoder = np.zeros((len(sources), length), "int32")
    decoder = np.zeros((len(sources), length), "int32")
    labels = np.zeros((len(sources), length), "int32")
    pairs = zip(tokenizer.encode(sources), tokenizer.encode(targets))
    for row, (source, target) in enumerate(pairs):
        source, target = source + [EOS_ID], target + [EOS_ID]
        encoder[row, : len(source)] = source
        labels[row, : len(target)] = target
        decoder[row, : len(target)] = [BOS_ID] + target[:-1]
    return encoder, decoder, labels


def trained_model(tokenizer, pairs, seed, **architecture):
    """A 2-layer, 32-wide `Transformer` (``architecture`` overrides its
    options) fitted three epochs on ``pairs`` (sources, targets)."""
    keras.utils.set_random_seed(seed)
    model = Transformer(
        vocabulary_size=VOCABULARY_SIZE, num_layers=2, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0, **architecture,
    )
    model.compile(optimizer=keras.optimizers.Adam(5e-3), loss=LabelSmoothedCrossEntropy(0.1))
    encoder, decoder, labels = id_arrays(tokenizer, *pairs)
    model.fit(
        {"encoder_token_ids": encoder, "decoder_token_ids": decoder}, labels,
        batch_size=100, epochs=3, verbose=0,
    )
    return model
