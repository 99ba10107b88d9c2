"""The SentencePiece vocabulary trainer that `prepare_corpus` runs in a child
process: ``python -P <this file> SETTINGS``.

It reads UTF-8 sentences, one per line, from stdin and writes the model
proto to stdout. When SentencePiece refuses the text (a vocabulary too large
for it, say), it writes the message and the number of sentences read as JSON
and exits with ``settings["refused_exit_code"]``. ``SETTINGS`` is a JSON
object: ``arguments`` (SentencePiece's trainer arguments, from
`sentencepiece_trainer_arguments`), ``seed`` and ``refused_exit_code``.

Why a child process: SentencePiece's trainer keeps every sentence it reads
in memory, and the memory of a child is returned to the system when it
ends, whatever the allocator keeps. Why the file is run by its path and not
with ``python -m keras_transformer.data.vocabulary_trainer_process``: ``-m``
first imports the package (Keras, keras-hub and, where installed,
TensorFlow: seconds and hundreds of MB), while this module imports nothing
but the standard library and SentencePiece, so the child starts in a
fraction of a second and its memory is SentencePiece's own. ``-P`` keeps
this file's folder off ``sys.path``, so no module of the package can shadow
a standard one.
"""

import json
import sys

import sentencepiece as spm


class _ModelWriter:
    """The ``model_writer`` SentencePiece writes the trained proto to."""

    def __init__(self):
        self.parts = []

    def write(self, data):
        self.parts.append(data)


def main(argv, stdin=None, stdout=None):
    """Trains a vocabulary on the lines of ``stdin`` as ``argv[0]`` (the
    settings, JSON) says; returns the process' exit code."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    settings = json.loads(argv[0])
    if settings["seed"] is not None:
        spm.set_random_generator_seed(settings["seed"])
    read = [0]

    def sentences():
        for line in stdin:
            read[0] += 1
            yield line.rstrip(b"\n").decode("utf-8")

    model = _ModelWriter()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=sentences(), model_writer=model, **settings["arguments"]
        )
    except RuntimeError as error:
        stdout.write(json.dumps({"error": str(error), "num_sentences": read[0]}).encode("utf-8"))
        return settings["refused_exit_code"]
    stdout.write(b"".join(model.parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
