"""The second corpus of bad inputs, one per kind the hostile trial found (beside tests/test_bad_input_corpus.py):
matrices that are not regular files or carry numbers past Python's digit limit, compile-environment variables
off the allow-list, spec callbacks that hang, crash or exit, command-line values out of range, unusable output
paths and history files, and damaged results, field by field and type by type. Each input has its expected exit
code and what its first line says; none may print a traceback."""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA, REPO, run_cli, small_matrix

from harness import cli

BASE = small_matrix("hostile")
BIG = "9" * 5000  # past Python's 4300-digit limit for int(str)
CALLBACKS = DATA / "bad_callbacks.py"


def _env(var: str, target: str = "mi300x") -> str:
    return BASE.replace("kernels:", f"environments:\n  {target}: [{{name: e, env: {{{var}: '1'}}}}]\nkernels:")


def _callback(attr: str) -> str:
    return (
        f"name: cb\ntargets: [h100]\nkernels:\n  k:\n    source: {CALLBACKS}:{attr}\n    dtypes: [fp32]\n"
        "    shapes: [{N: 16}]\n    configs: [{BLOCK: 16}]\n"
    )


# name -> (file contents, what the first line must say)
MATRICES: dict[str, tuple[str, str]] = {
    "digits_timeout": (BASE + f"timeout_s: {BIG}\n", "digits"),
    "digits_shape": (BASE.replace("N: 4096", f"N: {BIG}"), "digits"),
    "digits_seed": (BASE + f"seed: {BIG}\n", "digits"),
    "digits_block": (BASE.replace("BLOCK: 1024", f"BLOCK: {BIG}"), "digits"),
    "digits_warps": (BASE.replace("num_warps: 4", f"num_warps: -{BIG}"), "digits"),
    "digits_kernel_timeout": (BASE.replace("interpret: false", f"interpret: false\n    timeout_s: {BIG}"), "digits"),
    "digits_compare_threshold": (
        BASE.replace("interpret: false", f"interpret: false\n    compare_threshold: {BIG}"),
        "digits",
    ),
    "digits_in_a_list": (BASE.replace("[fp32]", f"[{BIG}]"), "digits"),
    "digits_as_a_key": (BASE.replace("name: hostile", f"{BIG}: 1\nname: hostile"), "digits"),
    "digits_import_env": (
        BASE.replace("interpret: false", f"interpret: false\n    import_env: {{LIB_MODE: {BIG}}}"),
        "digits",
    ),
}
# every variable that makes Triton import code, use another cache, drop what is recorded or write elsewhere, and
# every variable that is no codegen knob: refused per backend
for _var, _what in [
    ("TRITON_CACHE_MANAGER", "import a class"),
    ("TRITON_REMOTE_CACHE_BACKEND", "import a class"),
    ("TRITON_STORE_BINARY_ONLY", "only the binary"),
    ("TRITON_REDIS_HOST", "remote server"),
    ("TRITON_REDIS_PORT", "remote server"),
    ("TRITON_REDIS_KEY_FORMAT", "remote server"),
    ("TRITON_HOME", "outside the run directory"),
    ("TRITON_OVERRIDE_DIR", "outside the run"),
    ("TRITON_KERNEL_OVERRIDE", "outside the run"),
    ("TRITON_ALWAYS_COMPILE", "set by the harness"),
    ("TRITON_INTERPRET", "set by the harness"),
    ("TRITON_KERNEL_DUMP", "outside the run"),
    ("CC", "not on the harness's list"),
    ("TRITON_LIBDEVICE_PATH", "not on the harness's list"),
    ("PTXAS_OPTIONS", "not on the harness's list"),
    ("TRITON_DEBUG", "not on the harness's list"),
    ("MLIR_ENABLE_DUMP", "not on the harness's list"),
    ("TRITON_ENABLE_ASAN", "not on the harness's"),
    ("TRITON_MOCK_PTX_VERSION", "not on the harness's list"),
    ("TRITON_OVERRIDE_ARCH", "not on the harness's list"),
    ("PYTHONPATH", "not on the harness's"),
    ("LD_PRELOAD", "not on the harness's list"),
]:
    for _target in ("h100", "mi300x"):
        MATRICES[f"env_{_var.lower()}_{_target}"] = (_env(_var, _target), _what)
