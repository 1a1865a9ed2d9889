"""A decorated kernel with a pruning rule: ``early_config_prune`` drops tiles wider than the row."""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


def narrow_enough(configs, nargs, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= max(nargs["n"], 128)]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in (128, 512, 2048)], key=["n"],
                 prune_configs_by={"early_config_prune": narrow_enough})
@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


SPEC = KernelSpec(
    name="pruned_copy", fn=copy, dims=("N",), dtypes=("fp32",), tunables=(),
    runtime_args=lambda s, d: {"x_ptr": Pointer(d, s["N"]), "y_ptr": Pointer(d, s["N"]), "n": Scalar("i32", s["N"])},
    nvidia_configs=(), amd_configs=(),
)
