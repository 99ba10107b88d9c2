"""Whether a corpus preparation (`prepare_corpus`) resumes or reuses what
its output directory holds: the manifest of the same inputs and settings,
checked; an error naming the directory and what differs otherwise.
"""

import hashlib
import os

from keras_transformer.data.shard_checks import check_files, read_manifest
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)


def _existing_manifest(output_dir, inputs, shard_size, settings, proto, source_proto=None):
    """The manifest of a preparation of the same corpus with the same
    settings in ``output_dir`` (checked), or None when there is none.

    Raises a ValueError naming ``output_dir`` and what differs when it holds
    another preparation, or files that are not a prepared corpus.
    """
    if not os.path.exists(output_dir):
        return None
    if not os.path.isdir(output_dir):
        raise ValueError(f"output_dir {output_dir!r} exists and is not a directory.")
    manifest = read_manifest(output_dir)
    if manifest is None:
        others = [
            name
            for name in os.listdir(output_dir)
            if not (
                name in (VOCABULARY_FILENAME, SOURCE_VOCABULARY_FILENAME)
                or name.startswith((".tmp-", "shard-"))
            )
        ]
        if others:
            raise ValueError(
                f"output_dir {output_dir!r} is neither empty nor a prepared corpus "
                f"(it holds {', '.join(sorted(others)[:3])}): choose another "
                "directory."
            )
        return None
    differences = []
    if manifest.get("inputs") != inputs:
        differences.append(_input_difference(manifest.get("inputs"), inputs))
    if manifest.get("shard_size") != shard_size:
        differences.append(
            f"shard_size {manifest.get('shard_size')} instead of {shard_size}"
        )
    previous = manifest.get("settings") or {}
    for key in ("languages", "language_tag"):
        if previous.get(key) != settings.get(key):
            differences.append(f"{key}={previous.get(key)!r} instead of {settings.get(key)!r}")
    if proto is not None:
        digest = hashlib.sha256(proto).hexdigest()
        if digest != manifest["vocabulary"]["sha256"]:
            differences.append(f"another vocabulary (not {settings['vocabulary']!r})")
        previous_source = (manifest.get("source_vocabulary") or {}).get("sha256")
        source = hashlib.sha256(source_proto).hexdigest() if source_proto else None
        if previous_source != source:
            differences.append(
                f"another source vocabulary (not {settings.get('source_vocabulary')!r})"
            )
    else:
        for key in ("vocabulary_size", "seed", "input_sentence_size"):
            if previous.get(key) != settings[key]:
                differences.append(
                    f"{key}={previous.get(key)!r} instead of {settings[key]!r}"
                )
    if differences:
        state = "prepared" if manifest.get("complete") else "partly prepared"
        raise ValueError(
            f"output_dir {output_dir!r} holds a corpus {state} with other "
            f"settings: {'; '.join(differences)}. Nothing was changed: choose "
            "another directory, or delete this one to prepare it again."
        )
    check_files(output_dir, manifest, verify=not manifest["complete"])
    return manifest


def _input_difference(previous, inputs):
    """What differs between the input files of two preparations, in words."""
    if not previous:
        return "no recorded input files"
    for side in ("source", "target"):
        if previous.get(side) != inputs[side]:
            return f"the {side} files {previous.get(side)} instead of {inputs[side]}"
    changed = [
        path
        for path, old, new in zip(
            inputs["source"] + inputs["target"],
            [size[0] for size in previous["bytes"]]
            + [size[1] for size in previous["bytes"]],
            [size[0] for size in inputs["bytes"]]
            + [size[1] for size in inputs["bytes"]],
        )
        if old != new
    ]
    return f"input files changed since (their size): {', '.join(changed)}"
