"""What a real GPU's torch decides where the graph depends on the device (issue 69 item 3), printed as JSON:

    PYTHONPATH=. python3 benchmarks/device_decisions.py OUT.json

- SDPA's backend per case: ``torch._fused_sdp_choice`` (ATen's own chooser, sdp_utils.cpp) over dtypes, head dims,
  causal or not, an additive mask, and q/k/v laid out as a transformer block makes them (a permuted view);
- the cuDNN version and the CUDA toolkit the wheel was built with (cuDNN attention's preference depends on both);
- Inductor's layout optimisation decision for a conv + batch norm + ReLU module (``GraphLowering.decide_layout_opt``),
  observed during a real ``torch.compile``.
The capture's policies for these (harness/model/device_decisions.py) are held against this output.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    import torch

    names = {int(v): n for n, v in torch.nn.attention.SDPBackend.__members__.items()}
    cases = []
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for e in (64, 80, 128, 256, 512):
            for causal in (True, False):
                for mask in (False, True):
                    for permuted in (False, True):
                        b, h, t = 2, 8, 512
                        if permuted:
                            qkv = torch.randn(b, t, 3, h, e, device="cuda", dtype=dtype).permute(2, 0, 3, 1, 4)
                            q, k, v = qkv[0], qkv[1], qkv[2]
                        else:
                            q, k, v = (torch.randn(b, h, t, e, device="cuda", dtype=dtype) for _ in range(3))
                        m = torch.randn(t, t, device="cuda", dtype=dtype) if mask else None
                        try:
                            choice = names.get(int(torch._fused_sdp_choice(q, k, v, m, 0.0, causal and not mask)), "?")
                        except RuntimeError as exc:
                            choice = f"error: {str(exc).splitlines()[0][:120]}"
                        cases.append(
                            {
                                "dtype": str(dtype).removeprefix("torch."),
                                "head_dim": e,
                                "causal": causal and not mask,
                                "mask": mask,
                                "permuted": permuted,
                                "backend": choice,
                            }
                        )
    layout = []
    import torch._inductor.graph as graph

    decide = graph.GraphLowering.decide_layout_opt

    def observed(gm, *args, **kwargs):
        got = decide(gm, *args, **kwargs)
        layout.append(bool(got))
        return got

    graph.GraphLowering.decide_layout_opt = staticmethod(observed)
    model = torch.nn.Sequential(torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU())
    model = model.cuda().eval().to(torch.bfloat16)
    with torch.no_grad():
        torch.compile(model)(torch.randn(8, 64, 56, 56, device="cuda", dtype=torch.bfloat16))
    out = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "sdpa": cases,
        "conv_layout_opt": layout,
    }
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k != "sdpa"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
