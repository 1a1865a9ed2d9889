"""Triton's CPU interpreter made to check the kernel, not its own gaps (``TRITON_INTERPRET=1`` workers only).

Two gaps that made ordinary kernels fail there for reasons that were not theirs (triton 3.2–3.9):

* a Python ``float`` argument reaches the kernel as a Python float (``a.to(tl.float32)`` raises), where the
  compiled launcher passes it as an fp32 scalar: here it becomes an fp32 scalar tensor, as the launcher types it;
* the functions of ``triton.language.extra.libdevice`` are stubs under the interpreter (they return ``None``):
  here the ones in :data:`LIBDEVICE` are computed with numpy on the interpreter's arrays, in the argument's own
  precision. A kernel that imports a libdevice function by name (``from ...libdevice import tanh``) keeps the
  stub; one that calls ``libdevice.tanh`` gets the mapping.

* a helper ``@triton.jit`` function called from a kernel (Inductor's ``triton_helpers``) patched
  ``triton.language`` again on each call; the launch already did, so here it is called as it is;

* a reduction with a combine function of the kernel's own (``tl.reduce(x, 1, combine)``; every Inductor reduction,
  through ``triton_helpers``) calls that function once per element, each call repatching ``triton.language``
  (about 3 ms): a [1, 1024] row took a second. Here the combine is applied pairwise over whole halves of the
  axis, adjacent elements together and in order (a tree, as a GPU reduces; the combine must be associative, which
  ``tl.reduce`` already asks of it): log2(n) calls over arrays.

All four are patched only inside :func:`as_launcher` and restored after; an interpreter without the internals
they need is left as it is (the check then reports ``interpret-unsupported`` where it fails).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
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


def _tree_reduce(self: Any, input: Any) -> Any:
    """``ReduceOps.generic_reduce`` as a tree of pairwise combines over whole slices (see the module)."""
    original_axis = self.axis
    tensors, axis = self.unravel(input, self.axis)
    dtypes = [t.dtype for t in tensors]
    arrays = [t.handle.data for t in tensors]
    while arrays[0].shape[axis] > 1:
        n = arrays[0].shape[axis]
        pairs = n // 2
        left = [np.take(a, np.arange(0, 2 * pairs, 2), axis=axis) for a in arrays]
        right = [np.take(a, np.arange(1, 2 * pairs, 2), axis=axis) for a in arrays]
        got = self.combine_fn.fn(
            *(self.to_tensor(a, d) for a, d in zip(left, dtypes)),
            *(self.to_tensor(a, d) for a, d in zip(right, dtypes)),
        )
        got = got if isinstance(got, tuple) else (got,)
        combined = [
            np.broadcast_to(g.handle.data if hasattr(g, "handle") else np.asarray(g), left[0].shape).astype(a.dtype)
            for g, a in zip(got, arrays)
        ]
        if n % 2:  # the odd last element joins the next round, still last
            combined = [
                np.concatenate([c, np.take(a, [n - 1], axis=axis)], axis=axis) for c, a in zip(combined, arrays)
            ]
        arrays = combined
    out = []
    for a, d in zip(arrays, dtypes):
        data = np.squeeze(a, axis=axis)
        if self.keep_dims:
            data = np.expand_dims(data, axis) if original_axis is not None else data.reshape((1,) * a.ndim)
        elif original_axis is None:
            data = data.item() if data.ndim == 0 else data.reshape(()).item()
        out.append(self.to_tensor(data, d))
    return out


_DEVICE_FUNCTIONS: dict[Any, Any] = {}


def _as_device_function(self: Any, *args: Any, **kwargs: Any) -> Any:
    from triton.runtime.interpreter import InterpretedFunction

    if self.fn not in _DEVICE_FUNCTIONS:
        _DEVICE_FUNCTIONS[self.fn] = InterpretedFunction(self.fn)
    return _DEVICE_FUNCTIONS[self.fn](*args, **kwargs)


def _device_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """A helper called from an interpreted kernel, patching ``triton.language`` (or its ``core``, as
    ``triton.language.standard`` sees it) only where the launch has not patched it yet: each call patched them
    anew (about 3 ms, which an online softmax's loop paid per iteration)."""
    import inspect

    import triton.language as tl
    from triton.runtime.interpreter import InterpreterError, _patch_lang

    langs = [v for v in self.fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]
    if any(tl.core.is_builtin(getattr(lang, "full", None)) for lang in langs):  # one of them not patched yet
        _patch_lang(self.fn)
    fn = self.rewrite()
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        raise InterpreterError(repr(e)) from e


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
        patched.append((itp.ReduceOps, "generic_reduce", itp.ReduceOps.generic_reduce))
        itp.ReduceOps.generic_reduce = _tree_reduce
        # a helper decorated while Triton was not interpreting (Inductor's triton_helpers, imported before an op's
        # region asked for interpreted kernels) is called from an interpreted kernel as one of its own
        from triton.runtime.jit import JITFunction

        patched.append((JITFunction, "__call__", JITFunction.__call__))
        JITFunction.__call__ = _as_device_function  # type: ignore[method-assign]
        if hasattr(itp.InterpretedFunction, "rewrite"):
            patched.append((itp.InterpretedFunction, "__call__", itp.InterpretedFunction.__call__))
            itp.InterpretedFunction.__call__ = _device_call  # type: ignore[method-assign]
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


def interpreter_limitation(exc: BaseException) -> str:
    """Why ``exc`` is a limitation of Triton's CPU interpreter rather than the kernel's fault ('' when it is the
    kernel's): a ``TypeError``, ``AttributeError`` or ``NotImplementedError`` raised inside the triton package
    while it interprets (an op or argument kind it does not emulate: a libdevice function left a stub, an extern
    call, an fp8 dot). Raised in the kernel's own code, or of another kind (a ``static_assert``, an index
    error), it stays the kernel's."""
    import traceback

    cause = exc.__cause__ if type(exc).__name__ == "InterpreterError" and exc.__cause__ is not None else exc
    if not isinstance(cause, (TypeError, AttributeError, NotImplementedError)):
        return ""
    exc = cause
    frames = traceback.extract_tb(exc.__traceback__)
    import triton

    root = Path(triton.__file__).parent.as_posix() + "/"
    if not frames or not Path(frames[-1].filename).as_posix().startswith(root):
        return ""  # raised in the kernel's own code: the kernel's error
    where = next(
        (f.name for f in reversed(frames) if "runtime/interpreter" in Path(f.filename).as_posix()), frames[-1].name
    )
    return f"{type(exc).__name__} in Triton's interpreter ({where}): {str(exc)[:200]}"
