"""`keras_transformer.training.host_memory`: freed host memory kept in the process."""

import subprocess
import sys
import textwrap

import pytest

from keras_transformer.training.config import TrainConfig
from keras_transformer.training.config import parse_overrides
from keras_transformer.training.host_memory import _glibc_mallopt
from keras_transformer.training.host_memory import resolve_retain_host_memory

# In a child process (the setting is process-wide): where does glibc put a
# 64 MiB block, before and after `retain_freed_memory`? Before, above the
# mmap threshold, in a mapping of its own; after, inside the [heap] (brk)
# region, and a freed block is reused rather than unmapped.
PROBE = textwrap.dedent(
    """
    import ctypes, json
    from keras_transformer.training.host_memory import retain_freed_memory
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    def in_heap(address):
        for line in open("/proc/self/maps"):
            if line.rstrip().endswith("[heap]"):
                low, high = (int(x, 16) for x in line.split()[0].split("-"))
                if low <= address < high:
                    return True
        return False

    size = 64 << 20
    before = libc.malloc(size)
    before_in_heap = in_heap(before)
    libc.free(before)
    applied, reason = retain_freed_memory()
    first = libc.malloc(size)
    first_in_heap = in_heap(first)
    libc.free(first)
    second = libc.malloc(size)
    print(json.dumps({"applied": applied, "reason": reason, "before_in_heap": before_in_heap,
                      "after_in_heap": first_in_heap, "reused": second == first}))
    """
)


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc on Linux")
def test_large_blocks_come_from_the_heap_and_are_reused_after_retain_freed_memory():
    import json

    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["applied"] is True, probe["reason"]
    assert "M_MMAP_MAX=0" in probe["reason"]
    assert probe["before_in_heap"] is False  # glibc's default: a mapping of its own
    assert probe["after_in_heap"] is True
    assert probe["reused"] is True


def test_auto_is_on_for_tensorflow_only_and_booleans_win():
    assert resolve_retain_host_memory("auto", "tensorflow") is True
    assert resolve_retain_host_memory("auto", "jax") is False
    assert resolve_retain_host_memory("auto", "torch") is False
    assert resolve_retain_host_memory(True, "jax") is True
    assert resolve_retain_host_memory(False, "tensorflow") is False


def test_config_key_takes_true_false_or_auto_and_names_a_bad_value():
    assert TrainConfig().retain_host_memory == "auto"
    assert parse_overrides(["retain_host_memory=false"]).retain_host_memory is False
    assert parse_overrides(["retain_host_memory=true"]).retain_host_memory is True
    with pytest.raises(ValueError, match="retain_host_memory"):
        TrainConfig(retain_host_memory="always").resolved()
