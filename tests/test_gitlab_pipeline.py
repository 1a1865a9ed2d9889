"""The GitLab nightly run by a GitLab CI implementation: gitlab-ci-local (ci/test_tools.sh installs it) with its shell
executor runs ``ci/gitlab/nightly.gitlab-ci.yml`` through ``tests/data/gitlab/nightly-local.gitlab-ci.yml``, which
includes it unchanged and narrows it to one Triton pin, two static shards of a one-kernel matrix and a GPU job that
stands in with a recorded H200 run. Its jobs' scripts, artifacts between jobs, ``needs``, ``when: always``, the
merge's exit code and the baseline store's pulls and pushes (to a small stand-in of GitLab's generic package
registry, served here) all run as the pipeline has them.

Two nights in order: the first (started as such), then one whose GPU runner is offline (the pipeline fails on the
merge's exit 3; the static merge passes). In that second pipeline, as one would on GitLab, the GPU job is retried
once its runner is back and the manual accept job run: that night becomes the baseline, with the reason.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from helpers import REPO
from test_workflows import KERNEL, MATRIX

GITLAB_CI_LOCAL = REPO / "ci" / ".tools" / "gitlab-ci-local" / "node_modules" / ".bin" / "gitlab-ci-local"
OVERLAY = "tests/data/gitlab/nightly-local.gitlab-ci.yml"
PLAN = "tests/data/gitlab/nightly-plan.yaml"
TOKEN = "job-token-of-the-test"


@dataclass
class Registry:
    """GitLab's generic package registry, as the merge jobs use it: GET and PUT of one file by path."""

    root: Path
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)

    def file(self, package: str, name: str) -> Path:
        return self.root / package / name

    def pointer(self, package: str) -> dict[str, object]:
        path = self.file(package, "baseline.json")
        return json.loads(path.read_text()) if path.is_file() else {}


def _serve(registry: Registry) -> http.server.ThreadingHTTPServer:
    prefix = re.compile(r"^/api/v4/projects/7/packages/generic/(?P<package>[\w.-]+)/0/(?P<name>[\w.-]+)$")

    class Handler(http.server.BaseHTTPRequestHandler):
        def _target(self) -> Path | None:
            registry.requests.append((self.command, self.path, self.headers.get("JOB-TOKEN")))
            m = prefix.match(self.path)
            if m is None or self.headers.get("JOB-TOKEN") != TOKEN:
                self.send_response(403 if m else 404)
                self.end_headers()
                return None
            return registry.file(m["package"], m["name"])

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self._target()
            if path is None:
                return
            if not path.is_file():
                self.send_response(404)
                self.end_headers()
                return
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_PUT(self) -> None:  # noqa: N802
            path = self._target()
            if path is None:
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(201)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@dataclass(frozen=True)
class Night:
    """One pipeline: gitlab-ci-local's exit code and output, each job's PASS/FAIL, the merge jobs' verdicts."""

    code: int
    output: str
    jobs: dict[str, str]
    verdicts: dict[str, dict[str, object]]
    summaries: dict[str, list[str]]
    logs: dict[str, str]


