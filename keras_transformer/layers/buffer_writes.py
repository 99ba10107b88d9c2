"""Writing a decoding step's values into a fixed-size buffer."""

import math

import keras
from keras import ops


def write_along(buffer, update, index, axis):
    """``buffer`` with ``update`` written at positions ``index ...`` of ``axis``.

    ``ops.slice_update(buffer, start, update)`` with ``start`` zero but for
    ``index`` on ``axis``: ``update`` has the buffer's shape except on that
    axis. The key/value caches and the decoder padding mask of incremental
    decoding are written this way at every step.

    Under the TensorFlow backend the write is a scatter of the update's
    rows instead: TensorFlow's ``slice_update`` is XLA's
    ``DynamicUpdateSlice`` op, which a graph without XLA (the SavedModel,
    the TensorFlow `Generator`) runs by compiling it with XLA on demand,
    once per input shape, on the decoding thread. A search whose batch and
    cache lengths change (finished sentences leave the batch, the cache
    grows) paid that compilation at most steps: milliseconds per write, a
    quarter of a decoding step (`benchmarks/saved_model_profile.py`). One
    position (a decoding step) is a ``TensorScatterUpdate`` of its rows
    (the buffer seen as ``(rows, length, rest)``), which writes in place
    where TensorFlow can reuse the buffer and otherwise copies it; a
    select over the whole buffer with the position broadcast took 1.6-2
    times as long at 32 sentences of 4 beams
    (`benchmarks/decode_kernels.py`). Several positions (a forced prefix)
    are a select. Both keep XLA's ops out of the exported graph. JAX and
    torch keep ``slice_update`` (an in-place update under XLA).

    Args:
        buffer: tensor.
        update: tensor of ``buffer``'s rank and dtype; its ``axis``
            dimension (``steps``) fits from ``index``.
        index: int scalar (tensor or Python int).
        axis: int, a non-negative axis.
    """
    rank = len(buffer.shape)
    if keras.config.backend() != "tensorflow":
        start = [0] * rank
        start[axis] = index
        return ops.slice_update(buffer, start, update)
    steps = ops.shape(update)[axis]
    if isinstance(steps, int) and steps == 1:
        return _scatter_position(buffer, update, index, axis)
    length = ops.shape(buffer)[axis]
    positions = ops.arange(length, dtype="int32")
    index = ops.cast(index, "int32")
    written = ops.logical_and(positions >= index, positions < index + steps)
    shape = [1] * rank
    shape[axis] = -1
    if not (isinstance(steps, int) and steps == 1):
        # Several positions at once (a forced prefix): the update moved to
        # its place on the buffer's length. One position broadcasts.
        pad_width = [[0, 0]] * rank
        pad_width[axis] = [index, length - index - steps]
        update = ops.pad(update, pad_width)
    return ops.where(ops.reshape(written, shape), update, buffer)


def _scatter_position(buffer, update, index, axis):
    """`write_along` of one position as a scatter (TensorFlow): the buffer
    as ``(rows, length, rest)``, each row's ``rest`` values at
    ``(row, index)``."""
    shape = ops.shape(buffer)
    tail = buffer.shape[axis + 1:]
    if all(isinstance(size, int) for size in tail):
        rest = math.prod(tail)
    else:
        rest = ops.prod(ops.convert_to_tensor(shape[axis + 1:], "int32"))
    rows_view = ops.reshape(buffer, (-1, shape[axis], rest))
    rows = ops.shape(rows_view)[0]
    positions = ops.full((rows,), ops.cast(index, "int32"), dtype="int32")
    indices = ops.stack([ops.arange(rows, dtype="int32"), positions], axis=1)
    written = ops.scatter_update(rows_view, indices, ops.reshape(update, (rows, rest)))
    return ops.reshape(written, shape)