MATRICES["env_amd_dump_on_amd"] = (_env("AMDGCN_ENABLE_DUMP"), "not on the harness's list")
MATRICES["env_nvptx_dump_on_nvidia"] = (_env("NVPTX_ENABLE_DUMP", "h100"), "not on the harness's list")
MATRICES["env_amd_knob_on_nvidia"] = (_env("AMDGCN_USE_BUFFER_OPS", "h100"), "another backend")
MATRICES["env_ptxas_path_on_amd"] = (_env("TRITON_PTXAS_PATH"), "another backend")
for _callback_name in ("CONFIG_OK", "FIXED", "GRID"):
    for _how, _what in [
        ("HANG", "did not return"),
        ("SEGFAULT", "killed the process (SIGSEGV)"),
        ("EXIT_ZERO", "ended the process (exit code 0)"),
        ("OS_EXIT_ZERO", "ended the process (exit code 0)"),
        ("EXIT_THREE", "ended the process (exit code 3)"),
    ]:
        _label = {"CONFIG_OK": "config_ok", "FIXED": "fixed_constexprs", "GRID": "grid"}[_callback_name]
        MATRICES[f"callback_{_callback_name.lower()}_{_how.lower()}"] = (
            _callback(f"{_callback_name}_{_how}"),
            f"{_label} (shape",
        )


def _special_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """Matrix paths that are not regular files: each refused before a byte is read."""
    fifo = tmp / "matrix.fifo"
    os.mkfifo(fifo)
    folder = tmp / "a_folder.yaml"
    folder.mkdir()
    link = tmp / "zero_link.yaml"
    link.symlink_to("/dev/zero")
    return {
        "fifo": (fifo, "a FIFO"),
        "dev_zero": (Path("/dev/zero"), "a device"),
        "dev_null": (Path("/dev/null"), "a device"),
        "directory": (folder, "a directory"),
        "link_to_dev_zero": (link, "a device"),
    }


def test_matrices_bad_in_every_new_way_are_each_one_line_and_exit_2(tmp_path: Path) -> None:
    files: dict[Path, str] = {}
    for name, (body, fragment) in MATRICES.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(body)
        files[path] = fragment
    files.update({path: fragment for path, fragment in _special_files(tmp_path).values()})
    proc = run_cli(
        "validate",
        *map(str, files),
        env={"HARNESS_IMPORT_TIMEOUT_S": "120", "HARNESS_CALLBACK_TIMEOUT_S": "3"},
        timeout=900,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-3000:]
    lines = proc.stdout.splitlines()
    for path, fragment in files.items():
        mine = [line for line in lines if line.startswith(f"{path}:")]
        assert mine, f"{path.name}: no message"
        assert re.match(rf"^{re.escape(str(path))}:\d+: \S", mine[0]), mine[0]
        assert fragment in mine[0], (path.name, mine[0])


