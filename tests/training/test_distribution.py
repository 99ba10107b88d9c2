"""Multi-device training on virtual CPU devices: 2 devices give the loss of 1
device with the same global batch, and their checkpoints load on 1 device.

Virtual devices must be configured before the framework starts, so each run
is a subprocess (JAX: --xla_force_host_platform_device_count=2; TensorFlow:
two logical CPU devices)."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from conftest import REPO_ROOT, TWO_JAX_CPU_DEVICES

# Same weights, same data, no dropout: the only difference is how the batch
# is split, so the losses agree up to float32 reduction order.
TOLERANCE = 1e-4

WORKER = textwrap.dedent(
    """
    import json, os, sys
    kind, devices, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    backend = os.environ["KERAS_BACKEND"]
    if backend == "tensorflow":
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * devices
        )
    import keras, numpy as np
    import keras_transformer as kt
    from keras_transformer.training.distribution import distribution_scope

    rng = np.random.default_rng(0)
    n, length, vocab = 16, 6, 40
    source = rng.integers(4, vocab, size=(n, length)).astype("int32")
    target = rng.integers(4, vocab, size=(n, length)).astype("int32")
    inputs = {"encoder_token_ids": source,
              "decoder_token_ids": np.concatenate([np.full((n, 1), 2, "int32"), target[:, :-1]], 1)}
    keras.utils.set_random_seed(0)
    with distribution_scope(kind if devices > 1 else "none") as distribution:
        # The number of devices the run really splits over: TF's replicas,
        # or the size of the JAX distribution's device mesh.
        if distribution is None:
            replicas = 1
        elif backend == "tensorflow":
            replicas = distribution.num_replicas_in_sync
        else:
            replicas = int(np.prod(distribution.device_mesh.shape))
        model = kt.Transformer(vocabulary_size=vocab, num_layers=1, d_model=32,
                               num_heads=4, d_ff=64, dropout_rate=0.0)
        model.load_weights(sys.argv[4]) if len(sys.argv) > 4 else model.save_weights(out + ".init.weights.h5")
        model.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss=kt.LabelSmoothedCrossEntropy())
        history = model.fit(inputs, target, batch_size=8, epochs=3, shuffle=False, verbose=0)
        model.save(out + ".keras")
    # Model parallel: the [start, stop) ranges of each device's shard of the
    # attention kernels along their sharded axis.
    shards = {}
    if kind == "model" and devices > 1:
        for variable in model.weights:
            if "attention/" not in variable.path or not variable.path.endswith("kernel"):
                continue
            axis = 0 if variable.path.endswith("output/kernel") else 1
            shards[variable.path] = sorted(
                [shard.index[axis].start or 0, shard.index[axis].stop or variable.shape[axis]]
                for shard in variable.value.addressable_shards
            )
    json.dump({"loss": history.history["loss"], "devices": replicas, "shards": shards},
              open(out + ".json", "w"))
    """
)

RELOAD = textwrap.dedent(
    """
    import sys, numpy as np, keras, keras_transformer
    for path in sys.argv[1:]:  # one process checks every checkpoint
        model = keras.saving.load_model(path)
        ids = np.array([[5, 6, 7, 8]], "int32")
        logits = model({"encoder_token_ids": ids, "decoder_token_ids": ids})
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(logits)))
        print("reloaded", path)
    """
)


def head_columns(projection_layout, n, d_model=32, num_heads=4):
    """For each head, the fused kernel's columns holding its q/k/v (n = 3),
    k/v (n = 2) or q (n = 1), read off the layer's own head split."""
    from keras_transformer.layers import MultiHeadAttention

    layer = MultiHeadAttention(d_model, num_heads, projection_layout=projection_layout)
    columns = np.arange(n * d_model, dtype="float32").reshape(1, 1, -1)
    parts = [keras.ops.convert_to_numpy(p)[0, 0] for p in layer._split_heads(columns, n)]
    # parts: n arrays (heads, head_dim) of column ids
    return [set(np.concatenate([p[h] for p in parts]).astype(int)) for h in range(num_heads)]


def assert_shards_hold_whole_heads(shards, projection_layout, num_heads=4):
    assert shards, "no sharded attention kernels reported"
    fused = {"qkv": 3, "key_value": 2, "query": 1}
    for path, ranges in shards.items():
        assert len(ranges) == 2, (path, ranges)  # one shard per device
        name = path.split("/")[-2]
        if name == "output":  # row-parallel: rows are (head, head_dim)
            heads = [set(range(h * 8, (h + 1) * 8)) for h in range(num_heads)]
        else:
            heads = head_columns(projection_layout, fused[name])
        for start, stop in ranges:
            shard = set(range(start, stop))
            inside = [h for h in heads if h <= shard]
            assert set().union(*inside) == shard, f"{path}: shard [{start}, {stop}) straddles heads"


