"""Kernel names from a graph's DOT dump: the dumps and the profiler's lists were written on the H200 by
``tests/gpu/test_baseline_kernel_names.py::test_write_dot_dumps`` (docs/performance.md); the GPU test holds the two readings
equal for every baseline of the default matrix, this one holds the parser to those real dumps on any machine."""

from __future__ import annotations

from pathlib import Path

from harness.device.kernel_names import _distinct, demangle, parse_dot

DUMPS = Path(__file__).parent / "data" / "graph_dumps"


def test_the_names_in_real_dumps_are_the_profilers() -> None:
    for name in ("matmul", "gelu_chain"):
        profiler = (DUMPS / f"{name}.profiler.txt").read_text().splitlines()
        # both readings are kept as the harness keeps names: distinct, each cut at 200 characters
        assert _distinct(parse_dot((DUMPS / f"{name}.dot").read_text()), 8) == profiler, name


def test_demangling_and_what_is_left_alone() -> None:
    assert demangle(
        "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13AUnaryFunctorIN3c108BFloat16ES4_S4_NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_"
    ).startswith("void at::native::vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<c10::BFloat16")
    assert demangle("triton_poi_fused_add_clamp_gelu_mul_0") == "triton_poi_fused_add_clamp_gelu_mul_0"
    assert demangle("_Znot a symbol") == "_Znot a symbol"
    assert parse_dot("digraph dot {\n}\n") == []
