"""Inductor's own answers under a target's face, for the capture tests to hold their records against: each recorded
kernel module imported in a child that wears only the face (Inductor's heuristic decorator lists its configs there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO


def reference_child(target: str, kernels: list[dict], root: Path) -> dict:
    """In a child wearing only ``target``'s face: each recorded kernel module imported (Inductor's decorator runs its
    heuristics), its configs as Inductor lists them; and Inductor's own split factor for the full reduction."""
    (root / f"kernels-{target}.json").write_text(json.dumps([[k["name"], k["source"]] for k in kernels]))
    code = f"""
import importlib.util, json, sys, pathlib
from harness.intake.virtual_device import face
face.wear(face.of({target!r}))
import torch
from torch._inductor.runtime import triton_helpers
triton_helpers.set_driver_to_gpu = lambda: None  # the module's switch to the GPU driver; the face's stays active
out = {{"configs": {{}}}}
for i, (name, source) in enumerate(json.loads(pathlib.Path({str(root / f"kernels-{target}.json")!r}).read_text())):
    path = pathlib.Path({str(root / f"modules-{target}")!r}) / str(i) / f"{{name}}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"k{{i}}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    auto = getattr(module, name)
    as_dict = lambda c: {{**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages}}
    out["configs"][f"{{i}}:{{name}}"] = [as_dict(c) for c in auto.configs]
    if auto.inductor_meta.get("coordinate_descent_tuning"):  # the tuner's first round from the first config
        tuner, first, seen, tried = auto.coordesc_tuner, auto.configs[0], [as_dict(c) for c in auto.configs], []
        from torch._inductor.runtime.coordinate_descent_tuner import get_field
        for field in tuner.tunable_fields:
            if get_field(first, field) is not None:  # as the tuner's own autotune() walks its fields
                for c in tuner.get_neighbour_configs(first, field):
                    if as_dict(c) not in seen + tried:
                        tried.append(as_dict(c))
        out.setdefault("coordesc", {{}})[f"{{i}}:{{name}}"] = tried
from torch._inductor.choices import InductorChoices
out["split"] = InductorChoices.reduction_split_factor(torch.device("cuda", 0), 8192 * 8192, 1, True)

print(json.dumps(out))
"""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])
