"""The fixed part of a ``harness repro`` script (:mod:`harness.compiling.repro`): it reads ``CASE``, ``LAUNCH`` and
``KERNEL`` (written above it), compiles, measures with the tools that own each figure (Triton's metadata, ptxas -v on
the PTX for NVIDIA registers and spills, the AMDGCN metadata for AMD), prints recorded against now, and exits 0 when
the recorded outcome came back. With a ``LAUNCH`` (a correctness finding, :mod:`harness.device.repro_launch`) it then
launches the kernel on the saved inputs and checks it against the saved reference: on this host's GPU, or, without
one, under Triton's CPU interpreter in a second process (``TRITON_INTERPRET`` must be set before Triton is
imported). Plain Triton, torch for the launch, and the standard library: it runs where the harness is not
installed.

This module is never imported: :func:`harness.compiling.repro.script` appends its text below ``MARKER`` to each script,
after the script's own ``CASE``, ``LAUNCH``, ``KERNEL`` and imports. Above the marker, the names that text finds
there, declared so that ruff and mypy check the body as the real code it is."""

import os
import sys
from typing import Any

import triton

CASE: dict[str, Any] = {}  # each script writes these three above the body
LAUNCH: dict[str, Any] | None = None
KERNEL: Any = None


# --- the body of every repro script: below this line ---
def figures(compiled: Any, backend: str) -> dict[str, Any]:
    import re
    import subprocess
    import tempfile

    out = {"shared": int(compiled.metadata.shared)}
    if backend == "hip":
        text = compiled.asm["amdgcn"]
        name = compiled.metadata.name
        meta = text.split("amdhsa.kernels:", 1)[-1]
        at = re.search(r"^\s*\.name:\s+" + re.escape(name) + r"\s*$", meta, re.M)
        entry = meta[max(meta.rfind("\n  - ", 0, at.start()), 0) : meta.find("\n  - ", at.end())] if at else meta
        for key, field in (
            ("vgpr", "vgpr_count"),
            ("agpr", "agpr_count"),
            ("vgpr_spill", "vgpr_spill_count"),
            ("sgpr_spill", "sgpr_spill_count"),
            ("scratch_bytes", "private_segment_fixed_size"),
        ):
            found = re.search(r"\." + field + r":\s+(\d+)", entry)
            if found:
                out[key] = int(found.group(1))
        return out
    # NVIDIA: ptxas -v, the ptxas Triton itself uses, on this compile's PTX (the log Triton itself throws away)
    arch = CASE["target"][1]
    major = int(str(arch).removeprefix("sm_").rstrip("a"))
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        ptxas = getattr(get_ptxas(major), "path", None)
    except Exception:  # an older Triton: the wheel's own binary
        ptxas = None
    ptxas = ptxas or os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "kernel.ptx")
        with open(ptx, "w") as f:
            f.write(compiled.asm["ptx"])
        gpu = f"sm_{major}a" if major >= 90 else f"sm_{major}"
        done = subprocess.run(
            [ptxas, "-lineinfo", "-v", f"--gpu-name={gpu}", ptx, "-o", os.path.join(tmp, "k.cubin")],
            capture_output=True,
            text=True,
        )
    log = done.stderr
    if done.returncode != 0 or "Function properties for" not in log:
        print(f"ptxas -v gave no figures ({ptxas}, exit {done.returncode}): {(log or done.stdout).strip()[:400]}")
    block = log.split("Function properties for " + compiled.metadata.name, 1)[-1]
    regs = re.search(r"Used (\d+) registers", block)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
    if regs:
        out["registers"] = int(regs.group(1))
    if spill:
        out["spill_store_bytes"], out["spill_load_bytes"] = int(spill.group(1)), int(spill.group(2))
    return out


