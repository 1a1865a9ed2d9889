"""What an Inductor launcher exposes on this torch (a GPU host): the attribute that holds its compiled binary, with
Triton's launcher and with the static CUDA launcher. harness/intake/inductor/inductor_spec.py reads ``launcher.bin``."""

import torch
from torch._inductor.runtime.triton_heuristics import CachingAutotuner

seen = []
original = CachingAutotuner.run


def run(self, *args, **kwargs):
    seen.append(self)
    return original(self, *args, **kwargs)


CachingAutotuner.run = run
for static in (False, True):
    seen.clear()
    torch._dynamo.reset()
    fn = torch.compile(lambda x: torch.nn.functional.gelu(x) * 2, options={"use_static_cuda_launcher": static})
    fn(torch.randn(1024, 1024, device="cuda"))
    launcher = seen[0].launchers[0]
    binary = getattr(launcher, "bin", None)
    print("static", static, type(launcher).__name__, [a for a in dir(launcher) if not a.startswith("__")][:30])
    print("  bin:", type(binary).__name__, sorted(getattr(binary, "asm", {}) or {}) if binary is not None else None)
