"""The harness's result cache (:mod:`harness.execution.result_cache`) through real runs: a rerun of unchanged jobs
compiles and interprets nothing, and gives the same records and byte-identical artifacts; an edit to the kernel's
source or a variable Triton reads makes its jobs run again; a build the compiler refuses is kept like one that
compiled (so a warm run builds nothing), while a crash or a timeout is never kept."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

from helpers import REPO, run_static, write_matrix

from harness.execution import result_cache
from harness.model.jobs import CompileJob

MATRIX = """\
name: cached
targets: [h100, mi300x]
kernels:
  vector_add:
    source: {source}:SPEC
    dtypes: [fp32]
    shapes: [{{N: 4096}}]
    configs:
      - {{BLOCK: 1024, num_warps: 4}}
      - {{BLOCK: 2048, num_warps: 8}}
"""


def _run(matrix: Path, out: Path, cache: Path, ok: tuple[int, ...] = (0,), **env: str) -> list[dict]:
    caches = {"HARNESS_CACHE_DIR": str(cache / "harness"), "TRITON_CACHE_DIR": str(cache / "triton")}
    run_static(matrix, out, env={**caches, "HARNESS_RESULT_CACHE": "1", **env}, ok=ok)
    return json.loads((out / "results.json").read_text())["records"]


def _answers(records: list[dict]) -> list[str]:
    keep = ("kernel", "target", "environment", "config", "status", "resources", "flags", "artifacts")
    return sorted(json.dumps({k: r.get(k) for k in keep}, sort_keys=True) for r in records if r["mode"] == "compile")


def test_a_rerun_reuses_every_job_and_an_edit_runs_them_again(tmp_path: Path) -> None:
    kernel = tmp_path / "vector_add.py"
    shutil.copyfile(REPO / "kernels" / "vector_add.py", kernel)
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX.format(source=kernel))
    cold = _run(matrix, tmp_path / "cold", tmp_path / "caches")
    warm = _run(matrix, tmp_path / "warm", tmp_path / "caches")
    builds = [r for r in cold if r["mode"] == "compile"]
    assert builds and {r["compile_cache"] for r in builds} == {"miss"}
    assert {r["compile_cache"] for r in warm if r["mode"] == "compile"} == {"harness"}
    assert _answers(cold) == _answers(warm)  # the same figures, verdict inputs and artifact digests
    for r in warm:
        for art in (r.get("artifacts") or {}).values():
            data = (tmp_path / "warm" / art["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == art["sha256"]
    checks = [r for r in warm if r["mode"] == "interpret"]
    assert checks and all(r["correctness"]["from_cache"] for r in checks if r["status"] == "ok")
    # a variable Triton reads changes the key: every build goes to Triton again (compiled, or from its own cache)
    fused = _run(matrix, tmp_path / "fp", tmp_path / "caches", TRITON_DEFAULT_FP_FUSION="0")
    assert {r["compile_cache"] for r in fused if r["mode"] == "compile"} <= {"miss", "hit"}
    # an edit to the kernel's own file: its jobs run again
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    edited = _run(matrix, tmp_path / "edited", tmp_path / "caches")
    assert {r["compile_cache"] for r in edited if r["mode"] == "compile"} <= {"miss", "hit"}


def test_only_results_that_do_not_depend_on_chance_are_kept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HARNESS_RESULT_CACHE", "1")
    job = CompileJob("x.py:SPEC", "fp32", {"N": 64}, {"name": "h100"}, {"BLOCK": 1}, "/somewhere", ("artifacts",))
    digest = result_cache.key("compile", job, "abc")
    assert digest is not None and digest == result_cache.key("compile", replace(job, out="/elsewhere"), "abc")
    assert result_cache.key("compile", job, "abd") != digest  # another kernel source
    assert result_cache.key("compile", replace(job, config={"BLOCK": 2}), "abc") != digest  # another config
    assert result_cache.key("compile", replace(job, prebuild_launcher=True), "abc") is None  # a side effect here
    assert result_cache.key("compile", job, "unknown") is None
    for chance in ("crash", "timeout"):  # the machine's state, not the job's: they run again
        result_cache.store("compile", digest, {"status": chance, "error": "boom"}, str(tmp_path))
        assert result_cache.lookup("compile", digest, str(tmp_path)) is None
    result_cache.store("compile", digest, {"status": "ok", "artifacts": {}}, str(tmp_path))
    assert result_cache.lookup("compile", digest, str(tmp_path))["compile_cache"] == "harness"
    monkeypatch.setenv("HARNESS_RESULT_CACHE", "0")
    assert result_cache.key("compile", job, "abc") is None


def test_a_build_the_compiler_refuses_is_kept_and_an_edit_builds_it_again(tmp_path: Path) -> None:
    """A real compile error (the kernel's own static assertion, at one config) is a result like a build's: the warm
    run takes it from the cache with the same error and builds nothing; an edit to the kernel builds it again."""
    kernel = tmp_path / "vector_add.py"
    text = (REPO / "kernels" / "vector_add.py").read_text()
    marker = "    offs = tl.program_id(0)"
    assert marker in text
    kernel.write_text(text.replace(marker, '    tl.static_assert(BLOCK < 2048, "BLOCK too large")\n' + marker, 1))
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX.format(source=kernel))
    cold = [r for r in _run(matrix, tmp_path / "cold", tmp_path / "caches", ok=(1,)) if r["mode"] == "compile"]
    warm = [r for r in _run(matrix, tmp_path / "warm", tmp_path / "caches", ok=(1,)) if r["mode"] == "compile"]
    refused = [r for r in cold if r["status"] == "error"]
    assert len(refused) == 2 and all("BLOCK too large" in r["error"] for r in refused)  # BLOCK 2048 on both targets
    assert "harness" not in {r["compile_cache"] for r in cold}
    assert {r["compile_cache"] for r in warm} == {"harness"}  # nothing built
    assert sorted((r["target"], r["status"], r["error"]) for r in warm) == sorted(
        (r["target"], r["status"], r["error"]) for r in cold
    )
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    edited = [r for r in _run(matrix, tmp_path / "edited", tmp_path / "caches", ok=(1,)) if r["mode"] == "compile"]
    assert "harness" not in {r["compile_cache"] for r in edited}


def test_an_edit_to_any_module_of_the_harness_keys_every_result_anew(tmp_path: Path) -> None:
    """A cached record is the work of the harness's code as it was: an edit to the build code (``compiling``,
    which reads the binaries' figures and digests), the kernel loading (``intake``) or any other package gives
    every job a new key. The key once covered a list of packages that still named ``build`` after its renaming."""
    root = tmp_path / "harness"
    shutil.copytree(REPO / "harness", root, ignore=shutil.ignore_patterns("__pycache__"))
    before = result_cache.code_digest(root)
    assert before == result_cache.code_digest(REPO / "harness")
    for package in sorted(p.name for p in root.iterdir() if p.is_dir()):
        module = sorted((root / package).rglob("*.py"))[0]
        original = module.read_bytes()
        module.write_bytes(original + b"\n# edited\n")
        assert result_cache.code_digest(root) != before, package
        module.write_bytes(original)
    assert result_cache.code_digest(root) == before
