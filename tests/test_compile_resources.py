"""Resource figures and limit flags from real cross-compiles (no GPU, no mocks)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from helpers import compile_one

# An H100-tuned GEMM tile: its pipelined buffers need more than MI300X's 64 KiB of LDS.
BIG = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
SMALL = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 2}
SHAPE = {"M": 512, "N": 512, "K": 512}


def _metadata_shared(target: str, config: dict) -> int:
    """metadata.shared from an independent triton.compile of the same kernel."""
    import triton

    from harness.compiling import launchspec
    from harness.intake import loader
    from harness.model import targets
    from harness.support import tritoncompat

    spec = loader.load(loader.resolve("matmul", None))
    t = targets.get(target)
    meta, options = spec.split_config(config)
    options = {k: v for k, v in options.items() if k in tritoncompat.backend_option_names(t.backend)}
    launch = launchspec.for_case(
        spec, SHAPE, "fp16", meta, options, launchspec.backend_for(t.backend, t.arch, t.warp_size)
    )
    compiled = triton.compile(
        launchspec.ast_source(spec.fn, launch),
        target=tritoncompat.gpu_target(t.backend, t.arch, t.warp_size),
        options=launch.options,
    )
    return int(compiled.metadata.shared)


def test_h100_tile_overflows_mi300x_lds_with_the_metadata_byte_count(tmp_path: Path, isolated_cache: Path) -> None:
    nv = compile_one("matmul", "fp16", SHAPE, "h100", BIG, tmp_path / "nv")
    amd = compile_one("matmul", "fp16", SHAPE, "mi300x", BIG, tmp_path / "amd")
    assert nv["status"] == amd["status"] == "ok"
    assert nv["fits"] is True and not [f for f in nv["flags"] if f["severity"] == "error"]
    shared = amd["resources"]["shared"]
    assert shared == _metadata_shared("mi300x", BIG)
    assert shared > 65536
    assert {"resource": "shared", "value": shared, "limit": 65536, "severity": "error"} in amd["flags"]
    assert amd["fits"] is False
    assert nv["resources"]["shared"] == _metadata_shared("h100", BIG) <= 232448


def test_launcher_prebuild_is_best_effort(tmp_path: Path, isolated_cache: Path) -> None:
    """Asked for (a GPU host's local target), the launcher build never costs the compile its result."""
    import ctypes.util

    rec = compile_one(
        "vector_add", "fp32", {"N": 4096}, "h100", {"BLOCK": 1024, "num_warps": 4}, tmp_path, prebuild_launcher=True
    )
    assert rec["status"] == "ok"
    if ctypes.util.find_library("cuda") is None:  # no driver here: says why
        assert rec["launcher"].startswith("not prebuilt: ")
    else:
        assert rec["launcher"] == "prebuilt", rec["launcher"]
    not_asked = compile_one("vector_add", "fp32", {"N": 4096}, "h100", {"BLOCK": 1024}, tmp_path)
    assert not_asked["launcher"] == ""


def test_artifacts_are_written_with_their_hashes(tmp_path: Path, isolated_cache: Path) -> None:
    for target, kinds in (
        ("h100", {"ttir", "ttgir", "llir", "ptx", "cubin"}),
        ("mi300x", {"ttir", "ttgir", "llir", "amdgcn", "hsaco"}),
    ):
        out = tmp_path / target
        rec = compile_one("matmul", "fp16", SHAPE, target, SMALL, out)
        assert set(rec["artifacts"]) == kinds
        for info in rec["artifacts"].values():
            data = (out / info["path"]).read_bytes()
            assert data and hashlib.sha256(data).hexdigest() == info["sha256"]
        assert (out / rec["artifacts"]["ttgir"]["path"]).read_text().count("ttg.") > 0


def test_nvidia_resources_come_from_cuobjdump_and_ptxas(tmp_path: Path, isolated_cache: Path) -> None:
    rec = compile_one("matmul", "fp16", SHAPE, "h100", SMALL, tmp_path)
    res = rec["resources"]
    assert 0 < res["registers"] <= 255
    assert res["registers"] == res["ptxas_registers"]  # two tools, one answer
    assert res["spill_bytes"] == res["spill_store_bytes"] == 0
    assert res["wgmma"] > 0 and res["mma"] == 0 == res["tcgen05_mma"]  # sm_90 tensor cores via wgmma
    assert res["blocks_per_sm"] >= 1 and res["occupancy"] > 0


def test_amd_resources_come_from_the_amdgcn_metadata(tmp_path: Path, isolated_cache: Path) -> None:
    rec = compile_one("matmul", "fp16", SHAPE, "mi300x", SMALL, tmp_path)
    res = rec["resources"]
    text = (tmp_path / rec["artifacts"]["amdgcn"]["path"]).read_text()
    assert f".vgpr_count:     {res['vgpr']}" in text
    assert res["registers"] == res["vgpr"] == res["total_vgpr"]  # .vgpr_count is the unified total
    assert res["mfma"] > 0
    assert 1 <= res["occupancy"] <= 8 and res["occupancy_frac"] == res["occupancy"] / 8


def test_spilling_config_is_flagged(tmp_path: Path, isolated_cache: Path) -> None:
    # A 128x128 tile on 4 warps with unaligned sizes: masks plus the accumulator overflow 255 registers.
    cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 4, "num_warps": 4, "num_stages": 2}
    rec = compile_one("matmul", "fp16", {"M": 1000, "N": 1000, "K": 1000}, "h100", cfg, tmp_path)
    spills = rec["resources"]["spill_bytes"]
    assert spills == rec["resources"]["spill_store_bytes"] > 0
    assert {"resource": "spills", "value": spills, "limit": 0, "severity": "warn"} in rec["flags"]
    assert rec["fits"] is True  # spills cost speed, not the launch


