"""The compute dtype for the hardware at hand: ``dtype_policy: auto``.

``mixed_bfloat16`` (bfloat16 matmuls, float32 weights) pays only where the
hardware multiplies bfloat16 natively: NVIDIA GPUs from Ampere on (compute
capability 8.0), TPUs, and CPUs with AVX512-BF16 or AMX-BF16 (x86) or the
BF16 extension (ARM). Elsewhere bfloat16 is emulated and slower than
float32 (``benchmarks/train_throughput.py`` measures both; the figures per
machine are in benchmarks/README.md), so a config that names
``mixed_bfloat16`` is fast on one machine and slow on another. ``"auto"``
chooses per machine, when the model is built:
`resolve_dtype_policy`. Keras has no such policy (its ``dtype_policy`` is a
fixed name), and the device queries differ per backend, hence this module;
the backend-specific lines are in `_accelerator`.
"""

import os
import platform

import keras

if keras.config.backend() == "tensorflow":
    # The device query of the TensorFlow backend; JAX and PyTorch ask their
    # own APIs and never import TensorFlow here.
    from keras_transformer.utils.tensorflow_devices import tf

AUTO = "auto"
BFLOAT16_POLICY = "mixed_bfloat16"
FLOAT32_POLICY = "float32"
# x86 (Linux /proc/cpuinfo "flags") and ARM ("Features") names of native
# bfloat16 dot products.
_CPU_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")
_CPUINFO = "/proc/cpuinfo"


def resolve_dtype_policy(name, backend=None):
    """``(policy name or None, reason or None)`` for a config's ``dtype_policy``.

    Args:
        name: str or None. ``"auto"`` chooses ``"mixed_bfloat16"`` when
            `native_bfloat16` says the device multiplies bfloat16 natively,
            else ``"float32"``; any other value is returned unchanged.
        backend: str. Defaults to ``keras.config.backend()``.

    Returns:
        The policy to build the model with, and for ``"auto"`` a sentence
        saying why (None otherwise).
    """
    if name != AUTO:
        return name, None
    native, device = native_bfloat16(backend)
    if native:
        return BFLOAT16_POLICY, f"native bfloat16 matmuls: {device}"
    return FLOAT32_POLICY, f"no native bfloat16 matmuls: {device}"


def native_bfloat16(backend=None):
    """``(bool, why)``: does the first device multiply bfloat16 natively?"""
    accelerator = _accelerator(backend)
    if accelerator is not None:
        kind, capability = accelerator
        if kind == "tpu":
            return True, "the TPU"
        if capability is None:  # E.g. ROCm: no CUDA compute capability.
            return True, "the GPU"
        text = ".".join(map(str, capability))
        return tuple(capability) >= (8, 0), f"the GPU has compute capability {text}"
    flags = cpu_flags()
    if flags is None:
        machine = platform.machine() or "unknown"
        return False, f"the features of this CPU ({machine}) are unknown: no {_CPUINFO}"
    found = sorted(flag for flag in _CPU_BFLOAT16_FLAGS if flag in flags)
    if found:
        return True, f"this CPU has {', '.join(found)}"
    return False, "this CPU lacks AVX512-BF16, AMX-BF16 and ARM BF16"


def cpu_flags(path=None):
    """The CPU feature flags in ``path`` (default: Linux ``/proc/cpuinfo``), or None."""
    path = _CPUINFO if path is None else path
    if not os.path.isfile(path):
        return None
    flags = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, separator, value = line.partition(":")
                if separator and key.strip() in ("flags", "Features"):
                    flags.update(value.split())
    except OSError:
        return None
    return flags


def _accelerator(backend=None):
    """``("gpu", (major, minor) or None)``, ``("tpu", None)``, or None for a CPU.

    The one backend-specific function here: each backend names its devices
    its own way.
    """
    if backend is None:

        backend = keras.config.backend()
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        if device.platform == "tpu":
            return "tpu", None
        if device.platform in ("gpu", "cuda", "rocm"):
            capability = getattr(device, "compute_capability", None)
            if capability:
                return "gpu", tuple(int(part) for part in str(capability).split("."))
            return "gpu", None
        return None
    if backend == "torch":
        import torch

        if torch.cuda.is_available():
            return "gpu", tuple(torch.cuda.get_device_capability(0))
        return None
    if backend == "tensorflow":

        if tf.config.list_logical_devices("TPU"):
            return "tpu", None
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            details = tf.config.experimental.get_device_details(gpus[0])
            capability = details.get("compute_capability")
            return "gpu", tuple(capability) if capability else None
        return None
    return None
