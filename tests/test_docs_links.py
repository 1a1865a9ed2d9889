"""Every link and every repository path in README, CHANGELOG and docs/ points at something that exists: a file, a
folder, or a heading of the page it names (GitHub's anchors). A renamed module or a moved section fails here
instead of leaving the reader a dead reference."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO

PAGES = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TOP = ("harness", "kernels", "matrices", "ci", "tests", "docs", "benchmarks", ".ci")
PATH = re.compile(r"`((?:" + "|".join(re.escape(t) for t in TOP) + r")/[^`\s]*)`")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but hyphens and spaces dropped, spaces as hyphens."""
    out = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def _dead_links(page: Path) -> list[str]:
    dead = []
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code is not prose: its brackets are calls
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            dead.append(f"{target} (no such file)")
        elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
            dead.append(f"{target} (no such heading)")
    return dead


def _dead_paths(page: Path) -> list[str]:
    dead = []
    for raw in PATH.findall(page.read_text()):
        if any(c in raw for c in "<>*{}$…"):
            continue  # a pattern or a placeholder, not a path
        path = re.split(r"::|:(?=[A-Za-z_\d])", raw)[0].rstrip(".,;")  # module.py:SPEC, test.py::name, file.py:12
        if not (REPO / path).exists():
            dead.append(path)
    return dead


def test_every_link_and_path_in_the_documentation_exists() -> None:
    dead = {page.name: _dead_links(page) + _dead_paths(page) for page in PAGES}
    assert {k: v for k, v in dead.items() if v} == {}


def test_the_check_finds_a_dead_link_and_a_dead_path(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nSee [there](nowhere.md), [here](#title), [bad](#untitled) and `harness/no_such.py`.\n")
    assert _dead_links(page) == ["nowhere.md (no such file)", "#untitled (no such heading)"]
    assert _dead_paths(page) == ["harness/no_such.py"]


def test_readme_is_a_front_door() -> None:
    """At most 250 lines, and no commit hash, run id or dated timing in it: those live in docs/performance.md."""
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert not re.findall(r"\b[0-9a-f]{7,40}\b", text), re.findall(r"\b[0-9a-f]{7,40}\b", text)
    assert not re.findall(r"\brun [A-Z]{1,2}\b", text)  # run ids of docs/performance.md (run BG, run AM ...)
    assert not re.findall(r"\b20\d\d-\d\d-\d\d\b", text)  # dates belong with the measurements