def test_too_many_threads_for_a_wave64_target(tmp_path: Path, isolated_cache: Path) -> None:
    cfg = {"BLOCK": 4096, "num_warps": 32}
    amd = compile_one("vector_add", "fp32", {"N": 4096}, "mi300x", cfg, tmp_path / "amd")
    nv = compile_one("vector_add", "fp32", {"N": 4096}, "h100", cfg, tmp_path / "nv")
    assert {"resource": "threads", "value": 2048, "limit": 1024, "severity": "error"} in amd["flags"]
    assert nv["fits"] is True and nv["resources"]["threads"] == 1024


def test_options_a_backend_does_not_know_are_recorded_as_ignored(tmp_path: Path, isolated_cache: Path) -> None:
    cfg = {**SMALL, "waves_per_eu": 2, "matrix_instr_nonkdim": 16}
    rec = compile_one("matmul", "fp16", SHAPE, "h100", cfg, tmp_path)
    assert rec["ignored_options"] == ["matrix_instr_nonkdim", "waves_per_eu"]


@pytest.mark.parametrize(
    "kernel,dtype,shape",
    [
        ("vector_add", "bf16", {"N": 12345}),
        ("fused_activation", "fp16", {"M": 100, "N": 300}),
        ("softmax", "bf16", {"M": 100, "N": 3000}),
        ("flash_attention", "bf16", {"B": 1, "H": 2, "N": 300, "D": 128, "causal": True}),
    ],
)
def test_every_kernel_cross_compiles_for_both_vendors(tmp_path: Path, kernel: str, dtype: str, shape: dict) -> None:
    from harness.intake import loader

    spec = loader.load(loader.resolve(kernel, None))
    for target, config in (("h100", spec.nvidia_configs[0]), ("mi300x", spec.amd_configs[0])):
        rec = compile_one(kernel, dtype, shape, target, dict(config), tmp_path / target)
        assert rec["status"] == "ok" and rec["resources"]["registers"] > 0


def test_blackwell_tensor_core_and_tensor_memory_are_counted(tmp_path: Path) -> None:
    """sm_100: Triton emits tcgen05.mma (no wgmma) and allocates tensor memory (metadata.tmem_size)."""
    cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}
    rec = compile_one("matmul", "fp16", SHAPE, "b200", cfg, tmp_path)
    res = rec["resources"]
    ptx = (tmp_path / rec["artifacts"]["ptx"]["path"]).read_text()
    assert res["tcgen05_mma"] > 0 and "tcgen05.mma" in ptx and res["wgmma"] == 0
    assert 0 < res["tmem_columns"] <= 512 and rec["fits"] is True


def test_tensor_memory_over_the_targets_columns_cannot_launch() -> None:
    from harness.compiling import limits
    from harness.model import targets

    b200, h100 = targets.get("b200"), targets.get("h100")
    flags = limits.check(b200, {"tmem_columns": 640}, 4)
    assert limits.Flag("tmem", 640, 512, "error") in flags and not limits.fits(flags)
    assert h100.tmem_columns is None and limits.check(h100, {"tmem_columns": 640}, 4) == []


