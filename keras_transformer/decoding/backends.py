"""Compiling a decode function for the backend: `tf.function` with XLA,
`jax.jit` over the model's state, or `torch.compile` of the search loop body.
"""

import itertools

import keras

from keras_transformer.decoding.search import compiled_loop_bodies, fixed_shape_loops
from keras_transformer.decoding.torch_steps import TorchStepCompiler

if keras.config.backend() == "tensorflow":
    from keras_transformer.utils.tensorflow_devices import tf
else:  # Only the TensorFlow backend's paths use TensorFlow.
    tf = None


def compile_for_backend(model, function, tf_input_signature=None, jit_compile=False):
    """``function(*tensors)`` compiled for the current Keras backend.

    The one place that knows how each backend compiles a decode function:

    - JAX: `jax_stateless_jit` (the model's variables are inputs; one
      compilation per input shape).
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
    """
    backend = keras.config.backend()
    if backend == "jax":
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


def jax_stateless_jit(model, function):
    """``jax.jit`` of ``function(*args)`` reading ``model``'s variables as inputs.

    The variables' current values are passed to the jitted function on every
    call and mapped onto the model inside a `keras.StatelessScope` (as
    keras-hub's ``CausalLM`` does), so they are not baked in as constants.
    """
    import jax

    @jax.jit
    def compiled(state, *args):
        trainable, non_trainable = state
        mapping = itertools.chain(
            zip(model.trainable_variables, trainable),
            zip(model.non_trainable_variables, non_trainable),
        )
        with keras.StatelessScope(state_mapping=mapping):
            return function(*args)

    def wrapped(*args):
        state = (
            [v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables],
        )
        return compiled(state, *args)

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