# ---- the command line: (argv with placeholders, expected exit code, what the first line of stderr says)
CLI: dict[str, tuple[list[str], int, str]] = {
    "compare_threshold_nan": (["compare", "{good}", "{good}", "--threshold", "nan"], 2, "--threshold"),
    "compare_threshold_negative": (["compare", "{good}", "{good}", "--threshold", "-1"], 2, "--threshold"),
    "compare_threshold_inf": (["compare", "{good}", "{good}", "--threshold", "inf"], 2, "--threshold"),
    "compare_threshold_digits": (["compare", "{good}", "{good}", "--threshold", BIG], 2, "--threshold"),
    "compare_alpha_two": (["compare", "{good}", "{good}", "--alpha", "2"], 2, "--alpha"),
    "compare_alpha_zero": (["compare", "{good}", "{good}", "--alpha", "0"], 2, "--alpha"),
    "compare_fdr_large": (["compare", "{good}", "{good}", "--fdr", "1.5"], 2, "--fdr"),
    "compare_noise_floor_negative": (["compare", "{good}", "{good}", "--noise-floor", "-0.1"], 2, "--noise-floor"),
    "compare_min_us_nan": (["compare", "{good}", "{good}", "--min-us", "nan"], 2, "--min-us"),
    "compare_compile_threshold_text": (
        ["compare", "{good}", "{good}", "--compile-threshold", "x"],
        2,
        "--compile-threshold",
    ),
    "compare_base_fifo": (["compare", "{fifo}", "{good}"], 3, "a FIFO"),
    "compare_new_dev_zero": (["compare", "{good}", "/dev/zero"], 3, "a device"),
    "compare_base_missing": (["compare", "{tmp}/missing", "{good}"], 3, "cannot read"),
    "compare_history_fifo": (["compare", "{good}", "{good}", "--history", "{fifo}"], 3, "a FIFO"),
    "compare_history_folder": (["compare", "{good}", "{good}", "--history", "{tmp}"], 3, "is a directory"),
    "compare_history_not_a_db": (["compare", "{good}", "{good}", "--history", "{notdb}"], 3, "{notdb}"),
    "compare_markdown_into_a_folder": (["compare", "{good}", "{good}", "--markdown", "{tmp}"], 3, "--markdown"),
    "compare_json_into_a_folder": (["compare", "{good}", "{good}", "--json", "{tmp}"], 3, "--json"),
    "report_fifo": (["report", "{fifo}"], 2, "a FIFO"),
    "report_dev_zero": (["report", "/dev/zero"], 2, "a device"),
    "report_empty_folder": (["report", "{empty}"], 2, "cannot read"),
    "report_out_is_a_folder": (["report", "{good}", "--out", "{tmp}"], 2, "--out"),
    "report_csv_is_a_folder": (["report", "{good}", "--csv", "{tmp}"], 2, "--csv"),
    "report_history_fifo": (["report", "{good}", "--out", "{tmp}/r/report.md", "--history", "{fifo}"], 0, "warning"),
    "history_show_fifo": (["history", "show", "--db", "{fifo}"], 2, "a FIFO"),
    "history_show_folder": (["history", "show", "--db", "{tmp}"], 2, "is a directory"),
    "history_show_not_a_db": (["history", "show", "--db", "{notdb}"], 2, "{notdb}"),
    "history_show_wrong_schema": (["history", "show", "--db", "{otherdb}"], 2, "not a harness history"),
    "history_show_threshold_nan": (["history", "show", "--db", "{notdb}", "--threshold", "nan"], 2, "--threshold"),
    "history_add_into_fifo": (["history", "add", "--db", "{fifo}", "{good}"], 2, "a FIFO"),
    "history_add_into_dev_null": (["history", "add", "--db", "/dev/null", "{good}"], 2, "a device"),
    "history_add_damaged_run": (["history", "add", "--db", "{tmp}/h.db", "{damaged}"], 2, "field"),
    "history_show_corrupt": (["history", "show", "--db", "{corrupt}"], 2, "{corrupt}"),
    "history_show_proc": (["history", "show", "--db", "/proc"], 2, "is a directory"),
    "history_add_into_proc_file": (["history", "add", "--db", "/proc/version", "{good}"], 2, "/proc/version"),
    # documented forms that once failed: each now works (exit 0, nothing on stderr)
    "report_names_results_json": (["report", "{good}/results.json"], 0, ""),
    "report_csv_into_a_new_folder": (["report", "{good}", "--csv", "{tmp}/new/deeper/out.csv"], 0, ""),
    "compare_markdown_into_a_new_folder": (["compare", "{good}", "{good}", "--markdown", "{tmp}/new2/c.md"], 0, ""),
    "unknown_command": (["bogus"], 2, "invalid choice"),
    "validate_nothing": (["validate"], 2, "validate"),
}
# `harness run` refusals, each before any case runs (a fresh process each: run starts pytest)
RUN: dict[str, tuple[list[str], str]] = {
    "targets_empty": (["--targets", ""], "--targets"),
    "targets_repeated": (["--targets", "h100,h100"], "named twice"),
    "targets_unknown": (["--targets", "h1000"], "unknown target"),
    "workers_negative": (["-n", "-1"], "-n"),
    "workers_text": (["-n", "many"], "-n"),
    "workers_digits": (["-n", BIG], "-n"),
    "resume_and_force": (["--resume", "{tmp}/r1", "--force"], "choose one"),
    "resume_and_other_out": (["--resume", "{tmp}/r1", "--out", "{tmp}/r2"], "different directories"),
    "device_as_unknown": (["--device-as", "b200x"], "unknown target"),
    "winners_from_dev_zero": (["--winners-from", "/dev/zero"], "a device"),
    "winners_from_missing": (["--winners-from", "{tmp}/none"], "cannot read"),
    "out_is_dev_null": (["--out", "/dev/null"], "not a directory"),
    "out_is_a_fifo": (["--out", "{fifo}"], "not a directory"),
    "out_is_a_users_folder": (["--out", "{userdir}"], "did not write"),
    "out_is_a_dangling_link": (["--out", "{dangling}"], "link to nothing"),
    "matrix_is_a_fifo": (["{fifo}"], "a FIFO"),
}


