"""A run's model: the paper's optimizer and schedule (`build_optimizer`),
the compiled `Transformer` of a preset or of ``init_from`` (`build_model`),
and the epochs and batches ``fit`` runs (`fit_schedule`).
"""

import math

from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_loader import find_trained_model
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.objectives.metrics import MaskedTokenAccuracy
from keras_transformer.objectives.schedules import transformer_optimizer
from keras_transformer.training.checkpoints import save_architecture
from keras_transformer.training.precision import resolve_dtype_policy
from keras_transformer.utils.console import log
from keras_transformer.utils.private_apis import schedule_at_update_count


def build_optimizer(config, d_model):
    """The paper's Adam and schedule (§5.3), with accumulation and EMA.

    ``accumulate_steps`` > 1 sets Keras' ``gradient_accumulation_steps``:
    the optimizer sums the gradients of that many batches and applies their
    mean once, so that (for a loss that is a mean over the batch) the update
    equals one batch that many times larger. Keras evaluates a learning-rate
    schedule at the count of *batches*; `schedule_at_update_count` makes
    the warmup schedule count updates, as without accumulation.

    ``ema_decay`` sets Keras' ``use_ema``: after each update the optimizer
    moves its average of the weights, ``ema = decay * ema + (1 - decay) *
    weights`` (the first update sets it to the weights). Under accumulation
    Keras moves the average after every batch, also those that only
    accumulate (the weights are then unchanged); the per-batch momentum is
    then ``ema_decay ** (1 / accumulate_steps)``, so that the average still
    forgets at ``ema_decay`` per update's worth of batches (it is the
    per-batch average of the weights held for ``accumulate_steps`` batches
    each).
    """
    steps = config.accumulate_steps
    options = {}
    if steps > 1:
        options["gradient_accumulation_steps"] = steps
    if config.ema_decay is not None:
        options.update(use_ema=True, ema_momentum=config.ema_decay ** (1.0 / steps))
    optimizer = transformer_optimizer(
        d_model,
        warmup_steps=config.warmup_steps,
        scale=config.learning_rate_scale,
        decay_steps=config.decay_steps,
        **options,
    )
    if steps > 1:
        schedule_at_update_count(optimizer)
    return optimizer


def build_model(config, vocabulary_size):
    """`Transformer.from_preset`, or with ``init_from`` that run's model and
    weights (its preset files, or the ``model.keras`` of a run of earlier
    versions; rebuilt with the config's dtype policy and ``dropout_rate``),
    compiled with `build_optimizer` and the paper's loss."""
    dtype = resolve_dtype_policy(config.dtype_policy)[0]
    if config.init_from is not None:
        start = find_trained_model(config.init_from).load_model(compile=False)
        if not isinstance(start, Transformer):
            raise ValueError(
                f"init_from {config.init_from!r} holds a {type(start).__name__}, "
                "not a Transformer."
            )
        if start.vocabulary_size != vocabulary_size:
            raise ValueError(
                f"The model of init_from {config.init_from!r} has {start.vocabulary_size} "
                f"ids but its vocabulary {vocabulary_size} pieces."
            )
        model = Transformer.from_config(
            {**start.get_config(), **config.model_overrides, "dtype": dtype}
        )
        model.set_weights(start.get_weights())
        del start
    else:
        model = Transformer.from_preset(
            config.preset,
            vocabulary_size=vocabulary_size,
            dtype=dtype,
            **config.model_overrides,
        )
    model.compile(
        optimizer=build_optimizer(config, model.d_model),
        loss=LabelSmoothedCrossEntropy(label_smoothing=config.label_smoothing),
        metrics=[MaskedTokenAccuracy()],
        jit_compile=config.jit_compile,
    )
    return model


def fit_schedule(config, num_batches):
    """``(epochs, batches per epoch)`` for `fit`, honouring ``max_steps``.

    ``steps_per_epoch`` and ``max_steps`` count optimizer updates; with
    ``accumulate_steps`` batches per update, an epoch is a whole number of
    updates (one pass over the data rounds up to one).
    """
    per_update = config.accumulate_steps
    updates_per_epoch = config.steps_per_epoch or math.ceil(num_batches / per_update)
    epochs = config.epochs
    if config.max_steps is not None:
        updates_per_epoch = min(updates_per_epoch, config.max_steps)
        epochs = min(epochs, math.ceil(config.max_steps / updates_per_epoch))
    return epochs, updates_per_epoch * per_update


def build_run_model(config, run, tokenizer, epochs, batches_per_epoch, verbose, write=True):
    """`build_model`, described in the log; its architecture is saved with
    the checkpoints (unless ``write`` is False)."""
    model = build_model(config, tokenizer.vocabulary_size)
    log(describe_model(config, model, epochs, batches_per_epoch), verbose)
    _, reason = resolve_dtype_policy(config.dtype_policy)
    if reason is not None:
        log(f"dtype_policy auto: {model.dtype_policy.name} ({reason}).", verbose)
    if write:
        save_architecture(model, run.checkpoint_dir)
    return model


def describe_model(config, model, epochs, batches_per_epoch):
    overrides = f" with {config.model_overrides}" if config.model_overrides else ""
    origin = f"preset {config.preset!r}"
    if config.init_from is not None:
        origin = f"continued from {config.init_from}"
    per_update = config.accumulate_steps
    schedule = f"{epochs} epochs x {batches_per_epoch // per_update} updates"
    if per_update > 1:
        schedule += f" of {per_update} accumulated batches"
    if config.ema_decay is not None:
        schedule += f"; moving average of the weights (decay {config.ema_decay})"
    return (
        f"Model: {origin}{overrides}, {model.count_params():,} "
        f"parameters; {schedule}."
    )
