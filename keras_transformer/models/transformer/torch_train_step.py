"""The `Transformer`'s training step compiled as whole graphs under PyTorch.

Why the package does not use Keras' own path: ``jit_compile=True`` on the
torch backend wraps Keras' ``train_step`` in ``torch.compile``, whose
bytecode tracer (Dynamo) follows Keras' Python line by line, and much of it
breaks the graph: ``isinstance`` on ``.values``, dict mutation in
``Layer.__call__``'s call-signature handling, NumPy dtype lookups, a pybind
object in the name scope, ``nonzero`` and data-dependent scalars, and
``Tensor.backward``. On the tiny preset (Keras 3.15.1, torch 2.13) that is
47 breaks, 23 graphs, the recompile limit of ``Functional.call`` reached,
six minutes of compilation and a step six times slower than eager. None of
these can be changed from the package.

What this module does instead (`CompiledTorchTrainStep`):

1. It records the operators that Keras' own ``train_step`` runs (forward,
   label-smoothed loss, ``backward`` and the optimizer's in-place update,
   with accumulation, EMA and the metrics' totals) with ``make_fx``, which
   traces at the dispatcher: Keras' Python runs normally and only the tensor
   operations are recorded, so none of the above can break the graph. Every
   variable (weights, optimizer slots and step counter, metric totals) is a
   graph input that the graph updates in place, under a
   `keras.StatelessScope` that maps each variable to its input.
2. It compiles that graph with ``torch.compile(fullgraph=True,
   dynamic=False)`` (one graph, or an error, never a graph break): Inductor
   fuses the Adam update into a few kernels, as ``torch.optim.Adam(
   fused=True)`` does, with Keras' Adam arithmetic, schedule and options.
3. One compiled graph per batch signature (structure, shapes and dtypes of
   the batch) and per branch that Keras takes in Python (the update or the
   accumulation batch under gradient accumulation, EMA overwrite steps):
   the pipeline's handful of bucket shapes each compile once, and nothing
   recompiles from one batch to the next.

What is specialised at trace time, so checked here on the host instead:
the token-id checks (`check_token_ids` reads two numbers, which a graph
cannot raise on) run on each batch with `check_model_arrays` before its
step, as `checked_jax_step_function` does under JAX. Random ops stay random
per step (Inductor draws dropout masks from its own generator, so masks
differ from eager's for the same seed). A `keras.optimizers.LossScaleOptimizer`
(float16 loss scaling, whose skip of non-finite steps is a data-dependent
branch) keeps Keras' eager step.
"""

import keras

from keras_transformer.models.token_id_checked_model import check_model_arrays
from keras_transformer.utils.private_apis import (
    optimizer_batch_count,
    trace_aten_graph,
)


def _state_variables(model):
    """Every variable a training step reads or writes, each once."""
    variables, seen = [], set()
    groups = [model.trainable_variables, model.non_trainable_variables]
    if model.optimizer is not None:
        groups.append(model.optimizer.variables)
    groups.append(model.metrics_variables)
    for group in groups:
        for variable in group:
            if id(variable) not in seen:
                seen.add(id(variable))
                variables.append(variable)
    return variables


def _signature(tree):
    """Hashable structure, shapes and dtypes of a batch (tensors, arrays,
    Python values in nested dicts, lists and tuples)."""
    if isinstance(tree, dict):
        return ("dict",) + tuple((key, _signature(tree[key])) for key in sorted(tree))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__,) + tuple(_signature(item) for item in tree)
    shape = getattr(tree, "shape", None)
    if shape is not None:
        return (tuple(shape), str(tree.dtype), str(getattr(tree, "device", "")))
    return ("value", repr(tree))


def _branch_key(optimizer):
    """The Python branches Keras' optimizer takes at this batch (they are
    baked into a traced graph, so each gets its own): the update or the
    accumulation batch under gradient accumulation, and whether EMA
    overwrites the weights. Reads the step counter only where one matters."""
    if optimizer is None:
        return ()
    accumulate = optimizer.gradient_accumulation_steps
    overwrite = optimizer.use_ema and optimizer.ema_overwrite_frequency
    if not (accumulate or overwrite):
        return ()
    batches = optimizer_batch_count(optimizer)
    key = ()
    if accumulate:
        key += ((batches + 1) % accumulate == 0,)
        updates = batches // accumulate
    else:
        updates = batches
    if overwrite:
        key += ((updates + 1) % optimizer.ema_overwrite_frequency == 0,)
    return key


class CompiledTorchTrainStep:
    """Keras' torch ``train_function`` for one `Transformer`, compiled.

    Called by Keras' ``fit`` with ``[batch]``; returns the step's logs
    (tensors), as Keras' own train function does. See the module docstring.

    Args:
        model: the compiled `Transformer` (any `keras.Model` with Keras'
            torch ``train_step`` and the token-id contract).
        backend: str. The ``torch.compile`` backend. Defaults to
            "inductor"; "eager" runs the same single graph as recorded
            without code generation (for tests of the graph itself).
    """

    def __init__(self, model, backend="inductor"):
        self.model = model
        self.backend = backend
        self.compiled_steps = {}

    def __call__(self, data):
        (batch,) = data
        model = self.model
        x, y, _ = keras.utils.unpack_x_y_sample_weight(batch)
        check_model_arrays(
            model, x, y, label_ignore_id=getattr(model.loss, "pad_id", None)
        )
        variables = _state_variables(model)
        key = (_signature(batch), _branch_key(model.optimizer), len(variables))
        step = self.compiled_steps.get(key)
        if step is None:
            step = self.compiled_steps[key] = self._compile(variables, batch)
        import torch

        with torch.no_grad():
            return step([variable.value for variable in variables], batch)

    def _compile(self, variables, batch):
        import torch

        model = self.model

        def train_step(values, batch):
            mapping = list(zip(variables, values))
            with keras.StatelessScope(state_mapping=mapping) as scope:
                logs = model.train_step(batch)
            # Keras' torch optimizer updates weights and slots in place (its
            # `_foreach` ops act on the inputs themselves); `assign` (the
            # step counter, metric totals, EMA) records a new tensor in the
            # scope: copy those into their inputs.
            with torch.no_grad():
                for variable, value in mapping:
                    new = scope.get_current_value(variable)
                    if new is not None and new is not value:
                        value.copy_(new)
            return logs

        # The trace runs the step once for real, on copies of the state.
        copies = [
            variable.value.detach().clone().requires_grad_(variable.trainable)
            for variable in variables
        ]
        graph = trace_aten_graph(train_step, copies, batch, allow_data_dependent=True)
        return torch.compile(graph, fullgraph=True, dynamic=False, backend=self.backend)


def compiled_by_default():
    """What ``jit_compile="auto"`` picks under PyTorch: the compiled step on
    a CUDA device, where Keras' eager step is bound by the host dispatching
    thousands of small operators; eager on the CPU, where compiling a step
    takes minutes on a few cores (more than short runs and tests train)."""
    import torch

    return torch.cuda.is_available()


def make_compiled_train_function(model, backend="inductor"):
    """A `CompiledTorchTrainStep`, or None where the step must stay eager
    (float16 loss scaling, see the module docstring)."""
    if isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer):
        return None
    return CompiledTorchTrainStep(model, backend=backend)
