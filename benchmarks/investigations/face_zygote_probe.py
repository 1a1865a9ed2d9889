"""What a capture child would save if it were forked from a process that already wears its face and has Inductor
started: the CPU of capturing an op that calls a compiled function (tests/test_ops_capture.py's COMPILED_LIBRARY,
written as ``clib.py`` in the folder given), in a fresh process against a child forked after the face and
``inductor_face.wear`` (docs/performance.md, "Suite time", 2026-12-06). An experiment for the suite's time, not a
change: the harness's children wear their face before anything else is imported.

``HARNESS_CACHE_DIR=/tmp/hc python benchmarks/investigations/face_zygote_probe.py fresh|fork FOLDER``
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile

os.environ["HARNESS_FACE"] = "h100"
sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), sys.argv[2]]
os.chdir(sys.argv[2])


def _capture() -> None:
    from harness.intake.launches import ops

    table = ops.launch_table("clib.py:square_then_act", "clib.py:inputs", {"M": 1024, "N": 4096}, "fp32")
    assert table["compiled"], table


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _wear_face() -> None:
    from harness.intake.inductor import compiled_regions
    from harness.intake.virtual_device import face

    face.wear_from_env()
    compiled_regions.install()


def main(mode: str) -> None:
    if mode == "fresh":
        start = _cpu()
        _wear_face()
        _capture()
        print(f"fresh child CPU {_cpu() - start:.2f}")
        return
    import torch  # noqa: F401 - the suite's probe zygote has torch imported already

    from harness.intake.inductor import inductor_face
    from harness.intake.virtual_device import face

    _wear_face()
    start = _cpu()
    inductor_face.wear(tempfile.mkdtemp(), face.worn())  # what a face zygote would do once
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401

    print(f"zygote preload CPU {_cpu() - start:.2f}", flush=True)
    pid = os.fork()
    if pid == 0:
        start = _cpu()
        _capture()
        print(f"forked child CPU {_cpu() - start:.2f}", flush=True)
        os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main(sys.argv[1])