@pytest.fixture
def places(tmp_path: Path) -> dict[str, str]:
    good = tmp_path / "good"
    good.mkdir()
    (good / "results.json").write_text(json.dumps(_base_doc()))
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    doc = _base_doc()
    doc["records"][0]["status"] = "weird"
    (damaged / "results.json").write_text(json.dumps(doc))
    fifo = tmp_path / "a.fifo"
    os.mkfifo(fifo)
    (tmp_path / "not.db").write_text("not a database at all, just text\n" * 20)
    corrupt = sqlite3.connect(tmp_path / "corrupt.db")
    corrupt.execute("CREATE TABLE t (x)")
    corrupt.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    corrupt.commit()
    corrupt.close()
    blob = bytearray((tmp_path / "corrupt.db").read_bytes())
    blob[100:4096] = b"\xff" * (4096 - 100)  # the schema page overwritten: a header that says SQLite, then garbage
    (tmp_path / "corrupt.db").write_bytes(bytes(blob))
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE nights (a, b)")
    other.commit()
    other.close()
    (tmp_path / "empty").mkdir()
    user = tmp_path / "userdir"
    user.mkdir()
    (user / "thesis.tex").write_text("mine")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    matrix = tmp_path / "m.yaml"
    matrix.write_text(BASE.replace("[h100, mi300x]", "[h100]"))
    return {
        "good": str(good),
        "damaged": str(damaged),
        "fifo": str(fifo),
        "tmp": str(tmp_path),
        "notdb": str(tmp_path / "not.db"),
        "corrupt": str(tmp_path / "corrupt.db"),
        "otherdb": str(tmp_path / "other.db"),
        "empty": str(tmp_path / "empty"),
        "userdir": str(user),
        "dangling": str(tmp_path / "dangling"),
        "matrix": str(matrix),
    }


