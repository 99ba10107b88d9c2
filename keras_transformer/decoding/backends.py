"""Compiling a decode function for the backend: `tf.function` with XLA,
`jax.jit` over the model's state, or `torch.compile` of the search loop body.
"""

import itertools

import keras

import numpy as np

from keras_transformer.decoding.search_loop import (
    SearchSegment,
    Suspended,
    compiled_loop_bodies,
    fixed_shape_loops,
    halved_rows,
    search_segment,
)
from keras_transformer.decoding.torch_steps import TorchStepCompiler

if keras.config.backend() == "tensorflow":
    from keras_transformer.utils.tensorflow_devices import tf
else:  # Only the TensorFlow backend's paths use TensorFlow.
    tf = None


def compile_for_backend(
    model, function, tf_input_signature=None, jit_compile=False, search=False
):
    """``function(*tensors)`` compiled for the current Keras backend.

    The one place that knows how each backend compiles a decode function:

    - JAX: `jax_stateless_jit` (the model's variables are inputs; one
      compilation per input shape); with ``search``, `jax_search_jit`.
    - TensorFlow: ``tf.function`` with ``tf_input_signature`` (``None``
      dimensions: one trace for every shape) and XLA when ``jit_compile``.
    - torch: eager under ``torch.no_grad()``; with ``jit_compile`` the
      searches' loop bodies go through ``torch.compile`` with static
      shapes, the model step recorded once per shape (`torch_steps`).

    Args:
        model: the `Transformer` whose variables ``function`` reads.
        function: a function of tensors, written in `keras.ops`.
        tf_input_signature: list of ``tf.TensorSpec`` (TensorFlow only).
        jit_compile: bool. XLA on TensorFlow, compiled loop bodies on torch.
        search: bool. ``function`` runs one search (`decode_token_ids`):
            under JAX, one whose batch halves as its sentences finish runs
            its loops one compiled segment at a time (`jax_search_jit`).
    """
    backend = keras.config.backend()
    if backend == "jax":
        if search:
            return jax_search_jit(model, function)
        return jax_stateless_jit(model, function)
    if backend == "tensorflow":

        # autograph=False: the searches' control flow is explicit
        # (`keras.ops.while_loop`, `ops.cond`), so AutoGraph's conversion of
        # every function they call would only lengthen the trace.
        if jit_compile:
            # XLA keeps every loop variable's shape fixed: one loop per
            # cache stage (traced here, so the context holds while tracing).
            plain_function = function

            def function(*args):
                with fixed_shape_loops():
                    return plain_function(*args)

        return tf.function(
            function,
            input_signature=tf_input_signature,
            jit_compile=jit_compile,
            autograph=False,
        )
    if backend == "torch":
        import torch

        # One per compiled function: its recorded model steps are reused
        # by every later call (see `torch_steps`).
        steps = TorchStepCompiler() if jit_compile else None

        def no_grad(*args):
            with torch.no_grad():
                if not jit_compile:
                    return function(*args)
                with compiled_loop_bodies(steps.compile_loop, steps.trace):
                    return function(*args)

        return no_grad
    return function


def _model_state(model):
    """The values of ``model``'s variables, the first input of the
    functions that `_stateless` makes."""
    return (
        [v.value for v in model.trainable_variables],
        [v.value for v in model.non_trainable_variables],
    )


def _stateless(model, function):
    """``(state, *args) -> function(*args)`` with ``model``'s variables
    read from ``state`` (`_model_state`) inside a `keras.StatelessScope`
    (as keras-hub's ``CausalLM`` does), so that ``jax.jit`` takes them as
    inputs instead of baking them in as constants."""

    def stateless(state, *args):
        trainable, non_trainable = state
        mapping = itertools.chain(
            zip(model.trainable_variables, trainable),
            zip(model.non_trainable_variables, non_trainable),
        )
        with keras.StatelessScope(state_mapping=mapping):
            return function(*args)

    return stateless


def jax_stateless_jit(model, function):
    """``jax.jit`` of ``function(*args)`` reading ``model``'s variables as inputs.

    The variables' current values are passed to the jitted function on every
    call and mapped onto the model inside a `keras.StatelessScope`, so they
    are not baked in as constants.
    """
    import jax

    compiled = jax.jit(_stateless(model, function))

    def wrapped(*args):
        return compiled(_model_state(model), *args)

    return wrapped


def jax_search_jit(model, function):
    """`jax_stateless_jit` of a search function, whose batch halves as its
    sentences finish where the search can (`search_loop.halves_finished_rows`).

    One ``jax.jit`` program has fixed shapes, so a search compiled whole
    decodes every sentence to the end of the batch's longest. Here a search
    that halves its batch runs one `search_loop.SearchSegment` at a time,
    each compiled once per shapes: the loop of a cache stage, then, on the
    host, `search_loop.halved_rows` of the sentences still searching; the next
    segment continues on the halved batch (or grows the cache for the next
    stage), and the last writes the outputs. The search is the same
    function, so the outputs are those of the search compiled whole. Each
    input shape is first traced without compiling (``jax.eval_shape``, a
    "probe" segment) to learn whether its search halves; one that does not
    (greedy search, sampling, constraints, fewer than 8 sentences) is
    compiled whole.
    """
    import jax

    stateless = _stateless(model, function)
    whole = jax.jit(stateless)

    def segment_function(plan, state, carried, *args):
        with search_segment(SearchSegment(*plan, carried)):
            try:
                return stateless(state, *args)
            except Suspended as suspended:
                return suspended.payload

    segment = jax.jit(segment_function, static_argnums=0)
    plans = {}

    def probe(state, args):
        found = []

        def run(state, *args):
            with search_segment(SearchSegment("probe", None, None, None)):
                try:
                    stateless(state, *args)
                except Suspended as suspended:
                    found.append(suspended.payload)
            return 0

        jax.eval_shape(run, state, *args)
        return found[0] if found else None

    def wrapped(*args):
        state = _model_state(model)
        key = tuple((tuple(x.shape), str(x.dtype)) for x in args)
        if key not in plans:
            plans[key] = probe(state, args)
        plan = plans[key]
        if plan is None or not plan.halves:
            return whole(state, *args)
        carried, done = segment(("loop", 0, "first"), state, None, *args)
        stage = 0
        while True:
            done = np.asarray(done)
            if done.all():
                break
            rows = halved_rows(done)
            if rows is not None:
                carried, done = segment(("loop", stage, "halve"), state, (carried, *rows), *args)
                continue
            stage += 1
            if stage == plan.stages:
                break
            carried, done = segment(("loop", stage, "grow"), state, carried, *args)
        return segment(("finish", None, None), state, carried, *args)

    return wrapped


def compiled_decode(model):
    """`Transformer.decode` compiled for the backend, for uncached baselines.

    JAX: `jax_stateless_jit` (one compilation per input shape); TensorFlow:
    a ``tf.function`` with ``None`` dimensions (one trace); torch: eager
    under ``torch.no_grad()``.
    """
    signature = None
    if keras.config.backend() == "tensorflow":

        signature = [
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([None, None, model.d_model], model.compute_dtype),
            tf.TensorSpec([None, None], tf.bool),
        ]
    return compile_for_backend(model, model.decode, signature)
