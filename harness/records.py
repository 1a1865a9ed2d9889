"""Results: one record per (kernel, dtype, shape, target, config), and the run they came from.

``results.json`` carries a schema version, the run's provenance and the records.
Records are appended to ``records.jsonl`` the moment they exist and
``results.json`` is rewritten atomically at most once a second and at the end;
a run killed half-way keeps every finished record (``harness report`` reads the
JSONL when it holds more records than the JSON). Merging several runs keys records by
:meth:`Record.key` plus the host they ran on.
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import hiplinker, safe_files
from harness.naming import config_key, shape_id
from harness.results_schema import record_problem, run_problem

#: 2: AMD registers are the compiler's unified total, ``spill_bytes`` / ``occupancy_frac`` added, the
#: launch specialisation and the verdicts stored. 3: ``deciding_environment`` and ``incomplete`` verdicts, the
#: run's ``selected`` builds, ``duplicate_of`` by binary, sm_90's 1 KiB reserve as ``reserved_shared`` (no longer
#: in ``static_shared``), ``spill_bytes`` null where no log of the binary could be had, ``runtime.model`` instead
#: of shares of a peak. Older files are read (their figures as they were).
SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)


@dataclass
class Record:
    kernel: str
    dtype: str
    shape: dict[str, Any]
    target: str
    arch: str
    vendor: str
    triton: str
    config: dict[str, Any]
    config_id: str
    meta: dict[str, Any]             # the config's constexpr tunables (what the interpreter sees)
    origin: str                      # "nvidia" | "amd" | "matrix": which space the config came from
    mode: str                        # "compile" | "interpret" | "tune" (one per case run on a GPU)
    status: str                      # "ok" | "mismatch" | "error" | "crash" | "timeout"
    error: str = ""
    traceback: str = ""              # where an error came from: the worker's traceback and compiler output
    host: str = ""
    fits: bool | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    flags: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[str, dict[str, str]] = field(default_factory=dict)
    compile_s: float | None = None
    compile_cache: str | None = None         # "miss": compiled from source (cold); "hit": loaded from Triton's cache
    compile_stages_s: dict[str, float] = field(default_factory=dict)  # Triton's own time per lowering stage
    correctness: dict[str, Any] | None = None
    ignored_options: list[str] = field(default_factory=list)
    kernel_hash: str = ""
    runtime: dict[str, Any] | None = None
    launcher: str = ""                       # "prebuilt" when the compile also built Triton's launcher (GPU host)
    environment: str = "default"             # compile environment name (see harness/environments.py)
    deciding_environment: str = "default"    # the target's environment whose build decides its verdict
    env: dict[str, str] = field(default_factory=dict)   # the environment's variables
    specialisation: dict[str, Any] = field(default_factory=dict)  # per parameter: type, attrs, constexpr value
    assumptions: list[str] = field(default_factory=list)          # what the launch specialisation had to assume
    cache_key: str = ""              # Triton's compile hash (source, options, target, environment): its cache key
    duplicate_of: str = ""           # an earlier config of the case built into the same binary, launched alike
    case_id: str = ""                # the pytest item that produced it (what --resume skips)
    case_records: int = 0            # how many records that item produced: a resume trusts only complete cases
    expected_failure: str = ""       # the matrix's known-failure reason that covers this failed build
    known_failure_fixed: str = ""    # a known failure's reason that covers this build, which now passes
    autotune: dict[str, Any] = field(default_factory=dict)  # a decorated kernel: its layers, key values, list size
    captured: dict[str, Any] = field(default_factory=dict)  # an op's kernel: the op, where and how it was captured
    import_env: dict[str, str] = field(default_factory=dict)  # variables set before the kernel's module was imported

    @property
    def column(self) -> str:
        """Target plus environment: ``mi300x`` or ``mi300x@async-copy``."""
        return self.target if self.environment == "default" else f"{self.target}@{self.environment}"

    @property
    def shape_id(self) -> str:
        return shape_id(self.shape)

    def key(self) -> tuple[str, ...]:
        """The merge key: what was compiled, for which target, with which Triton."""
        return (self.kernel, self.dtype, json.dumps(self.shape, sort_keys=True), self.target, self.environment,
                config_key(self.config), self.triton, self.mode)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def _git_commit(repo: Path) -> str:
    """The commit of the harness's own checkout ('' where the harness is not the top of a git checkout: a copy
    without ``.git`` inside another repository must not record that repository's commit)."""
    git = shutil.which("git")
    if not git:
        return ""
    try:
        top = subprocess.run([git, "-C", str(repo), "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             timeout=5)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != repo.resolve():
            return ""
        out = subprocess.run([git, "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        # tracked files that differ from that commit: the run's code is not the commit's
        dirty = subprocess.run([git, "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    if out.returncode != 0:
        return ""
    return out.stdout.strip() + ("+modified" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def _installed_harness() -> str:
    """Provenance of a harness that is not a git checkout: its installed distribution's version."""
    from importlib import metadata

    try:
        return f"triton-portability-harness {metadata.version('triton-portability-harness')} (installed)"
    except metadata.PackageNotFoundError:
        return ""


def gpus_seen() -> list[str]:
    """GPUs visible to this host, from the vendor tools (no torch import, no GPU context)."""
    from harness.device import local_gpus

    return [f"{g['name']} ({g['arch']}{', ' + g['uuid'] if g['uuid'] else ''})" for g in local_gpus()]


def _version_of(module: str) -> str | None:
    from importlib import metadata

    dists = {"torch": ("torch",), "triton": ("triton", "pytorch-triton-rocm", "pytorch-triton"),
             "numpy": ("numpy",)}[module]
    for dist in dists:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def run_info(matrix_name: str, matrix_path: str, matrix_hash: str, installed_triton: str | None) -> dict[str, Any]:
    repo = Path(__file__).resolve().parent.parent
    return {"matrix": {"name": matrix_name, "path": matrix_path, "sha256": matrix_hash},
            "triton": installed_triton, "torch": _version_of("torch"), "numpy": _version_of("numpy"),
            "python": platform.python_version(), "host": socket.gethostname(), "platform": platform.platform(),
            "gpus": gpus_seen(), "commit": _git_commit(repo) or _installed_harness(), "argv": sys.argv,
            "start": datetime.now(timezone.utc).isoformat(timespec="seconds"), "end": None,
            **({"hip_lld": os.environ.get("TRITON_HIP_LLD_PATH", "")} if hiplinker.needs_external_lld(installed_triton)
               else {})}


BINARY_KINDS = ("cubin", "hsaco")


def launch_identity(r: Record) -> tuple[Any, ...] | None:
    """What the GPU would run for a build: the binary (sha256) and the launch parameters Triton passes with it
    (warps, dynamic shared bytes, CTAs per cluster, grid). None for a build without a binary."""
    kind = next((k for k in BINARY_KINDS if k in r.artifacts), None)
    if r.status != "ok" or kind is None or not r.artifacts[kind].get("sha256"):
        return None
    res = r.resources
    return (kind, r.artifacts[kind]["sha256"], res.get("num_warps"), res.get("shared"), res.get("num_ctas", 1),
            json.dumps(res.get("grid")))


def mark_duplicates(records: list[Record]) -> None:
    """Builds of one case and target that are one binary launched the same way point at the first of them.

    Options that change nothing (``num_stages`` on a kernel without a loop, an AMD option on NVIDIA, gfx950
    rewriting kpack 2 to 1) give another cache key but the same bytes: such a build is one config, launched
    and timed once (the GPU phase skips it) and counted once in every fit count.
    """
    first: dict[tuple[str, ...], str] = {}
    for r in records:
        ident = launch_identity(r)
        if ident is None:
            continue
        ident = (r.target, r.environment, *ident)
        if ident in first:
            r.duplicate_of = first[ident]
        else:
            first[ident] = r.config_id


def complete_cases(records: list[Record]) -> tuple[set[str], list[Record]]:
    """The case ids whose every record is present, and the records of those cases (for a resume).

    A case's records are written together, but a kill can still cut a batch: a case
    with fewer records than it produced (``case_records``) runs again.
    """
    counts: dict[str, int] = {}
    expected: dict[str, int] = {}
    for r in records:
        counts[r.case_id] = counts.get(r.case_id, 0) + 1
        expected[r.case_id] = r.case_records
    done = {c for c, n in counts.items() if c and expected[c] == n}
    return done, [r for r in records if r.case_id in done]


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Records of a ``records.jsonl``, and the line numbers that are not whole records (torn by a kill)."""
    good: list[dict[str, Any]] = []
    torn: list[int] = []
    safe_files.check_regular(path, "records file")
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):  # torn by a kill, or an integer over the digit limit
                torn.append(number)
                continue
            if isinstance(value, dict):
                good.append(value)
            else:
                torn.append(number)
    return good, torn


class ResultsFileError(Exception):
    pass


#: a results file larger than this is refused before it is read (a nightly with raw samples is tens of MiB)
MAX_RESULTS_BYTES = 1 << 30


def _read_doc(file: Path) -> Any:
    """A results file's JSON (gzip-compressed as archived), read bounded; every failure a ResultsFileError."""
    try:
        blob = safe_files.read_bytes(file, MAX_RESULTS_BYTES, "results file")
        if file.suffix == ".gz":
            with gzip.GzipFile(fileobj=io.BytesIO(blob)) as fh:
                blob = fh.read(MAX_RESULTS_BYTES + 1)
            if len(blob) > MAX_RESULTS_BYTES:
                raise ResultsFileError(f"{file}: decompresses to more than {MAX_RESULTS_BYTES >> 20} MiB")
        return json.loads(blob)
    except safe_files.InputFileError as exc:
        raise ResultsFileError(str(exc)) from None
    except (OSError, EOFError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        # ValueError: not JSON, or an integer over Python's digit limit
        raise ResultsFileError(f"{file}: cannot read results: {str(exc).split(';')[0][:300]}") from None


def load_results(path: Path) -> tuple[dict[str, Any], list[Record]]:
    """Read ``results.json`` (a file or a run directory holding one; ``results.json.gz`` as archived)."""
    file = path / "results.json" if path.is_dir() else path
    if path.is_dir() and not file.is_file() and (path / "results.json.gz").is_file():
        file = path / "results.json.gz"
    doc = _read_doc(file)
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if type(version) is not int or version not in READABLE_SCHEMAS:
        raise ResultsFileError(f"{file}: schema_version {version!r} is not one this harness reads "
                               f"({', '.join(map(str, READABLE_SCHEMAS))})")
    problem = run_problem(doc.get("run", {}))
    if problem:
        raise ResultsFileError(f"{file}: {problem}")
    run = doc.get("run", {})
    raw = doc.get("records", [])
    if not isinstance(raw, list):
        raise ResultsFileError(f"{file}: field 'records' must be a list, got {type(raw).__name__}")
    jsonl = file.parent / "records.jsonl"
    if jsonl.exists():  # a FIFO or a device in its place is refused, not read
        try:
            lines, torn = read_jsonl(jsonl)
        except (OSError, safe_files.InputFileError) as exc:
            raise ResultsFileError(f"{jsonl}: cannot read records: {getattr(exc, 'strerror', None) or exc}") from None
        if torn:
            run.setdefault("read_warnings", []).append(
                f"{jsonl}: skipped {len(torn)} line(s) that are not whole records (line {', '.join(map(str, torn[:5]))}"
                f"{' ...' if len(torn) > 5 else ''}): the run was killed while writing")
        if len(lines) > len(raw):  # the run was killed between two rewrites of results.json
            raw = lines
    try:
        if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
            raise TypeError("records must be a list of objects")
        for i, r in enumerate(raw):
            problem = record_problem(r, Record)
            if problem:
                raise ResultsFileError(f"{file}: record {i} ({str(r.get('kernel'))[:40]} {str(r.get('target'))[:20]} "
                                       f"{str(r.get('config_id'))[:60]}): {problem}")
        records = [Record.from_dict(r) for r in raw]
    except TypeError as exc:
        raise ResultsFileError(f"{file}: a record lacks required fields: {exc}") from None
    for r in records:
        r.host = r.host or run.get("host", "")
    return run, records
