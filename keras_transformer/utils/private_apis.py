"""The package's only uses of private Keras, keras-hub, PyTorch and TensorFlow Text APIs.

Each is here because no public API serves, and says why; the rest of the
package calls these functions and classes instead of reaching into another
library's internals, so that an upgrade of Keras, keras-hub or TF Text has
one module to check.

Longer than the package's usual module because every private use lives
here, whatever its concern: that one place is the point of the module.
"""

import contextlib
import contextvars
import functools
import gc
import hashlib
import re
import sys
import weakref

import keras

from keras_transformer.utils.dependencies import MissingDependencyError

try:
    from keras_hub.models import CausalLM
    from keras_hub.src.utils.tensor_utils import (
        preprocessing_function as _keras_hub_preprocessing_function,
    )
    from keras_hub.tokenizers import SentencePieceTokenizer

    KERAS_HUB_TOKENIZER_AVAILABLE = True
except ImportError:  # keras-hub is needed only by the keras-hub family.
    CausalLM = None
    SentencePieceTokenizer = object
    _keras_hub_preprocessing_function = None
    KERAS_HUB_TOKENIZER_AVAILABLE = False

try:
    from keras_hub.src.utils.preset_utils import KerasPresetLoader as _KerasPresetLoader
    from keras_hub.src.utils.preset_utils import load_json as _load_preset_json
    from keras_hub.src.utils.transformers.preset_loader import (
        TransformersPresetLoader as _TransformersPresetLoader,
    )
except ImportError:  # keras-hub's presets are needed only with keras-hub.
    _TransformersPresetLoader = None


# --- Keras ---


@contextlib.contextmanager
def one_garbage_collection():
    """Within the block, ``gc.collect()`` does nothing; one full collection
    runs at its end. For ``Model.quantize``: Keras' ``Layer.__delattr__``
    calls ``gc.collect()`` after each float kernel that quantization deletes:
    a full collection per Dense layer, each scanning the whole heap (hundreds
    of thousands of objects once TensorFlow is imported), where one at the
    end frees the same memory."""
    collect = gc.collect
    gc.collect = lambda generation=2: 0
    try:
        yield
    finally:
        gc.collect = collect
        gc.collect()


def flatten_layers(layer, include_self=True):
    """Every layer nested in ``layer`` (Keras' ``Layer._flatten_layers``;
    Keras has no public recursive listing of sublayers)."""
    return list(layer._flatten_layers(include_self=include_self))


def _own_variables(layer):
    """The variables that ``layer`` itself creates (not its sublayers')."""
    return list(layer._trainable_variables) + list(layer._non_trainable_variables)


# torch: the tensors that `variables_read_as_cast` writes each variable's
# cast value into, kept per variable (a weight's torch tensor) for as long
# as it lives.
_TORCH_CAST_READS = None


def _torch_cast_read(variable, dtype):
    """``variable`` cast to ``dtype`` under torch, written into the tensor
    kept for that variable and dtype (created on the first call). A graph
    that recorded the kept tensor by reference (`trace_aten_graph`: tensors
    that are not arguments are constants read by reference) reads the
    current weights at each call, as it does a weight's own tensor.

    The copy is skipped while the variable's tensor is unchanged: torch
    counts the in-place writes to a tensor in its ``_version`` (an
    assignment to a Keras variable is one), so a server's requests do not
    cast every weight again."""
    global _TORCH_CAST_READS
    import torch
    import torch.utils.weak

    if _TORCH_CAST_READS is None:
        # Keyed by identity: a torch tensor's `==` is elementwise, which
        # `weakref.WeakKeyDictionary` would call.
        _TORCH_CAST_READS = torch.utils.weak.WeakIdKeyDictionary()
    value = variable.value
    kept = _TORCH_CAST_READS.setdefault(value, {})
    # (the cast tensor, the variable's ``_version`` it was cast from)
    cast, version = kept.get(dtype, (None, None))
    with torch.no_grad():  # A decode's weights, never differentiated.
        if cast is None or cast.shape != value.shape:
            cast = keras.ops.cast(value, dtype)
        elif version != value._version:
            cast.copy_(value)  # converts as the cast does, without a new tensor
    kept[dtype] = (cast, value._version)
    return cast


