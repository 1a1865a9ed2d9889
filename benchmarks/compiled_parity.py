"""Compiled capture against what TorchInductor really generates on this GPU (issue 58's GPU point).

    PYTHONPATH=. python3 benchmarks/compiled_parity.py FILE.yaml OUT_DIR

1. The capture under the virtual device of this GPU's target (h100 or h200, from the device name), as on any
   machine: each entry in a child of its own (``harness.intake.inductor.compiled_probe.capture``, what a run reads).
2. A process of its own, wearing nothing: each entry, shape and dtype compiled by ``torch.compile`` for real on the
   GPU and run once, with Inductor's precompile and its template benchmark observed (not replaced): each kernel's
   name, source and configs as Inductor listed them, the compiled wrapper's launch order (a second call's: the
   first also launches max-autotune's choices to time them), the modules compiled but not launched, the choices. The capture's
   policies (no pad_mm, no epilogue fusion by benchmark, no CUDA graphs) are set here too, so that both sides
   answer the same question; max-autotune's winner is Inductor's measured one here and the first template there.
3. Per entry, shape and dtype: kernels in launch order, each kernel's configs and source, the choice lists, equal or
   not; written to OUT_DIR/parity.json and printed. Beside them, the compiled function checked against eager
   PyTorch on the same inputs (largest absolute difference) and both timed with ``triton.testing.do_bench``
   (median): Inductor's own autotuned choice; and each kernel's configs as Inductor's autotuner timed them on this
   GPU (``CachingAutotuner.benchmark_all_configs``, observed: a kernel of one config is not timed alone).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REAL = r"""
import json, sys, hashlib
import torch
import torch._inductor.config as config
from torch._inductor.runtime import triton_heuristics
from torch._inductor import select_algorithm, list_mode_options
from harness.intake.importing import import_attr
from harness.authoring.torchutil import torch_dtype

from harness.model.inductor_policies import SETTINGS
for name, value in SETTINGS.items():  # the capture's settings (one thread, no caches, the policies)
    setattr(config, name, value)
kernels, order, choices = {}, [], []
precompile, run = triton_heuristics.CachingAutotuner.precompile, triton_heuristics.CachingAutotuner.run

def name_of(self):
    return str(getattr(self.fn, "__name__", None) or self.inductor_meta.get("kernel_name"))

def source_of(self):
    import inspect
    for f in (getattr(self, "filename", None), inspect.getsourcefile(getattr(self.fn, "fn", self.fn))):
        if f:
            try:
                return open(f).read()
            except OSError:
                pass
    return ""

def observed_precompile(self, *a, **k):
    kernels.setdefault(name_of(self), {"configs": [{**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages}
                                                   for c in self.configs], "source": source_of(self)})
    return precompile(self, *a, **k)

def observed_run(self, *a, **k):
    n = name_of(self)  # its configs were taken at precompile (torch 2.11 drops the list once it has launchers)
    if n not in order:
        order.append(n)
    return run(self, *a, **k)

raw = select_algorithm.AlgorithmSelectorCache.__dict__["benchmark"]  # static (2.13) or an instance method (2.11)
def record(args):
    listed = next(a for a in args if isinstance(a, list))
    choices.append([str(getattr(c, "name", type(c).__name__)) for c in listed])
if isinstance(raw, (staticmethod, classmethod)):
    inner = raw.__func__
    def observed(*a, **k):
        record(a)
        return inner(*a, **k)
    observed_bench = type(raw)(observed)
else:
    def observed_bench(*a, **k):
        record(a)
        return raw(*a, **k)

