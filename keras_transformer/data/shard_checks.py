"""The checks of a prepared corpus before it is read (format in
`keras_transformer.data.shards`): its manifest's format and version, and
every file the manifest lists (present, of its dtype, shape and size, and
of its CRC-32 or SHA-256), each error naming the file.
"""

import hashlib
import os

import numpy as np

from keras_transformer.data.shard_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILENAME,
    SHARD_PARTS,
    file_crc32,
    shard_path,
)
from keras_transformer.utils.file_io import read_json


def _npy_header(path):
    """``(shape, dtype, data_offset)`` of a ``.npy`` file, from its header."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        return shape, dtype, f.tell()


def _resume_hint(path, manifest):
    """How to resume an interrupted preparation of ``path``."""
    inputs = manifest.get("inputs") or {}
    settings = manifest.get("settings") or {}
    if not inputs.get("source"):
        return "prepare it again with the same arguments to resume it."
    command = ["keras-transformer preprocess --train-src", *inputs["source"]]
    command += ["--train-tgt", *inputs["target"], "--output", path]
    if settings.get("vocabulary"):
        command += ["--vocabulary", settings["vocabulary"]]
    elif settings.get("vocabulary_size"):
        command += ["--vocabulary-size", str(settings["vocabulary_size"])]
    command += ["--shard-size", str(manifest["shard_size"])]
    if settings.get("seed") is not None:
        command += ["--seed", str(settings["seed"])]
    return "run the same command again to resume it: " + " ".join(command)


def read_manifest(directory):
    """The manifest of the prepared corpus in ``directory``, checked to be
    of this format and version; None when there is no ``manifest.json``.

    Raises:
        ValueError: naming the file: it is not JSON, not a prepared
            corpus' manifest, or of another format version.
    """
    manifest_path = os.path.join(os.fspath(directory), MANIFEST_FILENAME)
    if not os.path.isfile(manifest_path):
        return None
    manifest = read_json(manifest_path, "manifest of the prepared corpus")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise ValueError(
            f"{manifest_path!r} is not the manifest of a prepared corpus "
            f"(format {found!r}, expected {FORMAT_NAME!r})."
        )
    if manifest.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{manifest_path!r} has format version {manifest.get('version')!r}; "
            f"this version of keras_transformer reads version {FORMAT_VERSION}."
        )
    return manifest


def check_files(directory, manifest, verify=True):
    """Checks the files of the shards ``manifest`` lists, and ``vocab.spm``.

    Every shard file must exist with the dtype, shape and size the manifest
    gives; with ``verify`` its CRC-32 too (which reads every file once).

    Raises:
        ValueError: naming the file missing, truncated or corrupt, or the
            ``vocab.spm`` whose SHA-256 is not the manifest's.
    """
    directory = os.fspath(directory)
    vocabulary_path = os.path.join(directory, manifest["vocabulary"]["file"])
    dtype = np.dtype(manifest["dtype"])
    for entry in manifest["shards"]:
        expected = {
            "src": ((int(entry["num_source_tokens"]),), dtype),
            "tgt": ((int(entry["num_target_tokens"]),), dtype),
            "idx": ((int(entry["num_pairs"]) + 1, 2), np.dtype(np.int64)),
        }
        for part in SHARD_PARTS:
            file = shard_path(directory, entry["name"], part)
            if not os.path.isfile(file):
                raise ValueError(
                    f"The shard file {file!r} of the prepared corpus is missing."
                )
            try:
                shape, file_dtype, offset = _npy_header(file)
            except (OSError, ValueError) as error:
                raise ValueError(
                    f"The shard file {file!r} is corrupt (bad .npy header): {error}"
                ) from error
            shape_wanted, dtype_wanted = expected[part]
            if shape != shape_wanted or file_dtype != dtype_wanted:
                raise ValueError(
                    f"The shard file {file!r} holds {file_dtype} {shape}, but "
                    f"the manifest says {dtype_wanted} {shape_wanted} (corrupt "
                    "or from another preparation)."
                )
            size = offset + int(np.prod(shape)) * file_dtype.itemsize
            actual = os.path.getsize(file)
            if actual != size:
                raise ValueError(
                    f"The shard file {file!r} is truncated or corrupt: "
                    f"{actual} bytes, expected {size}."
                )
            if verify and file_crc32(file) != entry["crc32"][part]:
                raise ValueError(
                    f"The shard file {file!r} is corrupt: its CRC-32 differs "
                    "from the one recorded when it was written."
                )
    if not os.path.isfile(vocabulary_path):
        raise ValueError(
            f"The vocabulary {vocabulary_path!r} of the prepared corpus is missing."
        )
    with open(vocabulary_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != manifest["vocabulary"]["sha256"]:
        raise ValueError(
            f"The vocabulary {vocabulary_path!r} is not the one the ids "
            "of the prepared corpus come from (its SHA-256 differs from the "
            "manifest's)."
        )
    source = manifest.get("source_vocabulary")
    if source:
        path = os.path.join(directory, source["file"])
        if not os.path.isfile(path):
            raise ValueError(f"The source vocabulary {path!r} of the prepared corpus is missing.")
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != source["sha256"]:
                raise ValueError(
                    f"The source vocabulary {path!r} is not the one the source ids "
                    "of the prepared corpus come from (its SHA-256 differs from "
                    "the manifest's)."
                )