def _cast_reads(models):
    """``[(variable, dtype)]``: the variables of ``models`` that their
    layers read cast, and the dtype each is read as (`variables_read_as_cast`)."""
    reads = []
    for layer in (layer for model in models for layer in flatten_layers(model)):
        # `cast_reads`: variables read without autocast that the layer casts
        # itself (the tied embeddings of the output projection).
        reads += list(getattr(layer, "cast_reads", list)())
        dtype = layer.compute_dtype
        if layer.autocast and dtype != layer.variable_dtype and keras.backend.is_float_dtype(dtype):
            reads += [
                (variable, dtype) for variable in _own_variables(layer)
                if variable._autocast and keras.backend.is_float_dtype(variable.dtype)
                and variable.dtype != dtype
            ]
        reads += _int8_kernel_reads(layer)
    return reads


# TensorFlow: (id(variable), dtype) -> a variable holding that variable's
# value cast to dtype, while a `stored_cast_reads` block is open.
_STORED_CASTS = contextvars.ContextVar("stored_casts", default=None)


@contextlib.contextmanager
def stored_cast_reads(models):
    """For a TensorFlow graph: within the block, `variables_read_as_cast` reads
    each float weight of ``models`` that it would cast from a variable made
    on entry that holds the weight already cast (a ``mixed_bfloat16``
    model's float32 kernels as bfloat16 variables). A graph traced in the
    block reads the copy instead of casting the weight at every call: the
    SavedModel's searches, which otherwise cast every kernel at every
    request (5.7% of a one-sentence request's op time for the `small`
    preset on a 2-core AMD EPYC, in TensorFlow's profiler). Yields the
    copies, which the caller keeps (an export saves them with its graph).
    They hold the values at entry: a later assignment to a weight does not
    reach them. An int8 kernel keeps its per-call cast: a copy in the
    compute dtype would undo the int8 export's memory saving.
    """
    stored = {}
    for variable, dtype in _cast_reads(models):
        key = (id(variable), dtype)
        if key not in stored and keras.backend.is_float_dtype(variable.dtype):
            stored[key] = keras.Variable(
                keras.ops.cast(variable.value, dtype), dtype=dtype, trainable=False,
                autocast=False, name=variable.path.replace("/", "_") + "_" + dtype,
            )
    token = _STORED_CASTS.set(stored)
    try:
        yield list(stored.values())
    finally:
        _STORED_CASTS.reset(token)


@contextlib.contextmanager
def variables_read_as_cast(models, keep=False):
    """Within the block, each variable of ``models`` that its layer reads
    cast to another dtype (a float32 kernel of a ``mixed_bfloat16`` layer)
    reads as one tensor cast once, on entry, to that dtype.

    A decoding loop reads every weight at every step; under a mixed policy
    each read is a cast of the whole kernel (in a TensorFlow graph one Cast
    op per kernel per step: about 5 M values a step for the `small`
    preset). The int8 kernel of a Dense layer that keeps float inputs
    (`_int8_kernel_reads`) reads once as the compute dtype too. The values
    are those of the per-read cast (the same rounding), so the outputs are
    unchanged. A variable reads as what its own layer's
    autocast scope makes of it: Keras' `Layer.__call__` enters
    ``AutocastScope(compute_dtype)`` for a layer whose compute and variable
    dtypes differ.

    Private: Keras' public `StatelessScope` converts each mapped value to
    its variable's own dtype, so the cast value is put into the scope's
    ``state_mapping`` directly (Keras' `Variable.value` returns a scope's
    value through its autocast, which leaves a value of the scope's dtype
    as it is). Nothing is assigned inside a decode; an assignment inside
    the block would go to the scope, not to the variable.

    With ``keep`` (torch only) each cast value is written into a tensor
    kept per variable for the variable's lifetime (`_torch_cast_read`): the
    compiled decode records a model step once per shape with the tensors it
    reads as constants, so the tensors it read must stay the ones that later
    blocks fill. Without it the cast values last for the block.
    """
    if keep and keras.config.backend() == "torch":
        cast_read = _torch_cast_read
    else:
        def cast_read(variable, dtype):
            return keras.ops.cast(variable.value, dtype)
    stored = _STORED_CASTS.get() or {}
    casts = {}
    for variable, dtype in _cast_reads(models):
        copy = stored.get((id(variable), dtype))
        casts[id(variable)] = (
            cast_read(variable, dtype) if copy is None else keras.ops.convert_to_tensor(copy)
        )
    if not casts:
        yield
        return
    scope = keras.StatelessScope()
    scope.state_mapping.update(casts)
    with scope:
        yield


