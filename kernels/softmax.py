"""softmax: row-wise, numerically stable; each program owns BLOCK_M whole rows.

With CHUNK 0 a row is read from HBM once and written once: the row width is a compile-time
constant (next power of two of N), so the reduction stays in registers. Rows too wide for
that (a 32k vocabulary) take CHUNK-wide slices: an online max-and-sum pass, then a pass that
re-reads each slice from L2 and writes it.
"""

from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from harness.torchutil import element_size, randn


@triton.jit
def softmax_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CHUNK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    if CHUNK == 0:
        # the whole row in registers: one read, one write
        cols = tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
        x_max = tl.max(x, axis=1)
        # Rows past M are all -inf: keep their max finite so no NaN is formed.
        x_max = tl.where(rows < M, x_max, 0.0)
        e = tl.exp(x - x_max[:, None])
        denom = tl.sum(e, axis=1)
        denom = tl.where(rows < M, denom, 1.0)
        y = e / denom[:, None]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # long rows: an online pass for max and sum over CHUNK-wide slices, then a pass that
        # re-reads each slice (from L2: the row was read moments ago) and writes it
        cols = tl.arange(0, CHUNK)
        run_max = tl.full((BLOCK_M,), -float("inf"), tl.float32)
        run_sum = tl.zeros((BLOCK_M,), tl.float32)
        for start in range(0, N, CHUNK):
            mask = (rows[:, None] < M) & ((start + cols)[None, :] < N)
            x = tl.load(x_ptr + rows[:, None] * N + (start + cols)[None, :], mask=mask, other=-float("inf")).to(
                tl.float32
            )
            new_max = tl.where(rows < M, tl.maximum(run_max, tl.max(x, axis=1)), 0.0)
            run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max[:, None]), axis=1)
            run_max = new_max
        inv = 1.0 / tl.where(rows < M, run_sum, 1.0)
        for start in range(0, N, CHUNK):
            mask = (rows[:, None] < M) & ((start + cols)[None, :] < N)
            offs = rows[:, None] * N + (start + cols)[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp(x - run_max[:, None]) * inv[:, None]
            tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def runtime_args(shape, dtype):
    return {
        "x_ptr": Pointer(dtype, shape["M"] * shape["N"]),
        "y_ptr": Pointer(dtype, shape["M"] * shape["N"]),
        "M": Scalar("i32", shape["M"]),
        "N": Scalar("i32", shape["N"]),
    }


def fixed_constexprs(shape, dtype):
    return {"BLOCK_N": triton.next_power_of_2(shape["N"])}


def config_ok(shape, config):
    # A program holds BLOCK_M full rows (CHUNK 0) or BLOCK_M slices in registers: cap the tile at 64K
    # elements; a slice as wide as the whole row is the one-pass config again.
    width = triton.next_power_of_2(shape["N"])
    if config["CHUNK"]:
        return config["CHUNK"] < width and config["BLOCK_M"] * config["CHUNK"] <= 65536
    return config["BLOCK_M"] * width <= 65536


def grid(shape, config):
    return (triton.cdiv(shape["M"], config["BLOCK_M"]),)


def make_inputs(shape, dtype, device, generator):
    return (randn((shape["M"], shape["N"]), dtype, device, generator, scale=3.0),)


def launch(inputs, shape, config, out=None):
    import torch

    (x,) = inputs
    y = torch.empty_like(x) if out is None else out
    softmax_kernel[grid(shape, config)](
        x, y, shape["M"], shape["N"], BLOCK_N=triton.next_power_of_2(shape["N"]), **config
    )
    return y


def reference(inputs, shape):
    import torch

    (x,) = inputs
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def torch_softmax(inputs, shape):
    import torch

    return torch.softmax(inputs[0], dim=-1)


SPEC = KernelSpec(
    name="softmax",
    fn=softmax_kernel,
    dims=("M", "N"),
    dtypes=("fp16", "bf16", "fp32"),
    tunables=("BLOCK_M", "CHUNK"),
    runtime_args=runtime_args,
    fixed_constexprs=fixed_constexprs,
    config_ok=config_ok,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    flops=lambda shape, dtype: 5.0 * shape["M"] * shape["N"],
    min_bytes=lambda shape, dtype: 2.0 * shape["M"] * shape["N"] * element_size(dtype),
    nvidia_configs=(
        {"BLOCK_M": 1, "CHUNK": 0, "num_warps": 8, "num_stages": 2},
        {"BLOCK_M": 4, "CHUNK": 0, "num_warps": 16, "num_stages": 2},
        {"BLOCK_M": 1, "CHUNK": 0, "num_warps": 16, "num_stages": 2},  # 32k-wide rows: 64 values a thread
        {"BLOCK_M": 1, "CHUNK": 0, "num_warps": 32, "num_stages": 2},
        {"BLOCK_M": 1, "CHUNK": 8192, "num_warps": 16, "num_stages": 2},
    ),
    amd_configs=(
        {"BLOCK_M": 1, "CHUNK": 0, "num_warps": 8, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK_M": 2, "CHUNK": 0, "num_warps": 16, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK_M": 1, "CHUNK": 8192, "num_warps": 16, "num_stages": 1, "waves_per_eu": 0},
    ),
    baselines={"torch.softmax": torch_softmax},
    interpret_shapes=({"M": 7, "N": 1000}, {"M": 3, "N": 33}, {"M": 3, "N": 9000}),  # the last: sliced rows
    tolerances={"fp16": (2e-3, 1e-2), "bf16": (8e-3, 2e-2), "fp32": (1e-6, 1e-5)},
)
