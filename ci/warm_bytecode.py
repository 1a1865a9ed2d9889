"""Writes the ``.pyc`` of every module the test suite's processes import, by importing them once with bytecode
writing on (ci/prepare_tests.sh says why). Prints nothing; a package that is not installed is passed over."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import warnings

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: what the suite's zygotes preload (harness/support/zygote.py), the libraries its matrices import, and the rest of
#: what its tests import; a submodule imports its packages' ``__init__`` too
MODULES = (
    "torch", "triton", "triton.backends.nvidia.compiler", "triton.backends.amd.compiler", "triton.runtime.interpreter",
    "triton.tools.tensor_descriptor", "triton.experimental.gluon", "numpy", "scipy.stats", "jinja2", "tabulate",
    "yaml", "platformdirs", "filelock", "pytest", "xdist.plugin", "xdist.newhooks", "_pytest.pytester", "tox",
    "check_jsonschema", "harness.cli", "harness.cli.run", "harness.pytest_plugin.hooks", "harness.build.compile",
    "harness.device.interpret", "harness.execution.pool", "harness.execution.worker_main", "harness.render.html_page",
    "harness.matrix.face", "harness.matrix.capture", "harness.matrix.child_probe", "harness.matrix.facts",
    "fla.modules.norm.l2norm", "fla.modules.activations", "fla.ops.utils.matmul", "einops",
    "torchao.prototype.quantized_training.int8_mm", "conch.ops.quantization.fp8", "conch.platforms",
)  # fmt: skip


def main() -> None:
    warnings.simplefilter("ignore")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for name in MODULES:
            with contextlib.suppress(Exception):
                importlib.import_module(name)


if __name__ == "__main__":
    main()
