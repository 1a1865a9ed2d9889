"""``harness repro``: a recorded finding as a standalone script that rebuilds it with plain Triton and gives the
recorded outcome back — a compile failure's error, an exceeding config's shared memory / LDS, a spilling config's
spills — run in a fresh virtual environment where the harness cannot be imported."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest
from helpers import run_cli, run_static, write_matrix

FINDINGS = [  # (case id, config, what the script prints when it reproduces)
    (
        "matmul[fp16-M1024xN1024xK1024-mi300x@async-copy-triton{v}]",
        "K64_M128_N128_GROUP_M8_s4_w8",
        "now:      error: RuntimeError: PassManager::run failed (failing pass: TritonAMDGPUBlockPingpong)",
    ),
    ("matmul[fp16-M1024xN1024xK1024-mi300x-triton{v}]", "K64_M128_N256_GROUP_M8_s3_w8", "shared 98304 > 65536"),
    ("fused_activation[bf16-M1024xN1000-h100-triton{v}]", "M32_N1024_s2_w16", "spills 672 > 0"),
]


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh venv that sees this environment's installed packages (Triton, torch) as a plain directory: its
    ``.pth`` files, the harness's editable install among them, are not processed, so ``import harness`` fails."""
    where = tmp_path_factory.mktemp("bare") / "venv"
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    Path(site, "installed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run(
        [str(python), "-I", "-c", "import triton, harness"], capture_output=True, text=True, cwd=where
    )
    assert "No module named 'harness'" in probe.stderr, probe.stderr
    return str(python)


