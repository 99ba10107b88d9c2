"""The compiled PyTorch decode: one graph per batch shape and cache stage.

`keras.ops.while_loop` is a Python loop on torch, and a search's exit
depends on the data, so the loop stays in Python and its body (one model
step, the search's bookkeeping and the loop's next test) is what compiles;
the loop reads one boolean per step. Three things keep that
to one compilation per batch shape and cache stage, in seconds rather than
minutes:

- Static shapes within a stage: the key/value cache grows in a few stages
  (`search_loop.cache_lengths`: 16 positions, 32, ..., the output
  buffer's length), each a fixed size for all of its steps; the step index
  is a tensor, never a Python int, so no step recompiles. Compilation is
  static (``dynamic=False``): no symbolic shapes to solve. The stages cost
  a compilation each, and save a step the copies of a buffer sized for the
  longest allowed output (beam search reorders the whole cache at every
  step; `Generator` with ``cache_growth=None`` keeps one stage: fewer
  compilations, slower steps; measurements in `benchmarks/README.md`).
- The model step is recorded once per shape as a graph of ATen operations
  (`private_apis.trace_aten_graph`, one eager step), and the loop body
  calls that graph. ``torch.compile``'s bytecode analysis of the body then
  reads the search's bookkeeping and straight-line graph code instead of
  the Keras layers' Python, which cost it minutes.
- The first step of a loop state of new shapes runs eagerly (it records
  the model step; a Keras layer's first call also sets attributes that
  guards would see change); every later loop of shapes already seen (the
  next request of a batch size, the loop that resumes a halved batch, the
  next cache stage) runs all of its steps compiled. A loop's state is
  copied where it holds views or one tensor twice before its first
  compiled call, whose guards would otherwise fail on the compiled
  outputs and recompile.

On a CUDA device the step compiles with ``mode="reduce-overhead"`` (CUDA
graphs: the shapes are static, so one graph replays every step); on the
CPU with the default mode.

Used through `backends.compile_for_backend` (``jit_compile=True`` on torch)
and the hooks of `search.compiled_loop_bodies`.

What goes through the compiled step: every search of `generate` (beam
search and its n-best, greedy search, sampling with its seed and filters,
the lexically constrained beam search), with forced prefixes (a user's
target prefix, or a target-language tag forced as the first output token;
a source-side tag is part of the encoder's input), and an `Ensemble`,
whose models' steps are recorded together as one graph. The encoder and
the cache's setup (one call per batch, before the loop) run as one recorded
graph per shape, uncompiled: no Keras layer's Python. What does not go
through a recording: alignments and scoring (`forced.py`: one teacher-forced
decoder pass over the finished outputs, no loop, eager under torch as
without ``jit_compile``). The search's outputs equal eager's, so the
alignments computed from them do too.
"""

import keras

from keras_transformer.utils.private_apis import (
    copy_if_view,
    torch_recompile_limit,
    trace_aten_graph,
)

# Compilations kept per search kind (its loop body), one per batch shape,
# source bucket and cache stage: a server's batch sizes and sentence
# lengths reach torch.compile's default of 8 within a few requests, after
# which the body would run uncompiled (several times slower a step).
RECOMPILE_LIMIT = 64

# The ``torch.compile`` backend of the loop steps. Inductor generates the
# fused kernels that make the compiled decode fast. "eager" runs Dynamo's
# graphs as they are, without generating code: the same graphs, graph
# breaks, guards and recompilations in seconds instead of a minute of code
# generation per graph, for the tests of the loop's structure (as
# `CompiledTorchTrainStep`'s ``backend`` serves the train step's).
COMPILE_BACKEND = "inductor"


