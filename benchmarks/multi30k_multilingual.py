#!/usr/bin/env python
"""One model for English -> German, French and Czech against three bilingual
models, trained by the package's own `train` on Multi30k at equal work.

Each bilingual model trains ``--updates`` updates with the Multi30k recipe
(``benchmarks/multi30k.yaml``: `small` preset, packed 4,096-token batches,
warmup 500); the multilingual model trains 3 x ``--updates`` updates with
the same recipe on the three corpora at once (``target_languages: [de, fr,
cs]``, its tag on the source), so both sides make the same number of updates
of the same size. Fixed update counts, not a time budget: the machine's load
then changes the times, not the models. Every model averages its last
``--average-last-n`` checkpoints; each direction is scored on
test_2016_flickr (sacreBLEU, beam 4, the recipe's alpha).

Example::

    python benchmarks/multi30k_multilingual.py --data-dir ../shared/data/multi30k \\
        --updates 800 --output-dir runs/multilingual \\
        --output benchmarks/results/multi30k_multilingual_tensorflow.json
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

LANGUAGES = ("de", "fr", "cs")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, help="folder with Multi30k *.gz")
    parser.add_argument("--config", default=os.path.join(HERE, "multi30k.yaml"))
    parser.add_argument("--updates", type=int, default=800,
                        help="updates of each bilingual model (3x for the multilingual one)")
    parser.add_argument("--average-last-n", type=int, default=5)
    parser.add_argument("--multilingual-vocabulary-size", type=int, default=16000)
    parser.add_argument("--language-tag", default="source", choices=("source", "target"))
    parser.add_argument("--output-dir", default="runs/multilingual")
    parser.add_argument("--output", required=True, help="result JSON path")
    parser.add_argument("--test-sentences", type=int, default=None,
                        help="score only the first N test sentences (smoke runs)")
    parser.add_argument("--only", choices=("bilingual", "multilingual"), default=None,
                        help="train only one side (the result file keeps the other's results)")
    args = parser.parse_args(argv)

    import sacrebleu

    import keras_transformer as kt
    from keras_transformer.data import read_lines

    data = lambda name: os.path.join(args.data_dir, name)  # noqa: E731
    base = kt.TrainConfig.from_file(args.config).replace(
        time_budget_minutes=None, epochs=10_000, eval_sentences=0,
        average_last_n=args.average_last_n, verbose=2,
    )  # fmt: skip
    result = {"what": __doc__.split("\n\n")[0], "command": " ".join(["python"] + sys.argv),
              "settings": vars(args), "cpu_count": os.cpu_count(), "models": {}}  # fmt: skip
    if os.path.exists(args.output):
        with open(args.output) as f:
            result["models"] = json.load(f).get("models", {})
    sources = read_lines(data("test_2016_flickr.en.gz"))[: args.test_sentences]

    def record(name, config, languages):
        start_load = os.getloadavg()[0]
        start = time.perf_counter()
        run = kt.train(config, overwrite=True)
        seconds = time.perf_counter() - start
        translator = kt.Translator.from_directory(config.output_dir)
        scores = {}
        for language in languages:
            hypotheses = translator.translate(
                sources, target_language=language if translator.languages else None,
                beam_size=config.beam_size, alpha=config.alpha, verbose=False,
            )  # fmt: skip
            references = read_lines(data(f"test_2016_flickr.{language}.gz"))[: len(sources)]
            metric = sacrebleu.BLEU()
            scores[language] = round(metric.corpus_score(hypotheses, [references]).score, 2)
            result["sacrebleu_signature"] = str(metric.get_signature())
            with open(os.path.join(config.output_dir, f"test_2016_flickr.hyp.{language}"), "w",
                      encoding="utf-8") as f:  # fmt: skip
                f.write("\n".join(hypotheses) + "\n")
        result["models"][name] = {
            "updates": run.steps, "train_seconds": round(seconds, 1),
            "vocabulary_size": config.vocabulary_size, "parameters": run.model.count_params(),
            "test_2016_flickr_sacrebleu": scores, "load_average_start_end": [start_load, os.getloadavg()[0]],
        }  # fmt: skip
        print(json.dumps({name: result["models"][name]}), flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(result, f, indent=1)

    if args.only in (None, "multilingual"):
        record("multilingual", base.replace(
            train_src=[data("train.en.gz")] * 3,
            train_tgt=[data(f"train.{language}.gz") for language in LANGUAGES],
            target_languages=list(LANGUAGES), language_tag=args.language_tag,
            valid_src=data("val.en.gz"), valid_tgt=data("val.de.gz"), eval_language="de",
            vocabulary_size=args.multilingual_vocabulary_size, max_steps=3 * args.updates,
            output_dir=os.path.join(args.output_dir, "multilingual"),
        ), LANGUAGES)  # fmt: skip
    if args.only in (None, "bilingual"):
        for language in LANGUAGES:
            record(f"bilingual_en-{language}", base.replace(
                train_src=data("train.en.gz"), train_tgt=data(f"train.{language}.gz"),
                valid_src=data("val.en.gz"), valid_tgt=data(f"val.{language}.gz"),
                max_steps=args.updates,
                output_dir=os.path.join(args.output_dir, f"bilingual_en-{language}"),
            ), (language,))  # fmt: skip
    models = result["models"]
    if "multilingual" in models:
        rows = []
        for language in LANGUAGES:
            single = models.get(f"bilingual_en-{language}", {}).get("test_2016_flickr_sacrebleu", {})
            multi = models["multilingual"]["test_2016_flickr_sacrebleu"][language]
            rows.append({"direction": f"en-{language}", "bilingual": single.get(language),
                         "multilingual": multi})  # fmt: skip
        result["directions"] = rows
        with open(args.output, "w") as f:
            json.dump(result, f, indent=1)
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