def run(script, args, env_extra):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env_extra)
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, str(script)] + [str(a) for a in args],
        env=env, capture_output=True, text=True, timeout=400,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.slow
def test_two_devices_match_one_device_and_checkpoints_load_on_one(tmp_path):
    backend = keras.backend.backend()
    if backend == "torch":
        pytest.skip("covered by test_torch_distribution_is_refused_clearly")
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    env = {"KERAS_BACKEND": backend}
    single = tmp_path / "single"
    run(worker, ["data", 1, single], env)
    kinds = ["data", "model"] if backend == "jax" else ["data"]
    for kind in kinds:
        multi = tmp_path / kind
        env2 = dict(env)
        if backend == "jax":
            env2["XLA_FLAGS"] = TWO_JAX_CPU_DEVICES
        run(worker, [kind, 2, multi, str(single) + ".init.weights.h5"], env2)
        one = json.load(open(str(single) + ".json"))
        two = json.load(open(str(multi) + ".json"))
        assert one["devices"] == 1 and two["devices"] == 2
        np.testing.assert_allclose(two["loss"], one["loss"], atol=TOLERANCE)
        if kind == "model":
            assert_shards_hold_whole_heads(two["shards"], "head_major")
            # The layout of old models ([Q | K | V]) straddles heads.
            with pytest.raises(AssertionError, match="straddles"):
                assert_shards_hold_whole_heads(two["shards"], "qkv_major")
    # The distributed checkpoints load in a plain single-device process.
    reload_script = tmp_path / "reload.py"
    reload_script.write_text(RELOAD)
    checkpoints = [str(tmp_path / kind) + ".keras" for kind in kinds]
    out = run(reload_script, checkpoints, env).stdout
    for path in checkpoints:
        assert f"reloaded {path}" in out


PIPELINE_WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np, keras, tensorflow as tf
    import keras_transformer as kt
    from keras_transformer.data import make_dataset
    from keras_transformer.training.distribution import distribution_scope, pipeline_options_for

    class NumberTokenizer:
        vocabulary_size = 40
        def tokenize(self, sentences):
            return tf.strings.to_number(tf.strings.split(sentences), tf.int32)

    rng = np.random.default_rng(0)
    def sentences(n, longest):
        return [" ".join(map(str, rng.integers(4, 40, rng.integers(1, longest))))
                for _ in range(n)]

    options = pipeline_options_for("data")
    # Unrounded, 120 tokens give batches of 15 (8-token buckets) and 7
    # (16): odd sizes that 2 devices cannot split. Short pairs (one batch
    # shape, one compilation) are enough to show it.
    batching = dict(tokens_per_batch=120, max_length=16, bucket_boundaries=[8],
                    bucketing="separate", **options)
    train, report = make_dataset(sentences(64, 7), sentences(64, 7), NumberTokenizer(),
                                 seed=0, repeat=True, **batching)
    # 5 short pairs: one partial batch, padded with a fully-masked row.
    valid, valid_report = make_dataset(sentences(5, 7), sentences(5, 7), NumberTokenizer(),
                                       shuffle=False, **batching)
    unrounded, _ = make_dataset(sentences(64, 7), sentences(64, 7), NumberTokenizer(),
                                seed=0, repeat=True,
                                **dict(batching, batch_multiple=1))
    keras.utils.set_random_seed(0)
    with distribution_scope("data") as distribution:
        model = kt.Transformer(vocabulary_size=40, num_layers=1, d_model=16, num_heads=2,
                               d_ff=32, dropout_rate=0.0)
        model.compile(optimizer="adam", loss=kt.LabelSmoothedCrossEntropy())
        history = model.fit(train, validation_data=valid, epochs=1, steps_per_epoch=3,
                            verbose=0)
        try:  # The bug the rounding fixes.
            model.fit(unrounded, epochs=1, steps_per_epoch=1, verbose=0)
            unrounded_error = None
        except Exception as error:
            unrounded_error = str(error)[:300]
    json.dump({
        "options": options,
        "devices": int(np.prod(distribution.device_mesh.shape)),
        "loss": history.history["loss"], "val_loss": history.history["val_loss"],
        "batch_sizes": list(report.bucket_batch_sizes),
        "valid_padding_rows": valid_report.num_padding_rows,
        "unrounded_error": unrounded_error,
    }, open(sys.argv[1], "w"))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(keras.backend.backend() != "jax", reason="JAX DataParallel")