class TorchStepCompiler:
    """The compiled steps of one compiled decode function.

    Holds the recorded model steps (one per input shapes) and the loop
    states the compiled bodies have seen, so that a new batch of a shape
    already seen reuses them: its loop goes straight to the compiled body,
    whose guards (which check that it calls the same graph) still hold.
    """

    def __init__(self):
        self._graphs = {}
        # Loop state signature -> the layout of its step's outputs.
        self._seen_states = {}

    def trace(self, name, function):
        """``function(*args)`` (a nest of tensors in, a nest out) run
        through its recorded ATen graph for ``name`` and the shapes of its
        arguments. Only for a ``function`` whose tensors other than its
        arguments do not change between calls (a model's weights, read by
        reference) and whose Python values are all in ``name`` (hashable).

        The graph is looked up by ``name`` and shapes in a dictionary that
        only grows: a compiled body's guards check the entry of its own
        shapes, which a later entry leaves as it was.
        """

        def recorded(*args):
            # Lists, not tuples: ``torch.compile`` cannot trace Keras' tree
            # functions over a tuple (an identity test of tuples).
            leaves = keras.tree.flatten(list(args))
            key = (name,) + tuple((tuple(x.shape), x.dtype) for x in leaves)
            if key not in self._graphs:
                self._record(function, key, args, leaves)
            graph, structure, as_tuple = self._graphs[key]
            outputs = keras.tree.pack_sequence_as(structure, list(graph(*leaves)))
            return tuple(outputs) if as_tuple else outputs

        return recorded

    def _record(self, function, key, args, leaves):
        import torch

        if torch.compiler.is_compiling():
            # `compile_loop` runs a loop state of new shapes eagerly first,
            # which records its model step before any compiled call.
            raise RuntimeError(
                f"No recorded graph for {key}: a loop state of new shapes "
                "reached the compiled body before its eager step."
            )
        structure = {}

        def flat_function(*leaves):
            outputs = function(*keras.tree.pack_sequence_as(list(args), list(leaves)))
            structure["as_tuple"] = isinstance(outputs, tuple)
            if structure["as_tuple"]:
                outputs = list(outputs)
            # Placeholders: the structure must hold no tensors, which the
            # compiled body's guards would compare by identity.
            structure["outputs"] = keras.tree.map_structure(lambda _: 0, outputs)
            return keras.tree.flatten(outputs)

        graph = trace_aten_graph(flat_function, *leaves)
        self._graphs[key] = (graph, structure["outputs"], structure["as_tuple"])

    def compile_loop(self, cond, body):
        """``state -> state``: ``body`` run while ``cond``, a Python loop
        (a search's exit depends on the data) around ``torch.compile`` of
        one step and the next test, static shapes: each iteration reads
        one boolean from the compiled step instead of running ``cond``'s
        operations uncompiled.

        A loop state of shapes no loop of this body has seen runs its
        first step eagerly: that step records the model step of the new
        shapes (the compiled step cannot record one), and a Keras layer's
        first call sets attributes that guards would see change. Every
        other step, a loop's first included, runs compiled: a server's
        requests, and the loops that resume a halved batch, meet the same
        shapes again and again.
        """
        import torch

        def step(state):
            state = body(state)
            return state, cond(state)

        code = tuple(getattr(f, "__code__", f) for f in (cond, body))

        def loop(state):
            if not _true(cond(state)):
                return state
            signature = code + tuple(
                (path, tuple(x.shape), x.dtype)
                for path, x in keras.tree.flatten_with_path(state)
            )
            layout = self._seen_states.get(signature)
            if layout is None:
                state, going = self._eager_step(step, state)
                self._seen_states[signature] = _layout(state)
                if not _true(going):
                    return state
            # Views (an eager step's outputs) and tensors held twice (a
            # search's live and finished sequences start as one) become
            # tensors of their own, as the compiled step's outputs are; its
            # guards would otherwise fail on those outputs and recompile.
            state = _unaliased(state, layout)
            on_gpu = any(x.device.type == "cuda" for x in keras.tree.flatten(state))
            # CUDA graphs (``mode``) are Inductor's.
            mode = "reduce-overhead" if on_gpu and COMPILE_BACKEND == "inductor" else None
            compiled = torch.compile(step, dynamic=False, backend=COMPILE_BACKEND, mode=mode)
            with torch_recompile_limit(RECOMPILE_LIMIT):
                going = True
                while going:
                    state, going = compiled(state)
                    going = _true(going)
            return state

        return loop

    @staticmethod
    def _eager_step(step, state):
        """One step of a loop state of new shapes, uncompiled."""
        return step(state)


def _true(condition):
    """A loop condition (a boolean tensor) read into Python."""
    return bool(keras.ops.convert_to_numpy(condition))


def _layout(state):
    """The nesting of ``state``'s dictionaries, lists and tuples, keys in
    their order, no tensors."""
    if isinstance(state, dict):
        return {key: _layout(value) for key, value in state.items()}
    if type(state) in (list, tuple):
        return [_layout(value) for value in state]
    return None


def _ordered_like(state, layout):
    """``state`` with its dictionaries' keys in the order of ``layout``."""
    if layout is None:
        return state
    if isinstance(state, dict):
        return {key: _ordered_like(state[key], layout[key]) for key in layout}
    if type(state) in (list, tuple):
        return type(state)(_ordered_like(x, inner) for x, inner in zip(state, layout))
    return state


def _unaliased(state, layout=None):
    """``state`` with each view, and each tensor held a second time, copied,
    and its dictionaries' keys in the order of ``layout`` (`_layout` of a
    step's outputs; the compiled body's guards check the order)."""
    seen = set()

    def own(tensor):
        tensor = copy_if_view(tensor)
        if id(tensor) in seen:
            return tensor.clone()
        seen.add(id(tensor))
        return tensor

    return keras.tree.map_structure(own, _ordered_like(state, layout))