def _int8_kernel_reads(layer):
    """``[(kernel, compute dtype)]`` for an int8 ``keras.layers.Dense`` that
    keeps float inputs (the package's int8, `keras_transformer.utils.
    quantization`): its call multiplies the inputs by the int8 kernel
    (``_kernel``, no public accessor returns the variable itself), which
    the matmul converts to the inputs' dtype at every read; read as that
    dtype once, the step runs one float matmul and the rescale by
    ``kernel_scale``, with the same values. A layer that quantizes its
    inputs multiplies int8 by int8 and keeps its kernel as it is."""
    if not isinstance(layer, keras.layers.Dense) or layer.quantization_mode != "int8":
        return []
    if getattr(layer, "inputs_quantizer", None) is not None:
        return []
    return [(layer._kernel, layer.compute_dtype)]


def set_dense_int8_config(layer, config):
    """Gives a built int8 ``keras.layers.Dense`` the quantization ``config``
    (a `keras.quantizers.Int8QuantizationConfig`) as though it had been
    built with it: its public ``quantization_config`` and the input
    quantizer that Keras' ``Dense._int8_build`` derives from it
    (``inputs_quantizer``, read by every int8 call). Keras builds a layer
    with the config given to its constructor, and a model's layers built
    from a saved ``DTypePolicyMap`` are constructed without one."""
    layer.quantization_config = config
    layer.inputs_quantizer = keras.quantizers.QuantizationConfig.activation_quantizer_or_default(
        config, keras.quantizers.AbsMaxQuantizer()
    )


def schedule_at_update_count(optimizer):
    """Makes ``optimizer`` evaluate its `LearningRateSchedule` at its update
    count (``optimizer.iterations``) instead of its batch count.

    Under gradient accumulation Keras calls the schedule with the number of
    batches seen (``optimizer._iterations``), and has no public setting to
    change that: the paper's warmup would last ``accumulate_steps`` times
    longer in updates. The update of batches ``k*n .. k*n+n-1`` then uses
    the schedule at update ``k``, exactly the rate of the k-th update
    without accumulation. The optimizer's saved config is unchanged.
    """
    schedule = optimizer._learning_rate
    if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
        optimizer._get_current_learning_rate = lambda: schedule(optimizer.iterations)


def mark_jax_state_synced(model):
    """Tells Keras' JAX trainer that ``model``'s variables hold their values.

    Keras detaches the variables for a compiled JAX step; when a step is
    refused before it runs (a batch with out-of-range token ids), the caller
    assigns the values back and the trainer must not sync them again.
    Keras has no public API for this state (``_jax_state_synced``).
    """
    model._jax_state_synced = True


def optimizer_batch_count(optimizer):
    """The number of batches ``optimizer`` has been applied to, as an int.

    Under gradient accumulation the public ``optimizer.iterations`` counts
    updates; which batch of an update comes next (Keras' branch between
    accumulating and updating) needs the batch count, ``_iterations``.
    """
    return int(keras.ops.convert_to_numpy(optimizer._iterations.value))


class AutoJitCompileChoice:
    """Mixin for a `keras.Model` that chooses what ``jit_compile="auto"``
    resolves to: its `auto_jit_compile()`, Keras' choice unless overridden.

    `Model.compile(jit_compile="auto")` and the `jit_compile` property
    resolve "auto" with the private ``Trainer._resolve_auto_jit_compile``;
    Keras has no public setting for it, and overriding `compile` instead
    would stop `compile_from_config` from compiling a loaded model.
    """

    def auto_jit_compile(self):
        """What ``jit_compile="auto"`` resolves to for this backend."""
        return super()._resolve_auto_jit_compile()

    def _resolve_auto_jit_compile(self):
        return self.auto_jit_compile()


