"""``import_env`` and ``fn`` as a function of the target: a library's vendor switch and its per-vendor kernels.

The spec (tests/data/vendor_dispatch_spec.py) reads ``TOYLIB_WIDE`` at import to choose its NVIDIA kernel's
autotune list, and gives ``fn`` as ``lambda target: copy_amd if target.vendor == "amd" else copy_nv``. Real
compiles: each target's artifacts are its own vendor's kernel, every config of both lists is built on both
(portability), and the variable reached the compile workers before the import (the list they built is the wide
one) and is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import DATA, run_cli, write_matrix


def test_each_target_builds_its_vendors_kernel_under_the_import_env(tmp_path: Path) -> None:
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: vendors
targets: [h100, mi300x]
environments:
  mi300x: [{{name: default, env: {{}}}}]
kernels:
  copy:
    source: {DATA / "vendor_dispatch_spec.py"}:SPEC
    import_env: {{TOYLIB_WIDE: 1}}
    dtypes: [fp32]
    shapes: [{{N: 8192}}]
""",
    )
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads((out / "results.json").read_text())["records"]
    assert {r["config_id"] for r in records} == {"BLOCK2048_s3_w4", "BLOCK4096_s3_w4", "BLOCK256_s3_w8"}
    for r in records:
        assert r["status"] == "ok" and r["import_env"] == {"TOYLIB_WIDE": "1"}
        ttir = (out / r["artifacts"]["ttir"]["path"]).read_text()
        mine, other = ("copy_amd", "copy_nv") if r["target"] == "mi300x" else ("copy_nv", "copy_amd")
        assert f"@{mine}" in ttir and f"@{other}" not in ttir, (r["target"], r["config_id"])
    # the variable is the library's, not the codegen's: no compile environment was swept or recorded for it
    assert all(r["env"] == {} and r["environment"] == "default" for r in records)
