"""A warm process that forks compile workers, for a host that starts many short harness runs (the test suite, a
CI job that runs matrix after matrix).

A compile worker spends most of its start importing torch: Triton's launch binder imports it when it specialises
a tensor argument, and the HIP backend's 2 GiB check imports it outright, so a faithful build pays it (about 2 CPU
seconds on a small CI machine, against a fraction of that for a small build). A run starts at least one such worker.
Where ``HARNESS_ZYGOTE`` names a folder in which ``python -m harness.support.zygote FOLDER compile`` listens, a
compile worker is forked from that process instead: it imported torch, Triton and the harness's build modules once and has run
nothing else. The child takes the requesting run's environment, working directory, ``sys.path`` and pipes, then
runs :func:`harness.execution.worker_main.main` exactly as a fresh worker does (the lifeline, the face, the loop).
A zygote of the ``cli`` role holds the command line's modules instead (pytest, the plugin, the harness's stages,
the Triton it reports, the report's compiled template) and forks ``harness ARGS`` itself, as ``python -m harness ARGS`` would run: the test suite's ~250 runs use one.

A request is refused, and the run starts a fresh interpreter as it always does, whenever a fork could differ from
a fresh start: another Python, a variable that torch, numpy or the loader read at import
(:data:`READ_AT_IMPORT`), or a ``sys.path`` on which a module the zygote already holds would resolve to another
file (a second checkout of the harness, another Triton on ``PYTHONPATH``). The zygote also ends a child whose
run went away (the connection closed while the child lives): a killed run leaves no worker behind, nor the
scratch folder it made for that worker.

An interpreter worker comes from a zygote of its own role, ``interpret``, started with ``TRITON_INTERPRET=1``:
Triton decorates its own library functions (``tl.sum``, ``tl.cdiv``) when it is imported, as interpreted
functions where that variable is set, so a worker forked from a zygote that imported Triton without it would run
other objects than a fresh one (the variable is one of :data:`READ_AT_IMPORT`: a mismatch is refused). A GPU
worker initialises CUDA and always starts fresh.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from harness.support import lifeline
from harness.support.zygote_roles import ROLES

#: names the folder of the zygotes' sockets, one per role (``FOLDER/compile``...), for the harness processes that
#: may use them (empty or unset: none)
ENV = "HARNESS_ZYGOTE"

#: prefixes of variables read when torch, numpy, Triton's libraries or the dynamic loader are imported: a request
#: whose values differ from the zygote's is started fresh. Not CUDA's or HIP's (``CUDA_VISIBLE_DEVICES``, the
#: ``CUDA_MODULE_LOADING`` torch sets in a process that used a GPU): they are read when a device is first
#: initialised, which never happens in a zygote, and a child initialises one under its own environment.
READ_AT_IMPORT = ("TORCH", "PYTORCH", "OMP_", "MKL_", "KMP_", "OPENBLAS", "GOTO", "LD_", "NUMPY", "PYTHONHOME",
                  "PYTHONNOUSERSITE", "TRITON_INTERPRET")  # fmt: skip


@dataclass(frozen=True)
class ForkRequest:
    """What a run asks a zygote for (its pipes travel beside it): the child's role, the Python the run uses, and the
    environment, directory and argv the child takes."""

    role: str
    python: tuple[str, str]
    env: dict[str, str]
    cwd: str
    argv: tuple[str, ...]

    def to_wire(self) -> bytes:
        return json.dumps({**asdict(self), "python": list(self.python), "argv": list(self.argv)}).encode() + b"\n"

    @classmethod
    def from_wire(cls, data: bytes) -> ForkRequest:
        """The request a line carries; ``ValueError`` for a key missing or unknown, or a value of another type."""
        raw = json.loads(data)
        names = {f.name for f in fields(cls)}
        if not isinstance(raw, dict) or set(raw) != names:
            raise ValueError(f"a fork request has the keys {sorted(names)}")
        env, python, argv = raw["env"], raw["python"], raw["argv"]
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise ValueError("env: names and values are strings")
        if not (isinstance(python, list) and len(python) == 2 and all(isinstance(x, str) for x in python)):
            raise ValueError("python: the interpreter and its prefix")
        if not (isinstance(argv, list) and all(isinstance(x, str) for x in argv)):
            raise ValueError("argv: strings")
        if not (isinstance(raw["role"], str) and isinstance(raw["cwd"], str)):
            raise ValueError("role and cwd: strings")
        return cls(raw["role"], (python[0], python[1]), env, raw["cwd"], tuple(argv))


def _peer_uid(conn: socket.socket) -> int:
    """The user id of the process at the other end (Linux ``SO_PEERCRED``: pid, uid, gid)."""
    import struct

    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _import_sensitive(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(READ_AT_IMPORT)}


def _python_path(env: dict[str, str]) -> list[str]:
    return [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]


def child_sys_path(cwd: str, env: dict[str, str], base: list[str]) -> list[str]:
    """``sys.path`` as ``python -m`` would set it in ``cwd`` under ``env``: the directory, ``PYTHONPATH``, then the
    interpreter's own entries (``base``: the zygote's, less its directory and its ``PYTHONPATH``)."""
    return [cwd, *_python_path(env), *base]


@functools.lru_cache(maxsize=4096)
def _resolved(origin: str) -> str:
    """A module file's real path. Kept for the zygote's life: every request checks each held module (about 150),
    and resolving them again was half of that check's 15 ms. Only a symbolic link re-pointed while the zygote
    serves would make a kept answer stale; a file placed earlier on a request's path is still seen."""
    return str(Path(origin).resolve())