_BACKEND_OPTIMIZER_MODULE = re.compile(r"keras\.src\.backend\.\w+\.optimizers")


def portable_optimizer_modules(config):
    """``config`` (a compile config: dicts and lists) with every optimizer
    module of a backend pointed at the public ``keras.optimizers``.

    Keras 3 serializes an optimizer created under the torch backend with its
    backend-specific private module (``"keras.src.backend.torch.optimizers.
    torch_adam"``), so a file saved under torch would reload under
    TensorFlow or JAX with torch's update step and fail in `fit`; Keras has
    no public option to save the portable name. The public classes resolve
    to the loading backend's implementation.
    """
    if isinstance(config, dict):
        module = config.get("module")
        if isinstance(module, str) and _BACKEND_OPTIMIZER_MODULE.match(module):
            config = dict(config, module="keras.optimizers")
        return {key: portable_optimizer_modules(value) for key, value in config.items()}
    if isinstance(config, list):
        return [portable_optimizer_modules(value) for value in config]
    return config


# --- PyTorch ---


def trace_aten_graph(function, *tensors, allow_data_dependent=False):
    """The ATen operations that ``function(*tensors)`` runs, recorded once as
    a ``torch.fx.GraphModule`` taking the same arguments.

    ``make_fx`` (``torch.fx.experimental``, no public equivalent) traces at
    the dispatcher, below autograd: Python runs normally (Keras' layers,
    name scopes and dtype policies, ``Tensor.backward``, in-place optimizer
    updates) and only ATen operations are recorded, backward ones included.
    ``torch.compile`` of the recorded graph then analyses only straight-line
    graph code instead of Keras' Python. The recording runs the operations
    for real on ``tensors`` (which it may mutate); tensors the function reads
    that are not arguments (weights) are used by reference. Operations whose
    results nothing uses are dropped.

    A value the function reads back from a tensor into Python (a branch, a
    host-side check) raises, unless ``allow_data_dependent``: the value of
    this run is then fixed in the graph, so the caller keys its graphs by
    such values or checks that the graph equals the eager function.
    """
    from torch.fx.experimental.proxy_tensor import make_fx

    graph_module = make_fx(
        function,
        tracing_mode="real",
        _error_on_data_dependent_ops=not allow_data_dependent,
    )(*tensors)
    graph_module.graph.eliminate_dead_code()
    graph_module.recompile()
    return graph_module


def torch_recompile_limit(limit):
    """A context within which ``torch.compile`` keeps up to ``limit``
    compilations of one function (its guard failures: new shapes) before it
    falls back to running the function uncompiled. The context can be
    entered again and again (one per compiled call).

    ``torch._dynamo.config`` is private by name and has no public setter;
    its default, 8, is fewer than the compiled decode's shapes (batch
    shapes, source buckets and cache stages). The setting is
    ``recompile_limit``, ``cache_size_limit`` before torch 2.6.
    """
    import torch._dynamo.config as config

    name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
    return config.patch(**{name: max(limit, getattr(config, name))})


def copy_if_view(tensor):
    """``tensor``, copied when it is a view of another tensor's storage.

    torch has no public test of whether a tensor is a view: ``Tensor._base``
    (described in torch's documentation of tensor views) is private by name.
    """
    return tensor.clone() if getattr(tensor, "_base", None) is not None else tensor


def reset_torch_compiler():
    """Forgets every ``torch.compile`` compilation and zeroes the counters
    that `torch_compile_counts` reads (``torch._dynamo``'s counters, which
    no public API clears)."""
    import torch

    torch.compiler.reset()
    torch._dynamo.utils.counters.clear()


