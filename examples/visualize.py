"""Make the model visible: PNG plots of the positional encoding, the learning
rate schedule, training curves and attention heatmaps.

    python examples/visualize.py --output-dir plots                 # trains a tiny model first
    python examples/visualize.py --model-dir runs/default --output-dir plots

With ``--model-dir`` (a directory written by ``keras-transformer train``) it
plots that run's TensorBoard curves and its attention for ``--sentence``;
without it, it trains a tiny model on the embedded number-words task for
``--steps`` steps (about a minute on 2 CPU cores).
"""

import argparse
import glob
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def plot_positional_encoding(path, length=100, d_model=512):
    from keras_transformer.layers import sinusoidal_encoding

    encoding = np.asarray(sinusoidal_encoding(np.arange(length), d_model))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4))
    image = left.pcolormesh(encoding.T, cmap="RdBu", vmin=-1, vmax=1)
    left.set(xlabel="position", ylabel="dimension", title=f"PE, d_model={d_model}")
    fig.colorbar(image, ax=left)
    for dimension in (4, 5, 6, 7):
        right.plot(encoding[:, dimension], label=f"dim {dimension}")
    right.set(xlabel="position", title="sin (even) / cos (odd) dimensions")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_learning_rate(path, steps=20000):
    from keras_transformer import TransformerSchedule

    fig, ax = plt.subplots(figsize=(7, 4))
    step = np.arange(1, steps)
    for d_model, warmup in ((512, 4000), (512, 8000), (256, 4000)):
        schedule = TransformerSchedule(d_model, warmup)
        rates = np.asarray(schedule(step.astype("float32")))
        ax.plot(step, rates, label=f"d_model={d_model}, warmup={warmup}")
    ax.set(xlabel="training step", ylabel="learning rate", title="§5.3 schedule")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def read_tensorboard_scalars(log_dir):
    """{(run, tag): (steps, values)} from the event files under ``log_dir``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    curves = {}
    for run in ("train", "validation"):
        directory = os.path.join(log_dir, run)
        if not os.path.isdir(directory):
            continue
        accumulator = EventAccumulator(directory, size_guidance={"tensors": 0, "scalars": 0})
        accumulator.Reload()
        tags = accumulator.Tags()
        for tag in tags.get("scalars", []):
            events = accumulator.Scalars(tag)
            curves[(run, tag)] = ([e.step for e in events], [e.value for e in events])
        for tag in tags.get("tensors", []):
            events = accumulator.Tensors(tag)
            values = [float(np.asarray(_tensor_value(e.tensor_proto))) for e in events]
            curves[(run, tag)] = ([e.step for e in events], values)
    return curves


def _tensor_value(proto):
    import tensorflow as tf

    return tf.make_ndarray(proto)


def plot_training_curves(path, log_dir):
    curves = read_tensorboard_scalars(log_dir)
    wanted = [tag for tag in ("epoch_loss", "epoch_token_accuracy") if any(t == tag for _, t in curves)]
    if not wanted:
        raise ValueError(f"No epoch_loss / epoch_token_accuracy curves under {log_dir}")
    fig, axes = plt.subplots(1, len(wanted), figsize=(6 * len(wanted), 4), squeeze=False)
    for ax, tag in zip(axes[0], wanted):
        for (run, name), (steps, values) in sorted(curves.items()):
            if name == tag:
                ax.plot(steps, values, marker="o", label=run)
        ax.set(xlabel="epoch", title=tag)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_attention(path, weights, rows, columns, title, max_heads=8):
    """Heatmaps of ``weights`` (heads, rows, columns), one panel per head."""
    heads = min(weights.shape[0], max_heads)
    fig, axes = plt.subplots(1, heads, figsize=(3.2 * heads + 1, 3.6), squeeze=False)
    for head, ax in enumerate(axes[0][:heads]):
        ax.imshow(weights[head], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(columns)), columns, rotation=90, fontsize=7)
        ax.set_yticks(range(len(rows)), rows if head == 0 else [""] * len(rows), fontsize=7)
        ax.set_title(f"head {head}", fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def train_tiny(output_dir, steps):
    from keras_transformer import TrainConfig
    from keras_transformer import train

    # A finished run is reused (a run directory holds one run).
    if not os.path.exists(os.path.join(output_dir, "model.weights.h5")):
        train(TrainConfig().replace(output_dir=output_dir, max_steps=steps, eval_sentences=50))
    return output_dir


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", help="a directory written by `keras-transformer train`")
    parser.add_argument("--output-dir", default="plots")
    parser.add_argument("--sentence", default="three hundred forty-five")
    parser.add_argument("--steps", type=int, default=300, help="training steps without --model-dir")
    args = parser.parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    written = [
        plot_positional_encoding(os.path.join(args.output_dir, "positional_encoding.png")),
        plot_learning_rate(os.path.join(args.output_dir, "learning_rate.png")),
    ]
    model_dir = args.model_dir or train_tiny(os.path.join(args.output_dir, "tiny_run"), args.steps)
    log_dir = os.path.join(model_dir, "logs")
    if glob.glob(os.path.join(log_dir, "*", "events.*")):
        written.append(plot_training_curves(os.path.join(args.output_dir, "training_curves.png"), log_dir))

    from keras_transformer import Translator

    translator = Translator.from_directory(model_dir)
    attention = translator.attention_weights(args.sentence)
    source, target = attention["source_pieces"], attention["target_pieces"]
    print(f"{args.sentence!r} -> {attention['translation']!r}")
    last = -1
    written.append(plot_attention(
        os.path.join(args.output_dir, "encoder_self_attention.png"),
        attention["encoder_self_attention"][last], source, source,
        "encoder self-attention (last layer)",
    ))
    written.append(plot_attention(
        os.path.join(args.output_dir, "decoder_cross_attention.png"),
        attention["decoder_cross_attention"][last], target, source,
        "decoder cross-attention (last layer)",
    ))
    for path in written:
        print("wrote", path)
    return written


if __name__ == "__main__":
    main()
