"""The vocabulary of a corpus preparation (`prepare_corpus`): a given
``vocab.spm`` read and checked, or one learned with SentencePiece from the
corpus's text (all of it, or a seeded sample) in a child process
(`keras_transformer.data.vocabulary_trainer_process`), whose memory is freed
when it ends.
"""

import itertools
import json
import os
import subprocess
import sys
import time

import numpy as np
import sentencepiece as spm

from keras_transformer.data import vocabulary_trainer_process
from keras_transformer.models.transformer.sentencepiece_vocabulary import training_error
from keras_transformer.special_tokens import RESERVED_PIECES, check_reserved_pieces
from keras_transformer.utils.console import log
from keras_transformer.utils.run_files import VOCABULARY_FILENAME

# Sentences written to the vocabulary trainer at a time.
_PIPE_LINES = 8_192


# The exit code of the trainer when SentencePiece refuses the text.
_TRAINING_REFUSED = 3


def _read_vocabulary(vocabulary, filename=VOCABULARY_FILENAME):
    """``(absolute path, proto bytes)`` of a ``vocab.spm`` (``filename``)
    or a directory holding one, checked to be a SentencePiece model with
    the reserved ids."""
    path = os.fspath(vocabulary)
    if os.path.isdir(path):
        path = os.path.join(path, filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"No SentencePiece model at {path!r} (a {filename} file or a "
            "directory holding one)."
        )
    with open(path, "rb") as f:
        proto = f.read()
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except (RuntimeError, OSError) as error:
        raise ValueError(f"{path!r} is not a SentencePiece model: {error}") from error
    pieces = [processor.id_to_piece(i) for i in range(len(RESERVED_PIECES))]
    check_reserved_pieces(pieces, source=f"The SentencePiece model {path!r}")
    return os.path.abspath(path), proto


def _train_vocabulary(files, arguments, seed, verbose):
    """The proto of a vocabulary learned from ``files`` in a child process."""
    start = time.perf_counter()
    log(
        f"Learning a vocabulary of {arguments['vocab_size']} pieces from at most "
        f"{arguments['input_sentence_size']} sentences (both sides)...",
        verbose,
    )
    settings = json.dumps(
        {"arguments": arguments, "seed": seed, "refused_exit_code": _TRAINING_REFUSED}
    )
    child = subprocess.Popen(
        [sys.executable, "-P", vocabulary_trainer_process.__file__, settings],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None if arguments["minloglevel"] == 0 else subprocess.DEVNULL,
    )
    num_sentences = 0
    try:
        try:
            for text in _vocabulary_text(files, arguments["input_sentence_size"], seed):
                child.stdin.write(("\n".join(text) + "\n").encode("utf-8"))
                num_sentences += len(text)
            child.stdin.close()
        except BrokenPipeError:
            pass  # The trainer stopped early; its exit code says why.
        output = child.stdout.read()
        code = child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if code == _TRAINING_REFUSED:
        failure = json.loads(output.decode("utf-8"))
        raise training_error(
            RuntimeError(failure["error"]),
            arguments["vocab_size"],
            failure["num_sentences"],
        )
    if code != 0:
        why = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        raise RuntimeError(
            f"The SentencePiece vocabulary trainer (a child process) failed ({why}"
            f"{'; out of memory? lower input_sentence_size' if code == -9 else ''})."
        )
    log(
        f"Vocabulary learned from {num_sentences} sentences in "
        f"{time.perf_counter() - start:.1f} s.",
        verbose,
    )
    return output


def _vocabulary_text(files, limit, seed):
    """Blocks (lists of str) of the sentences to learn the vocabulary from:
    every source sentence, then every target sentence, of the pairs with
    text on both sides; or a sample of them when there are more than
    ``limit``.

    The sample is drawn here, not by SentencePiece, whose own sampler
    (``input_sentence_size``) ignores its seed: a sample of ``limit`` of the
    ``2 * num_lines`` sentence positions (source line ``i`` is position
    ``i``, target line ``i`` is ``num_lines + i``), chosen by NumPy from
    ``seed``, the same for the same files and seed. At most ``limit``
    sentences reach SentencePiece, which then keeps them all.
    """
    total = 2 * files.num_lines
    chosen = None
    if 0 < limit < total:
        generator = np.random.default_rng(seed)
        chosen = np.sort(
            generator.choice(total, size=limit, replace=False, shuffle=False)
        )
    for side in (0, 1):
        lines = files.lines()
        position = side * files.num_lines
        while block := list(itertools.islice(lines, _PIPE_LINES)):
            keep = itertools.repeat(True)
            if chosen is not None:
                low, high = np.searchsorted(chosen, [position, position + len(block)])
                keep = np.zeros(len(block), dtype=bool)
                keep[chosen[low:high] - position] = True
            text = [
                pair[side]
                for pair, kept in zip(block, keep)
                if kept and pair[0] and pair[1]
            ]
            position += len(block)
            if text:
                yield text
