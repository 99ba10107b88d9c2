"""The names of the prepared-corpus format (`keras_transformer.data.shards`
describes it): its format name and version, the manifest's file name, the
files of a shard, the ids' dtype, and the CRC-32 every file is recorded
with.
"""

import os
import zlib

FORMAT_NAME = "keras-transformer-corpus"


FORMAT_VERSION = 1


MANIFEST_FILENAME = "manifest.json"


# The suffix of each file of a shard, and its key in the shard's "crc32".
SHARD_PARTS = ("src", "tgt", "idx")


SIDES = ("source", "target")


_CHUNK_BYTES = 1 << 24


def shard_name(index):
    """The name of shard ``index`` (``"shard-00000"``)."""
    return f"shard-{index:05d}"


def shard_path(directory, name, part):
    """The file of one part (``"src"``, ``"tgt"``, ``"idx"``) of a shard."""
    return os.path.join(directory, f"{name}.{part}.npy")


def ids_dtype(vocabulary_size):
    """``"uint16"`` when every id of the vocabulary fits, else ``"int32"``."""
    return "uint16" if vocabulary_size <= 65536 else "int32"


def file_crc32(path):
    """The CRC-32 of a file's bytes."""
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK_BYTES):
            crc = zlib.crc32(chunk, crc)
    return crc
