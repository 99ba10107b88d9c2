"""Writes the `TrainConfig` reference into docs/training.md.

The reference is generated from the dataclass itself: each field's name,
default and ``metadata["doc"]`` (the same text that ``keras-transformer train
--help`` prints), plus its ``train`` flag (``--name-with-dashes`` and any
extra spellings in ``metadata["flags"]``; fields with ``metadata["cli"] =
False`` have no flag and are set in a config file or with ``--set``).

    python docs/generate_config_reference.py          # rewrite the block
    python docs/generate_config_reference.py --check  # exit 1 if it is stale

Only the block between the two markers below is rewritten;
tests/test_docs.py fails when the committed block differs from what this
script generates.
"""

import argparse
import dataclasses
import os
import sys

BEGIN = (
    "<!-- BEGIN GENERATED TrainConfig reference: "
    "python docs/generate_config_reference.py -->"
)
END = "<!-- END GENERATED TrainConfig reference -->"
TRAINING_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "training.md")


def _default(field):
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "required"
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f"`{value}`"
    return f"`{value!r}`"


def _flags(field):
    if not field.metadata.get("cli", True):
        return "(config file or `--set`)"
    names = ["--" + field.name.replace("_", "-"), *field.metadata.get("flags", ())]
    return ", ".join(f"`{name}`" for name in names)


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def reference(config_class=None):
    """The generated markdown block, markers included."""
    if config_class is None:
        from keras_transformer import TrainConfig as config_class
    lines = [
        BEGIN,
        "",
        "| key | `train` flag | default | what it does |",
        "| --- | --- | --- | --- |",
    ]
    for field in dataclasses.fields(config_class):
        doc = field.metadata.get("doc", "")
        lines.append(
            f"| `{field.name}` | {_flags(field)} | {_default(field)} | {_cell(doc)} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def rewrite(text, block):
    """``text`` with the marked block replaced by ``block``."""
    start = text.find(BEGIN)
    end = text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{TRAINING_MD} has no block between {BEGIN!r} and {END!r}")
    return text[:start] + block + text[end + len(END):]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the block is stale")
    parser.add_argument("--path", default=TRAINING_MD)
    args = parser.parse_args(argv)
    with open(args.path, encoding="utf-8") as f:
        text = f.read()
    updated = rewrite(text, reference())
    if args.check:
        if updated != text:
            print(f"{args.path}: the TrainConfig reference is stale; run "
                  "python docs/generate_config_reference.py", file=sys.stderr)
            return 1
        return 0
    if updated != text:
        with open(args.path, "w", encoding="utf-8") as f:
            f.write(updated)
        print(f"rewrote the TrainConfig reference in {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
