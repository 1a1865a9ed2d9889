"""The public API for kernel authors: :mod:`~harness.authoring.spec` (the spec a kernel file exports),
:mod:`~harness.authoring.torchutil` (torch helpers, torch imported only when called) and
:mod:`~harness.authoring.decorated` (kernels under ``@triton.autotune``/``@triton.heuristics`` as libraries ship them).
``harness.spec`` and ``harness.torchutil`` stay importable under their old names."""