def test_configs_triton_builds_into_one_kernel_are_marked_duplicates(tmp_path: Path) -> None:
    """gfx950 rewrites kpack 2 to 1: the two configs are one kernel there (same cache key and binary), two on
    gfx942. The second points at the first and is never launched on a GPU."""
    import json

    from helpers import run_cli, write_matrix

    matrix = write_matrix(
        tmp_path / "m.yaml",
        """\
name: kpack
targets: [mi300x, mi355x]
environments: {mi300x: [{name: default, env: {}}]}
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{M: 1024, N: 1024, K: 1024}]
    interpret: false
    configs:
      - {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64, GROUP_M: 8, num_warps: 8, num_stages: 2, kpack: 1}
      - {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64, GROUP_M: 8, num_warps: 8, num_stages: 2, kpack: 2}
""",
    )
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "run"), "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:]
    records = json.loads((tmp_path / "run" / "results.json").read_text())["records"]
    by = {(r["target"], r["config"]["kpack"]): r for r in records}
    assert by[("mi355x", 1)]["duplicate_of"] == ""
    assert by[("mi355x", 2)]["duplicate_of"] == by[("mi355x", 1)]["config_id"]
    assert by[("mi355x", 1)]["cache_key"] == by[("mi355x", 2)]["cache_key"]
    assert by[("mi300x", 1)]["duplicate_of"] == by[("mi300x", 2)]["duplicate_of"] == ""


def _compile_poly(out: Path, target: str, source: Path | None = None) -> dict:
    from helpers import DATA

    from harness.compiling.compile import compile_job
    from harness.intake import loader
    from harness.model import targets
    from harness.model.jobs import from_wire

    ref = loader.resolve("noinline_poly", f"{source or DATA / 'noinline_kernel.py'}:SPEC")
    spec = loader.load(ref)
    return compile_job(
        from_wire(
            "compile",
            {
                "ref": ref,
                "dtype": "fp32",
                "shape": spec.normalize_shape({"N": 4096}),
                "target": targets.get(target).to_dict(),
                "config": {"BLOCK": 1024, "num_warps": 4},
                "out": str(out),
                "artifact_parts": ["a", target],
            },
        )
    ).to_json()


def test_a_checkout_with_new_file_times_keeps_its_spill_figures(
    tmp_path: Path, isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ptxas -lineinfo writes the source files' modification times into .debug_line: after a fresh checkout
    (the nightly's clone, Triton's cache kept) the re-run differs from Triton's cached cubin in that table only.
    Its figures are still the binary's; a change to the code itself is still refused."""
    import os
    import shutil

    from helpers import DATA

    from harness.compiling import cubin_sections, ptxas

    source = tmp_path / "src" / "noinline_kernel.py"
    source.parent.mkdir()
    shutil.copy(DATA / "noinline_kernel.py", source)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    cold = _compile_poly(tmp_path / "cold", "h100", source)
    assert cold["resources"]["spill_source"] == ptxas.OWN_RUN
    os.utime(source, (source.stat().st_atime, source.stat().st_mtime - 86400))  # checked out again a day apart
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "fresh-harness-cache"))
    warm = _compile_poly(tmp_path / "warm", "h100", source)
    assert warm["compile_cache"] == "hit"
    assert warm["artifacts"]["cubin"]["sha256"] == cold["artifacts"]["cubin"]["sha256"]  # Triton's cached binary
    assert warm["resources"]["spill_source"] == ptxas.RE_RUN_LINES  # the re-run's bytes are not the cubin's
    for key in ("registers", "ptxas_registers", "spill_bytes", "spill_load_bytes", "stack_frame_bytes"):
        assert warm["resources"][key] == cold["resources"][key], key
    # the comparison itself, on that real cubin: a byte of code differs -> another binary; of the line table -> same
    data = (tmp_path / "cold" / cold["artifacts"]["cubin"]["path"]).read_bytes()
    found = cubin_sections.sections(data)
    for name, same in ((".text.poly_kernel", False), (".debug_line", True)):
        at = data.index(found[name][3])
        edited = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
        assert cubin_sections.same_code(data, edited) is same, name


