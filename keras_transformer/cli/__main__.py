"""``python -m keras_transformer.cli``: the ``keras-transformer`` command."""

import sys

from keras_transformer.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
