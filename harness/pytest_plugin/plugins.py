"""Which of the plugins the harness works with this pytest session has loaded, whatever name loaded them."""

from __future__ import annotations

import pytest

#: xdist's plugin as its entry point names it, and as :mod:`harness.cli.inner_pytest` names it (autoload off)
XDIST = ("xdist", "xdist.plugin")


def xdist_loaded(config: pytest.Config) -> bool:
    return any(config.pluginmanager.hasplugin(name) for name in XDIST)
