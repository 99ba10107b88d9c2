"""Temperature sampling of the target languages of a prepared corpus
(`CorpusStream`'s ``sampling_temperature``): how many times a pass takes
each pair of each language, and the draw of one shard's pairs for a pass.
"""

import math

import numpy as np


def language_sampling_factors(corpus, temperature):
    """``{language: r_l}``: how many times a pass takes each pair of each
    language, on average, under temperature sampling (see `CorpusStream`);
    empty for None."""
    if temperature is None:
        return {}
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not math.isfinite(temperature)
        or temperature <= 0
    ):
        raise ValueError(
            "sampling_temperature must be a number > 0 (1: the corpus's "
            f"proportions). Received: sampling_temperature={temperature!r}"
        )
    if not corpus.languages:
        raise ValueError(
            f"sampling_temperature applies to a corpus of several target languages; "
            f"the prepared corpus {corpus.path!r} has one (prepare it with languages)."
        )
    counts = {lang: n for lang, n in corpus.language_pairs.items() if n}
    total = sum(counts.values())
    weights = {lang: (n / total) ** (1.0 / temperature) for lang, n in counts.items()}
    norm = sum(weights.values())
    return {lang: weights[lang] / norm * total / counts[lang] for lang in counts}


def _resampled(kept, factor, rng):
    """``kept`` (a shard's pair indices) taken ``factor`` times on
    average: ``floor(factor)`` times each, and a random
    ``factor - floor(factor)`` share of them once more."""
    whole = int(factor)
    extra = int(round((factor - whole) * len(kept)))
    chosen = rng.choice(len(kept), size=extra, replace=False) if extra else np.zeros(0, np.int64)
    return np.concatenate([np.tile(kept, whole), kept[np.sort(chosen)]]).astype(np.int64)
