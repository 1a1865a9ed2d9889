"""Every process the harness starts ends with it, however the harness ends.

A child the harness starts (a compile, interpreter or GPU worker, the import probe, the callback probe) may be busy
in user code when the harness goes: killed with SIGKILL, stopped by a CI time limit, or interrupted while the child
sits in a session of its own (the callback probe's, so that its whole group can be killed). Signals to the harness's
process group then never reach it, and a hung callback would run on forever, parented to init.

So each child calls :func:`watch_parent` first: a daemon thread that polls its parent's pid and, once that process
is gone (the child is re-parented), kills every process below this one (read from ``/proc``: a ptxas, a compiler a
user callback started) and ends this one. Polling, not ``PR_SET_PDEATHSIG``: the harness starts workers from
threads too, and the death signal fires when the starting *thread* ends, which would take a healthy worker down.
The parent side, :func:`end_group`, kills a child's process group it made with ``start_new_session``.

A child is also done when it says so, not only when it exits: user code may leave a non-daemon thread, an ``atexit``
handler that never returns, or a process in a session of its own that holds the child's pipe open after the child
itself is gone. Each child therefore carries a tag in its environment (:data:`TAG_ENV`), which every process it
starts inherits whatever session it moves to; once the child has answered, or exited, the parent gives it
:func:`grace_s` to leave and then ends it and every process still carrying its tag (:func:`end_child`).
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

#: how often a child looks for its parent: the longest a child outlives the harness
POLL_S = 0.2


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, deepest first (Linux ``/proc``; nothing where it is not there)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
        for child in children:
            found += descendants(child) + [child]
    return found


def kill_tree(pid: int, itself: bool = True) -> None:
    """SIGKILL every process below ``pid`` (a hung compile's ptxas, a process a user callback started), then
    ``pid`` itself unless ``itself`` is false."""
    for below in descendants(pid) + ([pid] if itself else []):
        try:
            os.kill(below, signal.SIGKILL)
        except OSError:
            pass


#: the variable holding a child's tag: inherited by every process the child's user code starts (:func:`tagged`)
TAG_ENV = "HARNESS_CHILD_TAG"


def new_tag() -> str:
    """A tag for one child, unique on this host."""
    import secrets

    return f"{os.getpid()}-{secrets.token_hex(8)}"


def grace_s() -> float:
    """How long a child that has answered (or exited) may take to leave before it and its tagged processes are
    ended: ``HARNESS_CHILD_GRACE_S``, 3 s by default (a torch child exits in well under a second)."""
    try:
        return max(0.0, float(os.environ.get("HARNESS_CHILD_GRACE_S", "3")))
    except ValueError:
        return 3.0


def tagged(tag: str) -> list[int]:
    """Every process (but this one) whose environment holds ``TAG_ENV=tag`` (Linux ``/proc``: a process the user's
    code started in a session of its own and left behind, its parent gone). Nothing where ``/proc`` is not there."""
    wanted = f"{TAG_ENV}={tag}".encode()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if wanted in fh.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return found


def end_child(pid: int | None, tag: str | None = None) -> None:
    """End a child the harness started and everything it left: the processes below it, its process group (a
    child started in a session of its own leads it), and every process still carrying its ``tag``. Killing is
    repeated while a tagged process is still found (one may be forking as it is killed); the child itself is left
    for its owner to reap (``pid`` None: it is reaped already, only its tagged processes are looked for)."""
    if pid is not None and pid > 0:
        kill_tree(pid)
        end_group(pid)
    for _ in range(5):
        left = tagged(tag) if tag else []
        if not left:
            return
        for found in left:
            kill_tree(found)
        time.sleep(0.05)


#: the variable naming a child's scratch folder, and the start of every such folder's name
SCRATCH_ENV, SCRATCH_PREFIX = "HARNESS_SCRATCH", "harness-"


#: the file in each scratch folder its maker holds an ``flock`` on while it lives (released by the kernel however the
#: process ends, ``kill -9`` included): a folder whose owner file nobody holds is stale (:func:`sweep_stale`)
OWNER = ".harness-owner"
_OWNED: dict[str, int] = {}


def new_scratch(kind: str) -> str:
    """A scratch folder for one child of ``kind`` (passed to it as :data:`SCRATCH_ENV`): what it would otherwise
    leave in the host's temporary folder goes there, and the folder goes with the child (:func:`remove_scratch`), or,
    where the whole process group was killed at once, with the next command's :func:`sweep_stale`."""
    import fcntl

    # made under a hidden name, owned, then renamed: a folder with the visible name always has its owner file
    pending = tempfile.mkdtemp(prefix=f".{SCRATCH_PREFIX}{kind.replace('#', '-')}-")
    fd = os.open(os.path.join(pending, OWNER), os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    path = os.path.join(os.path.dirname(pending), os.path.basename(pending)[1:])
    os.rename(pending, path)
    _OWNED[path] = fd
    return path


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the scratch folders in the temporary folder that no living process owns (their maker was killed with
    SIGKILL, or the host lost power, before it could remove them); the names removed. A folder without the owner
    file (another program's, or a user's named alike) is never touched; one whose owner lives is kept."""
    import fcntl

    root = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(root) if n.startswith(SCRATCH_PREFIX)]
        pending = [n for n in os.listdir(root) if n.startswith("." + SCRATCH_PREFIX)]
    except OSError:
        return removed
    for name in pending:  # a maker killed in the microseconds between making and owning it: old means abandoned
        path = os.path.join(root, name)
        try:
            if time.time() - os.lstat(path).st_mtime > 600:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(name)
        except OSError:
            continue
    for name in names:
        owner = os.path.join(root, name, OWNER)
        try:
            fd = os.open(owner, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its owner lives
        finally:
            os.close(fd)
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        removed.append(name)
    return removed


def remove_scratch(scratch: str | None = None) -> None:
    """Remove the scratch folder the harness made for a child (``HARNESS_SCRATCH``: :mod:`harness.execution.pool`,
    :mod:`harness.intake.child_probe`; this process's own where ``scratch`` is None), for when the run that made it
    may no longer be there to. Only a folder the harness named, never one a user's variable might name."""
    scratch = os.environ.get(SCRATCH_ENV, "") if scratch is None else scratch
    if os.path.basename(scratch).startswith(SCRATCH_PREFIX):
        shutil.rmtree(scratch, ignore_errors=True)
    held = _OWNED.pop(scratch, None)
    if held is not None:
        os.close(held)


def _end_below_and_exit() -> None:
    kill_tree(os.getpid(), itself=False)
    remove_scratch()
    os._exit(70)  # EX_SOFTWARE: nobody reads it; the parent is gone


def watch_parent() -> None:
    """In a child the harness started: end this process and all below it once its parent is gone."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(POLL_S)
            if os.getppid() != parent:
                _end_below_and_exit()

    threading.Thread(target=watch, name="harness-lifeline", daemon=True).start()


def adopt_orphans() -> None:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a process the
    user's code starts in a new session, whose parent then exits, is reparented here rather than to init, so
    :func:`end_descendants` still finds it. Elsewhere nothing is done."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def end_descendants() -> None:
    """Kill every process below this one (:func:`kill_tree`: whatever session each is in, adopted orphans
    included) and reap them, so none is left behind as a zombie."""
    below = descendants(os.getpid())
    kill_tree(os.getpid(), itself=False)
    for pid in below:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def end_group(pid: int) -> None:
    """Kill the process group ``pid`` leads (a child started with ``start_new_session``), ignoring one already
    gone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
