"""Reading and writing files without being steered by what someone left in the way.

A run directory can hold links planted by another user or a careless script: every file the
harness writes there is created fresh under a random name with ``O_EXCL | O_NOFOLLOW`` and then
renamed over the target, so a symbolic link named ``report.md`` is replaced, never written
through. Inputs (matrices, results, records) are read only when they are regular files of a
bounded size, checked on the open descriptor: a FIFO, a device or ``/dev/zero`` never blocks or
fills memory.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import IO

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class InputFileError(Exception):
    """An input file cannot be read; ``str()`` names it and says why."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: Path, limit: int, what: str = "file") -> bytes:
    """The contents of a regular file of at most ``limit`` bytes; anything else is an :class:`InputFileError`.

    Opened non-blocking (a FIFO returns at once) and checked with ``fstat`` on that very
    descriptor before a byte is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | NONBLOCK)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"{path}: the {what} is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise InputFileError(f"{path}: the {what} is {info.st_size} bytes, over the {limit >> 20} MiB limit")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while being read
                raise InputFileError(f"{path}: the {what} is over the {limit >> 20} MiB limit")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def check_regular(path: Path, what: str) -> None:
    """Refuse an existing path that is not a regular file (a FIFO, a device, a directory) before it is opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputFileError(f"{path}: cannot use the {what}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(f"{path}: the {what} is {_kind(info.st_mode)}, not a regular file")


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``path`` whole or not at all: a fresh temporary file beside it, renamed over it.

    The rename replaces a symbolic link at ``path`` instead of following it; the temporary
    name is random and created exclusively, so nothing planted can be written through.
    """
    blob = data.encode() if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def open_nofollow(path: Path, mode: str) -> IO[str]:
    """A text file opened for ``"w"`` (truncated), ``"a"`` or ``"a+"``, refusing a symbolic link at ``path``."""
    flags = {
        "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
        "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
        "a+": os.O_RDWR | os.O_CREAT | os.O_APPEND,
    }[mode]
    fd = os.open(path, flags | NOFOLLOW, 0o644)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(f"{path} is {_kind(info.st_mode)}, not a regular file")
    return os.fdopen(fd, mode, encoding="utf-8")


def make_dirs(root: Path, rel: Path) -> Path:
    """``root/rel``, each level below ``root`` created as a real directory: a level that is a symbolic link is
    refused (``root`` itself, the run directory the user named, is made with its parents)."""
    root.mkdir(parents=True, exist_ok=True)
    current = root
    for part in rel.parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
        if os.path.islink(current) or not current.is_dir():
            raise OSError(f"{current} is not a directory the harness made (a link or a file is in the way)")
    return current
