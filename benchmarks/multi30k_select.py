"""Choose checkpoint averaging and the length penalty on Multi30k validation only.

After a `multi30k_bleu.py` run, its epoch checkpoints allow two choices that
need no more training: how many of the newest checkpoints to average
(`average_last_n`) and the length-penalty exponent alpha. This script scores
every combination on the **validation** set (val, 1,014 sentences, beam 4,
cased detokenized sacreBLEU), picks the best, and only then translates
test_2016_flickr once with that choice (and with the run's own setting, for
comparison). Test never influences the choice.

    KERAS_BACKEND=jax python benchmarks/multi30k_select.py --model-dir runs/m30k_tf2 \\
        --last-n 3,5,8,12 --alpha 0.6,1.0 --tag tensorflow

Writes ``benchmarks/results/multi30k_select_<tag>.{json,md}`` and the chosen
setting's test hypotheses (``multi30k_select_<tag>_test_2016_flickr.hyp.de``).
Decoding runs on the current Keras backend (JAX decodes fastest on CPU); the
weights are the run's, whatever backend trained them.
"""

import argparse
import datetime
import json
import os
import sys
import time

from _workers import recorded_command

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-dir", required=True, help="a multi30k_bleu.py run directory")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--last-n", default="3,5,8,12",
                   help="comma-separated numbers of newest checkpoints to average")
    p.add_argument("--alpha", default="0.6,1.0", help="comma-separated alphas")
    p.add_argument("--beam-size", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--tag", required=True, help="suffix of the result files")
    args = p.parse_args(argv)

    def numbers(text, kind, name):
        try:
            values = [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise SystemExit(f"{name}: expected comma-separated numbers, got {text!r}")
        if not values:
            raise SystemExit(f"{name}: no values given")
        return values

    args.last_n = numbers(args.last_n, int, "--last-n")
    args.alpha = numbers(args.alpha, float, "--alpha")
    if any(n < 1 for n in args.last_n) or any(a < 0 for a in args.alpha):
        raise SystemExit("--last-n values must be >= 1 and --alpha values >= 0")
    return args


def main(argv=None):
    args = parse_args(argv)
    sys.path.insert(0, REPO)
    import keras

    from keras_transformer import Translator
    from keras_transformer.training.bleu import corpus_bleu
    from keras_transformer.training.checkpoints import average_checkpoints
    from keras_transformer.training.checkpoints import list_checkpoints
    from keras_transformer.data import read_lines
    from keras_transformer.training.run_directory import RunDirectory
    from keras_transformer.models.transformer.transformer_loader import find_trained_model
    from keras_transformer.models.transformer.transformer_tokenizer import TransformerTokenizer

    files = {
        name: os.path.join(args.data_dir, f"{name}.gz")
        for name in ("val.en", "val.de", "test_2016_flickr.en", "test_2016_flickr.de")
    }
    missing = [path for path in files.values() if not os.path.exists(path)]
    if missing:
        raise SystemExit(f"Multi30k files not found: {missing} (see --data-dir)")
    run = find_trained_model(args.model_dir)
    tokenizer = TransformerTokenizer.load(run.vocabulary_path)
    run_directory = RunDirectory(args.model_dir)
    checkpoint_dir = run_directory.checkpoint_dir
    available = len(list_checkpoints(checkpoint_dir))
    if max(args.last_n) > available:
        raise SystemExit(
            f"--last-n {max(args.last_n)} exceeds the {available} checkpoints in "
            f"{checkpoint_dir}")
    with open(run_directory.config_path) as f:
        config = json.load(f)
    last_n = config.get("average_last_n")
    if isinstance(last_n, list):  # Chosen by train on validation: results.json says which.
        with open(run_directory.results_path) as f:
            last_n = (json.load(f).get("average_selection") or {}).get("chosen")
    run_setting = {"last_n": last_n, "alpha": config.get("alpha")}

    val_src, val_ref = read_lines(files["val.en"]), read_lines(files["val.de"])
    test_src, test_ref = (read_lines(files["test_2016_flickr.en"]),
                          read_lines(files["test_2016_flickr.de"]))

    translators = {}  # last_n -> (Translator, averaged paths), built once each

    def translator_for(last_n):
        if last_n not in translators:
            model, paths = average_checkpoints(checkpoint_dir, last_n=last_n)
            translators[last_n] = (
                Translator(model, tokenizer, batch_size=args.batch_size), paths)
        return translators[last_n]

    def bleu(translator, sources, references, alpha):
        start = time.perf_counter()
        hypotheses = translator.translate(sources, beam_size=args.beam_size, alpha=alpha)
        score = corpus_bleu(hypotheses, references).score
        return score, hypotheses, time.perf_counter() - start

    grid = []
    for last_n in args.last_n:
        translator, paths = translator_for(last_n)
        for alpha in args.alpha:
            score, _, seconds = bleu(translator, val_src, val_ref, alpha)
            grid.append({"last_n": last_n, "alpha": alpha, "val_bleu": score,
                         "checkpoints": [os.path.basename(p) for p in paths],
                         "seconds": round(seconds, 1)})
            print(f"last_n={last_n} alpha={alpha}: val BLEU {score:.2f}", flush=True)
    best = max(grid, key=lambda row: row["val_bleu"])

    tests = {}
    for name, setting in (("chosen", best), ("run", run_setting)):
        if setting["last_n"] is None or setting["alpha"] is None:
            continue
        translator, _ = translator_for(setting["last_n"])
        score, hypotheses, _ = bleu(translator, test_src, test_ref, setting["alpha"])
        tests[name] = {"last_n": setting["last_n"], "alpha": setting["alpha"],
                       "test_bleu": score}
        if name == "chosen":
            chosen_hypotheses = hypotheses
        print(f"{name}: last_n={setting['last_n']} alpha={setting['alpha']}: "
              f"test BLEU {score:.2f}", flush=True)

    command = recorded_command(__file__, argv)
    os.makedirs(args.output_dir, exist_ok=True)
    stem = os.path.join(args.output_dir, f"multi30k_select_{args.tag}")
    result = {
        "command": command, "backend": keras.config.backend(),
        "date": datetime.date.today().isoformat(), "model_dir": args.model_dir,
        "beam_size": args.beam_size, "grid": grid,
        "chosen_on_validation": {"last_n": best["last_n"], "alpha": best["alpha"]},
        "test": tests,
    }
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    with open(stem + "_test_2016_flickr.hyp.de", "w") as f:
        f.write("\n".join(chosen_hypotheses) + "\n")
    lines = [f"# Multi30k: averaging and alpha chosen on validation ({args.tag})", "",
             f"Command: `KERAS_BACKEND={keras.config.backend()} {command}`", "",
             f"Date: {result['date']}; run: {args.model_dir}; beam {args.beam_size}; "
             "cased detokenized sacreBLEU.", "",
             "| checkpoints averaged | alpha | val BLEU |", "|---|---|---|"]
    lines += [f"| {r['last_n']} | {r['alpha']} | {r['val_bleu']:.2f} |" for r in grid]
    lines += ["", "Test (test_2016_flickr), translated only after the choice:", ""]
    lines += [f"- {name} (last {t['last_n']}, alpha {t['alpha']}): {t['test_bleu']:.2f}"
              for name, t in tests.items()]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {stem}.json, {stem}.md")


if __name__ == "__main__":
    main()
