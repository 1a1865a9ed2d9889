"""The asking side of :mod:`harness.support.zygote`: a forked process with the handle ``subprocess`` would give.

Every call answers None where no zygote is named, none can be reached, or it refuses: the caller then starts a
fresh interpreter, as it would without one.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from harness.support import lifeline
from harness.support.zygote import ENV, ForkRequest, address, python_id


class ZygoteChild:
    """A forked process: the part of ``subprocess.Popen`` that :class:`~harness.execution.pool.Worker` uses. Its
    exit status comes from the zygote, which reaps it."""

    def __init__(
        self, conn: socket.socket, pid: int, stdin: IO[Any] | None, stdout: IO[Any] | None, early: bytes = b""
    ) -> None:
        self.conn, self.pid, self.stdin, self.stdout = conn, pid, stdin, stdout
        self.returncode: int | None = None
        self._buffer = early  # what came after the pid's line: a child that ended at once has its status there

    def _read_status(self, timeout: float | None) -> None:
        while self.returncode is None and b"\n" not in self._buffer:
            ready, _, _ = select.select([self.conn], [], [], timeout)
            if not ready:
                return
            chunk = self.conn.recv(4096)
            if not chunk:  # the zygote itself went away: the child went with it (its lifeline)
                self.returncode = -signal.SIGKILL
                return
            self._buffer += chunk
        if self.returncode is None:
            status = json.loads(self._buffer.split(b"\n", 1)[0])["status"]
            self.returncode = os.waitstatus_to_exitcode(status)
            self.conn.close()

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read_status(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._read_status(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"zygote child {self.pid}", timeout or 0)
        return self.returncode


def fork(
    socket_path: str, role: str, argv: list[str], env: dict[str, str], cwd: str, fds: tuple[int, int, int]
) -> ZygoteChild | str:
    """Ask the zygote at ``socket_path`` for a ``role`` process in ``cwd`` on ``fds`` (stdin, stdout, stderr): the
    child, or why there is none."""
    if not socket_path:
        return "no zygote named"
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(socket_path)
        request = ForkRequest(role, python_id(), env, cwd, tuple(argv))
        socket.send_fds(conn, [request.to_wire()], list(fds))
        reply, early = _first_line(conn)
        answer: object = json.loads(reply) if reply else None  # {"pid": N} or {"refused": why}
    except (OSError, ValueError) as exc:
        answer, early = {"refused": f"{socket_path}: {exc}"}, b""
    pid = answer.get("pid") if isinstance(answer, dict) else None
    if not isinstance(pid, int):
        conn.close()
        return str(answer.get("refused", "no answer")) if isinstance(answer, dict) else "no answer"
    return ZygoteChild(conn, pid, None, None, early)


def _first_line(conn: socket.socket) -> tuple[bytes, bytes]:
    """The zygote's first line and whatever came with it. A child that ends before its run reads the pid has its
    status sent right behind it, often in the same read: it must stay with the child's handle, not be dropped with
    a reader's buffer (which read it as a closed connection, a child killed, -9)."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return data, b""
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line, rest


def start_worker(kind: str, env: dict[str, str], stderr: IO[bytes]) -> ZygoteChild | None:
    """A worker of ``kind`` (``compile``, ``interpret``) forked by that role's zygote in the folder ``env`` names,
    with line-buffered text pipes like ``Popen``'s."""
    child = ask_worker(kind, env, stderr)
    return child if isinstance(child, ZygoteChild) else None


def ask_worker(kind: str, env: dict[str, str], stderr: IO[bytes]) -> ZygoteChild | str:
    """:func:`start_worker`, or why the zygote forked none (unreachable, or its refusal in its words)."""
    argv = [str(Path(__file__).resolve().parents[1] / "execution" / "worker_main.py")]
    return fork_piped(kind, argv, env, stderr, text=True)


def fork_piped(role: str, argv: list[str], env: dict[str, str], stderr: IO[bytes], text: bool) -> ZygoteChild | str:
    """A ``role`` child of the zygote in the folder ``env`` names, in this directory, with pipes for its stdin and
    stdout like ``Popen``'s (text and line-buffered, or binary and unbuffered) and ``stderr`` as its stderr; or
    why there is none."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    try:
        child = fork(
            address(env.get(ENV, ""), role), role, argv, env, os.getcwd(), (in_read, out_write, stderr.fileno())
        )
    finally:
        os.close(in_read)
        os.close(out_write)
    if isinstance(child, str):
        os.close(in_write)
        os.close(out_read)
        return child
    # owned by the handle, closed by its user (the pool, the probe)
    child.stdin = open(in_write, "w", buffering=1) if text else open(in_write, "wb", buffering=0)  # noqa: SIM115
    child.stdout = open(out_read) if text else open(out_read, "rb", buffering=0)  # noqa: SIM115
    return child


def run_cli(args: list[str], env: dict[str, str], cwd: str, timeout: float) -> subprocess.CompletedProcess[str] | None:
    """``python -m harness ARGS`` in ``cwd`` under ``env``, forked by the ``cli`` zygote in the folder ``env``
    names: what ``subprocess.run(..., capture_output=True, text=True, timeout=...)`` returns, or None where no
    zygote took it.
    Past ``timeout`` the process and all below it are killed and ``TimeoutExpired`` is raised with its output."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    argv = [str(Path(__file__).resolve().parents[1] / "__main__.py"), *args]
    try:
        child = fork(address(env.get(ENV, ""), "cli"), "cli", argv, env, cwd, (null, out_write, err_write))
    finally:
        for fd in (null, out_write, err_write):
            os.close(fd)
    if isinstance(child, str):
        os.close(out_read)
        os.close(err_read)
        return None
    reading = {out_read: b"", err_read: b""}
    done: dict[int, bytes] = {}
    deadline = time.monotonic() + timeout
    try:
        while reading and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(reading), [], [], left)
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    reading[fd] += chunk
                else:
                    done[fd] = reading.pop(fd)
                    os.close(fd)
        if reading:  # still writing at the limit
            lifeline.kill_tree(child.pid)
            child.wait()
            raise subprocess.TimeoutExpired(args, timeout, output={**reading, **done}[out_read])
        code = child.wait(max(1.0, deadline - time.monotonic()))
    finally:
        for fd in reading:
            os.close(fd)
    return subprocess.CompletedProcess(args, code, done[out_read].decode(errors="replace"),
                                       done[err_read].decode(errors="replace"))  # fmt: skip