# the SDPA backend ATen's own chooser picks here for each attention call (the capture's "attention")
attention = []
_names = {int(v): n for n, v in torch.nn.attention.SDPBackend.__members__.items()}
_sdpa = torch.nn.functional.scaled_dot_product_attention
def observed_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if not torch.compiler.is_compiling():
        attention.append(_names.get(int(torch._fused_sdp_choice(q, k, v, attn_mask, dropout_p, is_causal, scale=scale,
                                                                enable_gqa=enable_gqa)), "?"))
    return _sdpa(q, k, v, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
torch.nn.functional.scaled_dot_product_attention = observed_sdpa

timed = {}
all_configs = triton_heuristics.CachingAutotuner.benchmark_all_configs
def observed_benchmark(self, *a, **k):
    timings = all_configs(self, *a, **k)
    def cfg(launcher):
        c = getattr(launcher, "config", None)
        return {**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages} if c is not None else repr(launcher)
    timed[name_of(self)] = [[cfg(l), float(t)] for l, t in timings.items()]
    return timings
triton_heuristics.CachingAutotuner.benchmark_all_configs = observed_benchmark
triton_heuristics.CachingAutotuner.precompile = observed_precompile
triton_heuristics.CachingAutotuner.run = observed_run
select_algorithm.AlgorithmSelectorCache.benchmark = observed_bench
e = json.loads(sys.argv[1])
fn, make = import_attr(e["ref"]), import_attr(e["inputs"])
out = []
for shape in e["shapes"]:
    for dtype in e["dtypes"]:
        kernels.clear(); order.clear(); choices.clear(); timed.clear(); attention.clear()
        torch._dynamo.reset()
        args = make(dict(shape), dtype, "cuda", torch.Generator(device="cpu").manual_seed(0))
        target = fn
        if e["factory"]:
            before = torch.get_default_dtype()
            torch.set_default_dtype(torch_dtype(dtype))
            with torch.device("cuda"):
                target = fn(dict(shape), dtype)
            torch.set_default_dtype(before)
        options = {**(list_mode_options(e["mode"]) if e["mode"] else {}), **e["options"], "triton.cudagraphs": False}
        with torch.no_grad():
            compiled = torch.compile(target, fullgraph=True, dynamic=bool(e.get("dynamic")), options=options)
            compiled(*args)  # compiles; max-autotune's choices are launched here to be timed
            order.clear()
            got = compiled(*args)  # the compiled wrapper's own launches, in its order
            torch.cuda.synchronize()
            names_now = list(order)
            expected = target(*args)
            err = (got.float() - expected.float()).abs().max().item()
            scale = expected.float().abs().max().item()
            from triton.testing import do_bench
            eager_ms = do_bench(lambda: target(*args), return_mode="median")
            compiled_ms = do_bench(lambda: compiled(*args), return_mode="median")
        order[:] = names_now
        names = list(order)
        out.append({"shape": shape, "dtype": dtype, "not_launched": sorted(n for n in kernels if n not in order),
                    "kernels": [
            {"name": n, "configs": kernels[n]["configs"], "source_sha256": hashlib.sha256(kernels[n]["source"].encode()).hexdigest(),
             "source": kernels[n]["source"], "config_ms": timed.get(n)} for n in names], "choices": choices,
            "eager_ms": eager_ms, "compiled_ms": compiled_ms, "max_abs_err": err, "max_abs_ref": scale,
            "attention": list(dict.fromkeys(attention))})
print("PARITY-REAL " + json.dumps(out))
"""


def face_of_this_gpu() -> str:
    import torch

    name = torch.cuda.get_device_name(0)
    return "h200" if "H200" in name else "h100"


def real(entry: dict[str, Any]) -> list[dict[str, Any]]:
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    proc = subprocess.run([sys.executable, "-c", REAL, json.dumps(entry)], capture_output=True, text=True, env=env,
                          timeout=900)  # fmt: skip
    for line in proc.stdout.splitlines():
        if line.startswith("PARITY-REAL "):
            return list(json.loads(line.removeprefix("PARITY-REAL ")))
    raise RuntimeError(f"the real compile of {entry['ref']} failed: {proc.stderr[-2000:]}")


def main() -> int:
    from harness.matrix import compiled_entries
    from harness.support import yamlpos
    from harness.support.checking import Checker

    file, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    face = face_of_this_gpu()
    os.environ["HARNESS_COMPILED_UNCHECKED_TORCH"] = "1"
    # the kernels and configs are what is held here, not their host check (at a conv's real shape the interpreter
    # took 258 s of the capture's 260 on 2 cores): a run's check is the GPU's on this host
    os.environ.setdefault("HARNESS_CHECK_BUDGET_S", "0")
    from harness.intake.inductor.compiled_probe import capture

    doc = yamlpos.load(file.read_text())
    chk = Checker(str(file), doc)
    requests = compiled_entries.requests(chk, doc.value["compiled"], file.resolve().parent)
    rows, reals = [], []
    # the capture under this GPU's face, each entry in a child of its own as a run takes it, held against the
    # real compile on the GPU
    for request, outcome in zip(requests, capture(requests, face)):
        mine = {(json.dumps(shape), dtype): table for shape, dtype, table in outcome.tables}
        for got in real(request.entry()):
            reals.append({"entry": request.name, "shape": got["shape"], "dtype": got["dtype"],
                          "kernels": [{k: v for k, v in kernel.items() if k in ("name", "configs", "source_sha256")}
                                      for kernel in got["kernels"]]})  # fmt: skip
            table = mine.get((json.dumps(got["shape"]), got["dtype"]), outcome.why)
            rows.append(_compare(request.name, got, table))
    import torch

    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "face": face, "rows": rows}
    (out / "parity.json").write_text(json.dumps(result, indent=1))
    # what Inductor made on this GPU, kept as a reference a CPU test can hold a capture to (tests/data/gpu/)
    real_made = {k: v for k, v in result.items() if k != "rows"} | {"triton": _triton_version(), "cases": reals}
    (out / "real.json").write_text(json.dumps(real_made, indent=1))
    for r in rows:
        print(json.dumps({k: v for k, v in r.items() if k not in ("real_sources", "capture_sources")}))
    return 0


def _triton_version() -> str:
    import triton

    return str(triton.__version__)


def _compare(name: str, got: dict[str, Any], table: Any) -> dict[str, Any]:
    if not isinstance(table, dict):
        return {"entry": name, "shape": got["shape"], "dtype": got["dtype"], "captured": False, "why": table}
    real_names = [k["name"] for k in got["kernels"]]
    mine_names = [k["name"] for k in table["kernels"]]
    same_configs = {k["name"]: k["configs"] for k in got["kernels"]} == {
        k["name"]: k["configs"] for k in table["kernels"]
    }
    mine_sha = {k["name"]: k["source_sha256"] for k in table["kernels"]}
    sources = {k["name"]: mine_sha.get(k["name"]) == k["source_sha256"] for k in got["kernels"]}
    differing = {k["name"]: _first_difference(k["source"], next((m["source"] for m in table["kernels"] if m["name"] == k["name"]), ""))
                 for k in got["kernels"] if not sources[k["name"]]}  # fmt: skip
    return {
        "entry": name, "shape": got["shape"], "dtype": got["dtype"], "captured": True,
        "kernels_equal": real_names == mine_names,
        "not_launched_equal": got["not_launched"] == table.get("not_launched", []), "real_kernels": real_names, "captured_kernels": mine_names,
        "configs_equal": same_configs, "sources_equal": sources, "source_differences": differing,
        "choices_equal": got["choices"] == [[c["name"] for c in s["choices"]] for s in table["choices"]],
        "real_choices": [len(c) for c in got["choices"]], "captured_choices": [len(s["choices"]) for s in table["choices"]],
        "choices_only_captured": sorted({c["name"] for s in table["choices"] for c in s["choices"]} - {n for c in got["choices"] for n in c}),
        "choices_only_real": sorted({n for c in got["choices"] for n in c} - {c["name"] for s in table["choices"] for c in s["choices"]}),
        "real_source_sha": {k["name"]: k["source_sha256"] for k in got["kernels"]},
        "eager_ms": got["eager_ms"], "compiled_ms": got["compiled_ms"],
        "config_ms": {k["name"]: k["config_ms"] for k in got["kernels"] if k.get("config_ms")},
        "max_abs_err": got["max_abs_err"], "max_abs_ref": got["max_abs_ref"],
        "attention_real": got.get("attention"), "attention_captured": table.get("attention"),
    }  # fmt: skip


def _first_difference(a: str, b: str) -> str:
    for x, y in zip(a.splitlines(), b.splitlines()):
        if x != y:
            return f"real: {x.strip()[:300]} | captured: {y.strip()[:300]}"
    return f"lengths {len(a)} vs {len(b)}; sha {hashlib.sha256(a.encode()).hexdigest()[:8]}"


if __name__ == "__main__":
    raise SystemExit(main())
