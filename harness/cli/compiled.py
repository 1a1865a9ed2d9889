"""``harness compiled FILE``: TorchInductor's kernels for each ``compiled:`` entry, captured under each target's
virtual device, and where the kernel graphs differ by vendor.

It is a run, and a view over that run's records: every entry is captured on every target first (a graph break, a
hang or a crash is one line and that entry is left out, the others kept), the entries that captured are written to
``--out/compiled.yaml`` and run as ``harness run --static-only`` runs any matrix (each config of each kernel built
with Inductor's own compile options, judged against every limit, recorded; the run's summary gives each graph and
what differs), then compiled.md and compiled.html say, from the records alone, each entry's kernel graph per target,
what differs and the findings.

Exit 0; 2 for a file that does not check out or an entry that could not be captured on some target; 1 when a build
fails or exceeds a limit.
"""

from __future__ import annotations

import argparse
import os
from importlib import metadata
from pathlib import Path

from harness.analysis.gate import FindingCounts
from harness.cli.common import EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, err
from harness.intake.inductor.compiled_probe import Request

TOP = {"name", "targets", "compiled"}


def cmd_compiled(args: argparse.Namespace) -> int:
    from harness.intake.inductor import inductor_face
    from harness.results import rundir

    file = Path(args.file)
    checked = _checked_file(file, args.targets)
    if checked is None:
        return EXIT_INPUT
    name, targets, requests = checked
    try:
        inductor_face.check_torch(metadata.version("torch"))
    except (inductor_face.InductorFaceError, metadata.PackageNotFoundError) as exc:
        err(f"{file}: {exc}" if isinstance(exc, inductor_face.InductorFaceError) else f"{file}: torch is not installed")
        return EXIT_INPUT
    out = Path(args.out).absolute()
    try:  # checked, locked and marked before a capture runs user code or a byte is written there
        held = rundir.hold(out, force=True)
    except rundir.RunDirError as exc:
        err(str(exc))
        return EXIT_INPUT
    try:
        return _held_compiled(args, out, name, targets, requests, file)
    finally:
        held.release()


def _held_compiled(
    args: argparse.Namespace, out: Path, name: str, targets: list[str], requests: list[Request], file: Path
) -> int:
    """The captures, the run and the view, ``out`` held by this command."""
    from harness.intake.inductor.compiled import TRACEBACKS
    from harness.results import rundir

    os.environ[TRACEBACKS] = str(out / rundir.TRACEBACKS_DIR)  # a failed capture's whole traceback, named in its line
    captured, left_out = _captured(file, requests, targets)
    if not captured:
        return EXIT_INPUT
    _write_matrix(out / rundir.COMPILED_MATRIX, name, targets, captured)
    from harness.cli.parser import build_parser
    from harness.cli.run import cmd_run

    run_args = build_parser().parse_args(
        ["run", str(out / rundir.COMPILED_MATRIX), "--out", str(out), "--static-only", "--force", "-n", args.n]
    )
    run_args.pytest_args = []
    run_args.last_line = False  # one last line, this command's: its exit code is not the run's alone
    ran = cmd_run(run_args)
    try:
        viewed = _view(out, name, left_out)
    except OSError as exc:  # a full disk, a folder made read-only under the run: said in one line
        err(f"cannot write compiled.md or compiled.html in {out}: {exc.strerror or exc}")
        return EXIT_INTERNAL
    if ran not in (EXIT_OK, EXIT_FAILED) or viewed is None:
        return ran  # refused or stopped: its own line said why
    built_badly, counts = viewed
    code = EXIT_FAILED if built_badly or ran == EXIT_FAILED else EXIT_OK
    if len(captured) < len(requests):
        left = len(requests) - len(captured)
        print(f"harness: {left} of {len(requests)} compiled entries not captured (said above), left out")
        code = EXIT_INPUT
    elif built_badly:
        print("harness: a compiled kernel's config failed to build or exceeds a limit (compiled.md)")
    from harness.render.terminal import findings_line

    print(findings_line(counts, (), (), code), flush=True)
    return code


