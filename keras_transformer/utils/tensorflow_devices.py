"""TensorFlow as the package imports it: off the GPU unless it is the backend.

Under JAX or PyTorch the package still imports TensorFlow for the ``tf.data``
pipeline (``make_dataset``, ``make_dataset_from_corpus``) and the SavedModel
export when it is installed. TensorFlow would take the GPU at its first op
and map nearly all of its memory, next to JAX's own preallocation (75% by
default) or PyTorch's: two frameworks competing for one device. Every module
of the package that uses TensorFlow imports it from here,
``from keras_transformer.utils.tensorflow_devices import tf``, so that its
GPUs are hidden from it (``tf.config.set_visible_devices([], "GPU")``)
before its first op whenever the Keras backend is not TensorFlow. The
TensorFlow backend keeps its GPUs.

Example:

```python
from keras_transformer.utils.tensorflow_devices import tf, tensorflow_gpus_hidden

dataset = tf.data.Dataset.range(3)  # on the CPU under JAX or PyTorch
assert tensorflow_gpus_hidden() == (keras.config.backend() != "tensorflow")
```
"""

import warnings

import keras
import tensorflow as tf

_STATE = {"hidden": False}


def hide_tensorflow_gpus():
    """Hides the GPUs from TensorFlow when the Keras backend is not
    TensorFlow; returns whether they are hidden.

    Idempotent. When TensorFlow has already initialised its devices (an op
    ran before the package was imported), the devices can no longer change:
    a warning says so and False is returned.
    """
    if keras.config.backend() == "tensorflow":
        return False
    if not _STATE["hidden"]:
        try:
            tf.config.set_visible_devices([], "GPU")
        except RuntimeError as error:  # the runtime is already initialised
            warnings.warn(
                "TensorFlow initialised its devices before keras_transformer "
                f"could hide its GPUs from it ({error}); under the "
                f"{keras.config.backend()} backend it may hold GPU memory. Import "
                "keras_transformer before running TensorFlow ops, or call "
                'tf.config.set_visible_devices([], "GPU") first.',
                stacklevel=2,
            )
            return False
        _STATE["hidden"] = True
    return True


def tensorflow_gpus_hidden():
    """Whether `hide_tensorflow_gpus` hid TensorFlow's GPUs in this process."""
    return _STATE["hidden"]


hide_tensorflow_gpus()
