"""Where the nightly's baseline and history live between nights: a folder the CI job syncs with storage that
nothing evicts (GitHub: the assets of one release; GitLab: the project's generic package registry;
``ci/nightly_store_sync.sh``). Not the Actions cache: it evicts entries unused for 7 days or past 10 GB, and a
re-run keeps the run id its key is made of.

The folder holds:

- ``baseline.json``: the night that is the baseline, the one it replaced (a re-run of tonight's merge, after
  tonight was kept, compares with that one), and the log of every change of baseline with how (``passed``:
  nothing got worse; ``accepted``: made the baseline on purpose, with a reason and who);
- ``night-<id>.tar.gz``: those two nights' runs, without build artifacts (the comparison reads records);
- ``history.sqlite``: ``harness history``'s file.
"""

from __future__ import annotations

import datetime
import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Pointer:
    night: str | None = None
    previous: str | None = None
    log: tuple[dict[str, str], ...] = field(default=())


class Store:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def history(self) -> Path:
        return self.root / "history.sqlite"

    def pointer(self) -> Pointer:
        path = self.root / "baseline.json"
        if not path.is_file():
            return Pointer()
        data = json.loads(path.read_text())
        return Pointer(data.get("night"), data.get("previous"), tuple(data.get("log", ())))

    def night_dir(self, night: str) -> Path | None:
        """The stored runs of ``night``, unpacked into a temporary folder (None when the store lacks them)."""
        tarball = self.root / f"night-{night}.tar.gz"
        if not tarball.is_file():
            return None
        out = Path(tempfile.mkdtemp(prefix=f"night-{night}-"))
        with tarfile.open(tarball) as tar:
            try:
                tar.extractall(out, filter="data")  # no links out, no absolute paths
            except TypeError:  # a Python before the tar filters (3.10.11, 3.11.3): the store's own tarballs
                tar.extractall(out)
        return out

    def keep(self, night: str, collected: Path, how: str, reason: str = "", by: str = "") -> Pointer:
        """Make ``night`` (its runs in ``collected``) the baseline; the one it replaces stays for re-runs, older
        nights' runs are removed. The log records how."""
        old = self.pointer()
        with tarfile.open(self.root / f"night-{night}.tar.gz", "w:gz") as tar:
            for path in sorted(collected.rglob("*")):
                if path.is_file() and "artifacts" not in path.relative_to(collected).parts:
                    tar.add(path, arcname=str(path.relative_to(collected)))
        previous = old.previous if old.night == night else old.night
        entry = {
            "night": night,
            "how": how,
            "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        entry.update({k: v for k, v in (("reason", reason), ("by", by), ("replaced", old.night or "")) if v})
        new = Pointer(night, previous, (*old.log, entry))
        (self.root / "baseline.json").write_text(
            json.dumps({"night": new.night, "previous": new.previous, "log": list(new.log)}, indent=1) + "\n"
        )
        for tarball in self.root.glob("night-*.tar.gz"):
            if tarball.name not in {f"night-{n}.tar.gz" for n in (new.night, new.previous) if n}:
                tarball.unlink()
        return new


def describe(entry: dict[str, str]) -> str:
    """One log entry as the summary says it."""
    if entry.get("how") == "accepted":
        who = f" by {entry['by']}" if entry.get("by") else ""
        return f"night {entry['night']}, accepted on purpose{who} ({entry['at']}): {entry.get('reason', '')}"
    return f"night {entry['night']}, kept because nothing got worse ({entry['at']})"


def cleanup(paths: list[Path]) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
