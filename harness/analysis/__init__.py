"""Records -> findings, decided once for every view: verdicts, the roof a rate is held against, measured figures,
tuning portability, timing stability, comparisons between versions and between runs. It never imports
:mod:`harness.render`, :mod:`harness.device` or :mod:`harness.pytest_plugin`."""
