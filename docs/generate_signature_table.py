"""Writes the SavedModel's signature table into docs/serving.md and README.md.

One table, one source: the signature names and their inputs come from
`keras_transformer.export.saved_model_signatures.SIGNATURES` (what the
export saves); the outputs and the Python equivalent of each come from
`DESCRIPTIONS` below. A signature added to the export without a description
here fails tests/test_docs.py.

    python docs/generate_signature_table.py          # rewrite both blocks
    python docs/generate_signature_table.py --check  # exit 1 if one is stale
"""

import argparse
import os
import sys

BEGIN = "<!-- BEGIN GENERATED signature table: python docs/generate_signature_table.py -->"
END = "<!-- END GENERATED signature table -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENTS = (os.path.join(ROOT, "README.md"), os.path.join(ROOT, "docs", "serving.md"))

# Signature name -> (outputs, what it is in Python and how it fails).
DESCRIPTIONS = {
    "serving_default": (
        "`translations` string `[None]`, `scores` float32 `[None]`",
        "`translate(sentences, return_scores=True)`",
    ),
    "translate_nbest": (
        "`translations` string `[None, k]`, `scores` float32 `[None, k]`, best first",
        "`translate(..., num_return=k)`; `k` fixed at export (`--n-best K`, default the beam size)",
    ),
    "translate_token_ids": (
        "`token_ids` int32 `[None, None]` (EOS-terminated, 0-padded), `scores`",
        "`Translator.generate` on 0-padded ids (no BOS/EOS needed); ids outside "
        "`[0, vocabulary_size)` fail the request with `INVALID_ARGUMENT`",
    ),
    "translate_prefix": (
        "`translations`, `scores`",
        "`translate(..., target_prefix=prefixes)` (\"\" for none); a prefix that leaves no "
        "room for EOS fails with `INVALID_ARGUMENT`",
    ),
    "translate_constrained": (
        "`translations`, `scores`",
        "`translate(..., constraints=...)`, per source its target phrases (\"\" pads): every "
        "output contains each phrase, its tokens contiguous; constraints that leave no room "
        "for EOS, or rows that differ from the sources', fail with `INVALID_ARGUMENT`",
    ),
    "translate_sample": (
        "`translations`, `scores`",
        "one sample per sentence, those of `translate(..., sampling=True, seed=seed)`; "
        "temperature, top-k, top-p fixed at export",
    ),
    "translate_options": (
        "`translations`, `scores`",
        "`translate(..., alpha=, min_length=, repetition_penalty=)`: the beam search with "
        "the request's runtime options (scalars, one value per request; out of range fails "
        "with `INVALID_ARGUMENT`); the others fixed at export",
    ),
    "score": (
        "`scores` float32 `[None]`",
        "`Translator.score`: total log-probability of each target, EOS included, no length "
        "penalty",
    ),
}

_DTYPES = {"string": "string", "int32": "int32", "float32": "float32"}


def _spec(spec):
    shape = "scalar" if spec.shape.rank == 0 else "`[" + ", ".join(
        "None" if d is None else str(d) for d in spec.shape.as_list()
    ) + "]`"
    return f"`{spec.name}` {_DTYPES.get(spec.dtype.name, spec.dtype.name)} {shape}"


def table():
    """The generated markdown block, markers included."""
    from keras_transformer.export.saved_model_signatures import SIGNATURES

    missing = sorted(set(SIGNATURES) - set(DESCRIPTIONS))
    extra = sorted(set(DESCRIPTIONS) - set(SIGNATURES))
    if missing or extra:
        raise ValueError(
            f"docs/generate_signature_table.py: describe {missing}, remove {extra}"
        )
    lines = [
        BEGIN,
        "",
        "| signature | inputs | outputs | as in Python |",
        "| --- | --- | --- | --- |",
    ]
    for name, (_, inputs) in SIGNATURES.items():
        outputs, python = DESCRIPTIONS[name]
        lines.append(
            f"| `{name}` | {', '.join(_spec(s) for s in inputs)} | {outputs} | {python} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def rewrite(text, block):
    """``text`` with the marked block replaced by ``block``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError("no generated signature table markers found")
    return text[:start] + block + text[end + len(END):]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a block is stale")
    args = parser.parse_args(argv)
    block = table()
    stale = []
    for path in DOCUMENTS:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = rewrite(text, block)
        if new != text:
            stale.append(path)
            if not args.check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
    if args.check and stale:
        print("stale signature table in: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
