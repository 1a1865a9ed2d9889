"""`harness history` over several nights built from a real H200 run: a lasting shift is a step, a blip is not."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from helpers import DATA, call_cli, run_cli

from harness.analysis.trends import step_of
from harness.model.run_info import RunInfo


def _night(doc: dict, day: int, tmp: Path, slower: set[str]) -> Path:
    """The recorded run as night ``day``; configs in ``slower`` carry the slower config's real timing instead."""
    night = copy.deepcopy(doc)
    night["run"]["start"] = f"2026-11-{day:02d}T02:00:00+00:00"
    finals = [
        r for r in night["records"] if r["mode"] == "compile" and (r.get("runtime") or {}).get("stage") == "final"
    ]
    slow = max(finals, key=lambda r: r["runtime"]["timing"]["median_us"])
    for r in finals:
        if r["config_id"] in slower:
            r["runtime"]["timing"] = copy.deepcopy(slow["runtime"]["timing"])
    out = tmp / f"night{day}"
    out.mkdir()
    (out / "results.json").write_text(json.dumps(night))
    return out


def test_a_step_is_flagged_and_a_blip_is_not(tmp_path: Path) -> None:
    doc = json.loads((DATA / "h200_run_m" / "results.json").read_text())
    finals = sorted(
        (r for r in doc["records"] if r["mode"] == "compile" and (r.get("runtime") or {}).get("stage") == "final"),
        key=lambda r: r["runtime"]["timing"]["median_us"],
    )
    fast = finals[0]["config_id"]
    nights = [
        _night(doc, 1, tmp_path, set()),
        _night(doc, 2, tmp_path, set()),
        _night(doc, 3, tmp_path, {fast}),  # one slow night, then back: a blip
        _night(doc, 4, tmp_path, set()),
        _night(doc, 5, tmp_path, set()),
        _night(doc, 6, tmp_path, set()),
    ]
    db = tmp_path / "history.sqlite"
    assert call_cli("history", "add", *map(str, nights[:3]), "--db", str(db)).returncode == 0
    assert call_cli("history", "add", *map(str, nights[3:]), "--db", str(db)).returncode == 0
    shown = call_cli("history", "show", "--db", str(db), "-k", fast)
    assert shown.returncode == 0 and "STEP" not in shown.stdout, shown.stdout  # the blip is not a step
    # nights 7 and 8 with the slower config's real timing in place of the fast one: a lasting shift
    more = [_night(doc, 7, tmp_path, {fast}), _night(doc, 8, tmp_path, {fast})]
    assert call_cli("history", "add", *map(str, more), "--db", str(db)).returncode == 0
    steps = call_cli("history", "show", "--db", str(db), "--steps-only")
    flagged = [line for line in steps.stdout.splitlines() if "STEP" in line]
    assert len(flagged) == 1 and fast in flagged[0] and "+" in flagged[0].split("STEP")[1], steps.stdout
    assert "1 step change(s)" in steps.stdout
    # report.html shows the trends, the stepped series first with its step
    rep = call_cli("report", str(more[-1]), "--history", str(db), "--out", str(tmp_path / "r" / "report.md"))
    assert rep.returncode == 0, rep.stderr
    page = (tmp_path / "r" / "report.html").read_text()
    trends = page.split("<h2>Trends across nights</h2>")[1].split("</table>")[0]
    first_row = trends.split("<tr>")[2]
    assert fast in first_row and "<svg" in first_row and "%</td>" in first_row and "+" in first_row


def test_step_rules_on_known_series() -> None:
    assert step_of([10, 10.1, 9.9, 10, 12, 12.1]) is not None  # held for two nights
    assert step_of([10, 10.1, 9.9, 12, 10, 10.1]) is None  # a blip
    assert step_of([10, 10.2, 9.8, 10.1, 10.3, 9.9]) is None  # noise within 5%
    assert step_of([10, 10, 12]) is None  # too few nights
    assert step_of([10, 10, 10, 8, 8]) < 0  # faster is a step too, the other way


