"""What a zygote of each role (:mod:`harness.support.zygote`) imports before it serves, and what its children run.

A table apart from the serving code: which modules a role holds decides what a fork saves and what a request must
not shadow (``zygote.shadowed``), and ``ci/warm_bytecode.py`` writes the bytecode of the same modules.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    """What a zygote of one role imports before it serves, and the entry point (``module:function``) its children
    run. Named, not imported: a zygote is a process entry point like ``python -m``, below no stage."""

    preload: tuple[str, ...]
    entry: str
    #: ``module:function`` called once after the imports: work every child would otherwise repeat and keep for its
    #: life (Triton's key of its own installation, a compiled report template)
    warm: tuple[str, ...] = ()


ROLES = {
    "compile": Role(("torch", "triton", "triton.backends.nvidia.compiler", "triton.backends.amd.compiler",
                     "harness.compiling.compile"), "harness.execution.worker_main:main",
                    ("harness.support.tritoncompat:warm_compiler",)),
    "interpret": Role(("torch", "numpy", "triton", "harness.compiling.compile", "harness.device.interpret"),
                      "harness.execution.worker_main:main"),
    # the command line imports Triton (its version is the run's first line), the interpreter module and numpy (a
    # spec unwraps interpreted kernels), its workers' pool and the report's renderer in every run; `harness compare`
    # (the nightly gate's every step) judges timings with scipy.stats (0.8 CPU-seconds to import); a run's pytest
    # session loads its default plugins and the installed ones, and reading a matrix and the summary import stages
    "cli": Role(("pytest", "xdist.plugin", "xdist.newhooks", "platformdirs", "harness.cli", "harness.cli.run",
                 "harness.cli.parser", "harness.pytest_plugin", "harness.pytest_plugin.hooks", "numpy", "triton",
                 "triton.runtime.interpreter", "harness.execution.pool", "harness.render.html_page",
                 "harness.cli.compare", "harness.analysis.compare", "scipy.stats", "_pytest.faulthandler",
                 "_pytest.helpconfig", "_pytest.junitxml", "_pytest.pastebin", "_pytest.setuponly", "_pytest.setupplan",
                 "_pytest.skipping", "_pytest.threadexception", "_pytest.tracemalloc", "_pytest.unittest",
                 "_pytest.warnings", "_pytest.debugging", "_pytest._argcomplete", "pdb", "faulthandler",
                 "xdist.looponfail", "platformdirs.pytest_plugin", "harness.spec", "harness.intake.launches.ops",
                 "harness.matrix.ops_entries", "harness.intake.launches.op_probe", "harness.intake.launches.launch_groups",
                 "harness.intake.callback_probe", "harness.device.detection", "harness.execution.placement",
                 "harness.render.terminal", "harness.render.vendor_eval", "harness.authoring.decorated",
                 "harness.torchutil"),
                "harness.cli:main", ("harness.render.html_page:warm",)),
    # the children that run a user's code first while a matrix is read (harness.intake.child_probe): ``-c CODE``
    "probe": Role(("torch", "triton", "harness.intake.virtual_device.face", "harness.intake.launches.capture", "harness.intake.launches.ops",
                   "harness.intake.facts", "harness.support.lifeline"), "harness.intake.child_probe:forked_main"),
}  # fmt: skip
