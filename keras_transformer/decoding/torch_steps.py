"""The compiled PyTorch decode: one graph per batch shape and cache stage.

`keras.ops.while_loop` is a Python loop on torch, and a search's exit
depends on the data, so the loop stays in Python and its body (one model
step and the search's bookkeeping) is what compiles. Three things keep that
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
- The first iteration runs eagerly (it records the model step; a Keras
  layer's first call also sets attributes that guards would see change);
  its outputs' views are copied before the first compiled call, whose
  guards would otherwise fail on the compiled outputs and recompile.

On a CUDA device the body compiles with ``mode="reduce-overhead"`` (CUDA
graphs: the shapes are static, so one graph replays every step); on the
CPU with the default mode.

Used through `backends.compile_for_backend` (``jit_compile=True`` on torch)
and the hooks of `search.compiled_loop_bodies`.

What goes through the compiled step: every search of `generate` (beam
search and its n-best, greedy search, sampling with its seed and filters,
the lexically constrained beam search), with forced prefixes (a user's
target prefix, or a target-language tag forced as the first output token;
a source-side tag is part of the encoder's input), and an `Ensemble`,
whose models' steps are recorded together as one graph. What does not:
the encoder and the cache's setup (one call per batch, before the loop,
eager), and alignments and scoring (`forced.py`: one teacher-forced
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


class TorchStepCompiler:
    """The compiled steps of one compiled decode function.

    Holds the recorded model steps (one per input shapes), so that a new
    batch of a shape already seen reuses them and the compiled body's
    guards (which check that it calls the same graph) still hold.
    """

    def __init__(self):
        self._graphs = {}

    def trace_step(self, tokens_to_logits):
        """``tokens_to_logits(token_ids, cache, index)`` run through its
        recorded ATen graph for the shapes of its arguments. Only for a
        ``tokens_to_logits`` whose tensors other than its arguments do not
        change between calls (a model's weights, read by reference)."""
        current = {"key": None, "graph": None, "structure": None}

        def step(token_ids, cache, index):
            leaves = keras.tree.flatten(cache)
            key = tuple((tuple(x.shape), x.dtype) for x in [token_ids, index] + leaves)
            if key != current["key"]:
                current["key"] = key
                current["graph"], current["structure"] = self._graph(
                    tokens_to_logits, key, token_ids, index, cache, leaves
                )
            outputs = current["graph"](token_ids, index, *leaves)
            return outputs[0], keras.tree.pack_sequence_as(
                current["structure"], list(outputs[1:])
            )

        return step

    def _graph(self, tokens_to_logits, key, token_ids, index, cache, leaves):
        if key not in self._graphs:
            structure = {}

            def flat_step(token_ids, index, *leaves):
                logits, new_cache = tokens_to_logits(
                    token_ids, keras.tree.pack_sequence_as(cache, list(leaves)), index
                )
                # Placeholders: the structure must hold no tensors, which
                # the compiled body's guards would compare by identity.
                structure["cache"] = keras.tree.map_structure(lambda _: 0, new_cache)
                return [logits] + keras.tree.flatten(new_cache)

            graph = trace_aten_graph(flat_step, token_ids, index, *leaves)
            self._graphs[key] = (graph, structure["cache"])
        return self._graphs[key]

    @staticmethod
    def compile_body(body):
        """``torch.compile`` of a search's loop body, static shapes."""
        import torch

        compiled = {}

        def run(state):
            if not compiled:
                state = keras.tree.map_structure(copy_if_view, state)
                on_gpu = any(
                    x.device.type == "cuda" for x in keras.tree.flatten(state)
                )
                mode = "reduce-overhead" if on_gpu else None
                compiled["body"] = torch.compile(body, dynamic=False, mode=mode)
                compiled["limit"] = torch_recompile_limit(RECOMPILE_LIMIT)
            with compiled["limit"]:
                return compiled["body"](state)

        return run

