"""Data-parallel training under PyTorch with ``torch.distributed``.

One process per device, started by ``torchrun`` (``torchrun
--nproc_per_node=N -m keras_transformer train --backend torch
--distribution data ...``); each process trains the same model on its own
rows of every global batch, and the processes sum their gradients before
every update, so that they all apply the same update and keep the same
weights.

Why this module, and not Keras or ``DistributedDataParallel``: Keras 3 has no
distribution API for the torch backend (``keras.distribution`` is JAX's),
and ``torch.nn.parallel.DistributedDataParallel`` reduces gradients from
hooks that it arms in its own ``forward``: Keras' torch ``train_step``
calls the model itself, not a wrapper, then reads each variable's ``.grad``
and hands the list to ``optimizer.apply``. So the reduction goes where that
list passes (`TorchProcesses.install`):

1. Before the step, the batch's weight (its non-padding target tokens, the
   denominator of the token-mean loss) is summed over the processes: one
   all-reduce of a scalar.
2. In ``optimizer.apply``, before Keras' accumulation, clipping, loss-scale
   check or update, each gradient is scaled by this process's share of the
   global weight and summed over the processes (one all-reduce of a flat
   buffer per dtype). Every process then applies the gradient of the global
   batch's token-mean loss: what one process computes on the whole batch.
   (The mean of the processes' gradients, which ``DistributedDataParallel``
   computes, weights a token more where its shard has fewer tokens.)

Both are functional collectives (`traceable_all_reduce_sum`), tensor
operations inside the step, so the package's compiled torch step
(`keras_transformer.models.transformer.torch_train_step`) records them with
the rest of the step.

The processes also agree on everything else that `fit` decides:

- the weights and the optimizer state are broadcast from process 0 when
  `fit` starts (after process 0 restored a backup, if it did), so a
  resumed run continues from the same state in every process;
- process 0 alone writes the run directory (vocabulary, corpus,
  checkpoints, backups, logs, the final model's preset files,
  ``results.json``) and runs
  validation; after every batch and epoch the others follow its
  ``stop_training`` (early stopping, time budget, step limit, NaN loss), and
  a SIGTERM received by any process stops all of them after the same batch
  (`FollowProcessZero`);
- the other processes use a different dropout seed each (their initial
  weights, drawn with it, are replaced by process 0's).

The process group is initialised from torchrun's variables (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``): NCCL with
one CUDA device per process (``LOCAL_RANK``), else gloo on the CPU.
"""

import os

import keras
import torch
import torch.distributed as dist

from keras_transformer.training.update_backup import UpdateBackup
from keras_transformer.utils.private_apis import traceable_all_reduce_sum

TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def launched_by_torchrun():
    """Whether torchrun's variables describe this process."""
    return all(name in os.environ for name in TORCHRUN_VARIABLES)


class TorchProcesses:
    """The processes of a data-parallel PyTorch run (this one among them).

    Initialises the default process group from torchrun's variables (unless
    one is initialised already) and, on CUDA, makes ``cuda:LOCAL_RANK`` this
    process's device, before any model is built. `close` destroys the group
    it created.

    Attributes:
        rank: int. This process (0 writes the run directory).
        world_size: int. The number of processes.
        is_chief: bool. ``rank == 0``.
    """

    def __init__(self):
        if not launched_by_torchrun():
            missing = [name for name in TORCHRUN_VARIABLES if name not in os.environ]
            raise ValueError(
                "distribution='data' under PyTorch runs one process per device: "
                "start it with torchrun, e.g. torchrun --nproc_per_node=2 -m "
                "keras_transformer train --backend torch --distribution data ... "
                f"({', '.join(missing)} not set)."
            )
        self._owns_group = not dist.is_initialized()
        if torch.cuda.is_available():
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        if self._owns_group:
            dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.is_chief = self.rank == 0
        self.backend = dist.get_backend()

    def __repr__(self):
        return f"TorchProcesses(rank={self.rank}, world_size={self.world_size}, backend={self.backend!r})"

    def describe(self):
        """One line for the log."""
        return (
            f"Data parallel: {self.world_size} torch.distributed processes "
            f"({self.backend}); each trains on 1/{self.world_size} of the rows "
            "of every batch; process 0 writes the run directory."
        )

    def _device(self):
        if self.backend == "nccl":
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")

    def barrier(self):
        """Waits until every process reaches it."""
        dist.barrier()

    def broadcast(self, value):
        """Process 0's ``value`` (any picklable object), in every process."""
        values = [value]
        dist.broadcast_object_list(values, src=0)
        return values[0]

    def install(self, model):
        """Makes ``model``'s training step reduce its gradients over the
        processes (see the module docstring). Call after ``compile``."""
        install_gradient_reduction(model)

    def follower_backup(self, backup_dir, **kwargs):
        """The `UpdateBackup` of a process other than 0: it counts batches
        and stops on SIGTERM as process 0's does, but writes and restores
        nothing (process 0's state is broadcast when `fit` starts), so
        ``backup_dir`` is not used."""
        return _CountingBackup(os.devnull, **kwargs)

    def callback(self, backup):
        """The `FollowProcessZero` callback of this process's ``backup``
        (whose SIGTERM it defers to the batch the processes agree on); last
        in `fit`'s callbacks."""
        backup.defer_sigterm = True
        return FollowProcessZero(backup, self._device())

    def close(self):
        """Destroys the process group, if this object created it."""
        if self._owns_group and dist.is_initialized():
            dist.destroy_process_group()
            self._owns_group = False


