"""Multi-device training on the engines Keras already has.

- JAX: `keras.distribution.DataParallel` over all devices, or
  `keras.distribution.ModelParallel` with a `LayoutMap` that shards the
  attention and feed-forward kernels (and the shared embedding) over a
  "model" mesh axis — Megatron-style column/row splits, so each pair of
  matmuls needs one all-reduce.
- TensorFlow: `tf.distribute.MirroredStrategy` (one machine, all local
  devices) or `tf.distribute.MultiWorkerMirroredStrategy` (several machines,
  configured by the ``TF_CONFIG`` environment variable). Build and compile the
  model inside `distribution_scope(...)`.
- PyTorch: Keras 3 has no distribution API for the torch backend; use JAX or
  TensorFlow for multi-device runs, or wrap the model in
  `torch.nn.parallel.DistributedDataParallel` in your own loop.

Build, compile and fit inside the scope (under JAX the distribution also
shards each batch, so the global batch size must be divisible by the number
of data-parallel devices)::

    with distribution_scope("data"):
        model = Transformer.from_preset("big", vocabulary_size=37000)
        model.compile(...)
        model.fit(dataset)

Checkpoints written by a distributed run are ordinary `.keras` files and load
on one device.
"""

import contextlib

import keras

DISTRIBUTIONS = ("none", "data", "model", "multi-worker")


def model_parallel_layout_map(device_mesh, model_axis="model"):
    """LayoutMap sharding the Transformer's big kernels over ``model_axis``.

    Column-parallel (output dim sharded): fused QKV, query, key/value and the
    first feed-forward kernel (and its bias). Row-parallel (input dim
    sharded): the attention output and the second feed-forward kernel. The
    shared embedding is sharded over the vocabulary. LayerNorm and the other
    biases are replicated.

    Attention is split along heads, as in Megatron-LM: the fused projections'
    columns are grouped by head (``projection_layout="head_major"``, the
    default: ``[q_1 k_1 v_1 | q_2 k_2 v_2 | ...]``), so a contiguous block of
    columns holds the queries, keys and values of whole heads, and the
    output kernel's rows are head-major too. Each device then attends with
    its own heads and no resharding is needed before attention. This needs
    the model-axis size to divide ``num_heads``. Models saved before the
    option existed (``"qkv_major"``, ``[Q | K | V]``) still shard, but their
    shards straddle Q/K/V and heads, so XLA reshards before attention.
    """
    layout_map = keras.distribution.LayoutMap(device_mesh)
    layout_map[r".*attention/(qkv|query|key_value)/kernel"] = (None, model_axis)
    layout_map[r".*attention/(qkv|query|key_value)/bias"] = (model_axis,)
    layout_map[r".*attention/output/kernel"] = (model_axis, None)
    layout_map[r".*feed_forward/inner/kernel"] = (None, model_axis)
    layout_map[r".*feed_forward/inner/bias"] = (model_axis,)
    layout_map[r".*feed_forward/output/kernel"] = (model_axis, None)
    layout_map[r".*token_embedding/embeddings"] = (model_axis, None)
    return layout_map


def make_jax_distribution(kind, devices=None, model_parallelism=None):
    """A `keras.distribution.Distribution` for the JAX backend."""
    devices = devices or keras.distribution.list_devices()
    if kind == "data":
        return keras.distribution.DataParallel(devices=devices)
    if kind == "model":
        model_parallelism = model_parallelism or len(devices)
        if len(devices) % model_parallelism:
            raise ValueError(
                f"model_parallelism={model_parallelism} must divide the number "
                f"of devices ({len(devices)})"
            )
        mesh = keras.distribution.DeviceMesh(
            shape=(len(devices) // model_parallelism, model_parallelism),
            axis_names=("batch", "model"),
            devices=devices,
        )
        return keras.distribution.ModelParallel(
            layout_map=model_parallel_layout_map(mesh), batch_dim_name="batch"
        )
    raise ValueError(
        f"Unknown JAX distribution {kind!r}; use 'data' or 'model'."
    )


def make_tf_strategy(kind):
    import tensorflow as tf

    if kind == "data":
        return tf.distribute.MirroredStrategy()
    if kind == "multi-worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise ValueError(
        f"Unknown TensorFlow distribution {kind!r}; use 'data' "
        "(MirroredStrategy) or 'multi-worker' (MultiWorkerMirroredStrategy, "
        "configured by TF_CONFIG). Model parallelism needs the JAX backend."
    )


@contextlib.contextmanager
def distribution_scope(kind="none", model_parallelism=None):
    """Context in which to build and compile the model for ``kind``.

    ``kind``: "none", "data", "model" (JAX only) or "multi-worker"
    (TensorFlow only). Raises a ValueError naming the backend when the
    combination is not supported.
    """
    if kind not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}. Received: {kind!r}")
    backend = keras.config.backend()
    if kind == "none":
        yield None
        return
    if backend == "jax":
        if kind == "multi-worker":
            raise ValueError(
                "distribution='multi-worker' is TensorFlow's "
                "MultiWorkerMirroredStrategy; under JAX use 'data' or 'model' "
                "(multi-host JAX: call jax.distributed.initialize() first)."
            )
        distribution = make_jax_distribution(kind, model_parallelism=model_parallelism)
        previous = keras.distribution.distribution()
        keras.distribution.set_distribution(distribution)
        try:
            yield distribution
        finally:
            keras.distribution.set_distribution(previous)
        return
    if backend == "tensorflow":
        strategy = make_tf_strategy(kind)
        with strategy.scope():
            yield strategy
        return
    raise ValueError(
        f"distribution={kind!r} is not supported under the {backend} backend: "
        "Keras 3 has no multi-device API for PyTorch. Use KERAS_BACKEND=jax "
        "('data' or 'model') or tensorflow ('data' or 'multi-worker'), or "
        "wrap the model in torch DistributedDataParallel yourself."
    )
