"""The smaller faults a hostile user found, each written as the input or action that showed it.

- ``--out`` (and every path argument) of a 300-character name was a ``File name too long`` traceback;
- ``harness history add`` stored a run that was still being written, or had been killed, as a complete night;
- ``HARNESS_IMPORT_TIMEOUT_S=nan`` (or 0.5, or 0) silently meant one second;
- a spec tunable that is no parameter of the kernel went into every config id while Triton never saw it;
- Ctrl-C in the first second of ``harness compare`` was a ``KeyboardInterrupt`` traceback; where it landed inside
  ``from X import Y`` (CPython 3.11 turns it into a ``TypeError`` or an ``ImportError`` there), a ``TypeError``
  traceback on CI, or the claim that scipy was not installed;
- README said ``schema_version: 2`` while the files say 3;
- CI's run on a full shared disk ended in 201 errors, each ``No space left on device``, minutes in.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import DATA, REPO, call_cli, run_cli, run_static, small_matrix, write_matrix

LONG = "a" * 300


def _one_line_refusal(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    said = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 2 and "Traceback" not in said, said[-2000:]
    last = said.splitlines()[-1]
    assert last.startswith("harness: ") and all(n in last for n in needles), last
    return last


def test_a_path_too_long_to_look_up_is_a_one_line_refusal(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("long"))
    long = str(tmp_path / LONG)
    for args in (
        ("run", str(matrix), "--out", long, "--static-only"),
        ("run", str(matrix), "--resume", long),
        ("report", long),
        ("compare", long, str(tmp_path)),
        ("history", "add", long, "--db", str(tmp_path / "h.sqlite")),
        ("repro", long, "case"),
    ):
        _one_line_refusal(run_cli(*args), "File name too long")


def test_history_add_refuses_a_run_still_being_written_or_killed(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("night"))
    run = tmp_path / "run"
    run_static(matrix, run)
    doc = json.loads((run / "results.json").read_text())
    for what, change in (("being written", {"end": None}), ("killed", {"interrupted": True})):
        cut = tmp_path / what.replace(" ", "_")
        cut.mkdir()
        (cut / "results.json").write_text(json.dumps({**doc, "run": {**doc["run"], **change}}))
        db = tmp_path / f"{cut.name}.sqlite"
        last = _one_line_refusal(call_cli("history", "add", str(cut), "--db", str(db)), "--resume")
        assert "interrupted or is still being written" in last
        compare = call_cli("compare", str(run), str(cut))  # the same judgement compare makes
        assert compare.returncode == 3 and "interrupted" in compare.stdout + compare.stderr
    assert call_cli("history", "add", str(run), "--db", str(tmp_path / "whole.sqlite")).returncode == 0


@pytest.mark.parametrize("value", ["nan", "0.5", "0", "-3", "inf", "soon", "1e9"])
def test_a_timeout_setting_that_is_no_number_of_seconds_is_refused(tmp_path: Path, value: str) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("timeouts"))
    for name in ("HARNESS_IMPORT_TIMEOUT_S", "HARNESS_CALLBACK_TIMEOUT_S"):
        _one_line_refusal(call_cli("validate", str(matrix), env={name: value}), name, repr(value))
    assert call_cli("validate", str(matrix), env={"HARNESS_IMPORT_TIMEOUT_S": "1"}).returncode == 0


def test_a_tunable_the_kernel_does_not_take_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "stray_tunable.py"
    spec.write_text(
        (DATA / "bad_callbacks.py").read_text().split("def hang")[0]
        + "SPEC = KernelSpec(name='stray', fn=copy_kernel, dims=('N',), dtypes=('fp32',),\n"
        + "                  tunables=('BLOCK', 'BLOCK_N'), nvidia_configs=({'BLOCK': 16, 'BLOCK_N': 8},),\n"
        + "                  amd_configs=({'BLOCK': 16, 'BLOCK_N': 8},), runtime_args=_args,\n"
        + "                  grid=lambda s, c: (1,))\n"
    )
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"name: stray\ntargets: [h100]\nkernels:\n  stray:\n    source: {spec}:SPEC\n    dtypes: [fp32]\n"
        "    shapes: [{N: 64}]\n    interpret: false\n",
    )
    proc = call_cli("validate", str(matrix))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "m.yaml:5:" in said and "'BLOCK_N' are not parameters" in said, said
    assert "x_ptr, y_ptr, n, BLOCK" in said  # what the kernel does take, from Triton's own JITFunction


def test_ctrl_c_in_the_first_second_of_a_command_is_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for delay in (0.05, 0.15, 0.3, 0.5, 0.8):
        proc = subprocess.Popen([sys.executable, "-m", "harness", "compare", str(tmp_path), str(tmp_path)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, errs = proc.communicate(timeout=60)
        # a signal that lands while Python itself is still starting (its site import) or locating the module,
        # before any line of the harness runs, is Python's traceback, not the harness's: no frame in harness/
        before_us = "KeyboardInterrupt" in errs and str(REPO / "harness") not in errs
        assert "Traceback" not in out + errs or before_us, (delay, errs[-2000:])
        # killed by the signal before Python installed its handler, Python's own start-up failing, interrupted
        # (3), or the input already refused (2)
        assert proc.returncode in (-signal.SIGINT, 3, 2) or (before_us and proc.returncode == 1), (delay, errs)


def _ctrl_c_as_cpython_may_deliver_it(args: object) -> int:
    """What CPython 3.11 does with an interrupt inside ``from X import Y`` (python/cpython#112660): another
    exception in its place. The interrupt itself is real: the process receives SIGINT."""
    try:
        signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt:
        raise TypeError("expected a message argument") from None
    return 0


def _fails_on_its_own(args: object) -> int:
    raise TypeError("a defect of the command, no interrupt")


@pytest.mark.parametrize("handler", ["_ctrl_c_as_cpython_may_deliver_it", "_fails_on_its_own"])
def test_an_interrupt_in_another_exceptions_form_is_still_one_line(
    handler: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness.cli as cli

    monkeypatch.setitem(cli.HANDLERS, "targets", (__name__, handler))
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a command started from a shell
    try:
        if handler == "_fails_on_its_own":  # a real defect stays a traceback: only an interrupt is reworded
            with pytest.raises(TypeError, match="a defect of the command"):
                cli.main(["targets"])
            return
        assert cli.main(["targets"]) == 3
        assert capsys.readouterr().err == "harness: interrupted\n"
    finally:
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # main() put Python's back
        signal.signal(signal.SIGINT, before)


THROUGH_EXEC = """import runpy, sys

def command(args):
    exec("import signal; signal.raise_signal(signal.SIGINT)")  # as scipy imports numpy: through exec() of a string
    return 0

if __name__ == "__main__":
    import harness.cli

    harness.cli.HANDLERS["targets"] = ("through_exec", "command")
    sys.argv[1:] = ["targets"]
    runpy.run_module("harness", run_name="__main__")
"""


def test_ctrl_c_that_passed_through_exec_exits_3_under_python_m(tmp_path: Path) -> None:
    """CPython ends a ``python -m`` process by SIGINT once an interrupt has passed through ``exec()``, even one the
    program handled: ``python -m harness`` exits with the status main() returned (3.10, 3.11; 3.12 on keep that mark out
    of reach)."""
    if sys.version_info >= (3, 12):
        pytest.skip("CPython 3.12 on keep the exec() mark inside the runtime's state: the harness cannot clear it")
    (tmp_path / "through_exec.py").write_text(THROUGH_EXEC)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "through_exec"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (3, "harness: interrupted\n")


def test_compare_without_scipy_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from harness.cli import main

    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 3
    assert "harness compare needs scipy" in capsys.readouterr().err


def test_readme_names_the_schema_version_the_files_have() -> None:
    from harness.model.records import SCHEMA_VERSION

    assert f"`schema_version: {SCHEMA_VERSION}`" in (REPO / "docs" / "usage.md").read_text()


FAKE_DF = """#!/usr/bin/env bash
# df -P[m] PATH as a file system with FAKE_* room says it (a stand-in: the disk's state is what is tested)
path="${@: -1}"
case "$path" in
  "$FAKE_TMP"*) dev=/dev/tmpfs; free=$FAKE_TMP_FREE ;;
  *) dev=$FAKE_HERE_DEV; free=$FAKE_HERE_FREE ;;
