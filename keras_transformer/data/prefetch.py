"""A background thread that runs an iterator ahead of its consumer.

`Prefetcher` iterates over an iterable in a daemon thread and hands its
items over through a bounded queue (``depth`` items): while the training
loop runs a step on the accelerator, the next batches are being built. The
producer's exception is raised in the consumer, at the item where it
happened; `close` (also on garbage collection, at the end of the items and
at interpreter exit) stops the thread without waiting for the iterable to
finish. ``wait_seconds`` counts the time the consumer spent waiting for an
item: near zero when the producer keeps ahead.

Example:

```python
for inputs, labels in Prefetcher(stream.batches(), depth=8):
    ...
```
"""

import atexit
import queue
import threading
import time
import weakref

DEFAULT_DEPTH = 8
# How often a blocked producer or consumer looks whether it should stop.
_POLL_SECONDS = 0.1
_ITEM, _END, _ERROR = range(3)
# The stop events of the running producers, set at interpreter exit.
_RUNNING = weakref.WeakSet()


class _Stop:
    """A producer's stop flag (weak-referenceable, unlike `threading.Event`
    on every Python version)."""

    def __init__(self):
        self.event = threading.Event()


def _produce(iterable, items, stop):
    """The thread's loop: puts ``(kind, value)`` on ``items`` until the
    iterable ends, raises or ``stop`` is set."""

    def put(entry):
        while not stop.event.is_set():
            try:
                items.put(entry, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    iterator = None
    try:
        iterator = iter(iterable)
        for item in iterator:
            if not put((_ITEM, item)):
                return
        put((_END, None))
    except BaseException as error:  # noqa: BLE001 - handed to the consumer
        put((_ERROR, error))
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


class Prefetcher:
    """Iterates over ``iterable`` in a background thread, ``depth`` items
    ahead.

    Args:
        iterable: any iterable (a generator of batches).
        depth: int >= 1. Items built ahead at most. Defaults to 8.
        name: str. The thread's name.

    Attributes:
        wait_seconds: float. Time `__next__` spent waiting for the producer.
        num_waits: int. Items that were not ready when asked for.
        num_items: int. Items handed over.
    """

    def __init__(self, iterable, depth=DEFAULT_DEPTH, name="keras-transformer-prefetch"):
        # Done until the thread exists: `__del__` of an instance whose
        # arguments were refused has nothing to close.
        self._done = True
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth must be an int >= 1. Received: depth={depth!r}")
        self._items = queue.Queue(maxsize=depth)
        self._stop = _Stop()
        self._done = False
        self.wait_seconds = 0.0
        self.num_waits = 0
        self.num_items = 0
        self._thread = threading.Thread(
            target=_produce, args=(iterable, self._items, self._stop), name=name,
            daemon=True,
        )  # fmt: skip
        _RUNNING.add(self._stop)
        self._thread.start()

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        try:
            kind, value = self._items.get_nowait()
        except queue.Empty:
            kind, value = self._wait()
        if kind == _ITEM:
            self.num_items += 1
            return value
        self.close()
        if kind == _ERROR:
            raise value
        raise StopIteration

    def _wait(self):
        start = time.perf_counter()
        self.num_waits += 1
        try:
            while True:
                try:
                    return self._items.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    if not self._thread.is_alive() and self._items.empty():
                        return _ERROR, RuntimeError(
                            "The prefetching thread ended without a result."
                        )
        finally:
            self.wait_seconds += time.perf_counter() - start

    def close(self):
        """Stops the producer thread (it finishes the item it is building)."""
        if self._done:
            return
        self._done = True
        self._stop.event.set()
        # Unblock a producer waiting for room.
        while True:
            try:
                self._items.get_nowait()
            except queue.Empty:
                break

    def __del__(self):
        self.close()


@atexit.register
def _stop_all():
    for stop in list(_RUNNING):
        stop.event.set()
