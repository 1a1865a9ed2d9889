"""Triton's CPU interpreter made to check the kernel, not its own gaps (``TRITON_INTERPRET=1`` workers only).

Two gaps that made ordinary kernels fail there for reasons that were not theirs (triton 3.2–3.9):

* a Python ``float`` argument reaches the kernel as a Python float (``a.to(tl.float32)`` raises), where the
  compiled launcher passes it as an fp32 scalar: here it becomes an fp32 scalar tensor, as the launcher types it;
* the functions of ``triton.language.extra.libdevice`` are stubs under the interpreter (they return ``None``):
  here the ones in :data:`LIBDEVICE` are computed with numpy on the interpreter's arrays, in the argument's own
  precision. A kernel that imports a libdevice function by name (``from ...libdevice import tanh``) keeps the
  stub; one that calls ``libdevice.tanh`` gets the mapping.

Both are patched only inside :func:`as_launcher` and restored after; an interpreter without the internals
they need is left as it is (the check then reports ``interpret-unsupported`` where it fails).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

_UNARY: dict[str, Callable[[Any], Any] | None] = {
    "tanh": np.tanh,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "rint": np.rint,
    "round": np.round,
    "nearbyint": np.rint,
    "fabs": np.abs,
    "abs": np.abs,
    "fast_expf": np.exp,
    "fast_logf": np.log,
    "fast_tanhf": np.tanh,
    "fast_sinf": np.sin,
    "fast_cosf": np.cos,
    "fast_log2f": np.log2,
    "fast_exp10f": lambda x: np.power(10, x),
    "erf": None,
    "erfc": None,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "signbit": np.signbit,
}
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "pow": np.power,
    "powf": np.power,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "fmod": np.fmod,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "div_rn": np.divide,
    "fast_dividef": np.divide,
    "copysign": np.copysign,
}
#: the libdevice functions mapped under the interpreter (documented in docs/usage.md, "Kernels")
LIBDEVICE = tuple(sorted(set(_UNARY) | set(_BINARY) | {"fma"}))


def _erf(x: Any) -> Any:
    import math

    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _erfc(x: Any) -> Any:
    import math

    return np.vectorize(math.erfc, otypes=[x.dtype])(x)


def _wrap(np_fn: Callable[..., Any]) -> Callable[..., Any]:
    """A libdevice function over interpreter tensors: numpy on their arrays, the first argument's Triton type
    (a predicate such as ``isnan`` gives int1)."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    def fn(*args: Any, _semantic: Any = None, **_: Any) -> Any:
        first = args[0]
        arrays = [a.handle.data if hasattr(a, "handle") else np.asarray(a) for a in args]
        out = np.asarray(np_fn(*arrays))
        if out.dtype == np.bool_:
            return tl.tensor(TensorHandle(out, tl.int1), tl.int1)
        out = out.astype(arrays[0].dtype, copy=False)
        return tl.tensor(TensorHandle(out, first.handle.dtype), first.type)

    return fn


@contextmanager
def as_launcher() -> Iterator[list[str]]:
    """Patch the interpreter for the block; yields what was patched (empty where its internals differ)."""
    patched: list[tuple[Any, str, Any]] = []
    try:
        import triton.language as tl
        import triton.language.extra.libdevice as libdevice
        import triton.runtime.interpreter as itp

        original = itp._implicit_cvt

        def implicit_cvt(arg: Any) -> Any:
            if isinstance(arg, float):  # bool is an int, never a float
                return tl.tensor(itp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
            return original(arg)

        patched.append((itp, "_implicit_cvt", original))
        itp._implicit_cvt = implicit_cvt
        table: dict[str, Callable[..., Any]] = {
            **{k: v for k, v in _UNARY.items() if v is not None},
            "erf": _erf,
            "erfc": _erfc,
            **_BINARY,
            "fma": lambda a, b, c: a * b + c,
        }
        for name, np_fn in table.items():
            if hasattr(libdevice, name):
                patched.append((libdevice, name, getattr(libdevice, name)))
                setattr(libdevice, name, _wrap(np_fn))
    except (ImportError, AttributeError):
        pass  # another interpreter: left as it is
    try:
        yield [f"{getattr(obj, '__name__', obj)}.{name}" for obj, name, _ in patched]
    finally:
        for obj, name, value in reversed(patched):
            setattr(obj, name, value)
