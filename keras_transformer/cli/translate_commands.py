"""The ``translate`` and ``score`` commands: input lines from files or
stdin, one output line per input line (plain, fairseq-like ``H-``/``A-``
lines, or JSON lines) to stdout or a file.
"""

import json
import sys

from keras_transformer.cli.model_flags import (
    _check_model_dir,
    _check_output_file,
    _decode_options,
    _load_translator,
    _run_config,
    _target_language,
)
from keras_transformer.data import read_lines, write_lines


def _read_stdin():
    """Lines of stdin decoded as strict UTF-8 (an error names stdin)."""
    buffer = getattr(sys.stdin, "buffer", None)
    try:
        if buffer is not None:
            text = buffer.read().decode("utf-8")
        else:
            text = sys.stdin.read()
            text.encode("utf-8")  # Lone surrogates (surrogateescape) fail here.
    except UnicodeError as error:
        where = f" (byte {error.start})" if hasattr(error, "start") else ""
        raise ValueError(f"stdin is not UTF-8 text{where}: {error.reason}") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.strip() for line in lines]


def _run_translate(args):

    _check_model_dir(args)
    if args.output != "-":
        _check_output_file(args.output)
    run_config = _run_config(args.model_dir[0])
    options = _decode_options(args, run_config)
    prefixes = None
    if args.target_prefix is not None:
        prefixes = read_lines(args.target_prefix)
    if args.input != "-":
        lines = read_lines(args.input)
        _check_prefix_count(prefixes, lines)
    # Before reading stdin: a broken model (or --target-language) is
    # reported without waiting for it.
    translator = _load_translator(args)
    target_language = _target_language(args, translator)
    if args.input == "-":
        lines = _read_stdin()
        _check_prefix_count(prefixes, lines)
    constraints = None
    if args.constraints:
        lines, constraints = _split_constraints(lines)
    indices = [i for i, line in enumerate(lines) if line]
    batch_size = getattr(args, "batch_size", None)
    detailed = args.num_return is not None or args.print_alignment or args.format == "jsonl"
    result = translator.translate(
        [lines[i] for i in indices],
        options,
        batch_size=batch_size,
        target_prefix=None if prefixes is None else [prefixes[i] for i in indices],
        constraints=None if constraints is None else [constraints[i] for i in indices],
        return_scores=detailed,
        return_alignments=args.print_alignment,
        verbose=False if args.output == "-" else "auto",
        target_language=target_language,
    )
    if detailed:
        outputs = _detailed_lines(args, translator, lines, indices, options, result)
    else:
        outputs = [""] * len(lines)
        for i, translation in zip(indices, result):
            outputs[i] = translation
    _write_output(args.output, outputs)
    return 0


def _write_output(path, lines):
    """Lines to stdout (``"-"``) or to ``path`` (gzip when it ends in .gz)."""
    if path == "-":
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
        return

    write_lines(path, lines)


def _split_constraints(lines):
    """fairseq's ``--constraints`` input: ``source<TAB>phrase<TAB>phrase...``
    per line -> ``(sources, phrases per line)``."""
    sources, constraints = [], []
    for line in lines:
        source, *phrases = line.split("\t")
        sources.append(source)
        constraints.append(phrases)
    return sources, constraints


def _check_prefix_count(prefixes, lines):
    if prefixes is not None and len(prefixes) != len(lines):
        raise ValueError(
            f"--target-prefix has {len(prefixes)} lines but the input has "
            f"{len(lines)}; give one prefix per input line."
        )


def _detailed_lines(args, translator, lines, indices, options, result):
    """fairseq-like ``H-``/``A-`` lines, or JSON lines, for every input line.

    ``H-<line>\t<score>\t<text>`` per hypothesis (best first; samples in
    order); with alignments ``A-<line>\t<src>-<tgt> ...`` after it (token
    indices from 0, EOS excluded on the target side). Empty input lines get
    no ``H-`` line (text) or ``"hypotheses": []`` (jsonl).
    """

    texts, scores = result[0], result[1]
    if args.print_alignment:
        aligned = result[2]
    else:
        aligned = [[None] * options.num_return for _ in texts]
    if options.num_return == 1:
        texts = [[t] for t in texts]
        scores = [[s] for s in scores]
        aligned = aligned if not args.print_alignment else [[a] for a in aligned]
    by_line = dict(zip(indices, zip(texts, scores, aligned)))
    outputs = []
    for i, line in enumerate(lines):
        hypotheses = []
        if i in by_line:
            for text, score, alignment in zip(*by_line[i]):
                pairs = None
                if alignment is not None:
                    pairs = [[int(s), t] for t, s in enumerate(alignment[:-1])]
                hypotheses.append((text, score, pairs))
        if args.format == "jsonl":
            record = {"id": i, "source": line, "hypotheses": []}
            for text, score, pairs in hypotheses:
                entry = {"text": text, "score": round(score, 6)}
                if pairs is not None:
                    entry["alignment"] = pairs
                record["hypotheses"].append(entry)
            outputs.append(json.dumps(record, ensure_ascii=False))
            continue
        for text, score, pairs in hypotheses:
            outputs.append(f"H-{i}\t{score:.6f}\t{text}")
            if pairs is not None:
                outputs.append(f"A-{i}\t" + " ".join(f"{s}-{t}" for s, t in pairs))
    return outputs


def _run_score(args):

    _check_model_dir(args)
    if args.output != "-":
        _check_output_file(args.output)
    # Every line is scored (an empty pair too), so outputs align with inputs.
    sources, targets = read_lines(args.src), read_lines(args.tgt)
    if len(sources) != len(targets):
        raise ValueError(
            f"--src has {len(sources)} lines but --tgt has {len(targets)}; "
            "they must be aligned line by line."
        )

    translator = _load_translator(args, max_source_length=args.max_source_length)
    totals = translator.score(
        sources,
        targets,
        return_token_scores=args.token_scores,
        target_language=_target_language(args, translator),
    )
    outputs = []
    if args.token_scores:
        totals, token_scores = totals
        for total, row in zip(totals, token_scores):
            outputs.append(f"{total:.6f}\t" + " ".join(f"{v:.6f}" for v in row))
    else:
        outputs = [f"{total:.6f}" for total in totals]
    _write_output(args.output, outputs)
    return 0
