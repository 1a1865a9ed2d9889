"""Matrix -> cases: one case per (kernel, dtype, shape, target, Triton version).

A case is what one pytest item runs: every config of its config space for one
target. The CPU interpreter check is a case of its own, with the pseudo-target
``interpret``, covering the kernel's small shapes for each distinct set of
tunables (compile options do not change what the interpreter computes).
Cases are frozen and hashable: their key is the merge key of results.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.intake import facts
from harness.matrix.configs import ConfigEntry
from harness.matrix.known import KnownFailure
from harness.matrix.reading import Matrix
from harness.model import targets
from harness.model.environments import DEFAULT, DEFAULT_ENV, Environment
from harness.model.ids import config_id, shape_id
from harness.model.jobs import CompileJob, InterpretJob
from harness.model.kernel_refs import CaptureFailedRef, InductorRef, decode
from harness.model.run_info import Selection
from harness.support.tritoncompat import pin_matches

INTERPRET = "interpret"


@dataclass(frozen=True)
class Case:
    kernel: str
    ref: str
    dtype: str
    shapes: tuple[tuple[tuple[str, Any], ...], ...]  # one shape; several for interpret cases
    target: str
    triton: str
    configs: tuple[ConfigEntry, ...]
    timeout_s: float
    seed: int
    environment: Environment = DEFAULT_ENV
    known_failures: tuple[KnownFailure, ...] = ()  # the matrix's entries (matched per record)
    deciding: str = DEFAULT  # the target's environment whose build decides its verdict (harness.analysis.verdicts)
    import_env: tuple[tuple[str, str], ...] = ()  # the kernel entry's variables, set before its module is imported

    @property
    def shape(self) -> dict[str, Any]:
        return dict(self.shapes[0])

    @property
    def is_interpret(self) -> bool:
        return self.target == INTERPRET

    @property
    def column(self) -> str:
        """``mi300x``, or ``mi300x@async-copy`` under a non-default compile environment."""
        return self.target if self.environment.name == DEFAULT else f"{self.target}@{self.environment.name}"

    @property
    def id(self) -> str:
        where = INTERPRET if self.is_interpret else f"{shape_id(self.shape)}-{self.column}"
        return f"{self.kernel}[{self.dtype}-{where}-triton{self.triton}]"

    @property
    def shard_unit(self) -> str:
        """What goes to one shard together (:mod:`harness.matrix.shards`): the cases one report row joins — a
        kernel, dtype, shape and Triton over every target and environment — so that each shard's own verdicts
        (portability across vendors, a target decided by its default build) are whole; the interpreter's case alone."""
        if self.is_interpret:
            return self.id
        return f"{self.kernel}[{self.dtype}-{shape_id(self.shape)}-triton{self.triton}]"


def expand(matrix: Matrix, installed_triton: str | None) -> list[Case]:
    """All cases of a matrix. ``installed`` resolves to the importable Triton's version."""
    versions: list[str] = []
    for v in matrix.triton:
        # a pin that selects the installed release ("3.7" for 3.7.1) becomes that release's exact version
        resolved = (installed_triton or "none") if v == "installed" or pin_matches(v, installed_triton) else v
        if resolved not in versions:
            versions.append(resolved)
    cases: list[Case] = []
    for entry in matrix.kernels:
        spec = facts.get(entry.ref, entry.import_env)  # from a child: the harness's process never imports user code
        for version in versions:
            for dtype in entry.dtypes:
                for shape in entry.shapes:
                    configs = entry.configs
                    if not entry.launched:  # a captured op's configs are what it launched (pruned by Triton)
                        configs = tuple(c for c in configs if spec.config_ok(dict(shape), c.as_dict()))
                        configs = _autotune_pruned(spec, shape, dtype, configs)
                    for target in matrix.targets:
                        envs = matrix.environments_for(target, entry)
                        deciding = DEFAULT if any(e.name == DEFAULT for e in envs) else envs[0].name
                        # a captured op: the configs it launches as on this target (or on ``launches_from``)
                        launched = entry.launched_configs(target, shape, dtype)
                        if launched == () and isinstance(decode(entry.ref), (InductorRef, CaptureFailedRef)):
                            continue  # Inductor's graph for this target, shape and dtype has no such kernel
                        for env in envs:
                            cases.append(
                                Case(
                                    entry.name,
                                    entry.ref,
                                    dtype,
                                    (shape,),
                                    target,
                                    version,
                                    configs if launched is None else launched,
                                    entry.timeout_s,
                                    matrix.seed,
                                    env,
                                    matrix.known_failures,
                                    deciding,
                                    entry.face_env(target),
                                )
                            )
                if entry.interpret:
                    # known failures apply here too (``target: interpret``)
                    cases.append(
                        Case(
                            entry.name,
                            entry.ref,
                            dtype,
                            entry.interpret,
                            INTERPRET,
                            version,
                            interpret_configs(spec.tunables, entry.configs),
                            entry.timeout_s,
                            matrix.seed,
                            known_failures=matrix.known_failures,
                            import_env=entry.import_env,
                        )
                    )
    return cases