def _batch_weight(model, batch):
    """The denominator of the batch's loss: its non-padding target tokens
    (times the sample weights, if any), as `LabelSmoothedCrossEntropy`
    counts them."""
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(batch)
    y = keras.ops.convert_to_tensor(y)
    pad_id = getattr(model.loss, "pad_id", None)
    if pad_id is None:
        weights = keras.ops.ones(keras.ops.shape(y), "float32")
    else:
        weights = keras.ops.cast(keras.ops.not_equal(y, pad_id), "float32")
    if sample_weight is not None:
        sample_weight = keras.ops.cast(sample_weight, "float32")
        if len(sample_weight.shape) == 1 and len(weights.shape) > 1:
            sample_weight = sample_weight[:, None]
        weights = weights * sample_weight
    return keras.ops.sum(weights)


def install_gradient_reduction(model):
    """Wraps ``model.train_step`` and ``model.optimizer.apply`` (on these
    instances) so that every update applies the gradient of the global
    batch's token-mean loss. See the module docstring."""
    train_step = model.train_step
    optimizer = model.optimizer
    apply = optimizer.apply
    share = {}

    def reduced_train_step(data):
        local = _batch_weight(model, data)
        total = traceable_all_reduce_sum(local.detach())
        # A global batch of padding only has zero gradients everywhere.
        share["value"] = local / torch.clamp(total, min=1.0)
        return train_step(data)

    def reduced_apply(grads, trainable_variables=None):
        grads = _all_reduce_gradients(list(grads), share.pop("value"))
        return apply(grads, trainable_variables)

    model.train_step = reduced_train_step
    optimizer.apply = reduced_apply


def _all_reduce_gradients(grads, share):
    """``sum over processes of share * grad`` for each gradient (None stays
    None), with one all-reduce per dtype."""
    by_dtype = {}
    for index, grad in enumerate(grads):
        if grad is not None:
            by_dtype.setdefault(grad.dtype, []).append(index)
    reduced = list(grads)
    for dtype, indices in by_dtype.items():
        flat = traceable_all_reduce_sum(
            torch.cat([grads[i].reshape(-1) for i in indices]) * share.to(dtype)
        )
        offset = 0
        for i in indices:
            size = grads[i].numel()
            reduced[i] = flat[offset : offset + size].view_as(grads[i])
            offset += size
    return reduced


class _CountingBackup(UpdateBackup):
    """An `UpdateBackup` that writes, restores and deletes nothing."""

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def _save_model(self):
        pass


class FollowProcessZero(keras.callbacks.Callback):
    """Keeps the processes of a data-parallel run in step; last in `fit`'s
    callbacks, in every process.

    - ``on_train_begin``: broadcasts process 0's weights and optimizer
      state (restored from a backup or not) to the others.
    - After every batch and epoch: one all-reduce (max) of process 0's
      ``stop_training`` and of each process's "SIGTERM received", so every
      process stops after the same batch, and a SIGTERM makes every
      process's `UpdateBackup` stop after the same update (process 0's
      saves the backup).

    Args:
        backup: this process's `UpdateBackup` (its SIGTERM flag is read and
            set).
        device: the torch device of the flags (CUDA under NCCL).
    """

    def __init__(self, backup, device):
        super().__init__()
        self.backup = backup
        self.device = device

    def on_train_begin(self, logs=None):
        variables = list(self.model.variables)
        if self.model.optimizer is not None:
            variables += list(self.model.optimizer.variables)
        seen = set()
        with torch.no_grad():
            for variable in variables:
                if id(variable) in seen or "seed_generator" in variable.path:
                    continue  # Each process keeps its own dropout stream.
                seen.add(id(variable))
                dist.broadcast(variable.value.data, src=0)

    def _agree(self):
        signal = self.backup.sigterm_received()
        stop = dist.get_rank() == 0 and bool(self.model.stop_training)
        flags = torch.tensor([float(stop), float(signal)], device=self.device)
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)
        stop, signal = (bool(value) for value in flags.tolist())
        self.model.stop_training = stop
        if signal:
            self.backup.request_sigterm_stop()

    def on_train_batch_end(self, batch, logs=None):
        self._agree()

    def on_epoch_end(self, epoch, logs=None):
        self._agree()