def _found(name: str, path: list[str]) -> str | None:
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec(name, path)
    return _resolved(spec.origin) if spec is not None and spec.origin else None


def held_modules(path: list[str]) -> dict[str, str]:
    """The top-level modules this process holds that were found on ``path``, by name: the file each came from."""
    held = {}
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if "." not in name and origin and _found(name, path) == _resolved(origin):
            held[name] = _resolved(origin)
    return held


def shadowed(held: dict[str, str], path: list[str]) -> str | None:
    """A held module that ``path`` would find in another file, or None."""
    return next((name for name, origin in held.items() if _found(name, path) != origin), None)


class Zygote:
    """The serving side: one listening socket, one connection per forked child, children reaped as they end."""

    def __init__(self, address: str, role: str) -> None:
        self.role = role
        for name in ROLES[role].preload:
            importlib.import_module(name)
        for name in ROLES[role].warm:
            module, function = name.split(":")
            getattr(importlib.import_module(module), function)()
        # what the imports made lives as long as the process: out of the collector's sight, so that a child's
        # collections (pytest's at the end of every session) no longer walk it, nor copy its pages on write
        gc.freeze()
        self.env = dict(os.environ)
        own = [os.getcwd(), *_python_path(self.env)]
        self.base = [p for p in sys.path[1:] if p not in own]
        self.held = held_modules(sys.path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        before = os.umask(0o077)  # the socket is this user's alone: a fork runs whatever a request names
        try:
            self.listener.bind(address)
        finally:
            os.umask(before)
        self.listener.listen(64)
        self.children: dict[int, socket.socket] = {}
        self.scratch: dict[int, str] = {}  # each child's HARNESS_SCRATCH, removed here if its run goes first

    def refusal(self, request: ForkRequest) -> str | None:
        if request.role != self.role:
            return f"this zygote forks {self.role} processes, not {request.role}"
        if request.python != python_id():
            return f"another Python ({request.python[0]})"
        mine, theirs = _import_sensitive(self.env), _import_sensitive(request.env)
        differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
        if differ:
            return f"variables read at import differ: {', '.join(differ)}"
        shadow = shadowed(self.held, child_sys_path(request.cwd, request.env, self.base))
        return f"module {shadow} would come from another file" if shadow else None

    def serve(self) -> None:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            watched = [self.listener, *self.children.values()]
            ready, _, _ = select.select(watched, [], [], 0.1)
            for sock in ready:
                if sock is self.listener:
                    self._accept()
                else:  # a run's end of a connection closed or spoke while its child lives: the run is gone
                    pid = next(p for p, s in self.children.items() if s is sock)
                    lifeline.kill_tree(pid)
                    lifeline.remove_scratch(self.scratch.get(pid, ""))  # the run made it, and can no longer remove it
            self._reap()

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        fds: list[int] = []
        try:
            message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            while message and not message.endswith(b"\n"):
                more = conn.recv(1 << 16)
                if not more:
                    break
                message += more
            request = ForkRequest.from_wire(message)
            if _peer_uid(conn) != os.getuid():
                refused: str | None = "another user's process"
            else:
                refused = self.refusal(request) if len(fds) == 3 else "three pipes expected"
            if refused:
                conn.sendall(json.dumps({"refused": refused}).encode() + b"\n")
                conn.close()
                return
            pid = os.fork()
            if pid == 0:
                self._become_worker(conn, fds, request)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            self.children[pid] = conn
            self.scratch[pid] = request.env.get(lifeline.SCRATCH_ENV, "")
        except (OSError, ValueError, KeyError) as exc:
            try:
                conn.sendall(json.dumps({"refused": f"bad request: {exc}"}).encode() + b"\n")
            except OSError:
                pass
            conn.close()
        finally:
            for fd in fds:
                os.close(fd)

    def _become_worker(self, conn: socket.socket, fds: list[int], request: ForkRequest) -> None:
        """In the forked child: the requesting run's pipes, environment, directory and path, then the worker loop."""
        code = 0
        try:
            self.listener.close()
            conn.close()
            for sock in self.children.values():
                sock.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            for fd in fds:
                if fd > 2:
                    os.close(fd)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            os.environ.clear()
            os.environ.update(request.env)
            os.chdir(request.cwd)
            sys.path[:] = child_sys_path(request.cwd, request.env, self.base)
            sys.argv = list(request.argv)
            tempfile.tempdir = None  # gettempdir() reads TMPDIR again
            importlib.invalidate_caches()  # a module written since the zygote last looked at its folder
            sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the worker reads its requests from fd 0
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115 - line-buffered, as Python's own
            if self.role == "probe":  # a session of its own, as ``start_new_session`` gives the fresh one
                os.setsid()
            if self.role == "cli":  # as ``python -m harness`` runs it (harness/__main__.py)
                signal.signal(signal.SIGINT, signal.default_int_handler)
            module, function = ROLES[self.role].entry.split(":")
            returned = getattr(importlib.import_module(module), function)()
            code = returned if isinstance(returned, int) else 0
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1  # as the interpreter exits
        except BaseException:  # noqa: BLE001 - whatever ends the loop ends this process, said on its stderr
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001
                    pass
            os._exit(code)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            self.scratch.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(json.dumps({"status": status}).encode() + b"\n")
                except OSError:
                    pass
                conn.close()


def python_id() -> tuple[str, str]:
    """This interpreter and its environment (two venvs over one interpreter are two Pythons)."""
    return (os.path.realpath(sys.executable), sys.prefix)


def address(folder: str, role: str) -> str:
    """The socket of a role's zygote in ``folder`` ('' where there is no folder)."""
    return os.path.join(folder, role) if folder else ""


def main() -> None:
    """``python -m harness.support.zygote FOLDER ROLE``: import, listen on ``FOLDER/ROLE``, serve until SIGTERM."""
    if len(sys.argv) != 3 or sys.argv[2] not in ROLES:
        print(f"usage: python -m harness.support.zygote FOLDER {{{','.join(ROLES)}}}", file=sys.stderr)
        raise SystemExit(2)
    socket_path = address(sys.argv[1], sys.argv[2])
    zygote = Zygote(socket_path, sys.argv[2])
    print("ready", flush=True)
    try:
        zygote.serve()
    finally:
        for pid in list(zygote.children):
            lifeline.kill_tree(pid)
        Path(socket_path).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