def test_the_key_keeps_both_tritons_and_trends_stay_per_host(tmp_path: Path) -> None:
    """Two runs of one host started in the same second under two Tritons are both stored; a second host's nights
    form their own series, never one trend with the first's."""
    import gzip

    from harness.model.records import Record
    from harness.results import history

    doc = json.loads(gzip.decompress((DATA / "h200_gate" / "g2" / "results.json.gz").read_bytes()))
    records = [Record.from_dict(r) for r in doc["records"]]
    db = tmp_path / "h.sqlite"
    run = RunInfo.from_json({**doc["run"], "start": "2026-11-01T02:00:00+00:00"})
    n = history.add(db, run.updated(triton="3.6.0"), records)
    history.add(db, run.updated(triton="3.7.0"), records)
    history.add(db, run.updated(host="other-host", triton="3.6.0"), records)
    import sqlite3

    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM nights").fetchone()[0] == 3 * n
        assert {r[0] for r in con.execute("SELECT DISTINCT device FROM nights")} >= {"", "NVIDIA H200"}
    from harness.analysis.trends import trends
    from harness.render.terminal import trend_line

    found = trends(db, "winner")
    hosts = {(t.series, t.metric): set() for t in found}
    for t in found:
        hosts[(t.series, t.metric)].add(t.host)
    assert found and all(v == {doc["run"]["host"], "other-host"} for v in hosts.values())
    assert all(len(t.nights) == (2 if t.host == doc["run"]["host"] else 1) for t in found)
    assert "on NVIDIA H200" in trend_line(found[0])


def test_a_file_that_is_not_a_history_is_a_one_line_error(tmp_path: Path) -> None:
    import sqlite3

    run = str(DATA / "h200_gate" / "g2")
    cases = {
        "not_sqlite": tmp_path / "text.sqlite",
        "a_directory": tmp_path / "dir.sqlite",
        "other_schema": tmp_path / "other.sqlite",
        "missing": tmp_path / "missing.sqlite",
    }
    cases["not_sqlite"].write_text("this is not a database\n" * 100)
    cases["a_directory"].mkdir()
    with sqlite3.connect(cases["other_schema"]) as con:
        con.execute("CREATE TABLE nights (a TEXT)")
    for name, db in cases.items():
        for args in (("history", "show", "--db", str(db)), ("compare", run, run, "--history", str(db))):
            proc = run_cli(*args)
            err = proc.stderr.strip().splitlines()
            assert proc.returncode in (2, 3) and "Traceback" not in proc.stderr, (name, args, proc.stderr)
            assert err and str(db) in err[-1], (name, args, proc.stderr)
    add = call_cli("history", "add", run, "--db", str(cases["not_sqlite"]))
    assert add.returncode == 2 and "file is not a database" in add.stderr and "Traceback" not in add.stderr


def test_a_schema_1_file_is_read_and_carried_over(tmp_path: Path) -> None:
    import gzip
    import sqlite3

    from harness.model.records import Record
    from harness.results import history

    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as con:  # the layout before torch and device joined the key
        con.execute(
            "CREATE TABLE figures (night TEXT NOT NULL, host TEXT NOT NULL, triton TEXT NOT NULL, commit_id "
            "TEXT NOT NULL, series TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL, "
            "PRIMARY KEY (night, host, series, metric))"
        )
        con.execute("INSERT INTO figures VALUES ('2026-10-01', 'h', '3.5.1', 'c', 'old series', 'median_us', 1.5)")
    from harness.analysis.trends import trends

    assert [t.values for t in trends(db, "old series")] == [(1.5,)]
    doc = json.loads(gzip.decompress((DATA / "h200_gate" / "g2" / "results.json.gz").read_bytes()))
    history.add(db, RunInfo.from_json(doc["run"]), [Record.from_dict(r) for r in doc["records"]])
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT host, triton, torch, device FROM nights WHERE series = 'old series'").fetchall() == [
            ("h", "3.5.1", "", "")
        ]
