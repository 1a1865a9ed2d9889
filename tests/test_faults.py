"""Fault injection around a run: kill -9 and resume, a second run into the same directory, SIGTERM,
torn JSONL lines, hostile names in reports, damaged timings for compare. Real runs of the CLI, no GPU."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, run_cli, write_matrix

from harness.analysis.findings import analyse
from harness.matrix.cases import expand
from harness.matrix.reading import parse
from harness.model.ids import config_id
from harness.model.records import Record
from harness.model.run_info import RunInfo
from harness.model.runtime import Runtime
from harness.pytest_plugin.writer import ResultsWriter
from harness.render import report_md
from harness.support.tritoncompat import installed_triton_version

# vector_add at several sizes on two targets: 24 cases of 5 configs, enough to interrupt half-way
MATRIX = """\
name: faults
targets: [h100, mi300x]
environments:
  mi300x: [{name: default, env: {}}]
kernels:
  vector_add:
    dtypes: [fp32, fp16]
    shapes: [{N: 4096}, {N: 8192}, {N: 12288}, {N: 16384}, {N: 20480}, {N: 24576}]
    interpret: false
"""


def _start(matrix: Path, out: Path, cache: Path) -> subprocess.Popen[str]:
    # one compile worker: the run lasts long enough to be interrupted half-way, whatever the machine
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        TRITON_CACHE_DIR=str(cache),
        HARNESS_CACHE_DIR=str(cache / "h"),
        HARNESS_COMPILE_WORKERS="1",
    )
    env.pop("TRITON_INTERPRET", None)
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out), "-n", "0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _wait_for_lock(out: Path, proc: subprocess.Popen[str], timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    lock = out / ".harness.lock"
    while time.monotonic() < deadline:
        if lock.is_file() and lock.read_text().strip():
            return
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.05)
    raise AssertionError("the run never took its lock")


def _wait_for_records(out: Path, proc: subprocess.Popen[str], at_least: int = 1, timeout: float = 600) -> int:
    deadline = time.monotonic() + timeout
    jsonl = out / "records.jsonl"
    while time.monotonic() < deadline:
        lines = jsonl.read_text().count("\n") if jsonl.is_file() else 0
        if lines >= at_least:
            return lines
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.05)
    raise AssertionError("no record appeared")


@pytest.mark.usefixtures("no_zygote")  # signals to the run and its workers, as a user's
def test_kill_9_then_resume_keeps_every_record_exactly_once(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX)
    out, cache = tmp_path / "run", tmp_path / "cache"
    cases = expand(parse(matrix), installed_triton_version())
    expected = {(c.id, config_id(e.as_dict())) for c in cases for e in c.configs}
    first = _start(matrix, out, cache)
    _wait_for_lock(out, first)
    _wait_for_records(out, first)
    os.killpg(first.pid, signal.SIGSTOP)  # frozen half-way, whatever the machine's speed: it still holds its folder
    # a second run into the same directory, while the first holds it, is refused and names the holder
    second = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert second.returncode == 2 and "in use by another harness run (pid" in second.stdout + second.stderr
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    with open(out / "records.jsonl", "a") as fh:  # what a kill in the middle of a write leaves
        fh.write('{"kernel": "vector_add", "dtype": "fp3')
    before = json.loads(json.dumps(_jsonl_pairs(out)))
    assert 0 < len(before) < len(expected), "the kill came after the run finished: nothing to resume"
    resumed = run_cli(
        "run",
        str(matrix),
        "--resume",
        str(out),
        "-n",
        "0",
        env={"TRITON_CACHE_DIR": str(cache), "HARNESS_CACHE_DIR": str(cache / "h")},
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "already finished there" in resumed.stdout
    doc = json.loads((out / "results.json").read_text())
    pairs = [(r["case_id"], r["config_id"]) for r in doc["records"]]
    assert len(pairs) == len(set(pairs)) and set(pairs) == expected  # every record, each once
    assert set(map(tuple, before)) <= set(pairs)  # the first run's records were kept, not redone
    assert len(_jsonl_pairs(out)) == len(expected)  # the torn fragment is gone from records.jsonl
    assert doc["run"]["resumed"] and doc["run"]["interrupted"] is False


def _jsonl_pairs(out: Path) -> list[list[str]]:
    pairs = []
    for line in (out / "records.jsonl").read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        pairs.append([r["case_id"], r["config_id"]])
    return pairs


def test_finished_directories_are_not_overwritten_and_out_is_checked(tmp_path: Path) -> None:
    matrix = write_matrix(
        tmp_path / "m.yaml",
        MATRIX.replace("[fp32, fp16]", "[fp32]").replace("[{N: 4096}, {N: 8192}, {N: 12288}]", "[{N: 4096}]"),
    )
    out = tmp_path / "run"
    assert run_cli("run", str(matrix), "--out", str(out), "-n", "0").returncode == 0
    again = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert again.returncode == 2 and "already holds a run:" in again.stdout + again.stderr
    assert "Traceback" not in again.stdout + again.stderr
    assert run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--force").returncode == 0
    nothing_left = run_cli("run", str(matrix), "--resume", str(out), "-n", "0")
    assert nothing_left.returncode == 0 and "already finished there" in nothing_left.stdout
    (tmp_path / "plain-file").write_text("x")
    bad = run_cli("run", str(matrix), "--out", str(tmp_path / "plain-file"), "-n", "0")
    assert bad.returncode == 2 and "is not a directory" in bad.stderr
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("mine")
    foreign = run_cli("run", str(matrix), "--out", str(tmp_path / "project"), "-n", "0")
    assert foreign.returncode == 2 and "files a harness run did not write" in foreign.stderr
    other = write_matrix(tmp_path / "m2.yaml", (tmp_path / "m.yaml").read_text().replace("N: 4096", "N: 4000"))
    changed = run_cli("run", str(other), "--resume", str(out), "-n", "0")
    assert changed.returncode == 2 and "changed since that run started" in changed.stdout + changed.stderr


@pytest.mark.usefixtures("no_zygote")  # signals to the run and its workers, as a user's
def test_sigterm_ends_the_run_like_ctrl_c_and_marks_it_interrupted(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX)
    out = tmp_path / "run"
    proc = _start(matrix, out, tmp_path / "cache")
    _wait_for_records(out, proc)
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 3, output[-3000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["interrupted"] is True and doc["records"]
    assert "**INCOMPLETE**" in (out / "report.md").read_text()


def _record(kernel: str, median: float | None = 100.0, **extra: object) -> Record:
    runtime = {"status": "ok", "timing": {"median_us": median}} if median is not None else {"status": "ok"}
    return Record(
        kernel=kernel,
        dtype="fp16",
        shape={"N": 1},
        target="h100",
        arch="sm_90",
        vendor="nvidia",
        triton="3.6.0",
        config={"BLOCK": 1},
        config_id="BLOCK1",
        meta={},
        origin="nvidia",
        mode="compile",
        status="ok",
        runtime=Runtime.from_json(runtime),
        **extra,
    )  # type: ignore[arg-type]


def test_resume_trusts_only_cases_whose_every_record_is_present() -> None:
    from harness.results.store import complete_cases

    whole = [_record("a", case_id="A", case_records=2), _record("a", case_id="A", case_records=2)]
    cut = [_record("b", case_id="B", case_records=3)]  # a kill cut this case's batch after one record
    done, kept = complete_cases(whole + cut)
    assert done == {"A"} and kept == whole


def test_a_torn_jsonl_line_is_skipped_and_reported(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path, RunInfo(host="h"))
    writer.add(_record("k"))
    writer.add(_record("k2"))
    with open(tmp_path / "records.jsonl", "a") as fh:
        fh.write('{"kernel": "k3", "dty')
    proc = run_cli("report", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "skipped 1 line(s) that are not whole records (line 3)" in proc.stderr


def test_hostile_names_cannot_break_the_markdown_report() -> None:
    evil = "a|b`c\n# heading <script>alert(1)</script> [x](http://y)"
    records = [_record(evil, error="e|r\nr"), _record("plain")]
    text = report_md.markdown_report(analyse([RunInfo.from_json({"host": "h|x", "matrix": {"name": evil}})], records))
    assert "<script>" not in text and "\n# heading" not in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    cells = {len(line.replace("\\|", "").split("|")) for line in rows[:4]}
    assert len(cells) == 1  # header, rule and both rows have the same number of cells


def test_a_run_with_hostile_names_writes_an_intact_report(tmp_path: Path) -> None:
    """Matrix and kernel names with table separators, code, headings, tags and newlines."""
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: "evil | `name` \\n# heading <script>x</script>"
targets: [h100]
kernels:
  "k|`x`<b>":
    source: {REPO / "kernels" / "vector_add.py"}:SPEC
    dtypes: [fp32]
    shapes: [{{N: 4096}}]
    configs: [{{BLOCK: 1024, num_warps: 4}}]
    interpret: false
""",
    )
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = (out / "report.md").read_text()
    assert "<script>" not in text and "<b>" not in text and "\n# heading" not in text
    section = text.split("## Comparison")[1].split("\n## ")[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    assert len(table) == 3 and "k\\|\\`x\\`&lt;b>" in table[2]
    assert len({len(line.replace("\\|", "").split("|")) for line in table}) == 1
    assert all(p.resolve().is_relative_to(out.resolve()) for p in out.rglob("*"))


def test_damaged_results_are_refused_naming_the_record(tmp_path: Path) -> None:
    for label, damage in (
        ("flags", {"flags": "x"}),
        ("resources", {"resources": 5}),
        ("kernel", {"kernel": None}),
        ("flag_value", {"flags": [{"resource": "shared", "value": "big", "limit": 1, "severity": "error"}]}),
    ):
        run = tmp_path / label
        writer = ResultsWriter(run, RunInfo(host="h"))
        writer.add(_record("k"))
        writer.finish()
        doc = json.loads((run / "results.json").read_text())
        doc["records"][0].update(damage)
        (run / "results.json").write_text(json.dumps(doc))
        (run / "records.jsonl").unlink()
        for command, code in ((("report", str(run)), 2), (("compare", str(run), str(run)), 3)):
            proc = run_cli(*command)
            named = "record 0 (None h100 BLOCK1)" if label == "kernel" else "record 0 (k h100 BLOCK1)"
            assert proc.returncode == code and named in proc.stderr, (label, command, proc.stderr)
            assert "Traceback" not in proc.stderr


def test_compare_refuses_nan_zero_and_missing_medians(tmp_path: Path) -> None:
    good = tmp_path / "good"
    ResultsWriter(good, RunInfo(host="h")).add(_record("k"))
    for label, median in (("nan", math.nan), ("zero", 0.0), ("missing", None)):
        bad = tmp_path / label
        ResultsWriter(bad, RunInfo(host="h")).add(_record("k", median))
        proc = run_cli("compare", str(good), str(bad))
        assert proc.returncode == 3, (label, proc.stdout, proc.stderr)  # compare's "cannot be compared"
        assert "new: k fp16 N1 h100 BLOCK1: timed 'ok' but its median is" in proc.stderr
        assert "Traceback" not in proc.stderr
