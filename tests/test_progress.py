"""The status line of ``harness run``: what it counts, how wide it gets, how often it writes, and what a real run
prints through it on a terminal (a pty) and into a log (a pipe); and ``harness list``, which names the cases first."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from harness.model.payloads import LimitFlag
from harness.model.records import Record
from harness.model.run_info import Selection
from harness.model.runtime import Phases, Runtime
from harness.pytest_plugin.progress import LOG_STEPS, WIDTH, Progress

ROOT = Path(__file__).resolve().parents[1]
HARNESS = [sys.executable, "-m", "harness"]


def _build(target: str, environment: str = "default", mode: str = "compile") -> Record:
    return Record(
        kernel="k",
        dtype="fp16",
        shape={"N": 1},
        target=target,
        arch="sm_90",
        vendor="nvidia",
        triton="3.6.0",
        config={},
        config_id="c",
        meta={},
        origin="nvidia",
        mode=mode,
        status="ok",
        environment=environment,
    )


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_kernels_verdict_is_said_once_its_selected_builds_are_in() -> None:
    out: list[str] = []
    p = Progress(write=out.append, tty=True, clock=_Clock(), width=80)
    configs = ({"B": 1}, {"B": 2})
    p.start(3, [Selection(kernel="k", target="h100", environment="default", configs=configs)])
    over = LimitFlag(resource="shared", value=2e5, limit=232448.0, severity="error")
    first = dataclasses.replace(_build("h100"), config={"B": 1}, config_id="B1", fits=True)
    second = dataclasses.replace(_build("h100"), config={"B": 2}, config_id="B2", fits=False, flags=[over])
    p.records([first])
    assert not any("k  h100" in line for line in out)  # one of its two builds: no verdict yet
    p.records([second])
    said = [line for line in out if "k  h100" in line]
    assert said == ["\r\x1b[Kharness: k  h100 1 fit, 1 exceed\n"]  # its own line; the status line is drawn under it
    assert out[-1].startswith("\r\x1b[Kharness: 0/3 cases")


def test_the_line_counts_builds_per_column_and_estimates_what_is_left() -> None:
    out: list[str] = []
    clock = _Clock()
    p = Progress(write=out.append, tty=False, clock=clock)
    selected = [
        Selection(target="h100", environment="default", configs=({"B": 1}, {"B": 2})),
        Selection(target="mi300x", environment="async-copy", configs=({"B": 1},)),
    ]
    p.start(4, selected)
    assert out == ["harness: 0/4 cases · 0s · builds h100 0/2 mi300x@async-copy 0/1\n"]
    clock.now = 10.0
    tuned = dataclasses.replace(
        _build("h100", mode="tune"), runtime=Runtime(phases_s=Phases(configs=2.0, baselines=0.5, sustained=0.75))
    )
    p.records([_build("h100"), _build("h100"), tuned])
    p.case_done("k[h100]", failed=False)
    # two of the three builds in 10 s: 5 s left (by the builds, not the cases); the GPU case from its tune record
    assert out[-1] == "harness: 1/4 cases · 10s, ~5s left · builds h100 2/2 mi300x@async-copy 0/1 · gpu 1 done\n"
    clock.now = 75.0
    p.records([_build("mi300x", "async-copy")])
    p.case_done("k[mi300x]", failed=True)
    # every build in, half the cases: what is left is estimated by the cases
    assert out[-1].startswith("harness: 2/4 cases · 1m15s, ~1m15s left · builds") and "· 1 failed" in out[-1]
    # where the time went: case time by kind as the reports gave it, the builds compiled or taken from the cache
    p.timed("builds", 50.0)
    p.timed("interpreter", 7.5)
    p.timed("builds", 30.0)
    assert p.breakdown() == [
        "harness: 2 cases in 1m15s · case time builds 1m20s, interpreter 7s",
        "harness GPU: 1 cases held it 3s (configs 2s, baselines 0s, sustained 0s)",
        "  per case: median configs 2.0s, baselines 0.5s, sustained 0.8s; baselines <= configs in 1/1",
    ]
    # the longest figures still fit the width
    p.gpu_cases = [(10.5, 10.5, 10.5)] * 520
    p.gpu_done = 520
    assert all(len(line) <= WIDTH and not line.endswith("…") for line in p.breakdown())


def test_a_log_gets_a_line_per_tenth_of_the_cases_and_no_line_is_wider_than_the_limit() -> None:
    out: list[str] = []
    p = Progress(write=out.append, tty=False, clock=_Clock())
    many = [Selection(target=f"target{i}", environment=f"environment-{i}", configs=({},)) for i in range(12)]
    p.start(500, many)
    for i in range(500):
        p.case_started(f"case{i}")
        p.case_done(f"case{i}", failed=False)
    assert len(out) == 1 + LOG_STEPS  # the start, then one per tenth
    # twelve columns do not fit: the builds are summed, the clock is never cut
    assert all(len(line.rstrip("\n")) <= WIDTH and "…" not in line for line in out)
    assert out[-1] == "harness: 500/500 cases · 0s · builds 0/12\n"


def test_a_terminal_line_is_redrawn_in_place_at_most_a_few_times_a_second() -> None:
    out: list[str] = []
    clock = _Clock()
    p = Progress(write=out.append, tty=True, clock=clock, width=60)
    p.start(100, [])
    assert len(out) == 1  # drawn as soon as the cases are known
    for i in range(50):  # fifty cases within 0.1 s: one redraw at most
        clock.now += 0.002
        p.case_done(f"case{i}", failed=False)
    assert len(out) == 1
    clock.now += 1.0
    p.case_started("matmul[fp16-M4096xN4096xK4096-h100-triton3.6.0]")
    assert len(out) == 2 and out[-1].startswith("\r\x1b[K") and "\n" not in out[-1]
    assert len(out[-1]) - len("\r\x1b[K") <= 60 and "now matmul[" in out[-1]
    p.finish()
    assert out[-1].endswith("\n")


def _run_vector_add(tmp_path: Path, tty: bool, columns: int = 100) -> str:
    return _session(tmp_path, tty, columns)[0]


def _kernels_only(tmp_path: Path) -> Path:
    """The default matrix without its ``compiled:`` entry: a run selecting vector_add would still capture it (its
    cases' names come from the capture) under empty caches, about 10 CPU-seconds a run that these tests of the
    progress lines do not look at (tests/test_smoke_matrix.py runs the whole default matrix)."""
    import yaml

    doc = yaml.safe_load((ROOT / "matrices" / "smoke.yaml").read_text())
    doc.pop("compiled", None)
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return Path("smoke.yaml")  # the commands run in tmp_path: a line naming it is as short as the default's


def _session(
    tmp_path: Path, tty: bool, columns: int = 100, k: str = "vector_add"
) -> tuple[str, list[tuple[float, bytes]]]:
    """``harness run`` of the default matrix's vector_add (or the cases ``k`` selects), its caches empty: what it
    printed, and on a terminal (a pty of ``columns``) each chunk with the seconds since the command started."""
    argv = [*HARNESS, "run", str(_kernels_only(tmp_path)), "-k", k, "--out", str(tmp_path / "run")]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "TRITON_CACHE_DIR": str(tmp_path / "tc")}
    if not tty:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return proc.stdout, []
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, columns, 0, 0))
    attrs = termios.tcgetattr(follower)
    attrs[1] &= ~(termios.OCRNL | termios.ONLCR)  # the bytes as written: a carriage return stays one
    termios.tcsetattr(follower, termios.TCSANOW, attrs)
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=follower, stderr=follower, env=env, cwd=tmp_path)
    os.close(follower)
    chunks: list[tuple[float, bytes]] = []
    deadline = start + 600
    while time.monotonic() < deadline:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the pty
            break
        if not data:
            break
        chunks.append((time.monotonic() - start, data))
    assert proc.wait(timeout=60) == 0
    os.close(leader)
    return b"".join(c for _, c in chunks).decode(errors="replace"), chunks


def test_a_run_into_a_log_says_its_progress_in_lines_and_no_dots(tmp_path: Path) -> None:
    """Also: ``harness list`` with the same ``-k`` names exactly the cases the run (under xdist) ran, and writes no
    run directory."""
    listed = subprocess.run(
        [*HARNESS, "list", str(_kernels_only(tmp_path)), "-k", "vector_add"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert listed.returncode == 0 and listed.stderr.strip() == "harness: 3 case(s) selected by -k 'vector_add'"
    assert not (tmp_path / "runs").exists()
    out = _run_vector_add(tmp_path, tty=False)
    ran = {json.loads(line)["case_id"] for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()}
    assert sorted(listed.stdout.split()) == sorted(ran)
    lines = out.splitlines()
    progress = [line for line in lines if line.startswith("harness: ") and " cases ·" in line]
    assert re.match(r"harness: 0/3 cases · \d+s · builds h100 0/5 mi300x 0/5$", progress[0])  # no sweep for it
    assert re.match(r"harness: 3/3 cases · \d+s · builds h100 5/5 mi300x 5/5$", progress[-1])
    assert all(len(line) <= WIDTH for line in progress)
    assert not any(set(line) <= {".", "s"} and line for line in lines)  # no row of pytest dots
    assert "bringing up nodes" not in out  # xdist's status line is the harness's own line here
    # the kernel's verdict line as soon as its builds are in, before the run ends (the summary's line, the same words)
    verdict = next(i for i, line in enumerate(lines) if line.startswith("harness: vector_add  h100 "))
    said = lines[verdict] + " · " + lines[verdict + 1].strip()  # wrapped at its separator, not cut
    assert verdict < lines.index(progress[-1]) and len(lines[verdict]) <= WIDTH and "…" not in said
    summary = lines[lines.index(progress[-1]) :]  # the summary wraps its kernel lines too, at the same separator
    whole = [ln.strip() + (" · " + summary[i + 1].strip() if summary[i + 1].startswith("      ") else "")
             for i, ln in enumerate(summary[:-1])]  # fmt: skip
    assert said.removeprefix("harness: ") in whole
    assert any(line.startswith("harness: 3 cases in ") and "case time builds" in line for line in lines)


STATUS = re.compile(
    r"harness: (?:reading \S+|collecting the cases|\d+/\d+ cases) · \d+(?:m\d\d)?s(?:, ~\d+(?:m\d\d)?s left)?(?: · |$)"
)


@pytest.mark.parametrize("columns", [80, 100])
def test_a_terminal_session_shows_life_from_its_first_second_and_keeps_its_clock_whole(
    tmp_path: Path, columns: int
) -> None:
    """Cold caches, a pty of 80 and of 100 columns: the first output within 2 s of the command's start, a change on
    the screen at least every 5 s until it ends, every status line within the width with its clock and estimate
    whole, and the lines it ends with no wider than the terminal (a skipped case's reason too, wrapped)."""
    # with the default run's one skip (moe_gemm's fp8 interpreter case), whose reason is a long line
    out, chunks = _session(tmp_path, tty=True, columns=columns, k="vector_add or (moe_gemm and fp8 and interpret)")
    times = [t for t, _ in chunks]
    assert times[0] <= 2.0, times[:3]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert max(gaps) <= 5.0, (max(gaps), times)
    drawn = [part.split("\n")[0].split("\r")[0] for part in out.split("\r\x1b[K")[1:]]
    status = [d for d in drawn if re.match(r"harness: (?:\d+/\d+ cases|reading |collecting )", d)]
    assert status and all(len(d) <= columns - 1 and STATUS.match(d) for d in status), status
    assert any(re.match(r"harness: 4/4 cases · \d+s · builds h100 5/5", d) for d in status), status
    assert "harness: 1 case(s) skipped: moe_gemm does not list fp8" in out and "SKIPPED [" not in out
    tail = out.rsplit("harness: results in", 1)[1].splitlines()[1:]  # the breakdown and the run's last line
    assert tail[-1].startswith("harness: ") and "· exit 0" in tail[-1]
    assert all(len(line) <= columns for line in tail if line.startswith("harness")), tail
    # every line the terminal shows (colours aside, each redraw's last state) within its width: paths stand alone
    shown = [re.sub(r"\x1b\[[0-9;]*m", "", part.split("\r")[-1]) for part in out.replace("\x1b[K", "").split("\n")]
    # (a path alone on its line is as long as the folder it names: the one line no width can shorten)
    wide = [line for line in shown if len(line) > columns and not re.fullmatch(r"\s+(?:out )?/\S+", line)]
    assert not wide, wide
    assert not [line for line in shown if line.endswith("…")]  # wrapped, never cut


def test_the_static_benchmark_runs_cold_then_warm_from_its_own_caches(tmp_path: Path) -> None:
    """``benchmarks/run_cost.py static``: the first run compiles everything (its caches start empty, the user's are not
    used), the second takes every build from the cache the first filled; each says where its time went. The default
    matrix's vector_add alone: its compiled entry would be captured under both faces whatever ``-k`` selects (20 CPU-s
    of this test's 28 s wall)."""
    import yaml

    smoke = yaml.safe_load((ROOT / "matrices" / "smoke.yaml").read_text())
    alone = {k: v for k, v in smoke.items() if k not in ("kernels", "compiled")}
    alone["kernels"] = {"vector_add": smoke["kernels"]["vector_add"]}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(alone))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_cost.py"), "static", str(tmp_path / "m.yaml"), "-n", "0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    cold, warm = (line for line in proc.stdout.splitlines() if line.startswith("  harness: "))
    # warm: every build taken from the harness's result cache the cold run filled (nothing goes to Triton)
    assert cold.endswith("compiles 10 cold") and warm.endswith("compiles 10 reused"), proc.stdout
    assert proc.stdout.startswith("cold: ") and "\nwarm: " in proc.stdout


def test_the_clock_moves_on_a_terminal_and_a_quiet_log_gets_a_line_a_minute() -> None:
    """The ticker's side of the line (harness.support.ticker calls ``tick`` every second): a terminal's line is
    redrawn once a second has passed since it was drawn, whatever the cases do; a log's only after a quiet minute."""
    from harness.support.ticker import Ticker

    out: list[str] = []
    clock = _Clock()
    p = Progress(write=out.append, tty=True, clock=clock, width=80)
    p.tick()
    assert out == ["\r\x1b[Kharness: collecting the cases · 0s"]  # a line from the session's start
    p.start(10, [])
    clock.now = 0.5
    p.tick()
    assert len(out) == 2  # drawn at the start, half a second ago: not yet
    clock.now = 61.0
    p.tick()
    assert out[-1] == "\r\x1b[Kharness: 0/10 cases · 1m01s"
    log: list[str] = []
    q = Progress(write=log.append, tty=False, clock=clock)
    q.start(10, [])
    clock.now += 30
    q.tick()
    assert len(log) == 1
    clock.now += 31
    q.tick()
    assert len(log) == 2 and log[-1] == "harness: 0/10 cases · 1m01s\n"
    calls: list[int] = []

    def tick() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("a racing read")  # skipped: the ticker goes on
        if len(calls) == 4:
            raise OSError("the terminal is gone")  # the clock stops, the run does not

    ticker = Ticker(tick, interval=0.01).start()
    deadline = time.monotonic() + 5
    while len(calls) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    ticker.stop()
    assert len(calls) == 4