def _autotune_pruned(
    spec: facts.SpecFacts, shape: Any, dtype: str, configs: tuple[ConfigEntry, ...]
) -> tuple[ConfigEntry, ...]:
    """A decorated kernel's configs after its autotuner's own ``early_config_prune`` (where it runs on a CPU; the
    records say whether it did: :func:`harness.compiling.compile.autotune_facts`), as the callback probe's child ran it."""
    if not spec.early_prune:
        return configs
    kept = spec.pruned(dict(shape), dtype, [c.as_dict() for c in configs])
    keys = {repr(sorted(c.items())) for c in kept}
    return tuple(c for c in configs if repr(sorted(c.as_dict().items())) in keys)


def targets_named(option: str | None) -> list[str] | None:
    """``--harness-targets`` as a list (None where it is not given)."""
    named = [t.strip() for t in (option or "").split(",") if t.strip()]
    return named or None


def with_targets_option(matrix: Matrix, option: str | None) -> Matrix:
    """The matrix with ``--harness-targets`` (comma-separated) applied; unknown names are left to collection."""
    wanted = [t.strip() for t in (option or "").split(",") if t.strip()]
    return dataclasses.replace(matrix, targets=tuple(wanted)) if wanted else matrix


def selection_entry(case: Case) -> Selection:
    """What one selected compile case will build: ``harness compare`` tells lost builds from deselected ones."""
    return Selection.whole(
        kernel=case.kernel,
        dtype=case.dtype,
        shape=case.shape,
        target=case.target,
        environment=case.environment.name,
        configs=tuple(c.as_dict() for c in case.configs),
    )


def interpret_configs(tunables: tuple[str, ...], configs: tuple[ConfigEntry, ...]) -> tuple[ConfigEntry, ...]:
    """One config per distinct set of tunables, options dropped."""
    seen: dict[tuple[tuple[str, Any], ...], ConfigEntry] = {}
    for c in configs:
        meta = tuple((k, v) for k, v in c.values if k in tunables)
        seen.setdefault(meta, ConfigEntry(meta, c.origin))
    return tuple(seen.values())


def compile_job(case: Case, config: ConfigEntry, out_dir: str, prebuild_launcher: bool = False) -> CompileJob:
    """What a compile worker receives for one config of a case."""
    target = targets.get(case.target)
    cfg = config.as_dict()
    return CompileJob(
        ref=case.ref,
        dtype=case.dtype,
        shape=dict(case.shape),
        target=target.to_dict(),
        config=cfg,
        out=out_dir,
        artifact_parts=(
            "artifacts",
            case.kernel,
            case.dtype,
            shape_id(case.shape),
            case.target if case.environment.name == DEFAULT else f"{case.target}.{case.environment.name}",
            f"triton{case.triton}",
            config_id(cfg),
        ),
        prebuild_launcher=prebuild_launcher,
    )


def interpret_job(case: Case, config: ConfigEntry) -> InterpretJob:
    """What the interpreter worker receives for one config of a case: every interpreter shape, one seed."""
    return InterpretJob(
        ref=case.ref,
        dtype=case.dtype,
        shapes=tuple(dict(s) for s in case.shapes),
        config=config.as_dict(),
        seed=case.seed,
    )