def _project(root: Path) -> Path:
    """The pipeline's files and a one-kernel matrix (two shapes: one per shard), committed in a repository of their
    own: gitlab-ci-local gives each job a copy of the tracked files, as a runner's checkout would."""
    project = root / "project"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", "ci", "tests/data/gitlab",
                            "tests/data/h200_run_m"], cwd=REPO, capture_output=True, text=True, check=True)  # fmt: skip
    for name in files.stdout.splitlines():
        if (REPO / name).is_file():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, project / name)
    (project / "m").mkdir()
    (project / "m" / "scale.py").write_text(KERNEL.replace("BODY", "x * 2.0"))
    (project / "m" / "m.yaml").write_text(MATRIX.replace("      - {N: 4096}", "      - {N: 4096}\n      - {N: 1000}"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the nightly's files"]):
        subprocess.run([*git, *args], cwd=project, check=True, capture_output=True)
    return project


def _night(project: Path, port: int, cache: Path, *args: str) -> Night:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "TRITON_", "GCL_", "CI_"))}
    variables = {
        "CI_PIPELINE_SOURCE": "schedule",  # the pipeline's workflow rules: a scheduled night
        "HARNESS_VENV": sys.prefix,  # this suite's environment: its Triton is the plan's one pin
        "NIGHTLY_MATRIX": "m/m.yaml",
        "NIGHTLY_PLAN": PLAN,
        "CI_API_V4_URL": f"http://127.0.0.1:{port}/api/v4",
        "CI_PROJECT_ID": "7",
        "CI_JOB_TOKEN": TOKEN,
        "GITLAB_USER_LOGIN": "ci-test",
        "HARNESS_CACHE_DIR": str(cache),
    }
    argv = [str(GITLAB_CI_LOCAL), "--file", OVERLAY, "--force-shell-executor", "--shell-isolation", "--no-color",
            "--home", str(project.parent / "gcl-home"), "--ignore-predefined-vars",
            "CI_PIPELINE_SOURCE,CI_API_V4_URL,CI_PROJECT_ID,CI_JOB_TOKEN,GITLAB_USER_LOGIN"]  # fmt: skip
    for key, value in variables.items():
        argv += ["--variable", f"{key}={value}"]
    proc = subprocess.run([*argv, *args], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    jobs = dict((m[2], m[1]) for m in re.finditer(r"^ (PASS|FAIL|WARN) +(\S.*?) *$", output, re.M))
    state = project / ".gitlab-ci-local"
    verdicts, summaries = {}, {}
    for job in ("merge", "merge-static"):
        merged = state / "artifacts" / job / "merged"
        if (merged / "verdict.json").is_file():
            verdicts[job] = json.loads((merged / "verdict.json").read_text())
            summaries[job] = (merged / "summary.md").read_text().splitlines()
        shutil.rmtree(state / "artifacts" / job, ignore_errors=True)  # the next night's merge writes its own
    logs = {p.stem: p.read_text() for p in (state / "output").glob("*.log")}
    return Night(proc.returncode, output, jobs, verdicts, summaries, logs)


@dataclass(frozen=True)
class Nights:
    first: Night
    offline: Night
    retried: Night
    accepted: Night
    registry: Registry


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    if not GITLAB_CI_LOCAL.is_file():
        pytest.skip("gitlab-ci-local is not installed (ci/test_tools.sh says why: npm missing or failed)")
    if shutil.which("rsync") is None:
        pytest.skip("gitlab-ci-local needs rsync, which is not installed (ci/test_tools.sh says why)")
    root = tmp_path_factory.mktemp("gitlab")
    project = _project(root)
    registry = Registry(root / "registry")
    server = _serve(registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        first = _night(project, port, root / "cache", "--variable", "FIRST_NIGHT=--first-night")
        offline = _night(project, port, root / "cache", "--variable", "STAND_IN_OFFLINE=h200 1/1")
        # the same pipeline's jobs run one at a time: gitlab-ci-local keeps its id and the artifacts of its jobs
        retried = _night(project, port, root / "cache", "gpu: [h200,1/1]")
        accepted = _night(project, port, root / "cache", "accept", "--variable",
                          "ACCEPT_REASON=the kernel's new shape is intended")  # fmt: skip
        yield Nights(first, offline, retried, accepted, registry)
    finally:
        server.shutdown()


JOBS = ["static: [36,1/2]", "static: [36,2/2]", "gpu: [h200,1/1]", "merge-static", "merge"]


def test_the_first_night_passes_every_job_and_starts_both_baselines(nights: Nights) -> None:
    night = nights.first
    assert night.code == 0, night.output[-4000:]
    assert night.jobs == dict.fromkeys(JOBS, "PASS"), night.output[-4000:]
    assert "stand-in with a recorded run" in night.logs["gpuOiBbh200LA1Lw1XQ"]  # named as such in its own log
    for job in ("merge", "merge-static"):
        verdict = nights.first.verdicts[job]
        assert verdict["exit"] == 0 and verdict["kept"] and verdict["missing"] == [], verdict
        assert "**First night** (started as such): nothing to compare with." in nights.first.summaries[job]
    # every store call carried the job's token; the baselines are this night's
    assert nights.registry.requests and all(token == TOKEN for _, _, token in nights.registry.requests)
    first_id = nights.first.verdicts["merge"]["night"]
    assert nights.registry.file("nightly-baseline-all", f"night-{first_id}.tar.gz").is_file()


def test_a_night_whose_gpu_runner_is_offline_fails_on_the_merges_exit_3(nights: Nights) -> None:
    night, first_id = nights.offline, nights.first.verdicts["merge"]["night"]
    assert night.code != 0, night.output[-4000:]
    assert night.jobs == {**dict.fromkeys(JOBS, "PASS"), "gpu: [h200,1/1]": "FAIL", "merge": "FAIL"}, night.jobs
    merge = night.verdicts["merge"]
    assert merge["exit"] == 3 and merge["missing"] == ["`gpu-h200` (shard 1/1)"] and not merge["kept"], merge
    assert (
        night.summaries["merge"][0] == f"# Nightly {merge['night']}: the night is incomplete or not comparable (exit 3)"
    )
    assert "**Night incomplete:** missing `gpu-h200` (shard 1/1). Not kept as the baseline." in night.summaries["merge"]
    assert "FAIL 3" in night.output  # the merge job's own exit code, not the store push's after it
    # the static night was whole: judged against the first and kept; the all-targets baseline is still the first
    static = night.verdicts["merge-static"]
    assert static["exit"] == 0 and static["kept"], static
    assert any(line.startswith(f"Judged against night {first_id}") for line in night.summaries["merge-static"])


def test_the_retried_gpu_job_and_the_manual_accept_make_that_night_the_baseline_with_the_reason(nights: Nights) -> None:
    assert nights.retried.code == 0 and nights.retried.jobs == {"gpu: [h200,1/1]": "PASS"}, nights.retried.output
    night = nights.accepted
    assert night.code == 0 and night.jobs == {"accept": "PASS"}, night.output[-4000:]
    pointer = nights.registry.pointer("nightly-baseline-all")
    first_id, offline_id = nights.first.verdicts["merge"]["night"], nights.offline.verdicts["merge"]["night"]
    entry = pointer["log"][-1]  # type: ignore[index]
    assert entry["how"] == "accepted" and entry["by"] == "ci-test", entry
    assert entry["reason"] == "the kernel's new shape is intended" and entry["replaced"] == first_id, entry
    assert pointer["night"] == entry["night"] == offline_id != first_id  # the second pipeline's night, now whole
    assert nights.registry.file("nightly-baseline-all", f"night-{offline_id}.tar.gz").is_file()


def test_the_local_pipeline_runs_its_plans_jobs() -> None:
    """The overlay's matrices are its plan's, as the full pipeline's are ci/nightly-plan.yaml's."""
    overlay = yaml.safe_load((REPO / OVERLAY).read_text())
    plan = yaml.safe_load((REPO / PLAN).read_text())
    (static,) = overlay["static"]["parallel"]["matrix"]
    (gpu,) = overlay["gpu"]["parallel"]["matrix"]
    n, m = plan["static"]["shards"], plan["gpu"]["shards"]
    assert static == {"TRITON": plan["static"]["pins"], "HARNESS_SHARD": [f"{i}/{n}" for i in range(1, n + 1)]}
    assert gpu == {"MODEL": plan["gpu"]["models"], "HARNESS_SHARD": [f"{i}/{m}" for i in range(1, m + 1)]}
    assert overlay["include"] == [{"local": "ci/gitlab/nightly.gitlab-ci.yml"}]
