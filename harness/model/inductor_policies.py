"""What TorchInductor decides by running on a device, and what a capture under a virtual device decides instead:
each a named policy, written into every compiled kernel's record and stated in the reports, never presented as a
measurement (the capture: :mod:`harness.intake.inductor.inductor_face`)."""

from __future__ import annotations

POLICIES: dict[str, str] = {
    "autotune_winner": "first config of Inductor's list (no benchmark on a virtual device)",
    "max_autotune_choice": "the first Triton template choice Inductor lists, else its first choice (no benchmark)",
    "epilogue_fusion_by_benchmark": "off (config.benchmark_epilogue_fusion=False)",
    "pad_mm": "off (config.shape_padding=False): the unpadded graph",
    "coordinate_descent_tuning": "its first round built: each neighbour of the winner along each field Inductor's "
    "tuner tunes, by its rules for the target (space coordesc); where the descent goes on needs timings",
    "cudagraphs": "off (triton.cudagraphs=False): graphs wrap launches, the kernels are the same",
    "dynamic_scale_rblock": "not applied: on a GPU a reduction's configs may gain a smaller R0_BLOCK from the loaded "
    "binary's register count (seen on an H100: softmax 2 configs listed, 3 timed)",
}


#: Inductor's config as every process that compiles for the harness sets it (the capture under a face, the GPU
#: worker that holds a kernel to a config, the parity script's real compile): one thread (pool workers would not
#: wear the face), no caches (a graph cached under other options is not what is held against), and the two policies
#: above that are config settings. Set through :func:`harness.support.torchcompat.set_inductor_config`.
SETTINGS: dict[str, bool | int] = {
    "compile_threads": 1,
    "force_disable_caches": True,
    "benchmark_epilogue_fusion": False,
    "shape_padding": False,
}