def rebuild() -> int:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    recorded = CASE["recorded"]
    print(f"case: {CASE['label']} (triton {CASE['triton']} recorded, {triton.__version__} here)")
    if triton.__version__ != CASE["triton"]:
        print(f"warning: recorded with triton {CASE['triton']}; install it to reproduce exactly")
    backend, arch, warp = CASE["target"]
    target = GPUTarget(backend, int(str(arch).removeprefix("sm_").rstrip("a")) if backend == "cuda" else arch, warp)
    src = ASTSource(
        KERNEL,
        CASE["signature"],
        {tuple(k): v for k, v in CASE["constexprs"]},
        {tuple(k): v for k, v in CASE["attrs"]},
    )
    import re
    import tempfile

    # what the compiler prints goes to file descriptor 2 (MLIR names the pass that failed a pipeline there): kept
    # to be read, then shown as it would have been
    with tempfile.TemporaryFile(mode="w+") as printed:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(printed.fileno(), 2)
        try:
            compiled, exc = triton.compile(src, target=target, options=CASE["options"]), None
        except Exception as caught:
            compiled, exc = None, caught
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        printed.seek(0)
        said = printed.read()
    sys.stderr.write(said)
    if exc is not None:
        now = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        failed = re.search(r"Pipeline failed while executing \[`([^`]+)`", said)
        now += f" (failing pass: {failed.group(1)})" if failed else ""
        print(f"recorded: {recorded['status']}: {recorded['error']}")
        print(f"now:      error: {now}")
        return 0 if recorded["status"] != "ok" and now.strip() == recorded["error"].strip() else 1
    found = figures(compiled, backend)
    print(
        f"recorded: {recorded['status']}"
        + (f", over a limit: {'; '.join(recorded['flags'])}" if recorded["flags"] else "")
    )
    same = recorded["status"] == "ok"
    for key, value in sorted(recorded["figures"].items()):
        mark = "" if found.get(key) == value else "   <-- differs"
        same = same and not mark
        print(f"  {key:18} recorded {value:>8}   now {found.get(key, '-'):>8}{mark}")
    print("reproduced" if same else "NOT reproduced")
    return 0 if same else 1


def replay() -> int:
    assert LAUNCH is not None  # main() replays only a script written with a launch
    # the recorded launch on the saved inputs, checked as the harness checks: |now - ref| <= atol + rtol * |ref|
    import torch

    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    device = "cpu" if interpreted else "cuda"
    saved = torch.load(os.path.splitext(os.path.abspath(__file__))[0] + ".pt")
    args = {k: v.to(device) for k, v in saved["args"].items()}
    for name in LAUNCH["poison"]:
        args[name].fill_(float("nan") if args[name].is_floating_point() else -1)
    args.update(LAUNCH["scalars"])
    recorded = LAUNCH["recorded"]
    where = "Triton's CPU interpreter" if interpreted else torch.cuda.get_device_name()
    print(
        f"launch: grid {tuple(LAUNCH['grid'])}, {LAUNCH['options']}, on {where} (inputs made on "
        f"{LAUNCH['made_on']} with seed {LAUNCH['seed']}, shape {LAUNCH['shape']}; the harness checked on "
        f"{LAUNCH['where']})"
    )
    KERNEL[tuple(LAUNCH["grid"])](**args, **({} if interpreted else LAUNCH["options"]))
    if not interpreted:
        torch.cuda.synchronize()
    worst, bad = 0.0, 0
    for name, out in sorted(LAUNCH["outputs"].items()):
        got = args[out["arg"]].float().cpu()
        ref = saved["expected"][name].float()
        diff = (got - ref).abs()
        finite = torch.isfinite(diff)
        worst = max(worst, float(diff[finite].max()) if bool(finite.any()) else 0.0)
        bad += int((~(diff <= out["atol"] + out["rtol"] * ref.abs())).sum())
    now = "ok" if bad == 0 else "mismatch"
    print(
        f"recorded: {recorded['status']} (max abs err {recorded['max_abs_err']}, {recorded['mismatched']} "
        f"elements outside tolerance)"
    )
    print(f"now:      {now} (max abs err {worst:.6g}, {bad} elements outside tolerance)")
    same = now == recorded["status"]
    print("launch reproduced" if same else "launch NOT reproduced")
    return 0 if same else 1


def main() -> int:
    import subprocess

    if "--launch-only" in sys.argv:
        return replay()
    code = rebuild()
    if LAUNCH is None:
        return code
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        print("launch: not run (torch is not installed: pip install torch)")
        return 1
    if gpu and os.environ.get("TRITON_INTERPRET") != "1":
        return max(code, replay())
    print("launch: no GPU here, so under Triton's CPU interpreter")
    sys.stdout.flush()
    env = dict(os.environ, TRITON_INTERPRET="1")
    return max(code, subprocess.run([sys.executable, os.path.abspath(__file__), "--launch-only"], env=env).returncode)


if __name__ == "__main__":
    sys.exit(main())
