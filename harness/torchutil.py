"""``harness.torchutil``, the name kernel files import: the very module :mod:`harness.authoring.torchutil` (not a copy)."""

import sys

from harness.authoring import torchutil as _module

sys.modules[__name__] = _module
