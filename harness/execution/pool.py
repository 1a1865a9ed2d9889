"""Long-lived worker processes that isolate compiles and interpreter runs.

Each pytest process holds at most one worker per kind ("compile", "interpret").
A worker serves request after request, so the interpreter start-up and the
Triton import are paid once; only a worker that died (SIGABRT in the compiler,
say) or overran its timeout is killed and replaced, and only that request's
record carries the ``crash`` / ``timeout`` status.

A worker runs user code (a kernel module imported, a spec's callbacks called), so it carries a tag
(:data:`harness.support.lifeline.TAG_ENV`): once it has gone, or is ended, every process its user code left behind
(in a session of its own too) is ended with it, and a worker that exits while such a process holds its output open
is seen to have exited, not waited for until its case's limit.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.model.environments import DEFAULT_ENV, Environment, worker_env
from harness.model.jobs import Job, to_wire
from harness.model.replies import Reply
from harness.model.runtime import GpuSlot
from harness.support import lifeline, zygote_client

#: a worker's process: started here, or forked by a zygote
Child = subprocess.Popen[str] | zygote_client.ZygoteChild


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class Worker:
    """One child process speaking the JSON-lines protocol of :mod:`harness.execution.worker_main`."""

    def __init__(self, kind: str, env: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.env = dict(os.environ if env is None else env)
        self.proc: Child | None = None
        self.log = tempfile.TemporaryFile(mode="w+b", prefix=f"harness-{kind}-")
        self.scratch: str | None = None  # the child's HARNESS_SCRATCH: removed once that child is gone
        self.tag: str | None = None  # the child's lifeline tag: what its user code left is ended with it
        self.started = 0
        self._busy = threading.Lock()  # one request at a time, whichever thread sends it

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _ensure(self) -> Child:
        if self.proc is None or self.proc.poll() is not None:
            self._release()
            # a folder for what the child would otherwise leave in the host's /tmp (Inductor's cache for an op's
            # compiled region under a face): the child's alone, removed with it
            self.scratch = lifeline.new_scratch(self.kind)
            self.tag = lifeline.new_tag()
            env = {**self.env, lifeline.SCRATCH_ENV: self.scratch, lifeline.TAG_ENV: self.tag}
            # forked from a warm zygote where the host runs one (harness.support.zygote); a GPU worker never is
            kind = self.kind.split("#")[0]
            forked = zygote_client.start_worker(kind, env, self.log) if kind in ("compile", "interpret") else None
            self.proc = forked or subprocess.Popen(
                [sys.executable, "-m", "harness.execution.worker_main"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                env=env,
                text=True,
                bufsize=1,
            )
            self.started += 1
        return self.proc

    def _stderr_since(self, offset: int, limit: int = 1500) -> str:
        self.log.flush()
        self.log.seek(offset)
        text = self.log.read().decode(errors="replace")
        self.log.seek(0, os.SEEK_END)
        return text.strip()[-limit:]

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            lifeline.kill_tree(self.proc.pid)
            self.proc.wait()
        self._release()

    def _release(self) -> None:
        """Forget the child (ended, or never started), closing our ends of its pipes, ending what its user code
        left behind and removing its scratch."""
        if self.tag is not None:
            alive = self.proc is not None and self.proc.poll() is None
            lifeline.end_child(self.proc.pid if alive and self.proc is not None else None, self.tag)
            self.tag = None
        if self.proc is not None:
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
        self.proc = None
        if self.scratch is not None:
            lifeline.remove_scratch(self.scratch)
            self.scratch = None

    def send(self, job: Job, timeout: float) -> Reply:
        """Send one typed job (its class names the op); return its reply as the job's ``REPLY`` class, whatever
        happens to the child (a timeout or a crash is that class with its ``status`` and ``error``)."""
        return job.REPLY.from_wire(self.request(job.OP, to_wire(job), timeout))

    def request(self, op: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request as it goes on the wire (the worker decodes it strictly, :func:`from_wire`)."""
        with self._busy:
            return self._request(op, job, timeout)

    def send_in_background(self, job: Job, timeout: float) -> threading.Thread:
        """Send a job from a thread (a warm-up): a later request waits for it to finish."""
        return self.request_in_background(job.OP, to_wire(job), timeout)

    def request_in_background(self, op: str, job: dict[str, Any], timeout: float) -> threading.Thread:
        thread = threading.Thread(target=self.request, args=(op, job, timeout), daemon=True)
        thread.start()
        return thread

    def _request(self, op: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        proc = self._ensure()
        self.log.seek(0, os.SEEK_END)
        offset = self.log.tell()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps({"op": op, "job": job}) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                return {"status": "timeout", "error": f"no result after {timeout:g} s; worker killed and replaced"}
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 0.5))
            if ready:
                line = proc.stdout.readline()
                break
            if proc.poll() is not None and not select.select([proc.stdout], [], [], 0)[0]:
                line = ""  # it exited, and a process it left holds its output open: no end of file will come
                break
        if not line:
            code = proc.wait()
            self._release()
            tail = self._stderr_since(offset)
            return {"status": "crash", "error": f"worker died ({_signal_name(code)})" + (f": {tail}" if tail else "")}
        reply = json.loads(line)
        if reply["ok"]:
            # the worker exits after a poisoned context, or after a request changed its process state
            if reply["result"].get("status") == "fault" or reply["result"].get("retire_worker"):
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    lifeline.kill_tree(proc.pid)
                    proc.wait()
                self._release()
            result: dict[str, Any] = reply["result"]
            return result
        # what the compiler printed for this request (MLIR names the pass that failed a pipeline there)
        printed = self._stderr_since(offset, 6000)
        failed_pass = re.search(r"Pipeline failed while executing \[`([^`]+)`", printed)
        error = reply["error"] + (f" (failing pass: {failed_pass.group(1)})" if failed_pass else "")
        trace = reply.get("traceback", "") + (
            f"\n--- worker stderr (last lines) ---\n{printed[-3000:]}" if printed else ""
        )
        return {"status": "error", "error": error, "traceback": trace}

    def retire(self) -> None:
        """End the child (it may serve no further request, e.g. a baseline changed its process); the next request
        starts a fresh one."""
        with self._busy:
            self._end(timeout=10)

    def close(self) -> None:
        got = self._busy.acquire(timeout=10)  # let a warm-up in flight finish its reply
        try:
            self._end(timeout=lifeline.grace_s())
            self.log.close()
        finally:
            if got:
                self._busy.release()

    def _end(self, timeout: float) -> None:
        """Close the child's input and let it exit (killed if it does not within ``timeout``); forget it."""
        if self.proc and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                lifeline.kill_tree(self.proc.pid)
                self.proc.wait()
        self._release()


