"""Shared test helpers: run the CLI as a user would, compile one real case in-process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from harness.support import zygote_client

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


class Zygote(NamedTuple):
    """One of the suite's zygotes: its socket and its process."""

    address: str
    pid: int


class Zygotes(NamedTuple):
    """The suite's zygotes (tests/conftest.py), one per role, in the folder ``HARNESS_ZYGOTE`` names."""

    compile: Zygote
    interpret: Zygote
    cli: Zygote
    probe: Zygote


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 1800
) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGS`` in a process of its own, output captured: forked by the suite's ``cli`` zygote
    (the same argv, environment and directory, without paying the imports again) where it takes it, else a fresh
    interpreter.

    The limit is a guard against a hang, not a speed test: generous, so a loaded CI runner only makes the
    suite slower; running past it fails the test with what the command printed (never a raw TimeoutExpired).
    """
    import pytest

    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), full_env.get("PYTHONPATH", "")) if p)
    full_env.pop("TRITON_INTERPRET", None)
    full_env.update(env or {})
    try:
        forked = zygote_client.run_cli(list(args), full_env, str(cwd or REPO), timeout)
        if forked is not None:
            return forked
        return subprocess.run(
            [sys.executable, "-m", "harness", *args],
            cwd=cwd or REPO,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        tail = (exc.stdout or b"")[-2000:]
        pytest.fail(
            f"harness {' '.join(args)[:200]} did not finish within {timeout:g} s (a hang, or a machine "
            f"far too loaded); its last output: {tail.decode(errors='replace') if isinstance(tail, bytes) else tail}"
        )


#: the commands that read and write files only, which a test may call in its own process (:func:`call_cli`)
IN_PROCESS = ("report", "compare", "validate", "history", "list", "targets")


def call_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``harness ARGS`` called in this process: ``harness.cli.main`` with its output captured, the directory and
    environment set for the call and put back after. For the commands that only read and write files (report,
    compare, validate, history, list, targets), where a process of their own would prove nothing more; what only a
    process shows (a signal, isolation from user code, the exit code the shell sees) stays with :func:`run_cli`."""
    import contextlib
    import io

    from harness.cli import main

    assert args and args[0] in IN_PROCESS, f"{args[:1]} runs in a process of its own: run_cli"
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.environ.pop("TRITON_INTERPRET", None)
        os.environ.update(env or {})
        os.chdir(cwd or REPO)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["harness", *args], code, out.getvalue(), err.getvalue())


def compile_one(
    kernel: str, dtype: str, shape: dict[str, Any], target: str, config: dict[str, Any], out: Path, **extra: Any
) -> dict[str, Any]:
    """A real cross-compile through the same code path the workers run."""
    from harness.compiling.compile import compile_job
    from harness.intake import loader
    from harness.model import targets
    from harness.model.jobs import from_wire

    ref = loader.resolve(kernel, None)
    spec = loader.load(ref)
    job = {
        "ref": ref,
        "dtype": dtype,
        "shape": spec.normalize_shape(shape),
        "target": targets.get(target).to_dict(),
        "config": config,
        "out": str(out),
        "artifact_parts": ["artifacts", kernel, target, "cfg"],
        **extra,
    }
    return compile_job(from_wire("compile", job)).to_json()  # the worker's own decoding, its reply as the wire has it


def run_static(
    matrix: Path, out: Path, *extra: str, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)
) -> subprocess.CompletedProcess[str]:
    """``harness run MATRIX --out OUT -n 0 --static-only [EXTRA]``: one process, no GPU; fails the test with what it
    printed unless it exits with one of ``ok``."""
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--static-only", *extra, env=env)
    assert proc.returncode in ok, proc.stdout[-3000:] + proc.stderr[-2000:]
    return proc


def write_matrix(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def small_matrix(name: str, targets: str = "[h100, mi300x]") -> str:
    """The smallest real matrix the tests start from: one vector_add build per target, no interpreter check."""
    return (
        f"name: {name}\ntargets: {targets}\nkernels:\n  vector_add:\n    dtypes: [fp32]\n    shapes: [{{N: 4096}}]\n"
        "    configs: [{BLOCK: 1024, num_warps: 4}]\n    interpret: false\n"
    )


def tagged_processes(tag: str) -> list[int]:
    """The processes whose environment holds ``tag`` (a test's own variable, inherited by every process a command
    starts, whatever session or process group it moves to)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found
