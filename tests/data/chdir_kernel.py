"""A kernel module that changes the working directory when it is imported (as some project setups do):
a relative ``--out`` must still mean the directory the user named."""
import os

os.chdir(os.environ.get("HARNESS_TEST_CHDIR_TO", "/"))

from kernels.vector_add import SPEC  # noqa: E402,F401 - re-exported as this module's spec
