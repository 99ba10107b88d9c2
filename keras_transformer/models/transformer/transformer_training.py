"""How the Transformer trains under Keras' trainer on every backend.

`TransformerTraining` is a mixin of `TransformerBackbone`: under PyTorch with
``jit_compile`` the training step is the package's compiled one
(`torch_train_step`) and evaluation and prediction stay eager, the
``jit_compile="auto"`` choice is the package's there, and the saved compile
config is portable across backends (the optimizer's public module, ``"auto"``
kept as ``"auto"``).
"""

import keras

from keras_transformer.models.transformer.torch_train_step import (
    compiled_by_default,
    make_compiled_train_function,
)
from keras_transformer.utils.private_apis import (
    AutoJitCompileChoice,
    portable_optimizer_modules,
)


class TransformerTraining(AutoJitCompileChoice):
    """Trainer hooks of the Transformer (see the module docstring)."""

    def make_train_function(self, force=False):
        # With jit_compile under PyTorch, the step is the package's compiled
        # one (models/transformer/torch_train_step.py) instead of Keras'
        # torch.compile of its train_step, which breaks into dozens of graphs.
        built = force or self.train_function is None
        result = super().make_train_function(force)
        if built and self._torch_compiled():
            compiled = make_compiled_train_function(self)
            if compiled is not None:
                self.train_function = compiled
            else:
                self.train_function = self._eager_torch_function(self.train_step)
        return result

    def make_test_function(self, force=False):
        # Evaluation and prediction stay eager under PyTorch: Keras'
        # torch.compile of them has the graph breaks of its training step.
        built = force or self.test_function is None
        result = super().make_test_function(force)
        if built and self._torch_compiled():
            self.test_function = self._eager_torch_function(self.test_step, no_grad=True)
        return result

    def make_predict_function(self, force=False):
        built = force or self.predict_function is None
        super().make_predict_function(force)
        if built and self._torch_compiled():
            self.predict_function = self._eager_torch_function(
                self.predict_step, no_grad=True
            )
        return self.predict_function

    def auto_jit_compile(self):
        # Keras resolves jit_compile="auto" to eager under PyTorch; the
        # package's compiled step is the "auto" choice where it pays
        # (`compiled_by_default`). Other backends keep Keras' choice.
        if keras.config.backend() == "torch":
            return compiled_by_default()
        return super().auto_jit_compile()

    def _torch_compiled(self):
        return keras.config.backend() == "torch" and bool(self.jit_compile)

    @staticmethod
    def _eager_torch_function(step, no_grad=False):
        import torch

        def function(data):
            if no_grad:
                with torch.no_grad():
                    return step(data[0])
            return step(data[0])

        return function

    def get_compile_config(self):
        # An optimizer saved under one backend reloads under any other
        # (see `portable_optimizer_modules`).
        config = portable_optimizer_modules(super().get_compile_config())
        # Keras records `jit_compile` resolved for the saving backend ("auto"
        # -> True under JAX, False under torch), so JAX's True made a torch
        # reload train through torch.compile (over a minute of compilation on
        # 2 cores before the first step) and torch's False a JAX reload train
        # without jit. A value that is this backend's "auto" choice is saved
        # as "auto", so the loading backend makes its own; any other value
        # (jit_compile=False under JAX, ...) is kept. (Overriding `compile`
        # to remember the argument would stop Keras from compiling a loaded
        # model: `compile_from_config` skips models with their own compile.)
        if config and config.get("jit_compile") == self.auto_jit_compile():
            config["jit_compile"] = "auto"
        return config
