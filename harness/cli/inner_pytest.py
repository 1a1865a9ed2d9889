"""The pytest session a command runs in its own process (``harness run``, ``harness list``), with only the plugins
the harness names.

pytest loads every installed plugin's entry point by default, and each xdist worker does again: on a GPU host
with pytest-benchmark installed, a run's terminal carried its "automatically disabled" warning about ten times.
The session runs with plugin autoload off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``, which xdist's workers inherit with
the environment they are started in) and names the two plugins it uses: the harness's and, where the run spreads
over workers, xdist's (the workers take the named ones from the session's options). A user's own
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` therefore changes nothing either.
"""

from __future__ import annotations

import os

AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
HARNESS = "harness.pytest_plugin"
XDIST = "xdist.plugin"


def main(argv: list[str], xdist: bool = True) -> int:
    """``pytest.main`` of ``argv`` with the harness's plugin (and xdist's, with ``xdist``) and no other."""
    import pytest

    named = [HARNESS, XDIST] if xdist else [HARNESS]
    before = os.environ.get(AUTOLOAD)
    os.environ[AUTOLOAD] = "1"
    try:
        return int(pytest.main([arg for name in named for arg in ("-p", name)] + argv))
    finally:
        if before is None:
            os.environ.pop(AUTOLOAD, None)
        else:
            os.environ[AUTOLOAD] = before
