"""``harness.spec``, the name kernel files import: the very module :mod:`harness.authoring.spec` (not a copy)."""

import sys

from harness.authoring import spec as _module

sys.modules[__name__] = _module
