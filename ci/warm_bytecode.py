"""Writes the ``.pyc`` of every module the test suite's processes import, by importing them once with bytecode
writing on (ci/prepare_tests.sh says why). Prints nothing; a package that is not installed is passed over.

``python ci/warm_bytecode.py torch`` takes torch and the libraries built on it, ``... rest`` the others: two
processes, one per core, that do not compile the same large package twice."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import warnings

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: besides what the suite's zygotes preload (their roles, harness/support/zygote.py): the libraries its matrices
#: import and the rest of what its tests import; a submodule imports its packages' ``__init__`` too
OTHERS = (
    "triton.tools.tensor_descriptor", "triton.experimental.gluon", "jinja2", "tabulate", "yaml", "filelock",
    "_pytest.pytester", "tox", "check_jsonschema", "harness.execution.worker_main", "harness.intake.child_probe",
    "fla.modules.norm.l2norm", "fla.modules.activations", "fla.ops.utils.matmul", "einops",
    "torchao.prototype.quantized_training.int8_mm", "conch.ops.quantization.fp8", "conch.platforms",
    # imported lazily by Dynamo, Inductor and the Inductor face's guard build in the capture children, found by
    # running the capture modules with bytecode writing on and listing the .pyc they wrote (119 modules, about 70 of
    # them setuptools', through torch.utils.cpp_extension); without these each such child compiles them again
    "torch.utils.cpp_extension", "torch.export._trace", "torch.export._unlift", "torch.export._leakage_detection_utils",
    "torch.fx.experimental.validator", "torch._subclasses.schema_check_mode", "torch._export.db.logging",
    "torch._export.passes.add_runtime_assertions_for_constraints_pass", "torch._export.passes.collect_tracepoints_pass",
    "torch._higher_order_ops.cudagraph_conditional_nodes", "torch._higher_order_ops.passes.inline_invoke_subgraph",
    "torch._functorch._aot_autograd.subclass_codegen",
    "torch._functorch._activation_checkpointing.remat_using_tags_for_fwd_loss_bwd_graph_pass",
    "sympy.physics.units", "sympy.combinatorics", "sympy.tensor.tensor", "packaging.licenses",
    "_pytest.unraisableexception",
)  # fmt: skip


def modules() -> list[str]:
    from harness.support.zygote_roles import ROLES

    preloaded = [name for role in ROLES.values() for name in role.preload]
    return list(dict.fromkeys([*preloaded, *OTHERS]))


#: torch and what imports it when imported: one half of the work (``torch``), everything else the other (``rest``)
TORCH_SIDE = ("torch", "fla", "torchao", "conch", "einops")


#: packages on torch's side whose modules the other process compiles first, without running them: importing torch
#: takes the torch process about 4 s, and by then these (torch's compiler stack, which fla's import pulls in, and fla
#: itself: 865 files, about 3.5 CPU-seconds) are compiled, so that side runs them instead of compiling them. The
#: sides took 16.5 s and 4.9 s before; a module both reach at once is written twice, atomically, to the same bytes
#: And the harness and its kernels, whole: where the environment sets ``PYTHONDONTWRITEBYTECODE`` (this project's CI
#: machines do), the modules no role preloads (the device's, the GPU phase's, ``report``'s, each kernel a worker
#: builds) are otherwise compiled again by each process that imports them.
COMPILED_BESIDE = ("torch._dynamo", "torch._inductor", "fla", "harness", "kernels")


def _compile_beside() -> None:
    import compileall
    from importlib.util import find_spec
    from py_compile import PycInvalidationMode

    for name in COMPILED_BESIDE:
        top, *below = name.split(".")
        spec = find_spec(top)  # finds the package without importing it (a submodule's spec would run torch's __init__)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            # timestamped, as an import writes them (compileall checks hashes where SOURCE_DATE_EPOCH is set)
            mode = PycInvalidationMode.TIMESTAMP
            compileall.compile_dir(os.path.join(folder, *below), quiet=2, invalidation_mode=mode)


def main(part: str = "all") -> None:
    warnings.simplefilter("ignore")
    names = [n for n in modules() if part == "all" or (n.split(".")[0] in TORCH_SIDE) == (part == "torch")]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        if part == "rest":
            _compile_beside()
        for name in names:
            with contextlib.suppress(Exception):
                importlib.import_module(name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "all")