@pytest.mark.venv
def test_each_finding_reproduces_with_plain_triton(tmp_path: Path, bare_python: str) -> None:
    import triton

    matrix = write_matrix(
        tmp_path / "m.yaml",
        """\
name: findings
targets: [h100, mi300x]
environments: {mi300x: [default, async-copy]}
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{M: 1024, N: 1024, K: 1024}]
    interpret: false
    configs:
      - {BLOCK_K: 64, BLOCK_M: 128, BLOCK_N: 128, GROUP_M: 8, num_stages: 4, num_warps: 8}
      - {BLOCK_K: 64, BLOCK_M: 128, BLOCK_N: 256, GROUP_M: 8, num_stages: 3, num_warps: 8}
  fused_activation:
    dtypes: [bf16]
    shapes: [{M: 1024, N: 1000}]
    interpret: false
    configs:
      - {BLOCK_M: 32, BLOCK_N: 1024, num_stages: 2, num_warps: 16}
""",
    )
    run = tmp_path / "run"
    run_static(matrix, run, ok=(0, 1))  # 1: the async-copy build fails, as recorded
    records = json.loads((run / "results.json").read_text())["records"]
    for case, config, said in FINDINGS:
        case = case.format(v=triton.__version__)
        assert any(r["case_id"] == case and r["config_id"] == config for r in records), (case, config)
        script = tmp_path / f"{config}.py"
        wrote = run_cli("repro", str(run), case, "--config", config, "--out", str(script))
        assert wrote.returncode == 0, wrote.stderr
        tree = ast.parse(script.read_text())
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert imported <= {"os", "sys", "re", "subprocess", "tempfile", "typing", "triton", "torch"}, imported
        # -I: no PYTHONPATH (the harness's own CLI sets one for its children), no user site, not the script's folder
        got = subprocess.run(
            [bare_python, "-I", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600
        )
        assert got.returncode == 0 and said in got.stdout, got.stdout + got.stderr[-3000:]
        assert "reproduced" in got.stdout or "now:      error" in got.stdout
    # a finding that did not come back says so: the recorded figure edited, the script exits 1
    text = (tmp_path / "K64_M128_N256_GROUP_M8_s3_w8.py").read_text().replace("'shared': 98304", "'shared': 98305")
    (tmp_path / "edited.py").write_text(text)
    got = subprocess.run([bare_python, "-I", str(tmp_path / "edited.py")], capture_output=True, text=True, timeout=600)
    assert got.returncode == 1 and "NOT reproduced" in got.stdout and "<-- differs" in got.stdout, got.stdout
    # a case with several builds asks which; an unknown case names the kernel's cases
    many = run_cli("repro", str(run), FINDINGS[1][0].format(v=triton.__version__))
    assert many.returncode == 2 and "choose one with --config" in many.stderr
    unknown = run_cli("repro", str(run), "matmul[nope]")
    assert (
        unknown.returncode == 2
        and "no compile case matmul[nope]" in unknown.stderr
        and "Traceback" not in unknown.stderr
    )
    # the report and compare's markdown name each finding's command
    failing = f"'{FINDINGS[0][0].format(v=triton.__version__)}' --config {FINDINGS[0][1]}"
    assert f"harness repro . {failing}" in (run / "report.md").read_text()
    assert f"harness repro . {failing}".replace("'", "&#39;") in (run / "report.html").read_text()
    from harness.analysis.compare import compare_runs
    from harness.render.compare import markdown
    from harness.results.store import load_results

    _, new = load_results(run)
    base = [dataclasses.replace(r, status="ok", error="") if r.status != "ok" else r for r in new]
    assert f"harness repro NEW {failing}" in markdown(compare_runs(base, new))


LAUNCH_MATRIX = """\
name: launches
targets: [h100]
kernels:
  skipping_add:
    source: {source}
    dtypes: [fp32]
    shapes: [{{N: 4096}}]
    configs:
      - {{BLOCK: 1024, num_warps: 4}}
      - {{BLOCK: 2048, num_warps: 4}}
"""


@pytest.mark.venv
def test_a_correctness_finding_replays_its_launch_with_plain_triton_and_torch(tmp_path: Path, bare_python: str) -> None:
    """The launch half: the interpreter's mismatch of BLOCK=1024 (element 3073 never written) comes back from the
    script alone, launched under Triton's CPU interpreter on the saved inputs; the kernel fixed in the script checks
    correct, so the finding is reported as not reproduced. On a GPU host the same script launches
    on the GPU (tests/gpu/test_repro_gpu.py)."""
    import triton

    source = Path(__file__).parent / "data" / "skipping_kernel.py"
    matrix = write_matrix(tmp_path / "m.yaml", LAUNCH_MATRIX.format(source=f"{source}:SPEC"))
    run = tmp_path / "run"
    run_static(matrix, run, ok=(1,))  # the interpreter check of BLOCK=1024 fails
    case = f"skipping_add[fp32-N4096-h100-triton{triton.__version__}]"
    # (a passing config's launch with --launch, and the same on a GPU: tests/gpu/test_repro_gpu.py)
    for config, extra in (("BLOCK1024_w4", []),):
        script = tmp_path / f"{config}.py"
        wrote = run_cli("repro", str(run), case, "--config", config, "--out", str(script), *extra)
        assert wrote.returncode == 0 and script.with_suffix(".pt").is_file(), wrote.stderr
        got = subprocess.run([bare_python, "-I", str(script)], capture_output=True, text=True, timeout=600)
        assert got.returncode == 0 and "launch reproduced" in got.stdout, got.stdout + got.stderr[-3000:]
        said = "now:      mismatch (max abs err 0, 1 elements" if config == "BLOCK1024_w4" else "now:      ok"
        assert said in got.stdout and "under Triton's CPU interpreter" in got.stdout, got.stdout
    fixed = tmp_path / "fixed.py"
    text = (tmp_path / "BLOCK1024_w4.py").read_text()
    assert "mask=mask & (offs != 3 * BLOCK + 1)" in text
    fixed.write_text(text.replace("mask=mask & (offs != 3 * BLOCK + 1)", "mask=mask"))
    (tmp_path / "BLOCK1024_w4.pt").rename(tmp_path / "fixed.pt")
    got = subprocess.run([bare_python, "-I", str(fixed)], capture_output=True, text=True, timeout=600)
    assert got.returncode == 1 and "launch NOT reproduced" in got.stdout and "now:      ok" in got.stdout, got.stdout
    # a config whose GPU check failed is listed in the report with --out (its inputs go beside the script)
    from harness.model.runtime import Runtime
    from harness.render.run_lines import repro_commands
    from harness.results.store import load_results

    _, records = load_results(run)
    on_gpu = [dataclasses.replace(r, runtime=Runtime(status="mismatch")) if r.config_id == "BLOCK1024_w4" else r
              for r in records]  # fmt: skip
    assert repro_commands(records, ".") == []  # the interpreter's finding has no compile case of its own to name
    assert repro_commands(on_gpu, ".") == [
        f"harness repro . '{case}' --config BLOCK1024_w4 --out repro_BLOCK1024_w4.py"
    ]
    # the inputs travel beside the script: without --out there is nowhere to put them
    printed = run_cli("repro", str(run), case, "--config", "BLOCK1024_w4")
    assert printed.returncode == 2 and "give --out FILE.py" in printed.stderr and "Traceback" not in printed.stderr
