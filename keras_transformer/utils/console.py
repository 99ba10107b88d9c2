"""Progress messages of training and of the command line."""


def log(message, verbose):
    """Prints ``message`` (flushed at once, so that it interleaves with
    Keras' progress bars in order) when ``verbose`` is true."""
    if verbose:
        print(message, flush=True)