def test_spill_figures_are_those_of_the_recorded_binary(
    tmp_path: Path, isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under TRITON_DEFAULT_FP_FUSION=0 Triton assembles with --fmad=false: the figures come from that very
    assembly (cold: Triton's own ptxas run; warm: a re-run with its flags whose output is the recorded cubin),
    are the kernel's and not its noinline helper's, and are refused when no assembly of that binary is had."""
    import hashlib
    import subprocess

    from harness.compiling import ptxas, resources
    from harness.support import tritoncompat

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    cold = _compile_poly(tmp_path / "cold", "h100")
    res = cold["resources"]
    assert res["spill_source"] == ptxas.OWN_RUN and "--fmad=false" in res["ptxas_flags"].split()
    cubin = tmp_path / "cold" / cold["artifacts"]["cubin"]["path"]
    ptx = tmp_path / "cold" / cold["artifacts"]["ptx"]["path"]
    dump = subprocess.run(
        [tritoncompat.nvidia_tool("cuobjdump"), "--dump-resource-usage", str(cubin)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Function poly_kernel:" in dump
    assert res["registers"] == resources.parse_cuobjdump(dump, "poly_kernel")["registers"]
    # the log has the helper's own block; the record holds the kernel's
    tool = tritoncompat.ptxas_for(90)
    log = subprocess.run(
        [tool, *res["ptxas_flags"].split(), "--gpu-name=sm_90a", str(ptx), "-o", str(tmp_path / "again.cubin")],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    assert "Function properties for poly_kernel" in log and "poly_helper" in log
    assert res["ptxas_registers"] == resources.parse_ptxas_verbose(log, "poly_kernel")["ptxas_registers"]
    assert hashlib.sha256((tmp_path / "again.cubin").read_bytes()).hexdigest() == cold["artifacts"]["cubin"]["sha256"]
    # under DISABLE_PTXAS_OPT Triton assembles at -O0 with -g: what the old re-run did (ptxas -v, no flags)
    # assembles another binary with other figures; the record's are those of the -O0 binary
    monkeypatch.setenv("DISABLE_PTXAS_OPT", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-O0"))
    slow = _compile_poly(tmp_path / "O0", "h100")
    assert slow["resources"]["spill_source"] == ptxas.OWN_RUN
    assert {"--opt-level", "0", "-g"} <= set(slow["resources"]["ptxas_flags"].split())
    slow_ptx = tmp_path / "O0" / slow["artifacts"]["ptx"]["path"]
    plain = subprocess.run(
        [tool, "-v", "--gpu-name=sm_90a", str(slow_ptx), "-o", str(tmp_path / "other.cubin")],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    assert hashlib.sha256((tmp_path / "other.cubin").read_bytes()).hexdigest() != slow["artifacts"]["cubin"]["sha256"]
    slow_dump = subprocess.run(
        [
            tritoncompat.nvidia_tool("cuobjdump"),
            "--dump-resource-usage",
            str(tmp_path / "O0" / slow["artifacts"]["cubin"]["path"]),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (
        slow["resources"]["registers"]
        == resources.parse_cuobjdump(slow_dump, "poly_kernel")["registers"]
        != resources.parse_ptxas_verbose(plain, "poly_kernel")["ptxas_registers"]
    )
    monkeypatch.delenv("DISABLE_PTXAS_OPT")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    # warm: Triton loads the cubin from its cache (no ptxas run): the re-run with its flags must reproduce it
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "fresh-harness-cache"))
    warm = _compile_poly(tmp_path / "warm", "h100")
    assert warm["compile_cache"] == "hit" and warm["resources"]["spill_source"] == ptxas.RE_RUN
    assert warm["resources"]["spill_bytes"] == res["spill_bytes"] and warm["resources"]["registers"] == res["registers"]
    # a re-run that cannot reproduce the binary gives no spill figure, and says why
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "third-harness-cache"))
    monkeypatch.setattr(ptxas, "triton_flags", lambda metadata: ["-v", "--opt-level", "1"])  # not what Triton ran
    lost = _compile_poly(tmp_path / "lost", "h100")
    assert lost["resources"]["spill_source"].startswith("unavailable: ptxas re-run with Triton's flags gave another")
    assert lost["resources"]["spill_bytes"] is None and "spill_store_bytes" not in lost["resources"]
    # AMD: the kernel's own metadata entry and occupancy line, not the helper's
    amd = _compile_poly(tmp_path / "amd", "mi300x")
    text = (tmp_path / "amd" / amd["artifacts"]["amdgcn"]["path"]).read_text()
    assert text.index("poly_helper") < text.index(".type\tpoly_kernel,@function")
    assert amd["resources"]["registers"] == resources.parse_amdgcn(text, "poly_kernel")["vgpr"]
