"""Issue 60's small items, each through the command a user types or the function the run calls: a resumed run
whose matrix changed says what changed; a ``records.jsonl`` that is not a file is one line; a Triton pin with a
trailing newline is no pin; the worst findings fit an 80-column terminal; ``harness report --fail-on`` gates as
``harness run --fail-on`` does."""

from __future__ import annotations

from pathlib import Path

from helpers import DATA, call_cli, run_cli, small_matrix, write_matrix


def test_a_resume_under_an_edited_matrix_names_what_changed(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("edited"))
    first = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "0", "--static-only")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    matrix.write_text(matrix.read_text().replace("shapes: [{N: 4096}]", "shapes: [{N: 4096}, {N: 8192}]"))
    again = run_cli("run", str(matrix), "--resume", str(tmp_path / "out"), "-n", "0", "--static-only")
    said = again.stdout + again.stderr
    assert again.returncode == 2 and "Traceback" not in said, said[-2000:]
    line = next(ln for ln in said.splitlines() if "changed since that run started" in ln)
    assert 'now also selects vector_add fp32 {"N": 8192} h100@default' in line, line


def test_records_jsonl_that_is_not_a_file_is_one_line(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("dir"))
    first = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "0", "--static-only")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    (tmp_path / "out" / "records.jsonl").unlink()
    (tmp_path / "out" / "records.jsonl").mkdir()
    for extra in (("--resume", str(tmp_path / "out")), ("--out", str(tmp_path / "out"), "--force")):
        proc = run_cli("run", str(matrix), *extra, "-n", "0", "--static-only")
        said = proc.stdout + proc.stderr
        assert proc.returncode == 2 and "Traceback" not in said, said[-2000:]
        assert "records.jsonl is not a regular file" in said, said[-2000:]


def test_a_triton_pin_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    text = small_matrix("pin").replace("targets:", 'triton: ["3.6.0\\n"]\ntargets:')
    proc = call_cli("validate", str(write_matrix(tmp_path / "m.yaml", text)))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "m.yaml:2: triton version must be a string like" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_the_worst_findings_fit_the_terminal_they_are_printed_on() -> None:
    """A stored run with exceeding configs (the default matrix, static, Triton 3.6): at 80 columns every line of the
    summary fits, the worst findings wrapped rather than cut; at the default 100 some are wider than 80."""
    from harness.analysis.findings import analyse
    from harness.render import terminal
    from harness.results.store import load_results

    run, records = load_results(DATA / "static_triton36")
    found = analyse([run], records)
    assert found.overview.worst, "the stored run has worst findings"
    narrow = [line for _, line in terminal.final_lines(found, width=80)]
    assert max(map(len, narrow)) <= 80, [ln for ln in narrow if len(ln) > 80]
    assert any(len(line) > 80 for _, line in terminal.final_lines(found))  # the test can fail
    worst = narrow[narrow.index("worst findings (as report.html and report.md list them):") + 1 :]
    assert worst and not any(line.endswith("…") for line in worst)  # wrapped, not cut


def test_report_gates_a_merge_on_findings_as_run_does(tmp_path: Path) -> None:
    """``harness report --fail-on`` over a stored run (the default matrix, static, Triton 3.6: one exceeding config,
    no failed one): exit 5 on a kind it has, 0 on one it lacks, 2 on a word that is no kind."""
    stored = str(DATA / "static_triton36")
    tripped = call_cli("report", stored, "--out", str(tmp_path / "a.md"), "--fail-on", "exceeds")
    assert tripped.returncode == 5, tripped.stdout[-1000:] + tripped.stderr[-1000:]
    assert tripped.stdout.rstrip().endswith("--fail-on exceeds: exceeds found · exit 5"), tripped.stdout[-300:]
    clean = call_cli("report", stored, "--out", str(tmp_path / "b.md"), "--fail-on", "failed")
    assert clean.returncode == 0 and "--fail-on failed: none found · exit 0" in clean.stdout
    bad = call_cli("report", stored, "--out", str(tmp_path / "c.md"), "--fail-on", "bogus")
    assert bad.returncode == 2 and "'bogus' is not a finding kind" in bad.stderr and "Traceback" not in bad.stderr
