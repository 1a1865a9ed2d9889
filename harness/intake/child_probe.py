"""Running user code first in a child that says, before each call, which call it makes: the shared runner of the
callback probe (:mod:`harness.intake.callback_probe`) and the op-capture probe (:mod:`harness.intake.launches.op_probe`).

The child is ``python -c CODE`` in a session of its own (so whatever user code starts dies with it), with the
lifeline (:mod:`harness.support.lifeline`) watching the harness. It reads ``{"nonce": ..., "entries": [...]}`` on
stdin and prints, each line carrying the nonce (so user code that prints the same words cannot pass for the
child): ``harness-probe-imported NONCE`` once the user's modules are imported, ``harness-probe-call NONCE JSON``
before each call, ``harness-probe-importing NONCE JSON`` before a later import (a child that serves several
entries imports each entry's modules in turn), ``harness-probe-done NONCE`` at the end. An import may take
``HARNESS_IMPORT_TIMEOUT_S``, each call ``HARNESS_CALLBACK_TIMEOUT_S``; the child's stderr goes to a file, which it
cannot block on. Where ``HARNESS_ZYGOTE`` names a ``probe`` zygote (:mod:`harness.support.zygote`), the child is
forked from it instead of importing torch again, and runs the same code in a session of its own; the facts and
callback probes also use this runner (:mod:`harness.intake.facts`).

The child is done when it says so (``harness-probe-done``) or when it exits, whichever comes first: after that it
has :func:`harness.support.lifeline.grace_s` to leave, and then it and every process carrying its tag are ended
(:func:`harness.support.lifeline.end_child`). A module that starts a non-daemon thread at import, an ``atexit``
handler that never returns, or a process left in a session of its own holding the child's output open can
therefore neither hold the harness nor outlive it.

The child's ``TMPDIR`` is a folder this process makes and removes once the child's group has ended: what the child
or the user's code leaves in its temporary folder (Inductor's cache under a face, a library's scratch files) goes
with it, even from a child killed at a limit, instead of piling up in the host's ``/tmp`` night after night.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any

from harness.support import lifeline
from harness.support.settings import timeout_s

#: how often the runner looks whether a silent child has exited
POLL_S = 0.2

#: the lines the child prints, for its CODE: ``say(...)`` before a call, ``done()`` at the end
PRELUDE = r"""
import json, os, sys
from harness.support.lifeline import adopt_orphans, end_descendants, watch_parent
watch_parent()
adopt_orphans()  # what the user's code starts in a session of its own is still ours to end
if os.environ.get("HARNESS_FACE"):  # a captured op's child: the target's virtual device, before any user import
    from harness.intake.virtual_device import face as _face
    _face.wear_from_env()
_sent = json.loads(sys.stdin.read())
NONCE, ENTRIES = _sent["nonce"], _sent["entries"]
def imported():
    print("harness-probe-imported", NONCE, flush=True)
def say(*what):
    print("harness-probe-call", NONCE, json.dumps(what), flush=True)
def importing(*what):
    print("harness-probe-importing", NONCE, json.dumps(what), flush=True)
def result(i, value):
    print("harness-probe-result", NONCE, json.dumps([i, value]), flush=True)
def done():
    end_descendants()  # a process the user's code started (a server, a `sleep`) ends with the work that started it
    print("harness-probe-done", NONCE, flush=True)
