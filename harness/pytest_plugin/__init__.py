"""The pytest plugin (entry point ``harness``, or ``-p harness.pytest_plugin``): a matrix file on the command line
becomes one item per case; the session builds, checks and times them and writes the run's files.

pytest registers this module: the hooks it finds here are the plugin's whole surface.
"""

from harness.pytest_plugin.hooks import pytest_addoption, pytest_collect_file, pytest_configure

__all__ = ["pytest_addoption", "pytest_collect_file", "pytest_configure"]
