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


def marian_logits_error(model, marian_directory, tokenizer, sources):
    """The largest difference between ``model``'s logits and those of the
    ``MarianMTModel`` exported to ``marian_directory``, over the real
    positions of ``sources`` (decoder inputs: BOS and up to five of the
    source's own pieces). Marian's ids: EOS 0, UNK 1, the pieces, then PAD
    and BOS last (`VOCABULARY_SIZE` ids)."""
    import torch
    import transformers

    from keras_transformer.special_tokens import PAD_ID

    source_ids = [ids + [EOS_ID] for ids in tokenizer.encode(sources)]
    width = max(map(len, source_ids))
    encoder = np.array([ids + [PAD_ID] * (width - len(ids)) for ids in source_ids], "int32")
    decoder = np.array([[BOS_ID] + ids[:5] + [PAD_ID] * (5 - len(ids[:5]))
                        for ids in tokenizer.encode(sources)], "int32")  # fmt: skip
    ours = keras.ops.convert_to_numpy(
        model({"encoder_token_ids": encoder, "decoder_token_ids": decoder})
    )
    marian_ids = np.vectorize(
        lambda i: {PAD_ID: VOCABULARY_SIZE - 2, 1: 1, BOS_ID: VOCABULARY_SIZE - 1, EOS_ID: 0}
        .get(i, i - 2)
    )
    hf_model = transformers.MarianMTModel.from_pretrained(marian_directory).eval()
    with torch.no_grad():
        theirs = hf_model(
            input_ids=torch.tensor(marian_ids(encoder)),
            attention_mask=torch.tensor(encoder != PAD_ID),
            decoder_input_ids=torch.tensor(marian_ids(decoder)),
        ).logits.numpy()
    order = [EOS_ID, 1] + list(range(4, VOCABULARY_SIZE)) + [PAD_ID, BOS_ID]
    return np.abs(theirs - ours[..., order])[decoder != PAD_ID].max()
