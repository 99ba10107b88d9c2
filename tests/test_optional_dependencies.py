"""Without TensorFlow and keras-hub (a GPU machine with only JAX or PyTorch),
the model, its layers, the objectives, the decoding and the tokenizer import
and run; the parts that need TensorFlow say so when used."""

import json
import subprocess
import sys

import keras
import pytest

import keras_transformer as kt

from conftest import REPO_ROOT

WITHOUT_TENSORFLOW = """
import json
import sys

# As if not installed: importing them raises ImportError, find_spec gives None.
for name in ("tensorflow", "tensorflow_text", "keras_hub"):
    sys.modules[name] = None
import numpy as np
import keras_transformer as kt
from keras_transformer.decoding import DecodeOptions, Generator
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer

assert not kt.TENSORFLOW_AVAILABLE and not kt.KERAS_HUB_AVAILABLE
# The public names do not depend on what is installed: those that need
# keras-hub or TensorFlow raise an ImportError naming it when used.
NEEDS = {"TransformerSeq2SeqLM": "keras-hub", "TransformerSeq2SeqLMPreprocessor": "keras-hub",
         "make_dataset": "TensorFlow",
         "make_dataset_from_corpus": "TensorFlow", "make_dataset_from_files": "TensorFlow"}
NAMESPACES = {"": kt, "layers": kt.layers, "models": kt.models, "objectives": kt.objectives,
              "decoding": kt.decoding, "data": kt.data, "training": kt.training,
              "export": kt.export}
for namespace in NAMESPACES.values():
    for name in namespace.__all__:
        if name not in NEEDS:
            assert hasattr(namespace, name), (namespace.__name__, name)
            continue
        try:
            getattr(namespace, name)
            raise SystemExit(f"{namespace.__name__}.{name} did not refuse")
        except ImportError as error:
            assert NEEDS[name] in str(error) and name in str(error), error
try:
    from keras_transformer.models import TransformerSeq2SeqLM
    raise SystemExit("from keras_transformer.models import TransformerSeq2SeqLM did not refuse")
except ImportError as error:
    assert "needs keras-hub (pip install keras-hub)" in str(error), error
print(json.dumps({key: sorted(namespace.__all__) for key, namespace in NAMESPACES.items()}))
try:
    kt.export_saved_model("no_such_run", "exported")
    raise SystemExit("export_saved_model did not refuse")
except ImportError as error:
    assert "needs tensorflow" in str(error) and "pip install" in str(error), error
model = kt.Transformer.from_preset("tiny", vocabulary_size=50, num_layers=1, d_model=32,
                                   num_heads=2, d_ff=64)
model.compile(optimizer=kt.transformer_optimizer(d_model=32), loss=kt.LabelSmoothedCrossEntropy())
rng = np.random.default_rng(0)
x = {"encoder_token_ids": rng.integers(4, 50, (4, 6)), "decoder_token_ids": rng.integers(4, 50, (4, 5))}
model.fit(x, rng.integers(4, 50, (4, 5)), epochs=1, verbose=0)
sequences, _ = Generator(model).decode(rng.integers(4, 50, (2, 5)).tolist(), DecodeOptions(beam_size=2), 8)
# The tokenizer runs in Python through sentencepiece.
tokenizer = SubwordTokenizer.train(["two dogs play", "a cat sleeps", "dogs and cats"] * 20, 30)
ids = tokenizer.tokenize(["two dogs", ""])
assert ids[1] == [] and tokenizer.detokenize(ids) == ["two dogs", ""], ids
assert tokenizer.tokenize("a cat") == ids[0][:0] + tokenizer.encode(["a cat"])[0]
assert tokenizer.id_to_piece([0, 1, 2, 3]) == ["<pad>", "<unk>", "<s>", "</s>"]
assert "tensorflow" not in [m for m in sys.modules if sys.modules[m] is not None]
print("ok")
"""


@pytest.mark.skipif(
    keras.config.backend() == "tensorflow", reason="the TensorFlow backend needs TensorFlow"
)
def test_model_and_decoding_work_without_tensorflow_and_keras_hub():
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_TENSORFLOW], cwd=REPO_ROOT,
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
    # The same public names as with every dependency installed.
    names_without = json.loads(done.stdout.strip().splitlines()[-2])
    for key, names in names_without.items():
        namespace = getattr(kt, key) if key else kt
        assert names == sorted(namespace.__all__), key
