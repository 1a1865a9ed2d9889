"""Cross-vendor portability harness for Triton kernels.

Data flows one way: matrix (YAML) -> cases -> compile (any machine) -> records
-> report. See README.md for the command line and the kernel spec API.
"""

__version__ = "0.1.0"
