"""``harness compiled FILE``: TorchInductor's kernels for each ``compiled:`` entry, captured under each target's
virtual device, every candidate config built as Inductor builds it and judged against the target's limits;
compiled.json and compiled.md in ``--out``, the kernel graphs and what differs by vendor on the terminal.

Exit 0; 2 for a file that does not check out or an entry that could not be captured on some target (graph break,
hang, crash: one line each, the other entries kept and written); 1 when a build fails or exceeds a limit.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.cli.common import EXIT_FAILED, EXIT_INPUT, EXIT_OK, err

TOP = {"name", "targets", "compiled"}


def cmd_compiled(args: argparse.Namespace) -> int:
    from harness.analysis.inductor_graphs import adaptations
    from harness.compiling.compiled_build import isolated
    from harness.intake import face, inductor_face
    from harness.intake.compiled import TRACEBACKS
    from harness.intake.compiled_probe import remembered
    from harness.intake.inductor_face import POLICIES
    from harness.matrix import compiled_entries
    from harness.model import targets as catalogue
    from harness.render import compiled as render
    from harness.support import yamlpos
    from harness.support.checking import Checker

    file = Path(args.file)
    try:
        doc = yamlpos.load(yamlpos.decode(file.read_bytes()))
    except OSError as exc:
        err(f"{file}: cannot read: {exc.strerror}")
        return EXIT_INPUT
    except yamlpos.YamlError as exc:
        err(f"{file}:{exc.line}: {exc}")
        return EXIT_INPUT
    chk = Checker(str(file), doc)
    data = doc.value if isinstance(doc.value, dict) else {}
    for key in sorted(set(data) - TOP):
        chk.add((key,), f"unknown key {key!r} in a compiled matrix (known: {', '.join(sorted(TOP))})")
    names = args.targets.split(",") if args.targets else data.get("targets")
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
    if chk.problems:
        return EXIT_INPUT
    try:
        inductor_face.check_torch(metadata.version("torch"))
    except (inductor_face.InductorFaceError, metadata.PackageNotFoundError) as exc:
        err(f"{file}: {exc}" if isinstance(exc, inductor_face.InductorFaceError) else f"{file}: torch is not installed")
        return EXIT_INPUT
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ[TRACEBACKS] = str(out.absolute() / "tracebacks")  # a failed capture's whole traceback, named in its line
    entries: dict[str, dict[str, Any]] = {r.name: {} for r in requests}
    failed = built_badly = False
    done: dict[tuple[str, str, str], dict[str, Any]] = {}
    for target_name in names:
        target = known[target_name]
        for request, outcome in zip(requests, remembered(requests, target_name)):
            if outcome.why:
                err(outcome.why)
                failed = True
            rows: list[dict[str, Any]] = []
            for shape, dtype, table in outcome.tables:
                if isinstance(table, str):
                    err(f"{file}: compiled entry {request.name} on {target_name} for {shape} {dtype}: {table}")
                    failed = True
                    rows.append({"shape": shape, "dtype": dtype, "table": table})
                    continue
                builds = []
                for kernel in table["kernels"]:
                    for config in kernel["configs"]:
                        key = (target_name, kernel["source_sha256"], json.dumps(config, sort_keys=True))
                        if key not in done:  # a kernel Inductor wrote alike for two shapes is built once
                            done[key] = _build_json(
                                isolated(kernel["source"], kernel["name"], config, target, out / "artifacts")
                            )
                        built_badly |= not done[key]["fits"]
                        builds.append(done[key])
                rows.append({"shape": shape, "dtype": dtype, "table": table, "builds": builds})
            entries[request.name][target_name] = {"why": outcome.why, "tables": rows}
    result = {"name": data.get("name"), "torch": metadata.version("torch"), "targets": names, "entries": entries}
    (out / "compiled.json").write_text(json.dumps(result, indent=1))
    found = adaptations(result)
    title = str(data.get("name") or file.stem)
    (out / "compiled.md").write_text(render.markdown(title, POLICIES, found))
    (out / "compiled.html").write_text(render.html(title, POLICIES, found))
    for line in render.terminal(found):
        print(line)
    if failed:
        return EXIT_INPUT
    return EXIT_FAILED if built_badly else EXIT_OK


def _build_json(made: Any) -> dict[str, Any]:
    doc = dataclasses.asdict(made)
    doc["flags"] = [f.to_json() for f in made.flags]
    doc["fits"] = made.fits
    return doc
