"""Which local GPU runs which target's cases: by model, not by architecture alone (fake devices, real catalogue)."""

from __future__ import annotations

from harness.device.detection import match, parse_rocminfo
from harness.model.runtime import GpuSlot
from harness.model.targets import catalogue
from harness.tuning.winners import winner_key

CAT = catalogue()


def _gpu(name: str, arch: str) -> GpuSlot:
    return GpuSlot(index="0", arch=arch, name=name, uuid="")


def test_an_h200_runs_h200_cases_and_leaves_h100_static_saying_why() -> None:
    h200 = _gpu("NVIDIA H200", "sm_90")
    assert match(CAT["h200"], h200) == (True, "")
    runs, why = match(CAT["h100"], h200)
    assert not runs and "no h100 here" in why and "NVIDIA H200" in why and "--device-as h100" in why


def test_models_of_one_architecture_are_told_apart() -> None:
    assert match(CAT["h100"], _gpu("NVIDIA H100 80GB HBM3", "sm_90"))[0]
    assert not match(CAT["h200"], _gpu("NVIDIA H100 80GB HBM3", "sm_90"))[0]
    for other in ("NVIDIA H100 PCIe", "NVIDIA H800", "NVIDIA H20", "NVIDIA H200 NVL"):
        assert not any(match(CAT[t], _gpu(other, "sm_90"))[0] for t in ("h100", "h200")), other
    assert match(CAT["a100"], _gpu("NVIDIA A100-SXM4-80GB", "sm_80"))[0]
    assert not match(CAT["a100"], _gpu("NVIDIA A100-SXM4-40GB", "sm_80"))[0]


def test_another_architecture_is_simply_not_this_targets_device() -> None:
    assert match(CAT["h100"], _gpu("AMD Instinct MI300X", "gfx942")) == (False, "")
    assert match(CAT["mi300x"], None) == (False, "")


def test_an_explicit_mapping_runs_and_is_recorded() -> None:
    runs, note = match(CAT["h100"], _gpu("NVIDIA H200", "sm_90"), device_as=("h100",))
    assert runs and "--device-as h100" in note and "NVIDIA H200" in note
    assert not match(CAT["mi300x"], _gpu("NVIDIA H200", "sm_90"), device_as=("mi300x",))[0]  # arch still decides


def test_rocminfo_marketing_names() -> None:
    text = """*******
Agent 1
*******
  Name:                    AMD EPYC 9654 96-Core Processor
  Marketing Name:          AMD EPYC 9654 96-Core Processor
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx942
  Marketing Name:          AMD Instinct MI300X
  Device Type:             GPU
*******
Agent 3
*******
  Name:                    gfx942
  Marketing Name:          AMD Instinct MI300A
  Device Type:             GPU
"""
    gpus = parse_rocminfo(text)
    assert [(g.index, g.arch, g.name) for g in gpus] == [
        ("0", "gfx942", "AMD Instinct MI300X"),
        ("1", "gfx942", "AMD Instinct MI300A"),
    ]
    assert match(CAT["mi300x"], gpus[0])[0] and not match(CAT["mi300x"], gpus[1])[0]


def test_winners_are_keyed_by_model() -> None:
    shape = {"M": 4096, "N": 4096, "K": 4096}
    assert winner_key("matmul", "fp16", shape, CAT["h100"], "3.6.0", "x") != winner_key(
        "matmul", "fp16", shape, CAT["h200"], "3.6.0", "x"
    )
