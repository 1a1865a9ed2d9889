"""Entry point of a worker process: JSON requests in on stdin, JSON results out.

The protocol channel is a private duplicate of the original stdout; file
descriptor 1 is pointed at stderr so that anything a compiler or kernel prints
cannot corrupt it. A request that raises gets an ``error`` reply and the
worker lives on; one that kills the process is reported by the parent.
"""
from __future__ import annotations

import json
import os
import sys
import traceback


def _handle(request: dict) -> dict:
    op = request["op"]
    if op == "compile":
        from harness.compile import compile_job

        return compile_job(request["job"])
    if op == "interpret":
        from harness.interpret import interpret_job

        return interpret_job(request["job"])
    if op == "ping":
        return {"pid": os.getpid()}
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = {"ok": True, "result": _handle(json.loads(line))}
        except Exception as exc:  # noqa: BLE001 - every failure becomes that request's record
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}".strip()[:2000],
                     "traceback": traceback.format_exc()[-4000:]}
        channel.write(json.dumps(reply) + "\n")
        channel.flush()


if __name__ == "__main__":
    main()