def torch_compile_counts():
    """What ``torch.compile`` did since `reset_torch_compiler`, from
    ``torch._dynamo``'s counters (no public API reports them): a dict of
    ``graph_breaks``, ``graphs`` (distinct compiled graphs) and ``frames``
    (function compilations, recompilations included)."""
    import torch

    counters = torch._dynamo.utils.counters
    return {
        "graph_breaks": sum(counters["graph_break"].values()),
        "graphs": counters["stats"]["unique_graphs"],
        "frames": counters["frames"]["ok"],
    }


def traceable_all_reduce_sum(tensor):
    """``tensor`` summed over the default process group, as a new tensor,
    through ``torch.distributed._functional_collectives``: ``make_fx`` and
    ``torch.compile`` record it as an operator of the graph (the public
    in-place ``torch.distributed.all_reduce`` is recorded with the process
    group as an opaque object that ``torch.compile`` rejects)."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as collectives

    return collectives.wait_tensor(
        collectives.all_reduce(tensor, "sum", dist.group.WORLD)
    )


# --- keras-hub ---


def preprocessing_function(function):
    """keras-hub's decorator of a preprocessor's ``call`` (or
    ``generate_preprocess``): inputs are converted to TensorFlow tensors on
    the CPU and the outputs back to the backend's, outside ``tf.data``, as
    every keras-hub preprocessor does. keras-hub does not export it
    (``keras_hub.src.utils.tensor_utils``); without TensorFlow it returns
    ``function`` unchanged."""
    if _keras_hub_preprocessing_function is None:
        return function
    return _keras_hub_preprocessing_function(function)


def compile_task_without_sampler(task, **kwargs):
    """``keras.Model.compile`` of a keras-hub `Seq2SeqLM` task, skipping
    `CausalLM.compile`, which sets up a keras-hub sampler: the package
    decodes with its own beam search, and keras-hub has no public switch to
    compile a task without a sampler."""
    super(CausalLM, task).compile(**kwargs)


def add_transformers_preset_converter(is_registered, convert, remove):
    """Lets keras-hub's ``from_preset`` (``Seq2SeqLM``, ``Backbone``, ...)
    load Hugging Face directories of the package's registered
    ``model_type`` values. keras-hub picks its ``TransformersPresetLoader``
    for any ``config.json`` with a ``model_type`` and has a fixed list of
    converters in it, no registry
    (``keras_hub.src.utils.transformers.preset_loader``); for a local
    directory whose type ``is_registered(model_type)``, constructing that
    loader returns keras-hub's ``KerasPresetLoader`` of the keras-hub preset
    ``convert(directory)`` writes instead, and ``remove(that preset)`` runs
    when the loader is collected: as keras-hub's ``from_preset`` returns,
    which drops it (the model holds its weights and tokenizers in memory).
    Other types load as before. Without keras-hub, nothing to do."""
    if _TransformersPresetLoader is None or getattr(
        _TransformersPresetLoader, "keras_transformer_converters", False
    ):
        return
    original_new = _TransformersPresetLoader.__new__

    def __new__(cls, preset, config):
        if not is_registered(config.get("model_type")):
            if original_new is object.__new__:
                return object.__new__(cls)
            return original_new(cls, preset, config)
        if "://" in str(preset):
            raise ValueError(
                f"{preset!r}: a {config.get('model_type')!r} checkpoint is converted "
                "from a local directory; download it first (huggingface-cli "
                "download ... --local-dir DIR) and load DIR."
            )
        converted = convert(preset)
        loader = _KerasPresetLoader(converted, _load_preset_json(converted))
        weakref.finalize(loader, remove, converted)
        return loader

    _TransformersPresetLoader.__new__ = __new__
    _TransformersPresetLoader.keras_transformer_converters = True


class SentencePieceTokenizerBase(SentencePieceTokenizer):
    """keras-hub's `SentencePieceTokenizer` with two hooks that keras-hub
    keeps private:

    * ``special_pieces`` ({attribute: piece}) are declared as special tokens
      (``_add_special_token``), and ``check_vocabulary(vocabulary)`` runs
      whenever a vocabulary is set, before keras-hub looks them up
      (``_update_special_token_ids``);
    * keras-hub's own TF Text tokenizer is not built (``_set_proto_tf``,
      which keras-hub calls whenever TensorFlow Text is installed, even on
      its Python path): the subclass tokenizes Python values with
      ``sentencepiece`` and creates its TF Text tokenizer at its first graph
      call, with `make_tf_sentencepiece_tokenizer`.
    """

    special_pieces = {}

    def __init__(self, proto=None, **kwargs):
        for attribute, piece in self.special_pieces.items():
            self._add_special_token(piece, attribute)
        super().__init__(proto=proto, **kwargs)
        # Nothing to build; unbuilt, `Model.quantize` on a task holding this
        # tokenizer would refuse it.
        self.built = True

    def check_vocabulary(self, vocabulary):
        """Raises a ValueError when ``vocabulary`` (list of pieces) is unusable."""

    def _update_special_token_ids(self):
        self.check_vocabulary(self._vocabulary)
        super()._update_special_token_ids()

    def _set_proto_tf(self, proto):
        self._sentence_piece = None


# --- TensorFlow Text ---


@functools.cache
def _tensorflow_text():
    """``(tensorflow, tensorflow_text, its sentencepiece op module)``;
    TensorFlow Text is imported at the first graph tokenizer (never by the
    Python path)."""
    # TensorFlow is loaded: the graph tokenizer runs on its tensors or in
    # its graphs (`keras_transformer.utils.tensorflow_devices` hid its GPUs
    # when the package imported it).
    tf = sys.modules.get("tensorflow")
    try:
        if tf is None:
            raise ImportError("No module named 'tensorflow'")
        import tensorflow_text as tf_text
        from tensorflow_text.python.ops import sentencepiece_tokenizer as tf_text_sp
    except ImportError as error:
        raise MissingDependencyError(
            "Tokenizing inside TensorFlow graphs needs TensorFlow and TensorFlow "
            "Text (pip install tensorflow tensorflow-text), which are not "
            f"installed ({error}); Python strings tokenize without them."
        ) from error
    return tf, tf_text, tf_text_sp


@functools.cache
def _shared_model_resource_class():
    """`_SharedModelResource`, defined once TensorFlow is loaded."""
    tf, _, tf_text_sp = _tensorflow_text()

    class _SharedModelResource(tf.saved_model.experimental.TrackableResource):
        """The SentencePiece model resource, under a name derived from the model.

        tf_text creates the resource *private to its kernel*, and the eager
        kernel cache owns that kernel: ``tf.random.set_seed``,
        ``keras.utils.set_random_seed`` and ``keras.backend.clear_session``
        clear the cache and the tokenizer then fails with "Resource ...
        SentencepieceResource does not exist" (tensorflow/text#570). With a
        ``shared_name`` the resource belongs to the resource manager instead
        and survives; equal models share one resource, which lives as long as
        the process (a few MB per distinct model). It is re-created from the
        model bytes when a SavedModel is loaded.
        """

        def __init__(self, proto):
            super().__init__()
            self._proto = proto
            digest = hashlib.sha256(proto).hexdigest()[:24]
            self._shared_name = f"keras_transformer_spm_{digest}"
            _ = self.resource_handle  # Creates the resource now.

        def _create_resource(self):
            return tf_text_sp.gen_sentencepiece_tokenizer.sentencepiece_op(
                model=self._proto, shared_name=self._shared_name
            )

    return _SharedModelResource


def make_tf_sentencepiece_tokenizer(proto):
    """A TF Text SentencePiece tokenizer (int32 ids) whose model resource
    survives `tf.random.set_seed` (see `_SharedModelResource`). TF Text has
    no option for a shared resource, so its private one is replaced
    (tests/models/transformer/test_tokenizer.py checks that this still works).

    Raises:
        MissingDependencyError: TensorFlow or TensorFlow Text is not installed.
    """
    tf, tf_text, _ = _tensorflow_text()
    tokenizer = tf_text.SentencepieceTokenizer(model=proto, out_type=tf.int32)
    tokenizer._model_resource = _shared_model_resource_class()(proto)
    return tokenizer
