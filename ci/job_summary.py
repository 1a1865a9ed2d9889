"""A job summary GitHub will take: text appended to ``$GITHUB_STEP_SUMMARY``, cut below the 1 MiB a step's summary
may hold (GitHub drops a larger one with an error), saying where the whole text is.

    python ci/job_summary.py FILE [--whole WHERE]     append FILE (e.g. compare.md) to the job summary

Without ``$GITHUB_STEP_SUMMARY`` (not on GitHub) it prints what it would append.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

LIMIT = 1_000_000  # bytes, under GitHub's 1 MiB per step


def digest(text: str, whole: str, limit: int = LIMIT) -> str:
    """``text``, or its head cut at a line so that it and the note fit in ``limit`` bytes."""
    if len(text.encode()) <= limit:
        return text
    note = f"\n\n**Cut here**: the job summary holds at most 1 MiB; the whole text is {whole}.\n"
    room = limit - len(note.encode())
    head = text.encode()[:room].decode(errors="ignore")
    return head[: head.rfind("\n") + 1] + note


def append(text: str, whole: str) -> str:
    out = digest(text, whole)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(out)
    else:
        sys.stdout.write(out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--whole", default=None, help="where the whole text is (default: the file's name)")
    args = ap.parse_args()
    append(args.file.read_text(encoding="utf-8"), args.whole or f"`{args.file.name}` in the job's artifact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
