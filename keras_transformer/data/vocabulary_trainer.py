"""The vocabulary trainer of `prepare_corpus`, run as a child process:
``python -m keras_transformer.data.vocabulary_trainer SETTINGS``.

It reads UTF-8 sentences, one per line, from stdin, learns the vocabulary
with `learn_vocabulary` and writes the model proto to stdout. When
SentencePiece refuses the text it writes the error message as JSON and exits
with `TRAINING_REFUSED`. ``SETTINGS`` is JSON: ``vocabulary_size``,
``seed`` and the other `learn_vocabulary` options. Running in a child, the
sentence sample SentencePiece holds (gigabytes at WMT's scale) is freed with
the child and never adds to the memory of the process that trains next.
"""

import json
import sys

from keras_transformer.models.transformer.sentencepiece_vocabulary import (
    learn_vocabulary,
)

# The exit code when SentencePiece refuses the text.
TRAINING_REFUSED = 3


def _sentences(stream):
    for line in stream:
        yield line[:-1].decode("utf-8")


def main(argv=None):
    settings = json.loads((sys.argv[1:] if argv is None else argv)[0])
    try:
        proto = learn_vocabulary(_sentences(sys.stdin.buffer), **settings)
    except ValueError as error:
        sys.stdout.write(json.dumps({"error": str(error)}))
        return TRAINING_REFUSED
    sys.stdout.buffer.write(proto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
