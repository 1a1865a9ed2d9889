"""report.html in a real browser: Debian's headless Chromium opens the merged report of two Triton pins'
static runs (tests/data/static_triton36, static_triton39: real runs of tests/data/static_pins_matrix.yaml
with triton 3.6.0 and 3.9.0) and a device run from the H200 (tests/data/h200_run_m).

Two looks at the same page: a screenshot (it must be a real, non-blank picture of the page), and a copy
of the page with a measuring script appended, whose findings — the laid-out size of every table and
chart, and anything that reached ``console.error`` or ``window.onerror`` — Chromium's ``--dump-dom``
prints after the page has loaded. The report itself carries no script. .ci/run installs chromium.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from helpers import DATA, call_cli

pytestmark = pytest.mark.browser  # a headless Chromium renders the reports

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)

MEASURE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
const _err = console.error; console.error = (...a) => { window.__errors.push(a.join(' ')); _err(...a); };
window.addEventListener('load', () => {
  const box = el => { const r = el.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
  const out = {tables: [...document.querySelectorAll('table')].map(box),
               svgs: [...document.querySelectorAll('svg')].map(box),
               bars: document.querySelectorAll('svg rect').length,
               errors: window.__errors};
  const pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run does)")


def _browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            _chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _png_pixels(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct colours of an 8-bit RGB/RGBA PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    colours: set[bytes] = set()
    prev = bytearray(stride)
    for row in range(height):  # undo the per-row filters, sample every pixel's colour
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = prev[i], (prev[i - channels] if i >= channels else 0)
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        if row % 4 == 0:
            colours.update(bytes(line[i : i + 3]) for i in range(0, stride, channels * 4))
        prev = line
    return width, height, colours


@pytest.fixture(scope="module")
def merged_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("merged")
    proc = call_cli(
        "report",
        str(DATA / "static_triton39"),
        str(DATA / "static_triton36"),
        str(DATA / "h200_run_m"),
        "--out",
        str(out / "report.md"),
    )
    assert proc.returncode == 0, proc.stderr
    page = out / "report.html"
    text = page.read_text()
    assert "3.9.0" in text and "3.6.0" in text and "H200" in text  # both pins and the device run
    return page


def test_merged_report_renders_in_chromium_without_errors(merged_report: Path, tmp_path: Path) -> None:
    probe = tmp_path / "measured.html"
    probe.write_text(merged_report.read_text().replace("</body>", MEASURE + "</body>"))
    proc = _browse(probe, tmp_path / "profile1", "--dump-dom")
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    measured = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert measured["errors"] == []
    assert len(measured["tables"]) >= 3 and all(w > 100 and h > 20 for w, h in measured["tables"])
    assert measured["svgs"] and all(w >= 200 and h >= 40 for w, h in measured["svgs"])  # charts laid out, sized
    assert measured["bars"] >= 2
    # the page as shipped: Chromium's own log has no console error or failed load
    plain = _browse(merged_report, tmp_path / "profile2", "--dump-dom")
    assert "CONSOLE" not in plain.stderr and "ERR_" not in plain.stderr, plain.stderr[-2000:]


def test_screenshot_of_the_merged_report(merged_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _browse(merged_report, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2400")
    assert shot.is_file(), "chromium wrote no screenshot"
    width, height, colours = _png_pixels(shot)
    assert (width, height) == (1280, 2400)
    assert len(colours) > 20  # text, table rules and chart bars, not a blank page


def test_the_first_screen_is_the_answer(merged_report: Path, tmp_path: Path) -> None:
    """At 1280x800 the first screen shows the heatmap of kernels x targets: the colour of a cell where every config
    fits is among the screenshot's pixels, and the page puts the overview before the runs and the tables."""
    from harness.render.html_overview import _colour

    text = merged_report.read_text()
    assert text.index("<h2>At a glance</h2>") < text.index("<h2>Runs</h2>") < text.index("<h2>Portability</h2>")
    assert "<table class=heat>" in text and "Worst findings" in text
    shot = tmp_path / "first.png"
    _browse(merged_report, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,800")
    width, height, colours = _png_pixels(shot)
    assert (width, height) == (1280, 800)
    all_fit = bytes.fromhex(_colour({"fits": 1.0})[1:])
    assert all_fit in colours, "no all-fit heatmap cell on the first screen"


NIGHT = """<script>
window.addEventListener('load', () => {
  const top = el => el ? Math.round(el.getBoundingClientRect().top) : -1;
  const night = document.getElementById('night');
  const out = {night: top(night), heat: top(document.querySelector('table.heat')),
               height: night ? Math.round(night.getBoundingClientRect().height) : 0,
               title: night ? night.querySelector('h2').textContent : ''};
  const pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def test_a_night_with_a_baseline_opens_with_its_verdict(tmp_path: Path) -> None:
    """The 3.9 run judged against the 3.6 run as its baseline (what a Triton bump's night is): report.html's first
    section is the verdict, laid out above the heatmap, on the first screen, with the per-run lists."""
    out = tmp_path / "r"
    proc = call_cli("report", str(DATA / "static_triton39"), "--baseline", str(DATA / "static_triton36"),
                   "--against", "night 41", "--out", str(out / "report.md"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    page = out / "report.html"
    text = page.read_text()
    assert text.index("id=night") < text.index("<h2>At a glance</h2>")
    assert "<h2>Tonight against night 41: " in text and "static_triton39 <small>exit " in text
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", NIGHT + "</body>"))
    dom = _browse(probe, tmp_path / "profile", "--dump-dom", "--window-size=1280,800")
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stderr[-2000:]
    measured = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert 0 <= measured["night"] < 200 and measured["height"] > 40, measured  # at the top of the first screen
    assert measured["heat"] > measured["night"], measured
    assert measured["title"].startswith("Tonight against night 41: ")
    # a run with no namesake in the baseline is said to be new
    proc = call_cli("report", str(DATA / "static_triton39"), "--baseline", "-", "--out", str(tmp_path / "n" / "r.md"))
    assert proc.returncode == 0, proc.stderr
    assert "new: no run of that name in the baseline" in (tmp_path / "n" / "r.html").read_text()
    bad = call_cli("report", str(DATA / "static_triton39"), "--baseline", "-", "-", "--out", str(tmp_path / "x.md"))
    assert bad.returncode == 2 and "--baseline: 2 given for 1 run(s)" in bad.stderr
