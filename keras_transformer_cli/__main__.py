"""``python -m keras_transformer_cli``: the ``keras-transformer`` command,
started as the console script starts it (the library after the arguments)."""

import sys

from keras_transformer_cli import main

if __name__ == "__main__":
    sys.exit(main())
