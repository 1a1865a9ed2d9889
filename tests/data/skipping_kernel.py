"""A kernel with a config-dependent bug, for ``harness repro``'s launch half: it never writes element
``3 * BLOCK + 1``, which lies inside N=4096 for BLOCK=1024 (a mismatch against the poisoned output) and outside it
for BLOCK=2048 (correct). Its launcher passes the config's meta-parameters and launch options as a user's would."""

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def skipping_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    total = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, total, mask=mask & (offs != 3 * BLOCK + 1))


def make_inputs(shape, dtype, device, generator):
    import torch

    n = shape["N"]
    return tuple(torch.randn(n, generator=generator, device=generator.device).to(device) for _ in range(2))


def launch(inputs, shape, config, out=None):
    import torch

    x, y = inputs
    out = torch.empty_like(x) if out is None else out
    skipping_add[lambda meta: (triton.cdiv(shape["N"], meta["BLOCK"]),)](x, y, out, shape["N"], **config)
    return out


SPEC = KernelSpec(
    name="skipping_add",
    fn=skipping_add,
    dims=("N",),
    dtypes=("fp32",),
    tunables=("BLOCK",),
    runtime_args=lambda shape, dtype: {
        "x_ptr": Pointer(dtype, shape["N"]),
        "y_ptr": Pointer(dtype, shape["N"]),
        "out_ptr": Pointer(dtype, shape["N"]),
        "n": Scalar("i32", shape["N"]),
    },
    grid=lambda shape, config: (triton.cdiv(shape["N"], config["BLOCK"]),),
    make_inputs=make_inputs,
    launch=launch,
    reference=lambda inputs, shape: inputs[0] + inputs[1],
    flops=lambda s, d: float(s["N"]),
    min_bytes=lambda s, d: 12.0 * s["N"],
    nvidia_configs=({"BLOCK": 1024, "num_warps": 4}, {"BLOCK": 2048, "num_warps": 4}),
    amd_configs=({"BLOCK": 1024, "num_warps": 4},),
    interpret_shapes=({"N": 4096},),
)
