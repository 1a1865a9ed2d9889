"""Failures of the host, not of the kernel: a full disk or quota, a file system that refuses writes, an I/O error,
no memory or no file descriptors left. A build or check that ended so says nothing about the kernel, and the same
job succeeds once the cause is gone; so such a result is never kept in the result cache
(:mod:`harness.execution.result_cache`) and its case is not finished for ``--resume``
(:func:`harness.results.store.complete_cases`). Only the cost of running it again is at stake in a wrong match,
never a result: the errors are recognised by the errno Python writes into an ``OSError``'s text, and by the C
library's words for them where a tool's message carries no number.
"""

from __future__ import annotations

import errno
import os
import re

#: the errors that come from the host's state
ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EIO,
        errno.EACCES,
        errno.EPERM,
        errno.ENOMEM,
        errno.EMFILE,
        errno.ENFILE,
    }  # fmt: skip
)
_NUMBERED = re.compile(r"\[Errno (\d+)\]")
_WORDS = tuple(os.strerror(n) for n in sorted(ERRNOS))


def of_text(text: str | None) -> str:
    """The host's failure an error text reports (the C library's words for it), or ``""``."""
    if not text:
        return ""
    for found in _NUMBERED.finditer(text):
        if int(found.group(1)) in ERRNOS:
            return os.strerror(int(found.group(1)))
    return next((words for words in _WORDS if words in text), "")
