"""A compiled entry whose inputs function starts ``sleep 300`` in a session of its own and then ends its process
with ``os._exit(1)``: the capture must say so at once and leave no process behind (tests/test_user_code_ends.py)."""
import os
import subprocess

import torch


def double(x):
    return torch.relu(x) * 2


def detached_inputs(shape, dtype, device, generator):
    subprocess.Popen(["sleep", "300"], start_new_session=True)
    os._exit(1)
