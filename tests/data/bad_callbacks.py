"""Specs whose callbacks misbehave when the matrix is read: each hangs, crashes or ends the process from one
callback (chosen by the attribute name), for the corpus of bad inputs. Their kernel is a plain copy."""
import os
import signal
import sys
import time

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _args(shape, dtype):
    return {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])}


def hang(*_):
    time.sleep(3600)


def segfault(*_):
    os.kill(os.getpid(), signal.SIGSEGV)


def exit_zero(*_):
    sys.exit(0)


def os_exit_zero(*_):
    os._exit(0)


def exit_three(*_):
    sys.exit(3)


def _spec(name, **callbacks):
    base = {"grid": lambda s, c: (triton.cdiv(s["N"], c["BLOCK"]),)}
    base.update(callbacks)
    return KernelSpec(name=name, fn=copy_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
                      nvidia_configs=({"BLOCK": 16},), amd_configs=({"BLOCK": 16},), runtime_args=_args,
                      **base)


BEHAVIOURS = {"hang": hang, "segfault": segfault, "exit_zero": exit_zero, "os_exit_zero": os_exit_zero,
              "exit_three": exit_three}
for _what, _fn in BEHAVIOURS.items():
    globals()[f"CONFIG_OK_{_what.upper()}"] = _spec(f"config_ok_{_what}", config_ok=_fn)
    globals()[f"FIXED_{_what.upper()}"] = _spec(f"fixed_{_what}", fixed_constexprs=_fn)
    globals()[f"GRID_{_what.upper()}"] = _spec(f"grid_{_what}", grid=_fn)
