"""A wrong kernel, planted through Inductor's own lowering table (tests/test_compiled_capture.py): eager PyTorch
computes ``doubled(x) = 2 x``; Inductor is told that ``doubled`` lowers to ``3 x``, so the Triton kernel it
generates for ``wrong`` is wrong on every target while eager stays right. The interpreter's check must fail it."""
import torch
from harness.torchutil import randn

if not hasattr(torch.ops.harness_test, "doubled"):  # once per process, however often the file is imported

    @torch.library.custom_op("harness_test::doubled", mutates_args=())
    def doubled(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @doubled.register_fake
    def _doubled_fake(x):
        return torch.empty_like(x)

    from torch._inductor import lowering

    @lowering.register_lowering(torch.ops.harness_test.doubled.default)
    def _tripled(x):
        return lowering.lowerings[torch.ops.aten.mul.Tensor](x, 3)


def wrong(x):
    return torch.ops.harness_test.doubled(x) + 1


def wrong_inputs(shape, dtype, device, generator):
    return (randn((shape["M"], shape["N"]), dtype, device, generator),)