def _checked_file(file: Path, targets: str | None) -> tuple[str, list[str], list[Request]] | None:
    """The file's name, targets and entries, each problem printed as ``file:line: message`` (None after any)."""
    from harness.intake.virtual_device import face
    from harness.matrix import compiled_entries
    from harness.model import targets as catalogue
    from harness.support import yamlpos
    from harness.support.checking import Checker

    try:
        doc = yamlpos.load(yamlpos.decode(file.read_bytes()))
    except OSError as exc:
        err(f"{file}: cannot read: {exc.strerror}")
        return None
    except yamlpos.YamlError as exc:
        err(f"{file}:{exc.line}: {exc}")
        return None
    chk = Checker(str(file), doc)
    data = doc.value if isinstance(doc.value, dict) else {}
    for key in sorted(set(data) - TOP):
        chk.add((key,), f"unknown key {key!r} in a compiled matrix (known: {', '.join(sorted(TOP))})")
    names = targets.split(",") if targets else data.get("targets")
    known = catalogue.catalogue()
    if not isinstance(names, list) or not names or any(t not in known for t in names):
        chk.add(("targets",), f"targets is a non-empty list of {', '.join(known)}, got {names!r}")
        names = []
    requests = compiled_entries.requests(chk, data.get("compiled"), file.resolve().parent)
    refused = face.refusal(names, "compiled:")
    if refused:
        chk.add(("targets",), refused)
    for problem in chk.problems:
        err(str(problem))
    return None if chk.problems else (str(data.get("name") or file.stem), list(names), requests)


def _captured(file: Path, requests: list[Request], targets: list[str]) -> tuple[list[Request], list[str]]:
    """The entries captured on every target at every shape and dtype (remembered on disk, so the run reads the same
    captures), and the line of each failure (naming the entry, target, shape and dtype), each also said here."""
    from harness.matrix.compiled_entries import captures

    _, failures = captures(requests, targets)
    said = [failure.said if failure.shape_at is None else f"{file}: {failure.said}" for failure in failures]
    for line in said:
        err(line)
    failed = {f.entry for f in failures}
    return [r for r in requests if r.name not in failed], said


def _write_matrix(path: Path, name: str, targets: list[str], requests: list[Request]) -> None:
    """The run matrix of these entries, their references already absolute: the same run again is
    ``harness run`` of this file."""
    import yaml

    entries = {}
    for r in requests:
        entry: dict[str, object] = {"fn": r.ref, "inputs": r.inputs, "shapes": [dict(s) for s in r.shapes],
                                    "dtypes": list(r.dtypes)}  # fmt: skip
        entry.update({k: v for k, v in (("factory", r.factory), ("dynamic", r.dynamic)) if v})
        entry.update({"mode": r.mode} if r.mode else {})
        entry.update({"options": dict(r.options)} if r.options else {})
        entries[r.name] = entry
    text = yaml.safe_dump({"name": name, "targets": targets, "compiled": entries}, sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _view(out: Path, name: str, left_out: list[str]) -> tuple[bool, FindingCounts] | None:
    """compiled.md and compiled.html from the run's records (its terminal summary already gave each graph and what
    differs); whether any build failed or exceeds a limit, and the configs by finding kind (None: no records)."""
    from harness.analysis.inductor_graphs import of_records
    from harness.model.inductor_policies import POLICIES
    from harness.render import compiled as render
    from harness.results.store import ResultsFileError, load_results
    from harness.support.safe_files import write_atomic

    try:
        info, records = load_results(out / "results.json")
    except (OSError, ResultsFileError):
        return None  # the run was stopped before it wrote: its own lines said so
    found = of_records(records)
    page = render.Page(name, POLICIES, found, info.unfinished, tuple(left_out))
    write_atomic(out / "compiled.md", render.markdown(page))
    write_atomic(out / "compiled.html", render.html(page))
    # the path on a line of its own: what an 80-column terminal has room for
    print(f"harness: each target's kernel graph and what differs:\n  {out / 'compiled.md'}", flush=True)
    from harness.analysis import gate
    from harness.analysis.rows import build_rows

    bad = any(r.status != "ok" or any(f.severity == "error" for f in r.flags) for r in records)
    return bad, gate.count(build_rows(records))
