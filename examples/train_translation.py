"""The paper's recipe on parallel text files, then BLEU.

    python examples/train_translation.py --data ../shared/data/multi30k --minutes 25
    python examples/train_translation.py             # the embedded number-words task

Shared SentencePiece BPE vocabulary, token-bucketed batches, the warmup
schedule with Adam(0.9, 0.98, 1e-9), label smoothing 0.1, checkpoint
averaging, beam search (beam 4, alpha 0.6), sacreBLEU. Everything is the
library's `train` function, which the `keras-transformer train` command also
calls; this script only picks the files and the budget.
"""

import argparse
import os

from keras_transformer import TrainConfig
from keras_transformer.training.evaluation import format_evaluation
from keras_transformer import train


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="directory with train/val/test_2016_flickr .en.gz/.de.gz (Multi30k layout)")
    parser.add_argument("--src", default="en")
    parser.add_argument("--tgt", default="de")
    parser.add_argument("--minutes", type=float, default=None, help="training time budget")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--preset", default=None)
    parser.add_argument("--vocabulary-size", type=int, default=None, help="shared BPE size (auto: 8000)")
    parser.add_argument("--output-dir", default="runs/translation")
    parser.add_argument("--overwrite", action="store_true",
                        help="move a finished run in --output-dir aside and start again")
    args = parser.parse_args(argv)

    overrides = {"output_dir": args.output_dir}
    if args.data:
        def path(split, language):
            return os.path.join(args.data, f"{split}.{language}.gz")

        overrides.update(
            train_src=path("train", args.src), train_tgt=path("train", args.tgt),
            valid_src=path("val", args.src), valid_tgt=path("val", args.tgt),
            test_src=path("test_2016_flickr", args.src), test_tgt=path("test_2016_flickr", args.tgt),
        )
    if args.minutes is not None:
        overrides["time_budget_minutes"] = args.minutes
    if args.max_steps is not None:
        overrides["max_steps"] = args.max_steps
    if args.vocabulary_size is not None:
        overrides["vocabulary_size"] = args.vocabulary_size
    if args.preset is not None:
        overrides["preset"] = args.preset
    result = train(TrainConfig().replace(**overrides), overwrite=args.overwrite)
    if result.evaluation is not None:
        print(format_evaluation(result.evaluation, "test"))
    return result


if __name__ == "__main__":
    main()
