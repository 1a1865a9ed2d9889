"""The Triton pins a pull request changes, read as data: the constraints pin (``ci/constraints-cpu.txt``, what the
suite and the quick start install) and each tox env's (``tox.ini``: what the nightly's static jobs run).

    python ci/pin_changes.py BASE_REF [--shards N]     one line of JSON: {"include": [...]} for a job matrix

Each entry: ``env`` (``constraints`` or ``triton36``...), ``side`` (base / head), ``pin`` (a version or a
``3.6.*`` wildcard) and ``shard``. A pin that is not a plain version is refused (exit 2): the workflow never puts a
pull request's text into a shell line.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VERSION = re.compile(r"[0-9]+(\.[0-9]+){0,2}(\.\*)?")  # fullmatch: a trailing newline is no pin


def pins(constraints: str, tox: str) -> dict[str, str]:
    """Every Triton pin in the two files' text, by env."""
    out: dict[str, str] = {}
    for line in constraints.splitlines():
        if m := re.match(r"^triton==(\S+)", line.strip()):
            out["constraints"] = m.group(1)
    for line in tox.splitlines():
        if m := re.match(r"^\s*(triton\d+):\s*triton==(\S+)\s*$", line):
            out[m.group(1)] = m.group(2)
        elif m := re.match(r"^\s*(triton\d+):.*--no-deps\s+\"triton==([^\"]+)\"", line):
            out[m.group(1)] = m.group(2)  # an env that installs its triton over torch's (triton39)
    return out


def _show(ref: str, path: str) -> str:
    proc = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=REPO, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else ""


def changes(base: dict[str, str], head: dict[str, str]) -> list[tuple[str, str, str]]:
    return [(env, base[env], head[env]) for env in sorted(head) if env in base and base[env] != head[env]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base_ref", help="the branch the pull request goes into, e.g. origin/main")
    ap.add_argument("--shards", type=int, default=4)
    args = ap.parse_args(argv)
    base = pins(_show(args.base_ref, "ci/constraints-cpu.txt"), _show(args.base_ref, "tox.ini"))
    head = pins((REPO / "ci" / "constraints-cpu.txt").read_text(), (REPO / "tox.ini").read_text())
    include = []
    for env, old, new in changes(base, head):
        for side, pin in (("base", old), ("head", new)):
            if not VERSION.fullmatch(pin):
                print(
                    f"pin_changes: {env}'s {side} pin {pin!r} is not a version (like 3.6.0 or 3.6.*)", file=sys.stderr
                )
                return 2
            include += [
                {"env": env, "side": side, "pin": pin, "shard": k, "of": args.shards} for k in range(1, args.shards + 1)
            ]
    print(json.dumps({"include": include}, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
