"""`Ensemble`: several models that share a vocabulary, decoded as one.

As fairseq's ``EnsembleModel`` (``--path a.pt:b.pt``), OpenNMT-py's
``-model a.pt b.pt``, Marian and Sockeye: at every step each model predicts
the next token from its own encoder output and its own key/value cache, and
the ensemble's next-token distribution is the (weighted) mean of the
models' probabilities, returned as its log:

    log p(y | .) = log sum_i w_i p_i(y | .),    sum_i w_i = 1

`Ensemble` has the decoding interface of a `Transformer` (``encode``,
``build_cache``, ``grow_cache``, ``decode_step``, ``decode``), with a tuple
of per-model encoder outputs and a tuple of per-model caches where a
`Transformer` has one, so `generate`, `Generator`, the forced decoding of
`forced.py` and the SavedModel's signatures run an ensemble through the one
decode path: one compiled search whose step function calls every model
(traced once by ``jax.jit`` and ``tf.function``), never one search per
model. Its ``decode_step`` and ``decode`` return the log of the mean
probability, which the searches' log-softmax leaves unchanged.
"""

import math

from keras import ops

from keras_transformer.utils.quantization import quantization_config

__all__ = ["Ensemble", "check_weights", "members"]


def check_weights(weights, count):
    """``weights`` normalized to sum to 1 (equal weights for None).

    Args:
        weights: None, or a sequence of ``count`` finite numbers > 0.
        count: int. The number of models.

    Returns:
        A tuple of ``count`` floats summing to 1.

    Raises:
        ValueError: naming ``weights``, for a wrong count or a value that is
            not a finite number > 0.
    """
    if weights is None:
        return (1.0 / count,) * count
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__"):
        raise ValueError(
            f"weights must be a list of numbers, one per model. Received: weights={weights!r}"
        )
    weights = list(weights)
    if len(weights) != count:
        raise ValueError(
            f"weights needs one value per model: {len(weights)} value(s) for {count} "
            f"model(s). Received: weights={weights!r}"
        )
    for weight in weights:
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or not math.isfinite(weight)
            or weight <= 0
        ):
            raise ValueError(
                f"weights must be finite numbers > 0. Received: weights={weights!r}"
            )
    total = float(sum(weights))
    return tuple(float(weight) / total for weight in weights)


def members(model):
    """``((model, weight), ...)``: an `Ensemble`'s models with their
    normalized weights, or ``((model, 1.0),)`` for one model."""
    if isinstance(model, Ensemble):
        return tuple(zip(model.models, model.model_weights))
    return ((model, 1.0),)


def _unique(variables):
    """``variables`` without repeats (a model given twice has its variables
    once), in their order."""
    seen, unique = set(), []
    for variable in variables:
        if id(variable) not in seen:
            seen.add(id(variable))
            unique.append(variable)
    return unique


