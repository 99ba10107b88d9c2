"""The background thread that builds batches ahead of ``fit``
(`keras_transformer.data.prefetch.Prefetcher`): items in order, bounded
look-ahead, the producer's errors raised in the consumer, and a thread that
stops when the consumer stops."""

import gc
import sys
import threading
import time

import pytest

from keras_transformer.data.prefetch import Prefetcher

pytestmark = pytest.mark.backend_independent


def _count(limit, produced=None, fail_at=None):
    for item in range(limit):
        if item == fail_at:
            raise KeyError(f"item {item}")
        if produced is not None:
            produced.append(item)
        yield item


def _wait_for(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_items_come_in_order_and_at_most_depth_ahead():
    produced = []
    prefetcher = Prefetcher(_count(100, produced), depth=3)
    assert _wait_for(lambda: len(produced) >= 3)
    time.sleep(0.3)
    # The queue holds 3; the thread holds one more, waiting for room.
    assert len(produced) <= 4
    assert list(prefetcher) == list(range(100))
    assert prefetcher.num_items == 100
    assert next(prefetcher, "end") == "end"


def test_the_producers_exception_is_raised_in_the_consumer():
    prefetcher = Prefetcher(_count(10, fail_at=4), depth=2)
    assert [next(prefetcher) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(KeyError, match="item 4"):
        next(prefetcher)
    assert next(prefetcher, "end") == "end"


def test_closing_stops_the_thread_and_the_source():
    closed = threading.Event()

    def endless():
        try:
            item = 0
            while True:
                yield item
                item += 1
        finally:
            closed.set()

    threads = set(threading.enumerate())
    prefetcher = Prefetcher(endless(), depth=2)
    assert next(prefetcher) == 0
    (thread,) = set(threading.enumerate()) - threads
    prefetcher.close()
    assert _wait_for(lambda: not thread.is_alive())
    assert closed.is_set()
    # Dropping an unclosed prefetcher stops its thread too.
    prefetcher = Prefetcher(endless(), depth=2)
    next(prefetcher)
    (thread,) = set(threading.enumerate()) - threads
    del prefetcher
    assert _wait_for(lambda: not thread.is_alive())


def test_waits_are_counted_when_the_producer_is_slow():
    def slow():
        for item in range(3):
            time.sleep(0.1)
            yield item

    prefetcher = Prefetcher(slow(), depth=2)
    assert list(prefetcher) == [0, 1, 2]
    assert prefetcher.num_waits >= 1 and prefetcher.wait_seconds > 0.05


def test_depth_must_be_positive(monkeypatch):
    # The refused instance is collected without an error of its own
    # (`__del__` of a half-built instance), which Python would print as
    # "Exception ignored in ...".
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    def refuse():
        with pytest.raises(ValueError, match="depth must be an int >= 1"):
            Prefetcher([], depth=0)

    refuse()
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []
