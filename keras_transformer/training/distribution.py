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
- PyTorch: Keras 3 has no distribution API for the torch backend; ``"data"``
  runs one process per device, started by ``torchrun``, whose training steps
  sum their gradients with ``torch.distributed``
  (`keras_transformer.training.torch_distributed`; `training_processes`).

Build, compile and fit inside the scope (under JAX the distribution also
shards each batch, so the global batch size must be divisible by the number
of data-parallel devices)::

    with distribution_scope("data"):
        model = Transformer.from_preset("big", vocabulary_size=37000)
        model.compile(...)
        model.fit(dataset)

The token-bucketed pipeline gives batches of many sizes; under JAX each must
split evenly over the data-parallel devices. `pipeline_options_for(kind)`
gives the `make_dataset` options that make it so (batch sizes rounded to the
global number of data-parallel devices and, on several hosts, each process
feeding its share of every global batch)::

    dataset, report = make_dataset(src, tgt, tokenizer, seed=0,
                                   **pipeline_options_for("data"))

Several hosts (JAX): start one process per host with Keras' variables
``KERAS_DISTRIBUTION_JOB_ADDRESSES`` (the coordinator's ``host:port``),
``KERAS_DISTRIBUTION_NUM_PROCESSES`` and ``KERAS_DISTRIBUTION_PROCESS_ID``;
`initialize_multi_host` (called by the functions here) then calls
`keras.distribution.initialize()` once, before JAX touches the devices.

Checkpoints written by a distributed run are ordinary `.keras` files and load
on one device.
"""

import contextlib
import os

import keras

if keras.config.backend() == "tensorflow":
    # tf.distribute strategies exist under the TensorFlow backend only.
    from keras_transformer.utils.tensorflow_devices import tf
if keras.config.backend() == "torch":
    # torch.distributed, under the torch backend only.
    from keras_transformer.training.torch_distributed import TorchProcesses

from keras_transformer.training.config_values import DISTRIBUTIONS  # noqa: F401 (imported from here)

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


def initialize_multi_host():
    """Calls `keras.distribution.initialize()` once on a multi-host JAX run.

    A run is multi-host when Keras' ``KERAS_DISTRIBUTION_NUM_PROCESSES`` is
    above 1 or ``KERAS_DISTRIBUTION_JOB_ADDRESSES`` is set (see
    `keras.distribution.initialize` for the three variables). Otherwise, on
    other backends, or when `jax.distributed` is already initialized, it does
    nothing, so a single host needs no setup. Call it before anything lists
    JAX devices; the other functions here call it first.

    Returns:
        bool. Whether this is a multi-host JAX run.
    """
    if keras.config.backend() != "jax":
        return False
    num_processes = int(os.environ.get("KERAS_DISTRIBUTION_NUM_PROCESSES") or 1)
    addresses = os.environ.get("KERAS_DISTRIBUTION_JOB_ADDRESSES")
    if num_processes <= 1 and not addresses:
        return False
    import jax

    if not jax.distributed.is_initialized():
        keras.distribution.initialize()
    return True


def batch_multiple_for(kind="none", model_parallelism=None):
    """The number every batch size must be a multiple of for ``kind``.

    Under JAX the batch is split over the data-parallel devices of all hosts
    (`keras.distribution.DataParallel` needs the batch size to be a multiple
    of their number): all devices for ``"data"``, ``devices /
    model_parallelism`` (the "batch" axis of the mesh) for ``"model"``.
    Under PyTorch ``"data"`` each of the torchrun processes takes an equal
    share of the rows: the number of processes. TensorFlow's strategies split
    any batch themselves, so they get 1, as does ``"none"``.

    Args:
        kind: str. One of `DISTRIBUTIONS`. Defaults to ``"none"``.
        model_parallelism: int. Devices per model replica for ``"model"``.
            Defaults to all devices.

    Returns:
        int. Pass it as ``batch_multiple`` to `make_dataset`.

    Example:

    ```python
    batch_multiple_for("data")  # jax.device_count() under JAX
    ```
    """
    _check_kind(kind)
    if kind == "data" and keras.config.backend() == "torch":
        return _torch_world()[1]
    if kind == "none" or keras.config.backend() != "jax":
        return 1
    initialize_multi_host()
    num_devices = len(keras.distribution.list_devices())
    if kind == "model":
        return num_devices // (model_parallelism or num_devices)
    return num_devices


def pipeline_options_for(kind="none", model_parallelism=None):
    """`make_dataset` keyword arguments that fit the batches to ``kind``.

    ``batch_multiple`` from `batch_multiple_for`; for ``"data"`` on several
    JAX hosts also ``num_shards`` (the number of processes) and
    ``shard_index`` (this process), so that each process yields its share of
    every global batch (all processes must use the same data and seed); the
    same for ``"data"`` under PyTorch (the torchrun processes).
    ``"model"`` on several hosts is not supported with this pipeline: Keras
    then shards the dataset itself, which needs one fixed batch size.

    Args:
        kind: str. One of `DISTRIBUTIONS`. Defaults to ``"none"``.
        model_parallelism: int. Devices per model replica for ``"model"``.

    Returns:
        A dict with ``batch_multiple``, ``num_shards`` and ``shard_index``.

    Example:

    ```python
    dataset, report = make_dataset(src, tgt, tokenizer, seed=0,
                                   **pipeline_options_for("data"))
    ```
    """
    options = {
        "batch_multiple": batch_multiple_for(kind, model_parallelism),
        "num_shards": 1,
        "shard_index": 0,
    }
    if kind == "data" and keras.config.backend() == "torch":
        options["shard_index"], options["num_shards"] = _torch_world()
    elif kind == "data" and _num_jax_processes() > 1:
        import jax

        options["num_shards"] = jax.process_count()
        options["shard_index"] = jax.process_index()
    return options


def _torch_world():
    """``(rank, world size)`` of the torch.distributed process group, or
    ``(0, 1)`` without one."""
    import torch.distributed

    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


class SingleProcess:
    """The one process of a run that is not torch data parallel: it is
    process 0 and writes the run directory (see `training_processes`)."""

    rank = 0
    world_size = 1
    is_chief = True

    def describe(self):
        return None

    def barrier(self):
        pass

    def broadcast(self, value):
        return value

    def install(self, model):
        pass

    def callback(self, backup):
        return None

    def close(self):
        pass


def training_processes(kind="none"):
    """The processes that train together for ``kind``.

    Under PyTorch, ``"data"`` is a `TorchProcesses`: one process per device,
    started by torchrun (a ValueError says so without torchrun's variables).
    Its ``rank``, ``world_size``, ``is_chief`` (process 0, which alone
    writes the run directory), ``barrier()``, ``broadcast(value)``,
    ``install(model)`` (the gradient all-reduce), ``callback(backup)`` and
    ``close()`` are what `train` uses. Otherwise a `SingleProcess` (JAX and
    TensorFlow distribute inside one process per host).
    """
    _check_kind(kind)
    if kind == "data" and keras.config.backend() == "torch":
        return TorchProcesses()
    return SingleProcess()


def _num_jax_processes():
    if keras.config.backend() != "jax":
        return 1
    initialize_multi_host()
    import jax

    return jax.process_count()


def _check_kind(kind):
    if kind not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}. Received: {kind!r}")


def make_jax_distribution(kind, devices=None, model_parallelism=None):
    """A `keras.distribution.Distribution` for the JAX backend.

    With several processes, ``"data"`` does not let Keras shard the dataset
    (it cannot with batches of varying size): each process's pipeline yields
    its own share of every global batch (`pipeline_options_for`).
    """
    initialize_multi_host()
    devices = devices or keras.distribution.list_devices()
    if kind == "data":
        return keras.distribution.DataParallel(
            devices=devices, auto_shard_dataset=_num_jax_processes() == 1
        )
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
    _check_kind(kind)
    backend = keras.config.backend()
    if kind == "none":
        yield None
        return
    if backend == "jax":
        if kind == "multi-worker":
            raise ValueError(
                "distribution='multi-worker' is TensorFlow's "
                "MultiWorkerMirroredStrategy; under JAX use 'data' or 'model' "
                "(multi-host JAX: set KERAS_DISTRIBUTION_JOB_ADDRESSES, "
                "KERAS_DISTRIBUTION_NUM_PROCESSES and KERAS_DISTRIBUTION_PROCESS_ID)."
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
    if kind == "data":
        # torch.distributed processes (`training_processes`): no scope.
        yield None
        return
    raise ValueError(
        f"distribution={kind!r} is not supported under the {backend} backend: "
        "PyTorch has 'data' (torchrun, one process per device). Use "
        "KERAS_BACKEND=jax for 'model' or tensorflow for 'multi-worker'."
    )
