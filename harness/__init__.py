"""Cross-vendor portability harness for Triton kernels.

Data flows one way: matrix (YAML) -> cases -> compile (any machine) -> records
-> report. See docs/usage.md for the command line and docs/bring-your-kernel.md for the kernel spec API.
"""

__version__ = "0.1.0"