"""


@dataclass(frozen=True)
class Outcome:
    """What the child did: how far it got, the last call it announced, how it ended."""

    imported: bool
    done: bool
    last: list[Any] | None  # the arguments of the last ``say`` or ``importing``
    returncode: int  # negative: the signal that killed it
    stderr_tail: str
    timed_out: bool  # killed by the harness at a limit
    results: dict[int, Any]  # what ``result(i, value)`` reported, by i (JSON values: the caller checks them)
    lingered: bool = False  # it said done but did not exit within the grace (a thread, an atexit handler): ended

    @property
    def clean(self) -> bool:
        return self.done and (self.returncode == 0 or self.lingered) and not self.timed_out


def run(
    code: str,
    entries: list[Any],
    import_env: tuple[tuple[str, str], ...] = (),
    call_limit: str = "HARNESS_CALLBACK_TIMEOUT_S",
) -> Outcome:
    """Run ``PRELUDE + code`` on ``entries`` and follow it, each call announced by ``say`` limited by the setting
    ``call_limit``; the child's whole group ends with this call, whatever ends it (a Ctrl-C, a SIGTERM, a limit)."""
    nonce = secrets.token_hex(16)
    scratch = lifeline.new_scratch("probe")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in sys.path if x))
    env.pop("TRITON_INTERPRET", None)  # only where the caller asks for it (a compiled capture's check)
    env.update(import_env)
    env["TMPDIR"] = env[lifeline.SCRATCH_ENV] = scratch  # the second for the lifeline, should this process die first
    tag = env[lifeline.TAG_ENV] = lifeline.new_tag()  # what the user's code leaves behind is found by it
    errors = tempfile.TemporaryFile()
    proc = _forked(PRELUDE + code, env, errors) or subprocess.Popen(
        [sys.executable, "-c", PRELUDE + code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        env=env,
        start_new_session=True,
    )
    try:
        return _follow(proc, json.dumps({"nonce": nonce, "entries": entries}), nonce, errors, call_limit)
    finally:
        lifeline.end_group(proc.pid)  # its group, which may outlive it
        # below it and its tag; its own pid only while it is not reaped (a reaped pid may be another process's now)
        lifeline.end_child(proc.pid if proc.returncode is None else None, tag)
        if not isinstance(proc, subprocess.Popen):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)  # in case its own session was not made yet
        proc.wait()
        errors.close()
        lifeline.remove_scratch(scratch)


def _forked(code: str, env: dict[str, str], errors: IO[bytes]) -> Any:
    """The child forked by the ``probe`` zygote (:mod:`harness.support.zygote`) where ``HARNESS_ZYGOTE`` names
    one that agrees to fork for this environment, else None (the caller starts a fresh interpreter)."""
    from harness.support import zygote, zygote_client

    if not env.get(zygote.ENV):
        return None
    child = zygote_client.fork_piped("probe", ["-c", code], env, errors, text=False)
    return None if isinstance(child, str) else child


def forked_main() -> None:
    """The ``probe`` zygote's child: ``python -c CODE`` as the fresh interpreter runs it (``sys.argv`` is
    ``["-c"]``, ``sys.orig_argv`` the command line that would have started it, ``__name__`` is ``"__main__"``)."""
    code = sys.argv[1]
    sys.argv = ["-c"]
    sys.orig_argv = [sys.executable, "-c", code]
    exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})  # noqa: S102


def _follow(proc: subprocess.Popen[bytes], payload: str, nonce: str, errors: IO[bytes], call_limit: str) -> Outcome:
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(payload.encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # it ended before reading: said by its exit below
    last: list[Any] | None = None
    results: dict[int, Any] = {}
    imported = done = timed_out = False
    pending = b""
    fd = proc.stdout.fileno()  # read raw: a buffered reader would hide lines from select
    deadline = time.monotonic() + timeout_s("HARNESS_IMPORT_TIMEOUT_S")
    exited = False
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while not done:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                lifeline.end_group(proc.pid)
                break
            # a child that exited while a process it left holds its output open sends no end of file: its exit is
            # looked for too, and what it wrote before is read at once
            exited = exited or proc.poll() is not None
            ready = sel.select(timeout=0 if exited else min(left, POLL_S))
            if not ready:
                if exited:
                    break
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace")
                if line == f"harness-probe-imported {nonce}":
                    imported = True
                elif line.startswith(f"harness-probe-call {nonce} "):
                    last = json.loads(line.split(" ", 2)[2])
                elif line.startswith(f"harness-probe-importing {nonce} "):
                    last = json.loads(line.split(" ", 2)[2])
                    deadline = time.monotonic() + timeout_s("HARNESS_IMPORT_TIMEOUT_S")
                    continue  # an import's limit, not a call's
                elif line.startswith(f"harness-probe-result {nonce} "):
                    i, value = json.loads(line.split(" ", 2)[2])
                    results[int(i)] = value
                elif line == f"harness-probe-done {nonce}":
                    done = True  # its work is said: a process that still holds the pipe open is not waited for
                else:
                    continue
                deadline = time.monotonic() + timeout_s(call_limit)
    lingered = False
    try:
        code = proc.wait(lifeline.grace_s())
    except subprocess.TimeoutExpired:  # it answered, or closed its output, but does not leave: ended
        lifeline.end_child(proc.pid)
        code = proc.wait()
        lingered = done
    errors.seek(0)
    tail = " ".join(errors.read()[-65536:].decode(errors="replace").strip().splitlines()[-1:])[:200]
    return Outcome(imported, done, last, code, tail, timed_out, results, lingered)