def test_jax_data_parallel_trains_on_the_pipelines_batches(tmp_path):
    """2 virtual CPU devices: `pipeline_options_for("data")` rounds the
    token-bucketed batch sizes (and pads last partial batches) to a multiple
    of 2, so DataParallel shards every batch; unrounded, it cannot."""
    worker = tmp_path / "pipeline_worker.py"
    worker.write_text(PIPELINE_WORKER)
    out = tmp_path / "result.json"
    run(worker, [out], {
        "KERAS_BACKEND": "jax", "XLA_FLAGS": TWO_JAX_CPU_DEVICES,
    })  # fmt: skip
    result = json.load(open(out))
    assert result["options"] == {"batch_multiple": 2, "num_shards": 1, "shard_index": 0}
    assert result["devices"] == 2
    assert result["batch_sizes"] == [14, 6]  # 120 // 8 = 15, 120 // 16 = 7, rounded
    assert result["valid_padding_rows"] == 1
    assert np.isfinite(result["loss"]).all() and np.isfinite(result["val_loss"]).all()
    assert "evenly divide" in (result["unrounded_error"] or "")


def test_batch_multiple_for_a_single_device():
    from keras_transformer.training.distribution import batch_multiple_for
    from keras_transformer.training.distribution import initialize_multi_host
    from keras_transformer.training.distribution import pipeline_options_for

    assert batch_multiple_for("none") == 1
    expected = len(keras.distribution.list_devices()) if keras.backend.backend() == "jax" else 1
    assert batch_multiple_for("data") == expected
    assert pipeline_options_for("data") == {
        "batch_multiple": expected, "num_shards": 1, "shard_index": 0,
    }  # fmt: skip
    assert initialize_multi_host() is False  # one host: nothing to initialize
    with pytest.raises(ValueError, match="distribution must be one of"):
        batch_multiple_for("pipeline")


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="JAX multi-host")
def test_multi_host_initializes_once_and_shards_by_process(monkeypatch):
    """Two processes of four devices in all (simulated): Keras' initialize is
    called once, batches are rounded to the 4 global devices and this process
    (index 1) yields the second half of every global batch."""
    import jax

    from keras_transformer.training.distribution import pipeline_options_for

    calls = []
    monkeypatch.setenv("KERAS_DISTRIBUTION_NUM_PROCESSES", "2")
    monkeypatch.setattr(keras.distribution, "initialize", lambda: calls.append("init"))
    monkeypatch.setattr(jax.distributed, "is_initialized", lambda: bool(calls))
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(jax, "process_index", lambda: 1)
    monkeypatch.setattr(
        keras.distribution, "list_devices", lambda *args: [f"cpu:{i}" for i in range(4)]
    )
    options = pipeline_options_for("data")
    assert options == {"batch_multiple": 4, "num_shards": 2, "shard_index": 1}
    assert pipeline_options_for("model", model_parallelism=2)["batch_multiple"] == 2
    assert calls == ["init"]


def test_unknown_distribution_is_refused():
    from keras_transformer.training.distribution import distribution_scope

    with pytest.raises(ValueError, match="distribution must be one of"):
        with distribution_scope("pipeline"):
            pass


@pytest.mark.skipif(keras.backend.backend() != "torch", reason="torch only")
def test_torch_distribution_is_refused_clearly(monkeypatch):
    """PyTorch has "data" only, and only in torchrun's processes
    (tests/training/test_torch_data_parallel.py runs them)."""
    from keras_transformer.training.distribution import (
        distribution_scope,
        training_processes,
    )

    for kind in ("model", "multi-worker"):
        with pytest.raises(ValueError, match="PyTorch has 'data' \\(torchrun"):
            with distribution_scope(kind):
                pass
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(ValueError, match="start it with torchrun"):
        training_processes("data")
    assert training_processes("none").is_chief


def test_train_config_accepts_only_known_distributions():
    from keras_transformer.training.config import TrainConfig

    assert TrainConfig(distribution="data").distribution == "data"
    with pytest.raises(ValueError, match="distribution must be one of"):
        TrainConfig(distribution="pipeline")


@pytest.mark.slow
def test_cli_trains_with_distribution_flag(tmp_path):
    """`keras-transformer train --distribution data` builds, compiles and fits
    inside the strategy (TensorFlow: MirroredStrategy over the local CPU).

    The subprocess runs under TensorFlow whatever the suite's backend, so it
    runs once, in the PyTorch suite, the shortest of the three (JAX's data
    parallel from the CLI is `test_distribution_cli.py`'s, in the JAX suite)."""
    if keras.config.backend() != "torch":
        pytest.skip("the TensorFlow CLI run is the same in every suite: runs in the PyTorch suite")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="tensorflow")
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-m", "keras_transformer", "train", "--backend", "tensorflow",
         "--distribution", "data", "--output-dir", str(tmp_path / "run"),
         "--max-steps", "3", "--eval-sentences", "0", "--verbose", "0"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert (tmp_path / "run" / "model.weights.h5").exists()

