"""Two ``harness compiled`` outputs compared, the question a team asks before bumping torch (each torch fixes the
Triton and the Inductor that write its kernels): per compiled entry, target, shape and dtype, the kernels added,
removed and changed (source, configs), and what got worse (an entry no longer captured, a candidate that built and
fit and now fails or exceeds a limit). Works on compiled.json as written, or on two runs' records put in its form
(:func:`doc_of_records`); decides, never renders.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Mapping

from harness.model.records import Record

Key = tuple[str, str, str, str]  # entry, target, shape, dtype


@dataclass(frozen=True)
class KernelChange:
    """One kernel of one entry, target, shape and dtype that is new, gone or different."""

    key: Key
    kernel: str
    kind: str  # "added" | "removed" | "changed"
    detail: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledComparison:
    base_torch: str
    new_torch: str
    changes: tuple[KernelChange, ...]
    worse: tuple[str, ...]
    only_in_base: tuple[str, ...]  # entries, shapes or targets the new file does not ask for (not worse)
    only_in_new: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        return 2 if self.worse else 0


def _label(key: Key) -> str:
    return " ".join(key)


def _tables(doc: Mapping[str, Any]) -> dict[Key, Mapping[str, Any]]:
    out: dict[Key, Mapping[str, Any]] = {}
    for entry, by_target in doc.get("entries", {}).items():
        for target, captured in by_target.items():
            for row in captured.get("tables", []):
                shape = "x".join(f"{k}{v}" for k, v in row["shape"].items())
                out[(entry, target, shape, row["dtype"])] = row
    return out


def _torch(doc: Mapping[str, Any]) -> str:
    return str(doc.get("torch") or "unknown")


def compare(base: Mapping[str, Any], new: Mapping[str, Any]) -> CompiledComparison:
    old_rows, new_rows = _tables(base), _tables(new)
    changes: list[KernelChange] = []
    worse: list[str] = []
    for key in sorted(old_rows.keys() & new_rows.keys()):
        before, after = old_rows[key]["table"], new_rows[key]["table"]
        if isinstance(after, str):
            if not isinstance(before, str):
                worse.append(f"{_label(key)}: captured before, now: {after}")
            continue
        if isinstance(before, str):
            continue  # captured now, not before: better, the changes below have no base
        changes += _kernel_changes(key, before["kernels"], after["kernels"])
        worse += _worse_builds(key, old_rows[key].get("builds", []), new_rows[key].get("builds", []))
    return CompiledComparison(
        _torch(base),
        _torch(new),
        tuple(changes),
        tuple(worse),
        tuple(_label(k) for k in sorted(old_rows.keys() - new_rows.keys())),
        tuple(_label(k) for k in sorted(new_rows.keys() - old_rows.keys())),
    )


def _kernel_changes(key: Key, before: list[Mapping[str, Any]], after: list[Mapping[str, Any]]) -> list[KernelChange]:
    old, new = {k["name"]: k for k in before}, {k["name"]: k for k in after}
    out = [KernelChange(key, n, "removed") for n in old if n not in new]
    out += [KernelChange(key, n, "added", (f"{len(new[n]['configs'])} configs",)) for n in new if n not in old]
    for name in (n for n in new if n in old):
        detail = _config_detail(old[name]["configs"], new[name]["configs"])
        if old[name]["source_sha256"] != new[name]["source_sha256"]:
            detail += _source_detail(old[name]["source"], new[name]["source"])
        if detail:
            out.append(KernelChange(key, name, "changed", tuple(detail)))
    order_before = [k["name"] for k in before if k["name"] in new]
    order_after = [k["name"] for k in after if k["name"] in old]
    if order_before != order_after:
        out.append(KernelChange(key, "(launch order)", "changed", (f"{order_before} -> {order_after}",)))
    return out


def _config_detail(before: list[Mapping[str, Any]], after: list[Mapping[str, Any]]) -> list[str]:
    def keyed(configs: list[Mapping[str, Any]]) -> list[str]:
        return [json.dumps(c, sort_keys=True) for c in configs]

    gone = [c for c in keyed(before) if c not in keyed(after)]
    came = [c for c in keyed(after) if c not in keyed(before)]
    return [f"config removed {c}" for c in gone] + [f"config added {c}" for c in came]


def _source_detail(before: str, after: str) -> list[str]:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    body = [ln for ln in diff if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    added, removed = sum(ln.startswith("+") for ln in body), sum(ln.startswith("-") for ln in body)
    shown = [ln for ln in body if ln.startswith("-")][:4] + [ln for ln in body if ln.startswith("+")][:4]
    return [f"source: +{added} -{removed} lines"] + [f"  {ln[:160]}" for ln in shown]


def _worse_builds(key: Key, before: list[Mapping[str, Any]], after: list[Mapping[str, Any]]) -> list[str]:
    def index(builds: list[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
        return {(b["kernel"], json.dumps(b["config"], sort_keys=True)): b for b in builds}

    old, new = index(before), index(after)
    out = []
    for k in sorted(old.keys() & new.keys()):
        if old[k]["fits"] and not new[k]["fits"]:
            why = new[k]["error"] or ", ".join(
                f"{f['resource']} {f['value']} over {f['limit']}" for f in new[k]["flags"]
            )
            out.append(f"{_label(key)}: {k[0]} {k[1]} built and fit before, now: {why}")
    return out


def doc_of_records(records: Iterable[Record], source: Callable[[Record], str]) -> dict[str, Any]:
    """A run's compiled kernels in compiled.json's form (what :func:`compare` reads): per entry, target, shape and
    dtype the kernel graph with each kernel's configs and source (``source``: the module text a record's
    ``inductor`` artifact holds, "" when the run directory lost it), and each build's verdict."""
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    torch = ""
    for r in records:
        if r.inductor.entry is None or r.mode != "compile" or r.environment != "default":
            continue
        torch = torch or str(r.inductor.torch or "")
        key = (r.inductor.entry, r.target, json.dumps(r.shape), r.dtype)
        row = rows.setdefault(key, {"shape": dict(r.shape), "dtype": r.dtype, "graph": list(r.inductor.graph or ()),
                                    "kernels": {}, "builds": []})  # fmt: skip
        name = str(r.inductor.kernel)
        if name not in row["kernels"]:
            row["kernels"][name] = {"name": name, "configs": [], "source_sha256": r.inductor.source_sha256,
                                    "source": source(r)}  # fmt: skip
        row["kernels"][name]["configs"].append(dict(r.config))
        flags = [{"resource": f.resource, "value": f.value, "limit": f.limit} for f in r.flags if f.severity == "error"]
        row["builds"].append({"kernel": name, "config": dict(r.config), "fits": r.status == "ok" and not flags,
                              "error": r.error if r.status != "ok" else "", "flags": flags})  # fmt: skip
    entries: dict[str, dict[str, Any]] = {}
    for (entry, target, _, _), row in rows.items():
        kernels = [row["kernels"][n] for n in row["graph"] if n in row["kernels"]]
        table = {"shape": row["shape"], "dtype": row["dtype"], "table": {"kernels": kernels}, "builds": row["builds"]}
        entries.setdefault(entry, {}).setdefault(target, {"tables": []})["tables"].append(table)
    return {"torch": torch, "entries": entries}