def _fill(argv: list[str], places: dict[str, str]) -> list[str]:
    return [a.format(**places) if "{" in a else a for a in argv]


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def test_command_line_values_and_paths_out_of_bounds(
    places: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    for name, (argv, code, fragment) in CLI.items():
        got = cli.main(_fill(argv, places))
        out, err = capsys.readouterr()
        assert got == code, (name, got, out[-500:], err[-500:])
        assert "Traceback" not in out + err, name
        assert fragment.format(**places) in _first_line(err), (name, _first_line(err))


def test_run_refuses_each_bad_argument_before_any_case_runs(
    places: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest as pytest_module

    def no_run(*args: object, **kwargs: object) -> int:
        raise AssertionError("a case was about to run: the bad argument was not refused")

    monkeypatch.setattr(pytest_module, "main", no_run)  # every refusal comes before pytest starts
    for name, (argv, fragment) in RUN.items():
        args = _fill(argv, places)
        matrix = [] if args and args[0] == places["fifo"] else [places["matrix"]]
        got = cli.main(["run", *matrix, *args, "--static-only"])
        out, err = capsys.readouterr()
        assert got == 2, (name, got, out[-800:], err[-800:])
        assert "Traceback" not in out + err, name
        assert fragment in _first_line(err), (name, _first_line(err))


# ---- damaged results: (where, the value put there, what the error names)
def _base_doc() -> dict[str, Any]:
    doc = json.loads(gzip.decompress((DATA / "h200_gate" / "g1" / "results.json.gz").read_bytes()))
    doc["records"] = doc["records"][:6]  # five builds and the tune record (runtime, timings, baselines)
    return doc


DELETE = object()
T = 5  # the tune record
DAMAGE: dict[str, tuple[list[Any], Any, str]] = {
    "doc_a_list": ([], [1, 2], "schema_version"),
    "schema_true": (["schema_version"], True, "schema_version"),
    "schema_text": (["schema_version"], "3", "schema_version"),
    "schema_float": (["schema_version"], 3.0, "schema_version"),
    "schema_missing": (["schema_version"], DELETE, "schema_version"),
    "run_list": (["run"], [], "'run'"),
    "run_text": (["run"], "x", "'run'"),
    "run_number": (["run"], 5, "'run'"),
    "run_null": (["run"], None, "'run'"),
    "records_object": (["records"], {}, "'records'"),
    "records_text": (["records"], "x", "'records'"),
    "records_number": (["records"], 5, "'records'"),
    "record_number": (["records", 0], 5, "list of objects"),
    "record_list": (["records", 0], [], "list of objects"),
    "status_weird": (["records", 0, "status"], "weird", "'status'"),
    "mode_weird": (["records", 0, "mode"], "benchmark", "'mode'"),
    "runtime_list": (["records", T, "runtime"], [], "'runtime'"),
    "runtime_text": (["records", T, "runtime"], "fast", "'runtime'"),
    "runtime_status_number": (["records", T, "runtime", "status"], 1, "runtime.'status'"),
    "timing_list": (["records", T, "runtime", "timing"], [], "runtime.'timing'"),
    "timing_median_text": (["records", T, "runtime", "timing", "median_us"], "fast", "'median_us'"),
    "timing_median_bool": (["records", T, "runtime", "timing", "median_us"], True, "'median_us'"),
    "timing_samples_object": (["records", T, "runtime", "timing", "samples_us"], {}, "'samples_us'"),
    "isolated_number": (["records", T, "runtime", "isolated"], 5, "runtime.'isolated'"),
    "isolated_median_list": (["records", T, "runtime", "isolated", "median_us"], [1], "'median_us'"),
    "baseline_sustained_list": (["records", T, "runtime", "baselines", "torch add", "sustained"], [], "'sustained'"),
    "baselines_list": (["records", T, "runtime", "baselines"], [], "runtime.'baselines'"),
    "baselines_text": (["records", T, "runtime", "baselines"], "torch", "runtime.'baselines'"),
    "baseline_number": (["records", T, "runtime", "baselines", "torch add"], 5, "baselines"),
    "baseline_timing_list": (["records", T, "runtime", "baselines", "torch add", "timing"], [], "'timing'"),
    "tflops_text": (["records", T, "runtime", "tflops"], "many", "'tflops'"),
    "gbps_list": (["records", T, "runtime", "gbps"], [], "'gbps'"),
    "configs_launched_text": (["records", T, "runtime", "configs_launched"], "5", "'configs_launched'"),
    "gpu_window_object": (["records", T, "runtime", "gpu_window"], {}, "'gpu_window'"),
    "model_list": (["records", T, "runtime", "model"], [], "'model'"),
    "artifact_text": (["records", 0, "artifacts", "ptx"], "kernel.ptx", "artifacts"),
    "artifact_path_number": (["records", 0, "artifacts", "ptx", "path"], 5, "artifacts"),
    "flag_text": (["records", 0, "flags"], ["shared"], "a flag must be"),
    "flag_value_text": (
        ["records", 0, "flags"],
        [{"resource": "shared", "value": "x", "limit": 1, "severity": "error"}],
        "a flag must be",
    ),
    "run_host_number": (["run", "host"], 5, "'host'"),
    "run_interrupted_text": (["run", "interrupted"], "no", "'interrupted'"),
    "run_matrix_list": (["run", "matrix"], [], "'matrix'"),
    "run_matrix_name_number": (["run", "matrix", "name"], 5, "'name'"),
    "run_targets_text": (["run", "targets"], "h100", "'targets'"),
    "run_start_number": (["run", "start"], 5, "'start'"),
    "run_end_list": (["run", "end"], [], "'end'"),
    "run_selected_object": (["run", "selected"], {}, "'selected'"),
    "run_thresholds_list": (["run", "compare_thresholds"], [], "'compare_thresholds'"),
    "run_gpus_object": (["run", "gpus"], {}, "'gpus'"),
    "run_triton_number": (["run", "triton"], 3.6, "'triton'"),
    "run_commit_list": (["run", "commit"], [], "'commit'"),
    "run_resumed_text": (["run", "resumed"], "yes", "'resumed'"),
}
# every field of a record, given a value of a type it does not take
_WRONG = {"str": 5, "bool": "yes", "dict": [], "list": {}, "float": "slow", "int": "3"}
for _name, _type in [
    ("kernel", "str"),
    ("dtype", "str"),
    ("target", "str"),
    ("arch", "str"),
    ("vendor", "str"),
    ("triton", "str"),
    ("config_id", "str"),
    ("origin", "str"),
    ("error", "str"),
    ("traceback", "str"),
    ("host", "str"),
    ("fits", "bool"),
    ("resources", "dict"),
    ("flags", "list"),
    ("artifacts", "dict"),
    ("compile_s", "float"),
    ("compile_cache", "dict"),
    ("compile_stages_s", "dict"),
    ("correctness", "dict"),
    ("ignored_options", "list"),
    ("kernel_hash", "str"),
    ("launcher", "str"),
    ("environment", "str"),
    ("deciding_environment", "str"),
    ("env", "dict"),
    ("specialisation", "dict"),
    ("assumptions", "list"),
    ("cache_key", "str"),
    ("duplicate_of", "str"),
    ("case_id", "str"),
    ("case_records", "int"),
    ("expected_failure", "str"),
    ("known_failure_fixed", "str"),
    ("autotune", "dict"),
    ("captured", "dict"),
    ("import_env", "dict"),
    ("shape", "dict"),
    ("config", "dict"),
    ("meta", "dict"),
]:
    DAMAGE[f"record_{_name}_wrong_type"] = (["records", 0, _name], _WRONG[_type], f"'{_name}'")
DAMAGE["record_case_records_bool"] = (["records", 0, "case_records"], True, "'case_records'")
DAMAGE["record_fits_number"] = (["records", 0, "fits"], 1, "'fits'")
DAMAGE["record_status_missing"] = (["records", 0, "status"], DELETE, "'status'")


def _damaged(doc: dict[str, Any], where: list[Any], value: Any) -> Any:
    if not where:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for key in where[:-1]:
        node = node[key]
    if value is DELETE:
        del node[where[-1]]
    else:
        node[where[-1]] = value
    return doc


def test_damaged_results_are_refused_naming_the_field_by_report_compare_and_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _base_doc()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base))
    assert cli.main(["report", str(good), "--out", str(tmp_path / "good-report.md")]) == 0  # the base reads
    capsys.readouterr()
    for name, (where, value, fragment) in DAMAGE.items():
        path = tmp_path / name / "results.json"
        path.parent.mkdir()
        path.write_text(json.dumps(_damaged(base, where, value)))
        for argv, code in (
            (["report", str(path)], 2),
            (["compare", str(good), str(path)], 3),
            (["history", "add", "--db", str(tmp_path / "h.db"), str(path.parent)], 2),
        ):
            got = cli.main(argv)
            out, err = capsys.readouterr()
            assert got == code, (name, argv[0], got, err[-400:])
            first = _first_line(err)
            assert first.startswith("harness: ") and str(path) in first and fragment in first, (name, argv[0], first)
            assert "Traceback" not in out + err


