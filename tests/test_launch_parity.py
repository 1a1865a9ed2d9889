"""Launch parity without a GPU: the harness compiles what Triton's own launcher would compile.

For every kernel of ``kernels/`` and each of its dtypes, real torch tensors of a
real shape are built with the kernel's own ``make_inputs``, its own ``launch``
is called, and the arguments it hands to Triton are captured at the
``JITFunction.run`` boundary (nothing launches). Triton's launch-time binder
and argument packing for the HIP backend (gfx942) then say what a launch on an
MI300X would compile; the harness's record for the same config must say the
same, parameter by parameter. The rules themselves are never restated here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import compile_one

from harness.intake import loader

# one real shape per kernel (the default matrix's, aligned where it has one)
SHAPES = {
    "vector_add": {"N": 1000003},
    "fused_activation": {"M": 1024, "N": 1000},
    "softmax": {"M": 1024, "N": 1000},
    "matmul": {"M": 1024, "N": 1024, "K": 1024},
    "flash_attention": {"B": 2, "H": 4, "N": 1000, "D": 64, "causal": True},
    "rmsnorm": {"M": 1024, "N": 1000, "affine": False},  # the weight left out: a None argument at launch
    "cross_entropy": {"M": 512, "V": 32000},
    "attention_desc": {"B": 2, "H": 4, "N": 1024, "D": 64, "causal": True},
    "moe_gemm": {"T": 4096, "E": 8, "N": 2048, "K": 1024, "bias": False},  # the bias left out: None
}


class _Captured(Exception):
    pass


def _launch_arguments(spec: Any, shape: dict, dtype: str, config: dict, **launch_kwargs: Any) -> tuple[tuple, dict]:
    """The positional and keyword arguments the kernel's launcher passes to Triton for real CPU tensors."""
    import torch

    seen: dict[str, Any] = {}

    def capture(*args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        seen["args"], seen["kwargs"] = args, kwargs
        raise _Captured

    inputs = spec.make_inputs(shape, dtype, "cpu", torch.Generator().manual_seed(0))
    spec.fn.run = capture  # instance attribute: this JITFunction only, for this process
    try:
        with pytest.raises(_Captured):
            spec.launch(inputs, shape, config, **launch_kwargs)
    finally:
        del spec.fn.run
    return seen["args"], seen["kwargs"]


def _triton_launch_specialisation(spec: Any, args: tuple, kwargs: dict, target: Any = None) -> dict[str, Any]:
    """Triton's own launch-time specialisation of those arguments on a backend (default HIP gfx942)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    fn = spec.fn
    backend = make_backend(target or GPUTarget("hip", "gfx942", 64))
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound, specialization, options = binder(*args, **kwargs)
    _, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization, options)
    out = {}
    for idx, name in enumerate(fn.arg_names):
        entry: dict[str, Any] = {"type": signature[name]}
        if (idx,) in constexprs:
            entry["value"] = constexprs[(idx,)]
        if (idx,) in attrs:
            entry["attrs"] = attrs[(idx,)]
        out[name] = entry
    return out


# fp8 inputs drawn on a CPU take the OCP format; MI300X's is another (moe_gemm fp8 is checked on a GPU)
CASES = [(k, d) for k in SHAPES for d in loader.load(loader.resolve(k, None)).dtypes if d != "fp8"]


@pytest.mark.parametrize("kernel,dtype", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_gfx942_compile_matches_the_hip_launcher(kernel: str, dtype: str, tmp_path: Path) -> None:
    spec = loader.load(loader.resolve(kernel, None))
    shape = spec.normalize_shape(SHAPES[kernel])
    config = next(dict(c) for c in spec.amd_configs if spec.config_ok(shape, dict(c)))
    args, kwargs = _launch_arguments(spec, shape, dtype, config)
    expected = _triton_launch_specialisation(spec, args, kwargs)
    rec = compile_one(kernel, dtype, shape, "mi300x", config, tmp_path)
    assert rec["status"] == "ok", rec
    assert rec["specialisation"] == expected
    pointers = [n for n, e in expected.items() if e["type"].startswith("*")]
    assert pointers and all(["tt.pointer_range", 32] in expected[n]["attrs"] for n in pointers)
    if kernel == "matmul":
        gcn = (tmp_path / rec["artifacts"]["amdgcn"]["path"]).read_text()
        assert re.search(r"^\s*buffer_load", gcn, re.M) and not re.search(r"^\s*global_load", gcn, re.M)


def test_large_integers_and_sizes_follow_the_launcher(tmp_path: Path) -> None:
    """An i32-declared scalar past 2^31 is i64 at launch; a tensor over 2 GiB gets no pointer range."""
    from harness.compiling import launchspec
    from harness.spec import Pointer, Scalar

    spec = loader.load(loader.resolve("vector_add", None))
    backend = launchspec.backend_for("hip", "gfx942", 64)
    big = 3 << 30
    values = {
        "x_ptr": launchspec.TensorArg(launchspec.triton_dtype("fp16"), 2 * big),
        "y_ptr": launchspec.TensorArg(launchspec.triton_dtype("fp16"), 1024),
        "out_ptr": launchspec.TensorArg(launchspec.triton_dtype("fp16"), 1024, align=8),
        "n_elements": big,
        "BLOCK": 1024,
    }
    got = launchspec.specialise(spec.fn, backend, values, {"num_warps": 4}).describe(spec.fn.arg_names)
    assert got["n_elements"]["type"] == "i64"
    assert ["tt.pointer_range", 32] not in got["x_ptr"]["attrs"]
    assert got["y_ptr"]["attrs"] == [["tt.divisibility", 16], ["tt.pointer_range", 32]]
    assert got["out_ptr"]["attrs"] == [["tt.pointer_range", 32]]  # 8-byte aligned: no divisibility
    assert Pointer("fp16").numel is None and Scalar("i32", 1).value == 1


def test_none_arguments_and_constexpr_defaults_as_at_launch(tmp_path: Path) -> None:
    from helpers import DATA

    from harness.compiling.compile import compile_job
    from harness.model import targets
    from harness.model.jobs import from_wire

    for target in ("h100", "mi300x"):
        job = {
            "ref": f"{DATA / 'optional_kernel.py'}:SPEC",
            "dtype": "fp32",
            "shape": {"N": 4096},
            "target": targets.get(target).to_dict(),
            "config": {"num_warps": 4},
            "out": str(tmp_path),
            "artifact_parts": ["artifacts", target],
        }
        rec = compile_job(from_wire("compile", job)).to_json()
        assert rec["status"] == "ok", rec
        got = rec["specialisation"]
        assert got["w_ptr"] == {"type": "constexpr", "value": None}
        assert got["BLOCK"] == {"type": "constexpr", "value": 256} and got["USE_W"]["value"] is False


@pytest.mark.parametrize("kernel,dtype", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_packing_for_releases_without_pack_args_equals_tritons_own(kernel: str, dtype: str) -> None:
    """Triton 3.4 packs arguments inline in ``JITFunction.run``; the harness's copy of those steps must give
    what the installed Triton's own ``_pack_args`` gives, on both backends, for the kernel's real arguments."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    from harness.compiling.launchspec import _pack_args_34

    spec = loader.load(loader.resolve(kernel, None))
    shape = spec.normalize_shape(SHAPES[kernel])
    for target, space in (
        (GPUTarget("hip", "gfx942", 64), spec.amd_configs),
        (GPUTarget("cuda", 90, 32), spec.nvidia_configs),
    ):
        config = next(dict(c) for c in space if spec.config_ok(shape, dict(c)))
        args, kwargs = _launch_arguments(spec, shape, dtype, config)
        backend = make_backend(target)
        binder = create_function_from_signature(spec.fn.signature, spec.fn.params, backend)
        bound, specialization, options = binder(*args, **kwargs)
        ours = _pack_args_34(spec.fn, backend, kwargs, bound, specialization, options)
        theirs = spec.fn._pack_args(backend, kwargs, bound, specialization, options)
        assert ours[1:] == theirs[1:] and ours[0].__dict__ == theirs[0].__dict__


def test_host_tensor_descriptors_match_the_cuda_launcher(tmp_path: Path) -> None:
    """attention_desc on sm_90: the launch passes TensorDescriptor objects (block shapes from the config);
    the static compile for h100 must be what Triton's CUDA launcher makes of them, TMA included."""
    from triton.backends.compiler import GPUTarget

    spec = loader.load(loader.resolve("attention_desc", None))
    shape = spec.normalize_shape(SHAPES["attention_desc"])
    config = dict(spec.nvidia_configs[0])
    args, kwargs = _launch_arguments(spec, shape, "fp16", config, use_desc=True)
    expected = _triton_launch_specialisation(spec, args, kwargs, GPUTarget("cuda", 90, 32))
    assert expected["Q"]["type"] == f"tensordesc<fp16[{config['BLOCK_M']}, 64]>"
    assert expected["K"]["type"] == f"tensordesc<fp16[{config['BLOCK_N']}, 64]>"
    rec = compile_one("attention_desc", "fp16", shape, "h100", config, tmp_path)
    assert rec["status"] == "ok", rec
    assert rec["specialisation"] == expected
    ptx = (tmp_path / rec["artifacts"]["ptx"]["path"]).read_text()
    assert "cp.async.bulk.tensor" in ptx  # tiles move by TMA
    amd = compile_one("attention_desc", "fp16", shape, "mi300x", dict(spec.amd_configs[0]), tmp_path / "amd")
    assert amd["status"] == "ok" and amd["specialisation"]["Q"]["type"] == "*fp16"  # the pointer path


def test_vendor_fp8_types_follow_the_target(tmp_path: Path) -> None:
    spec = loader.load(loader.resolve("moe_gemm", None))
    shape = spec.normalize_shape(SHAPES["moe_gemm"])
    seen = {}
    for target, space in (("h100", spec.nvidia_configs), ("mi300x", spec.amd_configs), ("mi355x", spec.amd_configs)):
        rec = compile_one("moe_gemm", "fp8", shape, target, dict(space[0]), tmp_path / target)
        assert rec["status"] == "ok", rec
        seen[target] = (
            rec["specialisation"]["a_ptr"]["type"],
            rec["specialisation"]["c_ptr"]["type"],
            rec["specialisation"]["bias_ptr"],
        )
    assert seen["h100"][:2] == ("*fp8e4nv", "*bf16") and seen["mi300x"][0] == "*fp8e4b8"
    assert seen["mi355x"][0] == "*fp8e4nv"  # gfx950 computes in the OCP format
    assert seen["h100"][2] == {"type": "constexpr", "value": None}  # no bias: a None argument
