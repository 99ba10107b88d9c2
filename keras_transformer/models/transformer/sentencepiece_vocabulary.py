"""`learn_vocabulary`: the one SentencePiece trainer of the package.

`TransformerTokenizer.train` (and so ``train``) learns its vocabulary
here, and the vocabulary child process of
`keras_transformer.data.prepare_corpus` (and so ``preprocess``),
`keras_transformer.data.vocabulary_trainer_process`, trains
SentencePiece with the same `sentencepiece_trainer_arguments`: BPE with the
reserved ids 0-3 of `keras_transformer.special_tokens`, so that the same
text gives the same vocabulary.
"""

import io
import os
import re

import sentencepiece as spm

from keras_transformer.special_tokens import (
    BOS_ID,
    BOS_PIECE,
    EOS_ID,
    EOS_PIECE,
    PAD_ID,
    PAD_PIECE,
    UNK_ID,
    UNK_PIECE,
    check_languages,
    language_tag_piece,
)

_TOO_SMALL = re.compile(r"smaller than required_chars\. (\d+) vs (\d+)")
_TOO_LARGE = re.compile(r"Vocabulary size too high \((\d+)\).*<= (\d+)")


def learn_vocabulary(sentences, vocabulary_size, seed=0, **options):
    """The serialized SentencePiece model (bytes) learned from ``sentences``.

    Args:
        sentences: iterable of str. Training text; for a shared vocabulary
            source and target sentences together. Empty strings are skipped.
        vocabulary_size: int. Number of pieces, including the 4 reserved.
        seed: int or None. Seed of SentencePiece's sampler. Defaults to
            ``0``.
        **options: the other arguments of `sentencepiece_trainer_arguments`
            (``model_type``, ``character_coverage``, ``input_sentence_size``,
            ``shuffle_input_sentence``, ``normalization_rule_name``,
            ``num_threads``, ``verbose``, ``languages``).

    Raises:
        ValueError: an argument is invalid, or SentencePiece refuses the
            text (`training_error`: what to change).

    Example:

    ```python
    proto = learn_vocabulary(["a b c", "a c"] * 50, 16)
    ```
    """
    arguments = sentencepiece_trainer_arguments(vocabulary_size, **options)
    if seed is not None:
        spm.set_random_generator_seed(seed)
    num_sentences = 0

    def non_empty():
        nonlocal num_sentences
        for sentence in sentences:
            if sentence:
                num_sentences += 1
                yield sentence

    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=non_empty(), model_writer=model, **arguments
        )
    except RuntimeError as error:
        raise training_error(error, vocabulary_size, num_sentences) from error
    return model.getvalue()


def sentencepiece_trainer_arguments(
    vocabulary_size,
    model_type="bpe",
    character_coverage=1.0,
    input_sentence_size=2_000_000,
    shuffle_input_sentence=True,
    normalization_rule_name="nmt_nfkc",
    num_threads=None,
    verbose=False,
    languages=(),
):
    """The keyword arguments of ``sentencepiece.SentencePieceTrainer.train``
    for a vocabulary of this package (BPE, reserved ids 0-3).

    The arguments are those of `TransformerTokenizer.train`. The seed is not
    a trainer argument: set it with ``sentencepiece.set_random_generator_seed``.
    ``languages``: the target languages of a multilingual model; each gets a
    reserved tag piece (`keras_transformer.special_tokens.language_tag_piece`),
    a control symbol with an id right after the reserved ids 0-3.

    Raises:
        ValueError: ``vocabulary_size`` is not an int above the 4 reserved
            pieces, or ``model_type`` is unknown.
    """
    if not isinstance(vocabulary_size, int) or vocabulary_size <= 4:
        raise ValueError(
            "vocabulary_size must be an int greater than the 4 reserved "
            f"pieces. Received: vocabulary_size={vocabulary_size!r}"
        )
    if model_type not in ("bpe", "unigram"):
        raise ValueError(
            "model_type must be 'bpe' or 'unigram'. "
            f"Received: model_type={model_type!r}"
        )
    return {
        "vocab_size": vocabulary_size,
        "model_type": model_type,
        "character_coverage": character_coverage,
        "input_sentence_size": input_sentence_size,
        "shuffle_input_sentence": shuffle_input_sentence,
        "normalization_rule_name": normalization_rule_name,
        "pad_id": PAD_ID,
        "unk_id": UNK_ID,
        "bos_id": BOS_ID,
        "eos_id": EOS_ID,
        "pad_piece": PAD_PIECE,
        "unk_piece": UNK_PIECE,
        "bos_piece": BOS_PIECE,
        "eos_piece": EOS_PIECE,
        "num_threads": num_threads or os.cpu_count() or 1,
        "minloglevel": 0 if verbose else 2,
        **(
            {"control_symbols": [language_tag_piece(lang) for lang in check_languages(languages)]}
            if languages
            else {}
        ),
    }


def training_error(error, vocabulary_size, num_sentences):
    """The ValueError of a failed SentencePiece training (``error``, its
    RuntimeError), saying what to change."""
    message = str(error)
    if num_sentences == 0:
        return ValueError("Cannot train a vocabulary: no non-empty sentences.")
    too_small = _TOO_SMALL.search(message)
    if too_small:
        return ValueError(
            f"vocabulary_size={vocabulary_size} is too small for this corpus: "
            f"its {int(too_small.group(2)) - 4} characters plus the 4 reserved "
            f"pieces need at least {too_small.group(2)}. Increase "
            "vocabulary_size or lower character_coverage."
        )
    too_large = _TOO_LARGE.search(message)
    if too_large:
        return ValueError(
            f"vocabulary_size={vocabulary_size} is too large for this corpus "
            f"({num_sentences} sentences): SentencePiece can build at most "
            f"{too_large.group(2)} pieces from it. Use a smaller "
            "vocabulary_size or more text."
        )
    return ValueError(f"SentencePiece training failed: {message}")
