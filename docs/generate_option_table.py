"""Writes the decoding options' table into docs/decoding.md.

One table, one source: every row comes from `keras_transformer.options`
(name, default, flags and the commands that have them, help, the
SavedModel and CTranslate2 columns), the definitions that `DecodeOptions`,
the CLI, a run's defaults, the SavedModel and the CTranslate2 translator are
made from.

    python docs/generate_option_table.py          # rewrite the block
    python docs/generate_option_table.py --check  # exit 1 if it is stale
"""

import argparse
import os
import sys

BEGIN = "<!-- BEGIN GENERATED option table: python docs/generate_option_table.py -->"
END = "<!-- END GENERATED option table -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENT = os.path.join(ROOT, "docs", "decoding.md")


def _cell(text):
    return str(text).replace("|", "\\|")


def table():
    """The generated markdown block, markers included."""
    from keras_transformer import options

    lines = [
        BEGIN,
        "",
        "| option | default | CLI | run default | SavedModel | CTranslate2 | what it does |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for option in options.OPTIONS:
        flag = f"`{option.flag}` ({', '.join(option.commands)})" if option.flag else "–"
        saved = {
            options.SAVED_MODEL_INPUT: "`translate_options` input; fixed at export elsewhere",
            options.SAVED_MODEL_FIXED: "fixed at export",
        }.get(option.saved_model, option.saved_model)
        ctranslate2 = (
            f"`{option.ctranslate2}`" if option.ctranslate2.isidentifier() else option.ctranslate2
        )
        lines.append(
            f"| `{option.name}` | `{option.default}` | {flag} | "
            f"{'yes' if option.run_default else '–'} | {_cell(saved)} | {_cell(ctranslate2)} | "
            f"{_cell(option.help)} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def rewrite(text, block):
    """``text`` with the marked block replaced by ``block``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError("no generated option table markers found")
    return text[:start] + block + text[end + len(END):]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the block is stale")
    args = parser.parse_args(argv)
    with open(DOCUMENT, encoding="utf-8") as f:
        text = f.read()
    new = rewrite(text, table())
    if new != text:
        if args.check:
            print(f"stale option table in {DOCUMENT}", file=sys.stderr)
            return 1
        with open(DOCUMENT, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
