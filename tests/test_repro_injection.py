"""``harness repro`` writes a script people hand to others: nothing from a matrix or a results file becomes code.

The attack: a run whose kernel name, import variables, host, error text and config values hold Python that would
run if spliced into the script's text (a docstring closed by ``\"\"\"``, a literal ended by a quote, a line ended by
a newline, a non-finite float), then ``python3 x.py`` in a fresh interpreter. The script must parse, its docstring
and data must read back as the hostile text itself, and running it must reproduce the build and nothing else:
no planted file appears.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, run_cli, run_static, write_matrix

#: each one, pasted raw into a docstring, a string literal or a line, runs ``touch PWNED`` in the working directory
PAYLOADS = (
    '"""; import os; os.system("touch PWNED"); """',
    "'''; import os; os.system('touch PWNED'); '''",
    '\\"""; import os; os.system("touch PWNED"); x = """',
    "x\n__import__('os').system('touch PWNED')\n",
    "ends in a backslash \\",
)
#: what a matrix refuses (controls, bidi overrides) but an edited results file can still hold
CONTROLS = "\x1b[2J\x9b\x1b]0;title\x07\r\u202e\u2066 reversed, isolated"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real static run of vector_add under a hostile kernel name and hostile import variables."""
    where = tmp_path_factory.mktemp("hostile")
    name = PAYLOADS[0]
    env = {f"HOSTILE_{i}": p for i, p in enumerate(PAYLOADS)}
    matrix = write_matrix(
        where / "m.yaml",
        "name: hostile\ntargets: [h100]\nkernels:\n"
        + f"  {json.dumps(name)}:\n"
        + f"    source: {REPO / 'kernels' / 'vector_add.py'}:SPEC\n"
        + f"    import_env: {json.dumps(env)}\n"
        + "    dtypes: [fp32]\n    shapes: [{N: 4096}]\n    interpret: false\n"
        + "    configs: [{BLOCK: 1024, num_warps: 4}]\n",
    )
    run = where / "run"
    run_static(matrix, run)
    return run


def _plant(run: Path, into: Path) -> tuple[Path, str]:
    """A copy of ``run`` whose results also carry hostile text where a results file can: the host, the start, a
    config value, a shape field; the case id of its one build."""
    import shutil

    shutil.copytree(run, into)
    results = json.loads((into / "results.json").read_text())
    results["run"]["host"] = CONTROLS + PAYLOADS[1]
    results["run"]["start"] = PAYLOADS[3]
    for r in results["records"]:
        r["config"]["HOSTILE"] = PAYLOADS[2]
        r["shape"][PAYLOADS[0]] = 1  # a shape field the kernel never reads: it reaches the label, not the build
    (into / "results.json").write_text(json.dumps(results))
    (into / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results["records"]))
    case = next(r["case_id"] for r in results["records"] if r["mode"] == "compile")
    return into, case


def test_hostile_text_in_a_run_never_becomes_code_in_its_repro_script(hostile_run: Path, tmp_path: Path) -> None:
    results = json.loads((hostile_run / "results.json").read_text())
    build = next(r for r in results["records"] if r["mode"] == "compile")
    assert build["kernel"] == PAYLOADS[0] and build["status"] == "ok", build
    for run, case in ((hostile_run, build["case_id"]), _plant(hostile_run, tmp_path / "planted")):
        script = tmp_path / "repro.py"
        wrote = run_cli("repro", str(run), case, "--out", str(script))
        assert wrote.returncode == 0, wrote.stderr
        text = script.read_text()
        tree = ast.parse(text)  # it parses, whatever the names held
        doc = ast.get_docstring(tree, clean=False) or ""
        assert PAYLOADS[0] in doc  # the name is in the text, as text
        for node in tree.body:  # the module's statements are the script's own: no call spliced in at top level
            if isinstance(node, ast.Expr):
                assert isinstance(node.value, ast.Constant) or (
                    isinstance(node.value, ast.Call) and ast.unparse(node.value).startswith("os.environ.update(")
                ), ast.unparse(node)
        case_data = ast.literal_eval(next(
            n.value for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "CASE"
        ))  # fmt: skip
        assert {k: v for k, v in case_data["env"].items() if k.startswith("HOSTILE_")} == {
            f"HOSTILE_{i}": p for i, p in enumerate(PAYLOADS)
        }
        for ch in "\u202e\u2066\x1b\x9b\r":  # no control or bidi character is in the file itself: escapes only
            assert ch not in text
        done = subprocess.run([sys.executable, "-I", str(script)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)  # fmt: skip
        assert not (tmp_path / "PWNED").exists(), "the script ran code from the run's text"
        assert "reproduced" in done.stdout, done.stdout + done.stderr
        assert done.returncode == 0, done.stdout + done.stderr


def test_non_finite_and_odd_values_are_written_as_data() -> None:
    from harness.compiling.repro import data_literal, docstring_literal

    value = {"a": float("nan"), "b": [float("inf"), -float("inf")], "c": PAYLOADS[0], "d": None, "e": True}
    back = eval(data_literal(value), {"__builtins__": {"float": float}})  # noqa: S307 - the literal's own check
    assert back["b"] == [float("inf"), -float("inf")] and back["a"] != back["a"] and back["c"] == PAYLOADS[0]

    class Sly(str):
        def __repr__(self) -> str:
            return "__import__('os').system('touch PWNED')"

    assert "system" not in data_literal({"k": Sly("plain")})
    for text in PAYLOADS:
        assert ast.literal_eval(docstring_literal(text)) == text
