"""A kernel module whose user code will not let its process end, by the way ``ENDING_KERNEL`` names (read at import):
``thread`` starts a non-daemon thread that never returns, ``atexit`` registers an exit handler that never returns,
``detach-probe`` makes ``config_ok`` (called by the callback probe while a matrix is read) and ``detach-worker``
makes ``runtime_args`` (called in a compile worker) start ``sleep 300`` in a session of its own and then end their
process with ``os._exit(1)``. For tests/test_user_code_ends.py."""
import atexit
import os
import subprocess
import threading
import time

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar

HOW = os.environ.get("ENDING_KERNEL", "")
if HOW == "thread":
    threading.Thread(target=lambda: time.sleep(10**6), daemon=False).start()
elif HOW == "atexit":
    atexit.register(lambda: time.sleep(10**6))


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _detach(where: str) -> None:
    if HOW == where:
        subprocess.Popen(["sleep", "300"], start_new_session=True)  # outlives its parent unless ended by its tag
        os._exit(1)


def _args(shape, dtype):
    _detach("detach-worker")
    return {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])}


def _config_ok(shape, config):
    _detach("detach-probe")
    return True


SPEC = KernelSpec(name="ending", fn=copy_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
                  nvidia_configs=({"BLOCK": 16},), amd_configs=({"BLOCK": 16},), grid=lambda s, c: (1,),
                  runtime_args=_args, config_ok=_config_ok)
