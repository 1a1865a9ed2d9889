"""What an install would download, from pip's own resolution: ``pip install --dry-run --report`` against the index
given (plain PyPI by default: ``--isolated``, no local wheels), each file's size from its index's HTTP headers.

    python ci/download_sizes.py [--index-url URL] REQUIREMENT... [-c CONSTRAINTS]

Prints one line per file and the total; docs/performance.md keeps the figures per CI job.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path


def sizes(pip_args: list[str]) -> list[tuple[str, str, int]]:
    argv = [sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed", "-q",
            "--disable-pip-version-check", "--report", "-", *pip_args]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    out = []
    for item in json.loads(proc.stdout)["install"]:
        url = item["download_info"]["url"]
        if url.startswith("file:"):
            path = Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))
            if path.is_file():  # a wheel from --find-links: its own size
                out.append((item["metadata"]["name"], item["metadata"]["version"], path.stat().st_size))
            continue  # else the project itself (-e .)
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as resp:
            size = int(resp.headers.get("Content-Length", 0))
        out.append((item["metadata"]["name"], item["metadata"]["version"], size))
    return out


def main() -> int:
    rows = sizes(sys.argv[1:])
    for name, version, size in sorted(rows, key=lambda r: -r[2]):
        print(f"{size / 1e6:9.1f} MB  {name} {version}")
    print(f"{sum(r[2] for r in rows) / 1e6:9.1f} MB  total, {len(rows)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