def test_a_damaged_records_file_beside_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps({**_base_doc(), "records": []}))
    os.mkfifo(run / "records.jsonl")
    assert cli.main(["report", str(run)]) == 2
    assert "a FIFO" in _first_line(capsys.readouterr().err)
    (run / "records.jsonl").unlink()
    good = [json.dumps(r) for r in _base_doc()["records"]]
    (run / "records.jsonl").write_text("\n".join(good[:3] + ['{"n": ' + BIG + "}"] + good[3:]) + "\n")
    assert cli.main(["report", str(run), "--out", str(tmp_path / "r.md")]) == 0  # the digit bomb is a skipped line
    assert "skipped 1 line(s)" in capsys.readouterr().err


def test_the_corpus_has_at_least_150_new_inputs() -> None:
    special = 5  # FIFO, /dev/zero, /dev/null, a directory, a link to /dev/zero
    total = len(MATRICES) + special + len(CLI) + len(RUN) + len(DAMAGE) + 2
    assert total >= 150, total


def test_a_triton_older_than_34_is_refused_up_front(tmp_path: Path) -> None:
    """Under 3.3.1 every build used to fail one by one (no ``triton.knobs``): now ``harness run`` says so once,
    exit 2, before any case. The importable ``triton`` here is a stand-in whose version is all that is read."""
    from harness.support.tritoncompat import too_old

    assert too_old("3.4.0") is None and too_old("3.10.1") is None and too_old(None) is None
    assert "older than 3.4" in (too_old("3.3.1") or "") and too_old("3.2.0")
    fake = tmp_path / "site"
    (fake / "triton").mkdir(parents=True)
    (fake / "triton" / "__init__.py").write_text('__version__ = "3.3.1"\n')
    proc = run_cli("run", "--out", str(tmp_path / "out"), env={"PYTHONPATH": f"{fake}{os.pathsep}{REPO}"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1].startswith("harness: triton 3.3.1 is older than 3.4"), proc.stderr
    assert not (tmp_path / "out").exists()
