"""`dtype_policy: auto`: bfloat16 matmuls only where the hardware has them."""

import pytest

from keras_transformer.training import precision
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.run_model import build_model

X86_AVX2 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 fma\n"
X86_BF16 = X86_AVX2.replace("avx2 fma", "avx2 fma avx512f avx512_bf16")
X86_AMX = X86_AVX2.replace("avx2 fma", "avx2 amx_tile amx_bf16")
ARM_BF16 = "processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n"
ARM_OLD = "processor\t: 0\nFeatures\t: fp asimd crc32\n"


@pytest.fixture
def cpu(tmp_path, monkeypatch):
    """Makes the device a CPU whose /proc/cpuinfo says ``text`` (None: no file)."""
    monkeypatch.setattr(precision, "_accelerator", lambda backend=None: None)

    def use(text):
        path = tmp_path / "cpuinfo"
        if text is not None:
            path.write_text(text)
        monkeypatch.setattr(precision, "_CPUINFO", str(path))

    return use


@pytest.mark.parametrize(
    "cpuinfo, native",
    [(X86_AVX2, False), (X86_BF16, True), (X86_AMX, True), (ARM_BF16, True),
     (ARM_OLD, False), (None, False)],
)  # fmt: skip
def test_auto_follows_the_cpu_flags(cpu, cpuinfo, native):
    cpu(cpuinfo)
    policy, reason = precision.resolve_dtype_policy("auto")
    assert policy == ("mixed_bfloat16" if native else "float32")
    assert reason.startswith("native" if native else "no native")
    assert "this CPU" in reason
    if cpuinfo == X86_BF16:
        assert "avx512_bf16" in reason


@pytest.mark.parametrize(
    "accelerator, policy",
    [(("gpu", (7, 5)), "float32"), (("gpu", (8, 0)), "mixed_bfloat16"),
     (("gpu", (9, 0)), "mixed_bfloat16"), (("gpu", None), "mixed_bfloat16"),
     (("tpu", None), "mixed_bfloat16")],
)  # fmt: skip
def test_auto_follows_the_accelerator(monkeypatch, accelerator, policy):
    monkeypatch.setattr(precision, "_accelerator", lambda backend=None: accelerator)
    chosen, reason = precision.resolve_dtype_policy("auto")
    assert chosen == policy
    if accelerator[1] is not None:
        assert "compute capability " + ".".join(map(str, accelerator[1])) in reason


def test_named_policies_pass_through():
    assert precision.resolve_dtype_policy(None) == (None, None)
    assert precision.resolve_dtype_policy("mixed_bfloat16") == ("mixed_bfloat16", None)


def test_auto_queries_this_machine():
    """No monkeypatching: the backend's device query runs (a CPU in CI)."""
    native, device = precision.native_bfloat16()
    if precision._accelerator() is not None:  # A GPU or TPU machine.
        assert device.startswith(("the GPU", "the TPU"))
        return
    flags = precision.cpu_flags()
    expected = flags is not None and bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})
    assert native is expected and "this CPU" in device


def test_build_model_resolves_auto(cpu):
    config = TrainConfig(
        preset="tiny", dtype_policy="auto", warmup_steps=10, learning_rate_scale=1.0,
        model_overrides=dict(num_layers=1, d_model=16, num_heads=2, d_ff=32),
    )  # fmt: skip
    cpu(X86_AVX2)
    assert build_model(config, 64).dtype_policy.name == "float32"
    cpu(X86_BF16)
    assert build_model(config, 64).dtype_policy.name == "mixed_bfloat16"
