"""``harness repro`` of a GPU mismatch: the script launches the kernel on this host's GPU, with only Triton and torch.

Run on a GPU host with ``python -m pytest tests/gpu -q`` (skipped without a GPU). The kernel never writes element
``3 * BLOCK + 1`` (tests/data/skipping_kernel.py): the GPU check of BLOCK=1024 fails, BLOCK=2048 passes. The
script runs with ``python -I`` (no PYTHONPATH, no script folder on the path), where ``import harness`` fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from helpers import DATA, run_cli, write_matrix  # noqa: E402
from test_repro import LAUNCH_MATRIX  # noqa: E402


def test_a_gpu_mismatch_replays_on_the_gpu_from_a_plain_script(tmp_path: Path) -> None:
    import torch
    import triton

    matrix = write_matrix(tmp_path / "m.yaml", LAUNCH_MATRIX.format(source=f"{DATA / 'skipping_kernel.py'}:SPEC"))
    run = tmp_path / "run"
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache"), "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    proc = run_cli("run", str(matrix), "--out", str(run), "-n", "0", "--device-as", "h100", env=env)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = json.loads((run / "results.json").read_text())["records"]
    status = {r["config_id"]: (r.get("runtime") or {}).get("status") for r in records if r["mode"] == "compile"}
    assert status == {"BLOCK1024_w4": "mismatch", "BLOCK2048_w4": "ok"}, status
    case = f"skipping_add[fp32-N4096-h100-triton{triton.__version__}]"
    assert f"'{case}' --config BLOCK1024_w4 --out repro_BLOCK1024_w4.py" in (run / "report.md").read_text()
    probe = subprocess.run([sys.executable, "-I", "-c", "import harness"], capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode != 0, "the script must run where the harness cannot be imported"
    for config, extra, said in (
        ("BLOCK1024_w4", [], "now:      mismatch (max abs err 0, 1 elements"),
        ("BLOCK2048_w4", ["--launch"], "now:      ok"),
    ):
        script = tmp_path / f"{config}.py"
        wrote = run_cli("repro", str(run), case, "--config", config, "--out", str(script), *extra, env=env)
        assert wrote.returncode == 0, wrote.stderr
        got = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=600,
                             cwd=tmp_path)  # fmt: skip
        print(got.stdout)
        assert got.returncode == 0 and "launch reproduced" in got.stdout, got.stdout + got.stderr[-3000:]
        assert said in got.stdout and f"on {torch.cuda.get_device_name()}" in got.stdout, got.stdout
        assert "the harness checked on gpu" in got.stdout and "inputs made on cuda" in got.stdout, got.stdout
    fixed = tmp_path / "fixed.py"
    text = (tmp_path / "BLOCK1024_w4.py").read_text()
    fixed.write_text(text.replace("mask=mask & (offs != 3 * BLOCK + 1)", "mask=mask"))
    (tmp_path / "BLOCK1024_w4.pt").rename(tmp_path / "fixed.pt")
    got = subprocess.run([sys.executable, "-I", str(fixed)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert got.returncode == 1 and "launch NOT reproduced" in got.stdout, got.stdout + got.stderr[-3000:]
