"""Inputs functions of compiled entries that misbehave or leave a trace (tests/test_user_code_ends.py,
tests/test_run_folders.py): ``detached_inputs`` starts ``sleep 300`` in a session of its own and then ends its process
with ``os._exit(1)``; ``witness_inputs`` appends a line to the file ``USER_CODE_WITNESS`` names each time it is
called (how a test sees whether, and how often, the user's code ran) and, where ``USER_CODE_FAILS`` is set, raises."""
import os
import subprocess

import torch
from harness.torchutil import randn


def double(x):
    return torch.relu(x) * 2


def detached_inputs(shape, dtype, device, generator):
    subprocess.Popen(["sleep", "300"], start_new_session=True)
    os._exit(1)


def witness_inputs(shape, dtype, device, generator):
    with open(os.environ["USER_CODE_WITNESS"], "a") as fh:
        fh.write(f"{os.environ.get('HARNESS_FACE', '?')} {shape}\n")
    if os.environ.get("USER_CODE_FAILS"):
        raise ValueError("these inputs cannot be made (planted)")
    return (randn((shape["N"],), dtype, device, generator),)
