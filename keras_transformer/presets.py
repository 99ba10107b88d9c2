"""Named model sizes: the paper's base and big (Table 3) and two CPU-sized ones."""

import inspect

PRESETS = {
    # Trains in minutes on 2 CPU cores (the embedded default task, tests).
    "tiny": dict(
        vocabulary_size=8000,
        num_layers=2,
        d_model=128,
        num_heads=4,
        d_ff=512,
        dropout_rate=0.1,
    ),
    # A real translation model for CPU budgets (Multi30k in ~25 minutes).
    "small": dict(
        vocabulary_size=8000,
        num_layers=3,
        d_model=256,
        num_heads=4,
        d_ff=1024,
        dropout_rate=0.1,
    ),
    # The paper's Table 3 "base": 65M parameters with a 37,000-token vocabulary.
    "base": dict(
        vocabulary_size=37000,
        num_layers=6,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        dropout_rate=0.1,
    ),
    # The paper's Table 3 "big": 213M parameters.
    "big": dict(
        vocabulary_size=37000,
        num_layers=6,
        d_model=1024,
        num_heads=16,
        d_ff=4096,
        dropout_rate=0.3,
    ),
}


def model_argument_names():
    from keras_transformer.model import Transformer

    parameters = inspect.signature(Transformer.__init__).parameters
    return [name for name in parameters if name not in ("self", "kwargs")] + [
        "name"
    ]


def resolve_preset(name, overrides=None):
    """The constructor arguments of preset ``name`` with ``overrides`` applied."""
    if name not in PRESETS:
        raise ValueError(
            f"Unknown preset {name!r}. Available presets: {sorted(PRESETS)}"
        )
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(model_argument_names()))
    if unknown:
        raise ValueError(
            f"Unknown model argument(s) {unknown} for preset {name!r}. "
            f"Valid arguments: {sorted(model_argument_names())}"
        )
    return {**PRESETS[name], **overrides}