esac
echo "Filesystem 1M-blocks Used Available Capacity Mounted on"
echo "$dev 100000 1 $free 1% /x"
"""


@pytest.mark.parametrize(
    ("here_dev", "here_free", "tmp_free", "said"),
    [
        ("/dev/tmpfs", 2600, 2600, "has 2600 MB free; the environment and the suite take about 2700 MB"),
        ("/dev/disk", 9000, 300, "has 300 MB free; the suite's temporary files take about 500 MB"),
    ],
    ids=["checkout-and-tmp-on-one-disk", "tmp-on-its-own"],
)
def test_the_preparation_refuses_a_disk_without_room_in_one_line(
    tmp_path: Path, here_dev: str, here_free: int, tmp_free: int, said: str
) -> None:
    """``ci/prepare_tests.sh`` (README's test command, ``.ci/run``) where the disk has less room than it and the
    suite take: one line naming the folder and the figures, exit 1, and nothing installed."""
    checkout = tmp_path / "checkout"
    (checkout / "ci").mkdir(parents=True)
    (checkout / "ci" / "prepare_tests.sh").write_text((REPO / "ci" / "prepare_tests.sh").read_text())
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "df").write_text(FAKE_DF)
    (tmp_path / "bin" / "df").chmod(0o755)
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", TMPDIR=str(tmp_path / "tmp"),
               FAKE_TMP=str(tmp_path / "tmp"), FAKE_TMP_FREE=str(tmp_free), FAKE_HERE_DEV=here_dev,
               FAKE_HERE_FREE=str(here_free))  # fmt: skip
    proc = subprocess.run(["bash", str(checkout / "ci" / "prepare_tests.sh")], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("prepare_tests: ") and said in proc.stderr
    assert sorted(p.name for p in checkout.iterdir()) == ["ci"]