class Ensemble:
    """Several `Transformer`s with one vocabulary, decoded as one model.

    Each model keeps its own encoder output and key/value cache; at every
    step the next-token distribution is the weighted mean of the models'
    probabilities (fairseq's ensemble: the log of the mean probability,
    not the mean of the log-probabilities). Models may differ in size,
    depth, positional encoding and precision; they must share the target
    vocabulary (the same ``vocabulary_size``; `Translator.from_directory`
    also checks that their ``vocab.spm`` files are identical).

    Pass an `Ensemble` wherever the decoding takes a model: `Translator`,
    `Generator`, `generate`, `token_log_probs`, `alignments`. Beam search,
    greedy search, sampling, n-best lists, target prefixes and forced
    scoring then use the ensemble's distribution. Sampling draws from the
    ensemble's distribution with the temperature applied to it (fairseq
    applies it to each model's logits before averaging; the two agree at
    temperature 1). Alignments are the weighted mean over the models of each
    model's head-averaged cross-attention (fairseq averages its models'
    attention too).

    Args:
        models: a non-empty sequence of `keras_transformer.Transformer`
            (the same model may appear more than once).
        weights: optional sequence of one number > 0 per model, normalized
            to sum to 1. Defaults to equal weights.

    Raises:
        ValueError: no models, models with different vocabulary sizes
            (naming them by position), or bad ``weights``.

    Example:

    ```python
    ensemble = Ensemble([model_a, model_b], weights=[0.6, 0.4])
    translator = Translator(ensemble, tokenizer)
    translator.translate(["Two dogs play in the snow."])
    # or, from run directories or presets sharing a vocab.spm:
    translator = Translator.from_directory(["runs/seed0", "runs/seed1"])
    ```
    """

    def __init__(self, models, weights=None):
        models = tuple(models)
        if not models:
            raise ValueError("An Ensemble needs at least one model. Received: models=[]")
        sizes = [model.vocabulary_size for model in models]
        if len(set(sizes)) > 1:
            raise ValueError(
                "The models of an Ensemble must share one vocabulary; their "
                f"vocabulary sizes differ: {sizes} (models[0] ... models[{len(sizes) - 1}])."
            )
        self.models = models
        self.model_weights = check_weights(weights, len(models))
        self._log_weights = tuple(math.log(weight) for weight in self.model_weights)

    def __repr__(self):
        weights = ", ".join(f"{weight:.3g}" for weight in self.model_weights)
        return f"Ensemble({len(self.models)} models, weights=[{weights}])"

    # --- what the decoding and `Translator` read of a model ---

    @property
    def vocabulary_size(self):
        """The shared output vocabulary size."""
        return self.models[0].vocabulary_size

    @property
    def source_vocabulary_size(self):
        """Source ids every model accepts: the smallest source vocabulary."""
        return min(model.source_vocabulary_size for model in self.models)

    @property
    def num_layers(self):
        """Decoder layers every model has (alignments index each model's
        own layers: -1 is each model's last)."""
        return min(model.num_layers for model in self.models)

    @property
    def trainable_variables(self):
        return _unique(v for model in self.models for v in model.trainable_variables)

    @property
    def non_trainable_variables(self):
        return _unique(v for model in self.models for v in model.non_trainable_variables)

    @property
    def variables(self):
        """Every model's variables, each once."""
        return _unique(v for model in self.models for v in model.weights)

    def quantize(self, mode=None, config=None):
        """Each model's ``quantize(mode, config)``, in place (once for a
        model given twice); ``"int8"`` without a ``config`` is the
        package's int8 (`keras_transformer.utils.quantization`)."""
        config = quantization_config(mode, config)
        seen = set()
        for model in self.models:
            if id(model) not in seen:
                seen.add(id(model))
                model.quantize(mode, config=config)

    # --- the decoding interface of `Transformer` ---

    def log_probs(self, logits):
        """The ensemble's log-probabilities from each model's logits.

        Args:
            logits: a sequence of float tensors ``(..., vocabulary_size)``,
                one per model, in model order.

        Returns:
            float32 ``log(sum_i w_i softmax(logits_i))``, shaped like each
            of ``logits``.
        """
        weighted = [
            ops.log_softmax(ops.cast(x, "float32"), axis=-1) + log_weight
            for x, log_weight in zip(logits, self._log_weights)
        ]
        if len(weighted) == 1:
            return weighted[0]
        # log sum_i exp(x_i), shifted by the elementwise maximum. Every x_i
        # is finite (a log-softmax plus a log weight), so this needs none of
        # `ops.logsumexp`'s infinity handling, which made a two-model step
        # markedly slower under JAX on CPU.
        largest = weighted[0]
        for x in weighted[1:]:
            largest = ops.maximum(largest, x)
        total = ops.exp(weighted[0] - largest)
        for x in weighted[1:]:
            total = total + ops.exp(x - largest)
        return largest + ops.log(total)

    def encode(self, encoder_token_ids, training=False):
        """Each model's encoder. Returns ``(encoder_outputs, padding_masks)``:
        two tuples with one entry per model."""
        encoded = [model.encode(encoder_token_ids, training=training) for model in self.models]
        return tuple(x for x, _ in encoded), tuple(mask for _, mask in encoded)

    def build_cache(self, encoder_outputs, encoder_padding_masks, max_length):
        """A tuple of each model's `Transformer.build_cache`."""
        return tuple(
            model.build_cache(x, mask, max_length)
            for model, x, mask in zip(self.models, encoder_outputs, encoder_padding_masks)
        )

    def grow_cache(self, cache, max_length):
        """Each model's cache grown to ``max_length`` positions."""
        return tuple(
            model.grow_cache(model_cache, max_length)
            for model, model_cache in zip(self.models, cache)
        )

    def decode_step(self, decoder_token_ids, cache, cache_index):
        """Every model's `Transformer.decode_step` on its own cache.

        Returns:
            ``(log_probs, cache)``: the ensemble's float32 log-probabilities
            ``(batch, steps, vocabulary_size)`` (`log_probs`) and the tuple
            of updated caches.
        """
        logits, caches = [], []
        for model, model_cache in zip(self.models, cache):
            model_logits, model_cache = model.decode_step(
                decoder_token_ids, model_cache, cache_index
            )
            logits.append(model_logits)
            caches.append(model_cache)
        return self.log_probs(logits), tuple(caches)

    def decode(self, decoder_token_ids, encoder_outputs, encoder_padding_masks):
        """Full (uncached) decoder passes: the ensemble's float32
        log-probabilities for every position."""
        return self.log_probs(
            [
                model.decode(decoder_token_ids, x, mask)
                for model, x, mask in zip(self.models, encoder_outputs, encoder_padding_masks)
            ]
        )
