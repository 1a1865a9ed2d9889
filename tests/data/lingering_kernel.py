"""A kernel whose user code starts a process of its own and then blocks: ``config_ok`` (called by the callback probe
while the matrix is read) as ``CONFIG_OK``, ``runtime_args`` (called in the compile worker) as ``RUNTIME``. For the
test that no process the harness started outlives it (tests/test_children_end.py)."""
import subprocess
import time

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _linger(*_):
    subprocess.Popen(["sleep", "600"])  # a grandchild of the harness
    print("lingering", flush=True)
    time.sleep(600)
    return True


def _args(shape, dtype):
    return {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])}


def _runtime(shape, dtype):
    _linger()
    return _args(shape, dtype)


_BASE = dict(fn=copy_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",), nvidia_configs=({"BLOCK": 16},),
             amd_configs=({"BLOCK": 16},), grid=lambda s, c: (1,))
CONFIG_OK = KernelSpec(name="linger_config_ok", runtime_args=_args, config_ok=_linger, **_BASE)
RUNTIME = KernelSpec(name="linger_runtime", runtime_args=_runtime, **_BASE)