def _slot(kind: str, slot: int) -> str:
    """Name of the ``slot``-th worker of a kind: ``compile``, ``compile#1``, ..."""
    return kind if slot == 0 else f"{kind}#{slot}"


class Workers:
    """The per-process set of workers: compiles, the interpreter, and one GPU pinned to this process."""

    def __init__(self, gpu: GpuSlot | None = None) -> None:
        self._workers: dict[str, Worker] = {}
        self.gpu = gpu

    def map(
        self,
        kind: str,
        jobs: Sequence[Job],
        timeout: float,
        parallel: int,
        environment: Environment = DEFAULT_ENV,
        import_env: tuple[tuple[str, str], ...] = (),
    ) -> list[Reply]:
        """Run jobs on up to ``parallel`` workers of one kind at once; results in job order.

        Each worker serves one job at a time; threads only wait on pipes, the work
        happens in the child processes.
        """
        if parallel <= 1 or len(jobs) <= 1:
            worker = self.get(kind, environment, import_env)
            return [worker.send(job, timeout) for job in jobs]
        import queue
        from concurrent.futures import ThreadPoolExecutor

        free: queue.Queue[Worker] = queue.Queue()
        for slot in range(min(parallel, len(jobs))):
            free.put(self.get(_slot(kind, slot), environment, import_env))

        def run(job: Job) -> Reply:
            worker = free.get()
            try:
                return worker.send(job, timeout)
            finally:
                free.put(worker)

        with ThreadPoolExecutor(max_workers=free.qsize()) as pool:
            return list(pool.map(run, jobs))

    def prestart(self, kind: str, count: int, environment: Environment = DEFAULT_ENV) -> None:
        """Start ``count`` workers of a kind in the background (interpreter start, imports).

        Called once the session knows it has cases of that kind, so the first case does
        not pay process start-up inside its own compile time.
        """
        for slot in range(count):
            self.get(_slot(kind, slot), environment).request_in_background("warm", {}, 120)

    def get(
        self, kind: str, environment: Environment = DEFAULT_ENV, import_env: tuple[tuple[str, str], ...] = ()
    ) -> Worker:
        """The worker of a kind for a compile environment and a kernel's ``import_env``: one process never serves
        two environments, nor two sets of variables a library reads when it is imported."""
        key = f"{kind}|{environment.digest()}" + (f"|{sorted(import_env)!r}" if import_env else "")
        if key not in self._workers:
            env = worker_env(dict(os.environ), environment)
            env.update(dict(import_env))
            env.pop("TRITON_INTERPRET", None)
            if kind.split("#")[0] != "compile":  # a GPU answers for itself; the interpreter is neither vendor
                env.pop("HARNESS_FACE", None)
            # the child must import this very harness, installed or not
            root = str(Path(__file__).resolve().parents[2])  # harness/execution/pool.py -> the folder holding harness/
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
            if kind.split("#")[0] == "interpret":
                env["TRITON_INTERPRET"] = "1"
            if kind == "gpu" and self.gpu is not None:
                from harness.device.detection import pinned_env

                env = pinned_env(env, self.gpu)
            self._workers[key] = Worker(kind, env)
        return self._workers[key]

    def close(self) -> None:
        """Each worker ends at once, all of them together (their exits overlap instead of queueing)."""
        closing = [threading.Thread(target=worker.close) for worker in self._workers.values()]
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
        self._workers.clear()
